"""Python function calls per HTTP turn in the server process, exactly (cProfile).

    python bench/http/calls.py [--requests 300] [--concurrency 1] [--stores sqlite,postgresql]
                               [--top 25]

Timings on a shared machine are noisy; call counts are not. Each server of `run.py` (the
ceiling, Keel on each store) runs with one worker under `profiled.py`; after a warm-up the
profiler counts the event loop thread's calls while `--requests` requests are answered
(every call cProfile counts, built-ins included; the store's and the thread pool's threads
are not counted). The table splits the calls per request by where the called function
lives (Keel's server, loop, events, stores; FastAPI, Starlette, pydantic, uvicorn and h11,
asyncio, the rest; a built-in function or a helper of the standard library counts for the
layer of its caller); `--top` lists the functions called most per request for each server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import pstats
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from load import LoadShape, measure
from servers import (
    HEADERS,
    KEY,
    Served,
    Unavailable,
    ceiling_command,
    keel_command,
    postgres_schema,
    profiled,
    serving,
)

DEFAULT_POSTGRES = "postgresql://postgres@127.0.0.1:5432/test"

LAYERS = (
    ("keel.server", "/keel/server/"),
    ("keel.loop", "/keel/loop/"),
    ("keel.events", "/keel/events/"),
    ("keel.stores", "/keel/stores/"),
    ("keel (other)", "/keel/"),
    ("fastapi", "/fastapi/"),
    ("starlette", "/starlette/"),
    ("pydantic", "/pydantic"),
    ("uvicorn+h11", "/uvicorn/"),
    ("uvicorn+h11", "/h11/"),
    ("anyio", "/anyio/"),
    ("asyncio", "/asyncio/"),
)
"""Where a function lives, by a part of its file's path (first match wins)."""


def layer(filename: str) -> str:
    """The layer of a function defined in `filename` (`~` for built-ins)."""
    for name, part in LAYERS:
        if part in filename:
            return name
    return "built-ins" if filename == "~" else "other"


def _caller_layer(filename: str, fallback: str) -> str:
    found = layer(filename)
    return found if found not in ("built-ins", "other") else fallback


def per_request(path: Path, requests: int) -> tuple[float, Counter[str], Counter[str]]:
    """Calls per request: in all, by layer and by function."""
    stats = pstats.Stats(str(path)).stats  # type: ignore[attr-defined]
    by_layer: Counter[str] = Counter()
    by_function: Counter[str] = Counter()
    total = 0
    for (filename, line, name), (_cc, calls, _tt, _ct, callers) in stats.items():
        total += calls
        here = layer(filename)
        if here not in ("built-ins", "other"):
            by_layer[here] += calls
        else:  # a built-in or a helper counts for the layer that called it
            for (caller_file, _line, _name), caller_calls in callers.items():
                by_layer[_caller_layer(caller_file, here)] += caller_calls[1]
        short = filename.split("site-packages/")[-1].split("/work/main/")[-1]
        by_function[f"{name} ({short}:{line})"] += calls
    return total / requests, by_layer, by_function


@contextmanager
def _keel(store: str, script: Path, out: Path, work: Path, postgres_url: str) -> Iterator[Served]:
    env = {"KEEL_API_KEYS": f"bench:chat:{KEY}", "KEEL_RATE_LIMIT": "off"}
    command = profiled(out, keel_command(1, script))
    log = work / f"keel-{store}.log"
    if store == "sqlite":
        env["KEEL_DATABASE_URL"] = f"sqlite:///{work / 'calls.db'}"
        with serving(command, env=env, log=log) as served:
            yield served
        return
    with postgres_schema(postgres_url, f"keel_calls_{os.getpid()}") as url:
        env["KEEL_DATABASE_URL"] = url
        with serving(command, env=env, log=log) as served:
            yield served


def _count(served: Served, out: Path, shape: LoadShape) -> None:
    asyncio.run(measure(served.base, replace(shape, requests=0), HEADERS))
    os.kill(served.pid, signal.SIGUSR1)
    measured = asyncio.run(measure(served.base, replace(shape, warmup=0), HEADERS))
    os.kill(served.pid, signal.SIGUSR2)
    for _ in range(200):
        if out.exists() and out.stat().st_size:
            break
        time.sleep(0.05)
    time.sleep(0.2)  # the dump is written in one go; let it finish
    if measured.errors:
        raise SystemExit(f"{measured.errors} requests failed: {measured.first_error}")


def main(argv: list[str]) -> int:
    """Count the calls per request of each server and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--stores", default="sqlite,postgresql")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--profiles", type=Path, help="keep each server's .prof file here")
    parser.add_argument(
        "--postgres-url", default=os.environ.get("KEEL_BENCH_POSTGRES_URL", DEFAULT_POSTGRES)
    )
    options = parser.parse_args(argv)
    shape = LoadShape(
        requests=options.requests, concurrency=options.concurrency, warmup=options.warmup
    )
    results: dict[str, tuple[float, Counter[str], Counter[str]]] = {}
    with tempfile.TemporaryDirectory(prefix="keel-calls-") as tmp:
        work = Path(tmp)
        script = work / "ok.json"
        script.write_text(json.dumps(["ok"] * (shape.requests + shape.warmup + 10)))
        out = work / "ceiling.prof"
        with serving(profiled(out, ceiling_command(1)), env={}, log=work / "c.log") as served:
            _count(served, out, shape)
        results["ceiling"] = per_request(out, shape.requests)
        for store in (s for s in options.stores.split(",") if s):
            out = work / f"keel-{store}.prof"
            try:
                with _keel(store, script, out, work, options.postgres_url) as served:
                    _count(served, out, shape)
            except Unavailable as exc:
                print(f"skipped keel on {store}: {exc}", file=sys.stderr)
                continue
            results[f"keel {store}"] = per_request(out, shape.requests)
        if options.profiles is not None:
            options.profiles.mkdir(parents=True, exist_ok=True)
            for prof in work.glob("*.prof"):
                shutil.copy(prof, options.profiles / prof.name)
    names = list(results)
    layers = sorted({k for _t, by, _f in results.values() for k in by}, key=_layer_order)
    print("| calls per request | " + " | ".join(names) + " |")
    print("| --- |" + " ---: |" * len(names))
    for name in layers:
        cells = " | ".join(f"{results[n][1][name] / shape.requests:,.0f}" for n in names)
        print(f"| {name} | {cells} |")
    print("| **all** | " + " | ".join(f"**{results[n][0]:,.0f}**" for n in names) + " |")
    for name in names:
        print(f"\n{name}: the {options.top} functions called most per request")
        for function, calls in results[name][2].most_common(options.top):
            print(f"  {calls / shape.requests:8.1f}  {function}")
    return 0


def _layer_order(name: str) -> int:
    order = [n for n, _ in LAYERS] + ["built-ins", "other"]
    return order.index(name)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
