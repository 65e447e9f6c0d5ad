"""Running turns: at most one per conversation in this process, each cancellable.

`RunRegistry.start` refuses a second run for a conversation that has one (the route
answers 409) and otherwise starts a `TurnRun`: one asyncio task that runs the engine call
with a `FeedObserver`, so followers see every event as it is appended, and then reports
the outcome. Cancelling a run cancels the engine call only: the engine records the turn
as cancelled and the run still reports its outcome.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator, Sequence

from keel.errors import RunError
from keel.events.fold import ConversationState, fold
from keel.events.model import TurnStarted
from keel.loop.errors import PauseNotPending, PauseWithdrawn
from keel.loop.result import TurnResult
from keel.server.engine_port import FeedObserver, TurnCall
from keel.server.feed import Failure, Finished, RunOutcome, TurnFeed
from keel.server.run_taps import RunTapFactory, TeeObserver, open_taps
from keel.stores.port import EventStore

_log = logging.getLogger("keel.server")


class ConversationBusy(Exception):
    """A run is already active for this conversation in this process."""


class TurnRun:
    """One request's work on one conversation."""

    def __init__(
        self, *, key: str, store: EventStore, call: TurnCall, taps: Sequence[RunTapFactory] = ()
    ) -> None:
        self.key = key
        self.feed = TurnFeed()
        self._store = store
        self._observer = FeedObserver(self.feed)
        self._tee = TeeObserver(self._observer, open_taps(taps, key)) if taps else None
        self._call = call
        self._calling = False
        """True while the engine call runs (only then does `cancel` reach it)."""
        self._cancel_first = False
        """Cancelled before the task took its first step: the call is not made."""
        self._called = False
        """The engine call ended (returned, raised or was cancelled)."""
        self.task: asyncio.Task[RunOutcome] = asyncio.ensure_future(self._drive())

    @property
    def done(self) -> bool:
        """True once the outcome is known."""
        return self.task.done()

    def cancel(self) -> bool:
        """Cancel the engine call (the turn is recorded as cancelled); False if it ended."""
        if self._called or self._cancel_first:
            return False
        if not self._calling:
            self._cancel_first = True
            return True
        return self.task.cancel()

    async def wait(self) -> RunOutcome:
        """The outcome; cancelling the waiter does not cancel the run."""
        return await asyncio.shield(self.task)

    async def _drive(self) -> RunOutcome:
        result: TurnResult | None = None
        cancelled, failure = False, None
        try:
            if self._cancel_first:
                raise asyncio.CancelledError
            self._calling = True
            result = await self._call(self._tee or self._observer)
        except asyncio.CancelledError:
            cancelled = True
            task = asyncio.current_task()
            while task is not None and task.cancelling():
                task.uncancel()  # the run goes on to report its outcome
        except PauseWithdrawn as exc:
            failure = Failure(status=409, code="approval.pause_withdrawn", message=str(exc))
        except PauseNotPending as exc:
            failure = Failure(status=409, code="approval.not_pending", message=str(exc))
        except RunError as exc:
            failure = Failure(status=409, code=exc.code.removeprefix("keel."), message=str(exc))
        except Exception as exc:  # the engine records what it can; the client learns it failed
            turn_id = self._last_turn_id()
            where = f"conversation {self.key}" + (f", turn {turn_id}" if turn_id else "")
            _log.exception(
                "turn failed (%s)", where, extra={"conversation_id": self.key, "turn_id": turn_id}
            )
            failure = Failure(status=500, code="turn.failed", message=type(exc).__name__)
        finally:
            self._calling, self._called = False, True
        state = result.state if result is not None else await self._read_state()
        outcome = RunOutcome(
            events=tuple(self._observer.appended),
            state=state,
            cancelled=cancelled,
            failure=failure,
        )
        # Followers wait for this item whatever happened above.
        self.feed.push(Finished(outcome=outcome))
        if self._tee is not None:
            self._tee.finished(outcome)
        return outcome

    def _last_turn_id(self) -> str | None:
        """The turn this run started, if it got that far."""
        started = [e.event for e in self._observer.appended if isinstance(e.event, TurnStarted)]
        return started[-1].turn_id if started else None

    async def _read_state(self) -> ConversationState:
        try:
            return fold(s.event for s in await self._store.read(self.key))
        except Exception:
            _log.exception("reading conversation %s after its run failed", self.key)
            return ConversationState()


class RunRegistry:
    """The runs active in this process, by conversation key."""

    def __init__(self, store: EventStore) -> None:
        self._store = store
        self._runs: dict[str, TurnRun] = {}
        self._started = asyncio.Event()
        self.taps: list[RunTapFactory] = []
        """Observers added to every run from now on (`keel.server.run_taps`)."""

    def active(self, key: str) -> TurnRun | None:
        """The run of conversation `key`, if one is active."""
        return self._runs.get(key)

    def start(self, key: str, call: TurnCall) -> TurnRun:
        """Start a run; raises `ConversationBusy` when `key` already has one."""
        if key in self._runs:
            raise ConversationBusy(key)
        run = TurnRun(key=key, store=self._store, call=call, taps=self.taps)
        self._runs[key] = run
        run.task.add_done_callback(lambda _task: self._forget(key, run))
        started, self._started = self._started, asyncio.Event()
        started.set()
        return run

    def next_start(self) -> asyncio.Event:
        """An event set when the next run starts, for any conversation (the admin stream
        waits on it to follow a conversation whose next turn has not started yet)."""
        return self._started

    def _forget(self, key: str, run: TurnRun) -> None:
        if self._runs.get(key) is run:
            del self._runs[key]

    def __iter__(self) -> Iterator[TurnRun]:
        return iter(list(self._runs.values()))

    async def shutdown(self) -> None:
        """Cancel every active run and wait for them to record it."""
        runs = list(self._runs.values())
        for run in runs:
            run.cancel()
        if runs:
            await asyncio.gather(*(run.task for run in runs), return_exceptions=True)
