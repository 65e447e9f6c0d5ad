"""The order of a turn: what happens to one request, step by step (spec §7.2, §7.3).

Read this module to see a whole turn. Each line below is one named step; each step lives in
a module that depends only on the turn's state (`keel.loop.turn`) and the layers below it.
`Engine` (`keel.loop.engine`) opens the conversation's log, builds the turn's context with
its ports (the model, the knowledge base, the offline router, the plan cascade) and calls
`request` or `approval_turn`; everything the turn appends goes through `t.emit`.

1. a turn the process left running is closed; `/session_end` and `/restart` are control
   turns with no model call (§7.7, `control_turn`); a new or expired session first runs
   `default_session_start` as its own turn (§7.2);
2. the message turn: an inbound `set:` tap is applied, or refused with a skip notice (§3.5);
   a `/skill_id` slash command activates an eligible skill without a model call;
3. `passes`: deterministic steps, then what code can settle instead of the model (offline
   routing and extraction; the plan cascade), else one model call whose reply is checked
   and acted on, again and again until something says wait, within the turn's budget;
4. a clean tool-calling turn may leave a plan behind (the cascade's `after_turn`);
5. the turn ends with its stop reason (`keel.loop.ending`), or as cancelled or failed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Mapping

from keel.errors import StoreError
from keel.events.base import JsonValue
from keel.events.fold import PendingConfirmation
from keel.events.model import Event, RoutingDecided, UserMessage
from keel.loop import ending, lifecycle, offline, session, taps
from keel.loop.blocks_run import deterministic_pass
from keel.loop.calls import handle_reply
from keel.loop.confirmations import resolve_pending
from keel.loop.control import RESTART, SESSION_END, SESSION_START
from keel.loop.failures import log_turn_failure, logged_start
from keel.loop.model_call import call_model
from keel.loop.outcome import _Done
from keel.loop.recorder import Recorder
from keel.loop.tools_run import CallSite
from keel.loop.turn import Next, TurnContext
from keel.project.definition import AgentDefinition

SESSION_START_SKILL = "default_session_start"

NewTurn = Callable[[tuple[Event, ...]], TurnContext]
"""A fresh turn on the request's recorder, given the log before it (`Engine` builds it)."""


async def request(
    new_turn: NewTurn,
    definition: AgentDefinition,
    recorder: Recorder,
    history: tuple[Event, ...],
    text: str,
    metadata: Mapping[str, JsonValue],
    load_ms: float,
) -> tuple[Event, ...]:
    """One user message (or `/session_start`); returns the events it appended, in order."""
    if recorder.state.current_turn_id is not None:
        await session.close_interrupted_turn(recorder)  # a crashed turn ends before a new one
    if text.strip() in (SESSION_END, RESTART):
        return await control_turn(new_turn, recorder, history, text.strip(), metadata, load_ms)
    if session.session_due(definition, recorder.clock, history, recorder.state):
        await session_start(new_turn(history), metadata, explicit=text == SESSION_START)
    # The turn below starts its own event list; the session start's belongs to the result
    # too (a greeting comes before the answer, in one response, spec §7.2).
    started = tuple(recorder.events)
    if text == SESSION_START:
        return started
    t = new_turn(history + started)
    with logged_start(t):
        await session.begin_message(t, text, metadata, load_ms)
    await guarded(t, message(t, text, metadata))
    return started + tuple(recorder.events)


async def control_turn(
    new_turn: NewTurn,
    recorder: Recorder,
    history: tuple[Event, ...],
    command: str,
    metadata: Mapping[str, JsonValue],
    load_ms: float,
) -> tuple[Event, ...]:
    """`/session_end` or `/restart`: a turn with no model call (spec §7.7). A hang-up
    closes the session (no new one starts for it, even when none is open); a restart
    resets the conversation, then a new session starts at once, as its own turn."""
    closed = tuple(recorder.events)  # an interrupted turn's closing, if any
    over = recorder.state.status == "ended"  # the bot hung up: the session is already over
    t = new_turn(history + closed)
    with logged_start(t):
        await session.begin_message(t, command, metadata, load_ms)
    if command == SESSION_END:
        await guarded(t, _session_end(t, over=over))
        return closed + tuple(recorder.events)
    await guarded(t, _restart(t))
    done = closed + tuple(recorder.events)
    await session_start(new_turn(history + done), metadata, explicit=False)
    return closed + tuple(recorder.events)


async def _session_end(t: TurnContext, *, over: bool) -> Next:
    if not over:
        # The active skill completes and default_completed runs its steps; nobody hears.
        await session.close_skills(t)
        await passes(t, allow_model=False)
    await session.end_session(t)
    return Next.ENDED


async def _restart(t: TurnContext) -> Next:
    await session.restart(t)
    return Next.WAIT


async def session_start(
    t: TurnContext, metadata: Mapping[str, JsonValue], *, explicit: bool
) -> None:
    """The session-start turn (spec §7.2): seeded memory, `default_session_start`, and
    the deterministic steps it leads to; never a model call."""
    with logged_start(t):
        await session.begin_session(t, metadata)
    await guarded(t, _session_steps(t, metadata, explicit))


async def _session_steps(t: TurnContext, metadata: Mapping[str, JsonValue], explicit: bool) -> Next:
    await session.seed_project_memory(t, metadata)  # `seed: true` fields, then locked
    if t.definition.skill(SESSION_START_SKILL) is not None:
        await lifecycle.activate(t, SESSION_START_SKILL, interrupt=False)
    if explicit:
        # The user event comes after the session-start skill was activated (spec §7.2).
        await t.emit(UserMessage(text=SESSION_START, message_id=t.new_id()))
    outcome = await passes(t, allow_model=False)
    await offline.greeted(t)  # with no model: which skills need one, said once
    return outcome


async def message(t: TurnContext, text: str, metadata: Mapping[str, JsonValue]) -> Next:
    """A user message, in order (spec §7.3)."""
    outcome = None
    if text.startswith("set:"):
        # Step 1: a `set:` tap is applied (or refused) before any model call (spec §3.5).
        outcome = await taps.apply_tap(t, text, metadata)
    if outcome is None:
        active = t.state.active_skill_id
        with t.timed("route"):
            # A `/skill_id` command activates its skill; else the active skill stays.
            tapped = await lifecycle.slash_activate(t, text)
            if not tapped and active is not None:
                await t.emit(RoutingDecided(source="sticky", skill_id=active, tier=None))
        # With no model, a tapped skill that needs one is said so before its questions.
        outcome = await offline.tapped(t) if tapped else None
        if outcome is None:
            outcome = await passes(t, allow_model=True)
    if t.plans is not None:
        await t.plans.after_turn(t, outcome)  # a clean tool-calling turn leaves a plan
    return outcome


async def approval_turn(t: TurnContext, pending: PendingConfirmation, approved: bool) -> None:
    """A pause resolved from outside the chat: the approved call runs once, then the
    deterministic steps that follow it; no model call (spec §5.6)."""
    with logged_start(t):
        await session.begin_approval(t)
    await guarded(t, approval(t, pending, approved))


async def approval(t: TurnContext, pending: PendingConfirmation, approved: bool) -> Next:
    """Resolve `pending` with the user's answer, then go on without the model."""
    site = CallSite(call_id=f"approval:{pending.pause_id}")
    outcome = await resolve_pending(t, pending, approved, site)
    nxt = outcome.next if isinstance(outcome, _Done) else Next.CONTINUE
    return await passes(t, allow_model=False) if nxt is Next.CONTINUE else nxt


async def passes(t: TurnContext, *, allow_model: bool) -> Next:
    """Deterministic passes and model calls until something says wait (spec §7.3 steps
    2-6, §7.4)."""
    empty_retried = False
    while True:
        # Step 2: every block step that needs no model runs first; one that needs the
        # user (a collect ask, `action_listen`) ends the turn here.
        outcome = await deterministic_pass(t)
        if outcome is not Next.MODEL or not allow_model:
            return Next.WAIT if outcome is Next.MODEL else outcome
        # What code can settle instead of a model call: offline routing and extraction,
        # then the plan cascade (consulted at most once a turn, plan-cache spec §3.2).
        instead = await offline.offline_step(t)
        if instead is None and t.plans is not None:
            instead = await t.plans.before_model(t)
        if instead is not None:
            if instead is not Next.CONTINUE:
                return instead
            continue
        if ending.budget_spent(t):  # the skill's or agent's `max_turns` model round trips
            return Next.EXHAUSTED
        # Steps 3-4: the scoped prompt, one model call. What led to it is committed first:
        # a model call is a commit boundary (docs/events.md, "What a crash can lose").
        await t.recorder.commit()
        response, offers = await call_model(t, t.knowledge)
        if not (response.text or "").strip() and not response.tool_calls and not empty_retried:
            empty_retried = True  # an empty completion is retried, once (spec §7.3 step 4)
            continue
        # Steps 5-6: tool calls checked and run, or text sent; then wait or loop back.
        outcome = await handle_reply(t, response, offers)
        if outcome is not Next.CONTINUE:
            return outcome


async def guarded(t: TurnContext, work: Coroutine[object, object, Next]) -> None:
    """Run a turn's work and end the turn, whatever happens to it (spec §7.8); the end
    of a turn is a commit boundary (what it buffered is appended in one transaction)."""
    try:
        outcome = await work
    except asyncio.CancelledError:
        await asyncio.shield(_end_cancelled(t))
        raise
    except Exception as exc:  # a bug or a provider failure: the turn fails, loudly in the log
        # Logged before anything else is appended: after a store error, that may fail too.
        log_turn_failure(t, exc)
        if not t.recorder.on_record(t.turn_id):
            # A refused commit took the turn's start with it: nothing of the turn is
            # stored, so there is no turn to end; the request fails (as `logged_start`).
            raise
        t.stop_detail = f"{type(exc).__name__}: {exc}"
        await t.utter("utter_internal_error")
        await ending.end_turn(t, "error", "failed")
        await t.recorder.commit()
        return
    await ending.finish_turn(t, outcome)
    try:
        await t.recorder.commit()
    except StoreError as exc:
        # The turn's end is not stored (the next request closes the turn): logged, then
        # the request fails, as a refused commit inside the work does.
        log_turn_failure(t, exc)
        raise


async def _end_cancelled(t: TurnContext) -> None:
    await ending.end_turn(t, "cancelled", "idle")
    await t.recorder.commit()
