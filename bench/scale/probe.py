"""Timing a turn's pre-model path from outside Keel, with `time.perf_counter_ns`.

Nothing in `keel/` is changed. While a `Probe` is armed:

* `TimedStore` wraps the event store: `read` counts as `load`, `append` as `persist`;
* `instrument()` wraps, for the duration of a `with` block, the functions the engine calls
  on the way to the model (module attributes, looked up at call time): folding the log
  (`load`), the slash/sticky decision, the deterministic pass and acting on a routing reply
  (`route`), choosing the tier (`tier`), building the offered tools (`tools`), the fitting
  of earlier history with its token estimates (`compress`), the system prompt and message
  list (`prompt`);
* `StampedModel` (a `ScriptedModel`) stops the clock when `complete` is called for the
  `stop_at`-th time: that is the model boundary.

Whatever the wrapped stages do not cover (the conversation lock, session checks, building
the turn context, folding appended events, ...) is reported as `other`. `cpu` is the
process's CPU time over the same span (`time.process_time_ns`, all threads: SQLite's
worker thread counts, PostgreSQL's server does not): on a shared machine, wall time
minus CPU time is mostly waiting for a core or for the database.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from time import perf_counter_ns, process_time_ns
from typing import Any

from keel.events.model import Event
from keel.llm.port import ModelRequest, ModelResponse
from keel.loop import driver, lifecycle, log_cache, model_request
from keel.loop.history import estimate_tokens
from keel.stores.port import EventStore, StoredEvent
from keel.testing import ScriptedModel
from keel.testing.scripted import ReplySource

STAGES = ("load", "route", "tier", "tools", "compress", "prompt", "persist")

_WRAPPED: tuple[tuple[object, str, str], ...] = (
    (log_cache, "fold", "load"),
    (lifecycle, "slash_activate", "route"),
    (driver, "deterministic_pass", "route"),
    (driver, "handle_reply", "route"),
    (model_request, "choose", "tier"),
    (model_request, "offered_tools", "tools"),
    (model_request, "estimate_tokens", "compress"),
    (model_request, "fit_history", "compress"),
    (model_request, "unit_tokens", "compress"),
    (model_request, "system_prompt", "prompt"),
    (model_request, "history", "prompt"),
)


class PerfClock:
    """A `keel.ids.Clock` whose instants advance with `perf_counter_ns` from a fixed date."""

    def __init__(self, start: datetime | None = None) -> None:
        self._start = start or datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
        self._base = perf_counter_ns()

    def now(self) -> datetime:
        return self._start + timedelta(microseconds=(perf_counter_ns() - self._base) / 1000)


@dataclass(frozen=True, kw_only=True, slots=True)
class Boundary:
    """What went to the model at the boundary."""

    tools: int
    system_chars: int
    messages: int
    tier: str
    tokens: int
    """Keel's own estimate of the request (messages and tool schemas)."""


@dataclass(kw_only=True, slots=True)
class _Open:
    """A stage that has started and not ended yet."""

    stage: str
    begun: int
    nested: int = 0
    """Nanoseconds spent in stages inside this one (not counted twice)."""


class Probe:
    """Per-stage nanoseconds of one turn, up to the model boundary."""

    def __init__(self) -> None:
        self.armed = False
        self.spans: dict[str, int] = {}
        self.started = 0
        self.total = 0
        self.cpu = 0
        self.cpu_started = 0
        self.stop_at = 1
        self.calls = 0
        self.boundary: Boundary | None = None
        self._open: list[_Open] = []

    def start(self, stop_at: int = 1) -> None:
        """Arm for one turn; the `stop_at`-th model call ends the measurement."""
        self.spans = dict.fromkeys(STAGES, 0)
        self.stop_at, self.calls, self.boundary, self.total = stop_at, 0, None, 0
        self.armed = True
        self.cpu_started = process_time_ns()
        self.started = perf_counter_ns()

    def enter(self, stage: str) -> None:
        """A stage starts (stages nest: an append inside the route counts as persist)."""
        self._open.append(_Open(stage=stage, begun=perf_counter_ns()))

    def leave(self) -> None:
        """The innermost stage ends; its time, less its nested stages', is added."""
        done = self._open.pop()
        elapsed = perf_counter_ns() - done.begun
        if self._open:
            self._open[-1].nested += elapsed
        if self.armed:
            self.spans[done.stage] += elapsed - done.nested

    def model_called(self, request: ModelRequest) -> None:
        """Called first thing in `complete`."""
        now, cpu = perf_counter_ns(), process_time_ns()
        if not self.armed:
            return
        self.calls += 1
        if self.calls == self.stop_at:
            self.total = now - self.started
            self.cpu = cpu - self.cpu_started
            self.armed = False
            system = request.messages[0]["content"] if request.messages else ""
            self.boundary = Boundary(
                tools=len(request.tools),
                system_chars=len(system or ""),
                messages=len(request.messages),
                tier=request.tier,
                tokens=estimate_tokens(list(request.messages))
                + estimate_tokens([dict(t.parameters) for t in request.tools]),
            )

    def result(self) -> dict[str, int]:
        """Nanoseconds per stage, `other` and `total`; raises if the boundary was missed."""
        if self.boundary is None:
            raise RuntimeError(f"the turn made {self.calls} model call(s), not {self.stop_at}")
        spans = dict(self.spans)
        spans["other"] = self.total - sum(spans.values())
        spans["total"] = self.total
        spans["cpu"] = self.cpu
        return spans


def _timed(probe: Probe, stage: str, func: Callable[..., Any]) -> Callable[..., Any]:
    if inspect.iscoroutinefunction(func):

        @functools.wraps(func)
        async def timed_async(*args: Any, **kwargs: Any) -> Any:
            probe.enter(stage)
            try:
                return await func(*args, **kwargs)
            finally:
                probe.leave()

        return timed_async

    @functools.wraps(func)
    def timed(*args: Any, **kwargs: Any) -> Any:
        probe.enter(stage)
        try:
            return func(*args, **kwargs)
        finally:
            probe.leave()

    return timed


@contextmanager
def instrument(probe: Probe) -> Iterator[None]:
    """Wrap the engine's pre-model functions while the block runs (restored afterwards)."""
    with ExitStack() as undo:
        for owner, name, stage in _WRAPPED:
            original = getattr(owner, name)  # AttributeError: Keel renamed it; update _WRAPPED
            setattr(owner, name, _timed(probe, stage, original))
            undo.callback(setattr, owner, name, original)
        yield


class TimedStore:
    """An `EventStore` that reports its reads as `load` and its appends as `persist`."""

    def __init__(self, store: EventStore, probe: Probe) -> None:
        self._store = store
        self._probe = probe

    async def read(self, conversation_id: str, after_seq: int = 0) -> list[StoredEvent]:
        self._probe.enter("load")
        try:
            return await self._store.read(conversation_id, after_seq)
        finally:
            self._probe.leave()

    async def append(
        self,
        conversation_id: str,
        expected_seq: int,
        events: Sequence[Event],
        *,
        durable: bool = True,
    ) -> list[StoredEvent]:
        self._probe.enter("persist")
        try:
            return await self._store.append(conversation_id, expected_seq, events, durable=durable)
        finally:
            self._probe.leave()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


class StampedModel(ScriptedModel):
    """A `ScriptedModel` that tells the probe when each request arrives."""

    def __init__(self, probe: Probe, replies: Iterable[ReplySource]) -> None:
        super().__init__(replies)
        self._probe = probe

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self._probe.model_called(request)
        return await super().complete(request)
