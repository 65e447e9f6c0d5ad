"""The load generator: virtual users sending chat messages over HTTP with httpx.

`concurrency` users share a fixed budget of requests; each user talks to its own
conversations, `per_conversation` messages each before it starts the next one, so no
request ever waits for another user's turn (no 409s, no lock waits) and conversations
keep a realistic length. The first message of a conversation also runs its session start.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from dataclasses import dataclass

import httpx


@dataclass(frozen=True, kw_only=True, slots=True)
class LoadShape:
    """How much load, and how it is spread."""

    requests: int
    """Requests measured."""
    concurrency: int
    """Virtual users, each with one request in flight at a time."""
    warmup: int
    """Requests sent (and not measured) before the measured ones."""
    per_conversation: int = 10
    """Messages a user sends to one conversation before starting the next."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Measured:
    """The outcome of one measured run."""

    requests: int
    errors: int
    seconds: float
    latencies_ms: tuple[float, ...]
    first_error: str | None = None

    @property
    def per_second(self) -> float:
        """Answered requests (turns) per second of wall-clock time."""
        return self.requests / self.seconds if self.seconds else 0.0

    def percentile(self, q: int) -> float:
        """The `q`th percentile of the latencies (ms)."""
        if len(self.latencies_ms) < 2:
            return self.latencies_ms[0] if self.latencies_ms else 0.0
        return statistics.quantiles(self.latencies_ms, n=100, method="inclusive")[q - 1]


@dataclass(kw_only=True, slots=True)
class _Tally:
    left: int
    errors: int = 0
    first_error: str | None = None

    def take(self) -> bool:
        if self.left <= 0:
            return False
        self.left -= 1
        return True


async def _user(
    client: httpx.AsyncClient, tally: _Tally, name: str, per_conversation: int
) -> list[float]:
    latencies: list[float] = []
    sent = 0
    while tally.take():
        conversation = f"{name}-c{sent // per_conversation}"
        started = time.perf_counter()
        reply = await client.post(
            f"/v1/conversations/{conversation}/messages", json={"text": f"message {sent}"}
        )
        latencies.append((time.perf_counter() - started) * 1000)
        sent += 1
        if reply.status_code != 200 or reply.json().get("stop_reason") != "end_turn":
            tally.errors += 1
            tally.first_error = tally.first_error or f"{reply.status_code} {reply.text[:200]}"
    return latencies


async def _phase(client: httpx.AsyncClient, shape: LoadShape, requests: int, tag: str) -> Measured:
    tally = _Tally(left=requests)
    users = [
        _user(client, tally, f"{tag}-u{n}", shape.per_conversation)
        for n in range(shape.concurrency)
    ]
    started = time.perf_counter()
    per_user = await asyncio.gather(*users)
    seconds = time.perf_counter() - started
    latencies = tuple(ms for user in per_user for ms in user)
    return Measured(
        requests=len(latencies),
        errors=tally.errors,
        seconds=seconds,
        latencies_ms=latencies,
        first_error=tally.first_error,
    )


async def measure(
    base: str, shape: LoadShape, headers: dict[str, str], tag: str = "measured"
) -> Measured:
    """Warm the server up, then measure `shape.requests` requests (the users' conversations
    are named after `tag`: `{tag}-u{n}-c{k}`)."""
    limits = httpx.Limits(max_connections=shape.concurrency)
    async with httpx.AsyncClient(
        base_url=base, headers=headers, timeout=120, limits=limits
    ) as client:
        if shape.warmup:
            await _phase(client, shape, shape.warmup, f"warmup-{tag}")
        return await _phase(client, shape, shape.requests, tag)


def merged(parts: list[Measured]) -> Measured:
    """Several measured runs of one server as one: requests, errors, time and latencies
    added up."""
    errors = [m.first_error for m in parts if m.first_error]
    return Measured(
        requests=sum(m.requests for m in parts),
        errors=sum(m.errors for m in parts),
        seconds=sum(m.seconds for m in parts),
        latencies_ms=tuple(ms for m in parts for ms in m.latencies_ms),
        first_error=errors[0] if errors else None,
    )


STAGES = ("load", "persist")
"""The turn stages reported next to the latency (the others take well under 0.1 ms here)."""


async def stage_means(
    base: str, shape: LoadShape, headers: dict[str, str], tags: list[str]
) -> dict[str, float]:
    """Mean milliseconds per turn of each of STAGES, from the stage timings Keel logged in the
    measured conversations (each user's first one of each tag; wall-clock inside the
    server)."""
    samples: dict[str, list[float]] = {stage: [] for stage in STAGES}
    names = [f"{tag}-u{n}-c0" for tag in tags for n in range(shape.concurrency)]
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=60) as client:
        for name in names:
            reply = await client.get(f"/v1/conversations/{name}/events", params={"limit": 10_000})
            if reply.status_code != 200:
                continue
            for item in reply.json()["events"]:
                for stage, ms in _timings(item["event"]):
                    if stage in samples:
                        samples[stage].append(ms)
    return {stage: statistics.mean(ms) if ms else 0.0 for stage, ms in samples.items()}


def _timings(event: dict[str, object]) -> list[tuple[str, float]]:
    """The (stage, ms) pairs of one encoded event: a turn's `stages_timed` (schema 8 on) or
    one older `stage_timed`."""
    if event.get("type") == "stages_timed" and isinstance(event.get("durations_ms"), dict):
        durations: dict[str, object] = event["durations_ms"]  # type: ignore[assignment]
        return [(k, float(v)) for k, v in durations.items() if isinstance(v, int | float)]
    if event.get("type") == "stage_timed":
        return [(str(event.get("stage")), float(event.get("duration_ms", 0.0)))]  # type: ignore[arg-type]
    return []
