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


async def measure(base: str, shape: LoadShape, headers: dict[str, str]) -> Measured:
    """Warm the server up, then measure `shape.requests` requests."""
    limits = httpx.Limits(max_connections=shape.concurrency)
    async with httpx.AsyncClient(
        base_url=base, headers=headers, timeout=120, limits=limits
    ) as client:
        if shape.warmup:
            await _phase(client, shape, shape.warmup, "warmup")
        return await _phase(client, shape, shape.requests, "measured")


STAGES = ("load", "persist")
"""The turn stages reported next to the latency (the others take well under 0.1 ms here)."""


async def stage_means(base: str, shape: LoadShape, headers: dict[str, str]) -> dict[str, float]:
    """Mean milliseconds per turn of each of STAGES, from the `stage_timed` events Keel logged
    in the measured conversations (each user's first one; wall-clock inside the server)."""
    samples: dict[str, list[float]] = {stage: [] for stage in STAGES}
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=60) as client:
        for n in range(min(shape.concurrency, shape.requests)):
            reply = await client.get(
                f"/v1/conversations/measured-u{n}-c0/events", params={"limit": 10_000}
            )
            if reply.status_code != 200:
                continue
            for item in reply.json()["events"]:
                event = item["event"]
                if event["type"] == "stage_timed" and event["stage"] in samples:
                    samples[event["stage"]].append(float(event["duration_ms"]))
    return {stage: statistics.mean(ms) if ms else 0.0 for stage, ms in samples.items()}
