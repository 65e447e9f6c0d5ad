"""Playing conversation tests against a harness and collecting the results.

Each test gets a fresh `ScriptedModel` and a fresh harness from the factory. Steps run in
file order: `model:` queues replies at once, `user:` sends one message (one turn), `bot:`
checks the next unchecked bot message of the run, `assert:` checks the run so far, and
`conversation:` goes on in another conversation of the same engine (each conversation keeps
its own count of checked bot messages; the scripted model is shared), and `feedback:` gives
explicit plan feedback on the current conversation's last turn. The
first failing step fails the test. At the end the script must be used up (unless
`allow_leftover: true`). An agent project with errors (`DefinitionError` from the
factory) makes the whole file malformed; any other exception fails the test it hit.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from keel.errors import DefinitionError
from keel.source.diagnostics import Diagnostic, diag
from keel.testing.conversation.assertions import Observation, check_bot, run_checks
from keel.testing.conversation.discover import find_test_files
from keel.testing.conversation.matching import describe_event
from keel.testing.conversation.parse import parse_test_file
from keel.testing.conversation.results import CaseResult, FileResult, Summary
from keel.testing.conversation.spec import (
    AssertStep,
    BotStep,
    ConversationCase,
    ConversationFile,
    ConversationStep,
    FeedbackStep,
    ModelStep,
    Step,
    UserStep,
    step_label,
)
from keel.testing.harness_protocol import (
    CancellingHarness,
    FeedbackHarness,
    Harness,
    SwitchingHarness,
)
from keel.testing.scripted import AbsentModel, ScriptedModel

HarnessFactory = Callable[[Path, ScriptedModel], Harness]
"""Makes a harness for the agent project at a path, answering through the given model."""

LAST_EVENTS = 8
"""How many of the run's last events a failure shows."""


@dataclass(kw_only=True, slots=True)
class _Run:
    """The mutable progress of one test (never leaves this module)."""

    harness: Harness
    model: ScriptedModel
    bots_checked: int = 0
    stop_reason: str | None = None
    paused: dict[str, tuple[int, str | None]] = field(default_factory=dict)
    """Per conversation left by a switch: its checked bot messages and last stop reason."""

    def observe(self) -> Observation:
        return Observation(
            events=tuple(self.harness.events),
            state=self.harness.state,
            stop_reason=self.stop_reason,
            model_calls=len(self.model.requests),
            replies_left=len(self.model.remaining),
            requests=self.model.requests,
        )


async def run_case(
    case: ConversationCase, file: ConversationFile, make_harness: HarnessFactory
) -> CaseResult:
    """Play one test. `DefinitionError` from the factory propagates (the file is unusable)."""
    model = AbsentModel() if file.no_model else ScriptedModel()
    try:
        harness = make_harness(file.agent, model)
    except DefinitionError:
        raise
    except Exception as exc:
        return _result(case, file, f"cannot start the harness: {type(exc).__name__}: {exc}")
    run = _Run(harness=harness, model=model)
    try:
        for number, step in enumerate(case.steps, start=1):
            problems = await _play(step, run)
            if problems:
                return _failure(case, file, run, f"step {number} ({_where(step)})", problems)
        if run.model.remaining and not case.allow_leftover:
            leftover = [reply.describe() for reply in run.model.remaining]
            problem = f"{len(leftover)} scripted reply(ies) left over: " + "; ".join(leftover)
            return _failure(case, file, run, "end of test", (problem,))
    finally:
        await _close(harness)
    return CaseResult(file=file.display, name=case.name, passed=True)


async def _play(step: Step, run: _Run) -> tuple[str, ...]:
    if isinstance(step, ModelStep):
        run.model.extend(step.replies)
        return ()
    if isinstance(step, UserStep):
        if step.cancel_on_tool is not None:
            return await _send_cancelling(step, step.cancel_on_tool, run)
        return await _send(step, run)
    if isinstance(step, ConversationStep):
        return await _switch(step.conversation_id, run)
    if isinstance(step, FeedbackStep):
        return await _feedback(step.signal, run)
    if isinstance(step, BotStep):
        run.bots_checked += 1
        bots = run.observe().bot_messages
        message = bots[run.bots_checked - 1] if run.bots_checked <= len(bots) else None
        reason = check_bot(step.expect, message, run.bots_checked)
        return () if reason is None else (reason,)
    assert isinstance(step, AssertStep)
    return run_checks(step.checks, run.observe())


async def _switch(conversation_id: str, run: _Run) -> tuple[str, ...]:
    """Go on in `conversation_id`, keeping the progress of the one left."""
    harness = run.harness
    if not isinstance(harness, SwitchingHarness):
        return ("this harness drives one conversation (it has no switch)",)
    run.paused[harness.conversation_id] = (run.bots_checked, run.stop_reason)
    await harness.switch(conversation_id)
    run.bots_checked, run.stop_reason = run.paused.pop(conversation_id, (0, None))
    return ()


async def _feedback(signal: str, run: _Run) -> tuple[str, ...]:
    """Give `signal` on the current conversation's last turn (its plan learns from it)."""
    if not isinstance(run.harness, FeedbackHarness):
        return ("this harness gives no plan feedback",)
    try:
        await run.harness.feedback(signal)
    except Exception as exc:  # a refusal (nothing to learn from) fails the step
        return (f"feedback {signal} was refused: {type(exc).__name__}: {exc}",)
    return ()


async def _send(step: UserStep, run: _Run) -> tuple[str, ...]:
    try:
        if step.metadata is None:
            outcome = await run.harness.send(step.text)
        else:
            outcome = await run.harness.send(step.text, metadata=dict(step.metadata))
    except Exception as exc:  # any engine failure fails the test, with its message
        return (f"the engine raised {type(exc).__name__}: {exc}",)
    run.stop_reason = outcome.stop_reason
    if run.model.exhaustion is not None:
        return (str(run.model.exhaustion),)
    return ()


async def _send_cancelling(step: UserStep, tool: str, run: _Run) -> tuple[str, ...]:
    """Send the message and cancel the turn once `tool` starts; the turn must end cancelled."""
    harness = run.harness
    if not isinstance(harness, CancellingHarness):
        return ("this harness cannot cancel a turn (it has no send_cancelling)",)
    try:
        await harness.send_cancelling(step.text, on_tool=tool)
    except Exception as exc:  # any engine failure fails the test, with its message
        return (f"the engine raised {type(exc).__name__}: {exc}",)
    run.stop_reason = harness.state.last_stop_reason
    if run.model.exhaustion is not None:
        return (str(run.model.exhaustion),)
    if run.stop_reason != "cancelled":
        return (f"the turn was not cancelled: tool {tool!r} never started",)
    return ()


async def _close(harness: Harness) -> None:
    close = getattr(harness, "aclose", None)
    if close is not None:
        await close()


def _where(step: Step) -> str:
    label = step_label(step)
    return label if step.line is None else f"{label}, line {step.line}"


def _failure(
    case: ConversationCase,
    file: ConversationFile,
    run: _Run,
    where: str,
    problems: tuple[str, ...],
) -> CaseResult:
    events = tuple(run.harness.events)
    start = max(0, len(events) - LAST_EVENTS)
    shown = [describe_event(event, start + i) for i, event in enumerate(events[start:])]
    details = (
        *problems[1:],
        f"last {len(shown)} of {len(events)} events:" if shown else "no events",
        *(f"  {line}" for line in shown),
    )
    return _result(case, file, f"{where}: {problems[0]}", details)


def _result(
    case: ConversationCase, file: ConversationFile, reason: str, details: tuple[str, ...] = ()
) -> CaseResult:
    return CaseResult(
        file=file.display, name=case.name, passed=False, reason=reason, details=details
    )


async def run_file(
    file: ConversationFile, make_harness: HarnessFactory, *, name_filter: str | None = None
) -> FileResult:
    """Run the tests of a parsed file (those whose name contains `name_filter`)."""
    results: list[CaseResult] = []
    for case in file.cases:
        if name_filter is not None and name_filter not in case.name:
            continue
        try:
            results.append(await run_case(case, file, make_harness))
        except DefinitionError as exc:
            return FileResult(file=file.display, diagnostics=_agent_problems(file, exc))
    return FileResult(file=file.display, results=tuple(results))


def _agent_problems(file: ConversationFile, error: DefinitionError) -> tuple[Diagnostic, ...]:
    """The agent's diagnostics, their files shown under the agent folder."""
    agent = display_path(file.agent)
    problem = diag("test.agent.invalid", file.display, None, f"agent project {agent} has errors")
    found = (replace(d, file=f"{agent}/{d.file}") for d in error.diagnostics)
    return (problem, *found)


async def arun_test_file(
    path: Path,
    make_harness: HarnessFactory,
    *,
    default_agent: Path | None = None,
    display: str | None = None,
    name_filter: str | None = None,
) -> FileResult:
    """Parse and run one test file (async form of `run_test_file`)."""
    file, diagnostics = parse_test_file(path, display=display, default_agent=default_agent)
    if file is None:
        return FileResult(file=display or path.as_posix(), diagnostics=tuple(diagnostics))
    return await run_file(file, make_harness, name_filter=name_filter)


def run_test_file(
    path: Path,
    make_harness: HarnessFactory,
    *,
    default_agent: Path | None = None,
    name_filter: str | None = None,
) -> FileResult:
    """Parse and run one test file; never raises for a malformed file (see diagnostics)."""
    return asyncio.run(
        arun_test_file(path, make_harness, default_agent=default_agent, name_filter=name_filter)
    )


async def arun_paths(
    paths: Iterable[Path],
    make_harness: HarnessFactory,
    *,
    default_agent: Path | None = None,
    name_filter: str | None = None,
) -> Summary:
    """Run every test file named or found under `paths` (async form of `run_paths`)."""
    files = []
    for path in find_test_files(paths):
        files.append(
            await arun_test_file(
                path,
                make_harness,
                default_agent=default_agent,
                display=display_path(path),
                name_filter=name_filter,
            )
        )
    return Summary(files=tuple(files))


def run_paths(
    paths: Iterable[Path],
    make_harness: HarnessFactory,
    *,
    default_agent: Path | None = None,
    name_filter: str | None = None,
) -> Summary:
    """Run every test file named or found under `paths` (folders are searched recursively)."""
    return asyncio.run(
        arun_paths(paths, make_harness, default_agent=default_agent, name_filter=name_filter)
    )


def display_path(path: Path) -> str:
    """`path` relative to the working folder when it is inside it, with forward slashes."""
    try:
        return path.resolve().relative_to(Path.cwd()).as_posix()
    except ValueError:
        return path.as_posix()
