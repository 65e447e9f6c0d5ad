"""Fresh-process probes of `run.py`: import time, agent build time, peak memory.

    bench/peers/.venv/bin/python bench/peers/probe.py import LABEL
    bench/peers/.venv/bin/python bench/peers/probe.py rss LABEL [--runs 100]

`import` times importing the case module (the framework and the module's tool
definitions), then building the agent for "support" (`make`: compile the graph, make the
Agent, load Keel's project), in a process that has imported nothing else but the
standard library's `json`, `time` and `importlib`. `rss` imports, builds both scenarios,
runs each `--runs` times and reports `ru_maxrss`; the label `python` runs nothing (an
interpreter with asyncio, the baseline). Prints one JSON object.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from time import perf_counter

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def probe_import(label: str) -> dict[str, float]:
    from cases import by_label

    spec = by_label(label)[0]
    started = perf_counter()
    module = importlib.import_module(spec.module)
    imported = perf_counter()
    from scenarios import SCENARIOS

    module.make(SCENARIOS["support"], **spec.options)
    built = perf_counter()
    return {"import_ms": (imported - started) * 1000, "build_ms": (built - imported) * 1000}


def probe_rss(label: str, runs: int) -> dict[str, float]:
    import asyncio
    import resource

    if label != "python":
        from cases import by_label
        from scenarios import SCENARIOS, check

        spec = by_label(label)[0]
        module = importlib.import_module(spec.module)

        async def exercise() -> None:
            for scenario in SCENARIOS.values():
                case = module.make(scenario, **spec.options)
                for _ in range(runs):
                    await case.prepare()
                    check(label, scenario, case.outcome(await case.run()))
                await case.close()

        asyncio.run(exercise())
    # Linux reports ru_maxrss in KiB.
    return {"max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main(argv: list[str]) -> int:
    what, label = argv[0], argv[1]
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 100
    result = probe_import(label) if what == "import" else probe_rss(label, runs)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
