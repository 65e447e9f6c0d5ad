"""A local OTLP/HTTP receiver in its own process, for the "keel, telemetry on" case.

    python bench/peers/otlp_sink.py

Prints its base URL on the first line of stdout, then serves until stdin closes, and prints
`{"spans": N, "requests": M}` (everything it received and decoded) before it exits. Its own
process, so decoding the protobuf does not take the measured process's time; and it decodes
only at the end (it keeps the bodies until then), so that decoding does not take the other
core while the runs are timed either (a collector runs on another machine).
"""

from __future__ import annotations

import json
import sys

from keel.testing.otlp_receiver import OtlpReceiver


def main() -> int:
    with OtlpReceiver(decode_later=True) as receiver:
        print(receiver.base_url, flush=True)
        sys.stdin.read()
        counts = {"spans": len(receiver.spans), "requests": receiver.requests}
    print(json.dumps(counts), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
