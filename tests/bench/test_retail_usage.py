"""The retail usage measure of the plan cache runs and no replay changes an outcome.

`bench/plancache/retail_usage.py` plays examples/retail's conversation tests through one
engine and plan cache three times (fill, same words, paraphrased); run here in a subprocess
(the bench's modules are plain scripts on their own path).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "bench" / "plancache" / "retail_usage.py"


def test_three_passes_through_one_cache_change_no_outcome() -> None:
    done = subprocess.run(
        [sys.executable, str(RUN), "--json"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    tallies = json.loads(done.stdout)
    assert len(tallies) == 3
    first = tallies[0]
    assert first["turns"] > 60 and first["model_calls"] > 0
    for later in tallies[1:]:
        assert later["turns"] == first["turns"]
        assert later["changed"] == [], later["changed"]
        # a served plan saves at least the calls it did not make
        assert later["model_calls"] + later["replies_unused"] >= later["served"]
