"""Adversarial scripted models against the turn loop (issue 3, second acceptance bullet).

Each attempt is a scripted model that tries one thing the spec forbids: call a tool hidden by
`requires` (false, unevaluable, or closed earlier in the same batch), call a tool the active
skill does not list, activate a skill it may not route to, call `hangup`, write memory the
model may not write, resolve a confirmation that is not pending, mix `listen` with text or
with a tool call, call `complete_skill` inside an ordered block. Every attempt must be
refused (see `adversarial_arena` for what that means) and the log must say so.

`test_attempt_is_refused` runs each attempt as its own test; `test_every_attempt_is_refused`
runs them all again and reports `adversarial: N attempts, M refused`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from adversarial_arena import (
    AGENT,
    Arena,
    activate,
    assert_nothing_happened,
    assert_refused,
    call,
)

from keel.events.model import BotMessage, ToolExecuted
from keel.project.load import load_project

Attempt = Callable[[], Awaitable[None]]
ATTEMPTS: dict[str, Attempt] = {}


def attempt(func: Attempt) -> Attempt:
    """Register an attempt under its function name."""
    ATTEMPTS[func.__name__] = func
    return func


async def _vault() -> Arena:
    arena = Arena()
    await arena.open_vault()
    return arena


# --- tools hidden by `requires` ------------------------------------------------------------


@attempt
async def tool_hidden_by_false_requires() -> None:
    arena = await _vault()
    attack = await arena.attack(call("atk", "open_vault"))
    assert "open_vault" not in attack.offered()
    assert_refused(attack, call_id="atk", codes="tool.requires_closed")
    assert_nothing_happened(attack, tool="open_vault")


@attempt
async def tool_hidden_by_unevaluable_requires() -> None:
    arena = await _vault()
    # `session.vault.count > 3` with count unset is `None > 3`: CLOSED, so hidden and refused.
    attack = await arena.attack(call("atk", "peek"))
    assert "peek" not in attack.offered()
    assert_refused(attack, call_id="atk", codes="tool.requires_closed")
    assert_nothing_happened(attack, tool="peek")


@attempt
async def tool_gate_closed_earlier_in_the_batch() -> None:
    arena = await _vault()
    await arena.turn("count to five", call("c5", "set_count", {"value": 5}), "Counted.")
    batch = {
        "tool_calls": [
            {"id": "close", "name": "set_count", "arguments": {"value": 0}},
            {"id": "atk", "name": "peek", "arguments": {}},
        ]
    }
    attack = await arena.attack(batch)
    assert "peek" in attack.offered()  # offered when the model was asked...
    assert_refused(attack, call_id="atk", codes="tool.requires_closed")  # ...refused at dispatch
    assert attack.runs("peek") == []
    assert [r.tool_call_id for r in attack.runs("set_count")] == ["close"]
    assert attack.after.memory.get("vault.secret_level") is None
    assert attack.after.stack == attack.before.stack


# --- tools the active skill does not list --------------------------------------------------


@attempt
async def tool_of_another_skill() -> None:
    arena = await _vault()
    attack = await arena.attack(call("atk", "other_tool"))
    assert "other_tool" not in attack.offered()
    assert_refused(attack, call_id="atk", codes="tool.not_offered")
    assert_nothing_happened(attack, tool="other_tool")


@attempt
async def shared_tool_not_imported() -> None:
    arena = await _vault()
    attack = await arena.attack(call("atk", "shared_lookup"))
    assert "shared_lookup" not in attack.offered()
    assert_refused(attack, call_id="atk", codes="tool.not_offered")
    assert_nothing_happened(attack, tool="shared_lookup")


@attempt
async def post_write_hook_called_as_a_tool() -> None:
    arena = await _vault()
    attack = await arena.attack(call("atk", "run_after_setting_note"))
    assert "run_after_setting_note" not in attack.offered()
    assert_refused(attack, call_id="atk", codes="tool.not_offered")
    assert_nothing_happened(attack, tool="run_after_setting_note")


# --- skills the model may not activate -----------------------------------------------------


async def _activate_forbidden(target: str) -> None:
    arena = await _vault()
    attack = await arena.attack(activate(target, call_id="atk"))
    assert "activate" in attack.offered()
    activate_offer = next(t for t in attack.requests[0].tools if t.name == "activate")
    assert target not in activate_offer.description.split("Targets: ", 1)[1].split(", ")
    assert_refused(attack, call_id="atk", codes="skill.not_eligible")
    assert_nothing_happened(attack, tool="activate")
    assert attack.after.active_skill_id == "vault"


@attempt
async def activate_engine_managed_skill() -> None:
    await _activate_forbidden("backoffice")


@attempt
async def activate_bundled_engine_managed_skill() -> None:
    await _activate_forbidden("default_completed")


@attempt
async def activate_hidden_skill() -> None:
    await _activate_forbidden("hidden_skill")


@attempt
async def activate_disabled_skill() -> None:
    await _activate_forbidden("disabled_skill")


@attempt
async def activate_ineligible_skill() -> None:
    await _activate_forbidden("gated_skill")  # requires session.project.vip == True


@attempt
async def activate_unknown_skill() -> None:
    await _activate_forbidden("no_such_skill")


# --- hangup --------------------------------------------------------------------------------


@attempt
async def call_hangup() -> None:
    arena = await _vault()
    attack = await arena.attack(call("atk", "hangup"))
    assert "hangup" not in attack.offered()
    assert_refused(attack, call_id="atk", codes="tool.not_offered")
    assert_nothing_happened(attack, tool="hangup")
    assert attack.after.status != "ended"


# --- memory the model may not write --------------------------------------------------------


async def _forbidden_write(entry: str, code: str) -> None:
    arena = await _vault()
    attack = await arena.attack(call("atk", "set_fields", {"fields": {entry: "x"}}))
    refusal = assert_refused(attack, call_id="atk", codes=code)
    assert entry in refusal.arguments
    # set_fields is itself a framework tool run (recorded like any tool, spec §6): an error.
    assert [r.is_error for r in attack.runs("set_fields")] == [True]
    assert_nothing_happened(attack, tool=None)


@attempt
async def write_field_not_llm_settable() -> None:
    await _forbidden_write("secret_level", "memory.write.not_llm_settable")


@attempt
async def write_project_memory_qualified() -> None:
    await _forbidden_write("project.region", "memory.write.project_by_llm")


@attempt
async def write_project_memory_bare_name() -> None:
    await _forbidden_write("vip", "memory.write.project_by_llm")


@attempt
async def write_another_skills_field() -> None:
    await _forbidden_write("other.topic", "memory.write.foreign_namespace")


@attempt
async def write_undeclared_field() -> None:
    await _forbidden_write("vault.backdoor", "memory.write.undeclared")


@attempt
async def write_system_memory() -> None:
    # Forging a pending confirmation through set_fields would let the model run tools later.
    await _forbidden_write("system.pending_tool_confirmation", "memory.write.system")


# --- confirmations, listen, complete_skill -------------------------------------------------


@attempt
async def resolve_confirmation_none_pending() -> None:
    arena = await _vault()
    attack = await arena.attack(call("atk", "resolve_tool_confirmation", {"confirmed": True}))
    assert "resolve_tool_confirmation" not in attack.offered()
    # Not offered (nothing is pending); the handler's own check would say none_pending.
    assert_refused(attack, call_id="atk", codes=("tool.not_offered", "confirmation.none_pending"))
    assert_nothing_happened(attack, tool="resolve_tool_confirmation")
    assert attack.after.pending_confirmation is None


async def _shred_pending() -> Arena:
    """The vault with a `shred` call waiting for the user's confirmation."""
    arena = await _vault()
    arena.model.extend([call("shred1", "shred"), "Shall I shred the vault?"])
    result = await arena.harness.send("shred the vault")
    arena.model.assert_complete()
    assert result.stop_reason == "paused"
    assert arena.harness.state.pending_confirmation is not None
    return arena


@attempt
async def resolve_confirmation_in_the_asking_turn() -> None:
    arena = await _vault()
    # The model asks and then answers its own question in the same turn (spec §5.6 step 5).
    arena.model.add(call("shred1", "shred"))
    attack = await arena.attack(
        call("atk", "resolve_tool_confirmation", {"confirmed": True}),
        follow_up=("Shall I shred the vault?",),
    )
    assert "resolve_tool_confirmation" in attack.offered(1)
    refusal = next(iter(attack.refusals("atk")))
    assert refusal.code == "confirmation.same_turn"
    assert refusal.message in attack.tool_message("atk")
    assert attack.runs("shred") == []
    assert attack.after.pending_confirmation is not None
    assert attack.after.memory.get("vault.secret_level") is None
    assert attack.after.status == "paused"


@attempt
async def recall_gated_tool_while_pending() -> None:
    arena = await _shred_pending()
    attack = await arena.attack(call("atk", "shred"))
    assert_refused(attack, call_id="atk", codes="tool.confirmation_pending")
    assert_nothing_happened(attack, tool="shred")


@attempt
async def resolve_confirmation_after_the_gate_closed() -> None:
    arena = await _vault()
    await arena.turn("keep x", call("n1", "set_fields", {"fields": {"note": "x"}}), "Kept.")
    arena.model.extend([call("burn1", "burn"), "Shall I burn the note?"])
    await arena.harness.send("burn the note")
    assert arena.harness.state.pending_confirmation is not None
    # The user says yes; the model first clears the note (closing burn's `requires`), then
    # resolves. The held call must be re-checked at dispatch and refused (fail closed).
    batch = {
        "tool_calls": [
            {"id": "clear", "name": "set_fields", "arguments": {"fields": {"note": None}}},
            {"id": "atk", "name": "resolve_tool_confirmation", "arguments": {"confirmed": True}},
        ]
    }
    attack = await arena.attack(batch)
    assert "resolve_tool_confirmation" in attack.offered()
    assert attack.after.memory.get("vault.note") is None
    assert_refused(attack, call_id="atk", codes="tool.requires_closed")
    assert attack.runs("burn") == []
    assert attack.after.memory.get("vault.secret_level") is None


@attempt
async def listen_while_confirmation_pending() -> None:
    arena = await _shred_pending()
    attack = await arena.attack(call("atk", "listen"), follow_up=("Shall I shred it, yes or no?",))
    assert "listen" not in attack.offered()
    # listen is withheld while a confirmation is pending (spec §5.6 step 4); called anyway,
    # alone, it is a call of a tool not offered: refused with a model-visible error, and the
    # model gets another go (spec §7.4 drops listen only when it comes with text or tools).
    assert_refused(attack, call_id="atk", codes="tool.not_offered")
    assert attack.bot_texts == ("Shall I shred it, yes or no?",)
    assert_nothing_happened(attack, tool="listen")


@attempt
async def hangup_until_the_budget_runs_out() -> None:
    arena = await _vault()
    budget = arena.harness.definition.config.max_turns
    hangups = [call(f"atk{n}", "hangup") for n in range(1, budget)]
    attack = await arena.attack(call("atk0", "hangup"), follow_up=hangups)
    assert len(attack.requests) == budget
    for n in range(budget - 1):
        assert_refused(attack, call_id=f"atk{n}", codes="tool.not_offered")
    # The last refusal ends the turn on the budget: logged, but no model call follows.
    last = attack.refusals(f"atk{budget - 1}")
    assert [r.code for r in last] == ["tool.not_offered"]
    assert attack.after.last_stop_reason == "budget_exhausted"
    notices = [e.utter_action for e in attack.events if isinstance(e, BotMessage)]
    assert notices == ["utter_budget_exhausted"]  # the budget notice, nothing else
    assert_nothing_happened(attack, tool="hangup")


@attempt
async def listen_with_text() -> None:
    arena = await _vault()
    reply = {"text": "Here is my answer.", "tool_calls": [{"id": "atk", "name": "listen"}]}
    attack = await arena.attack(reply, follow_up=())
    # Text wins, listen is dropped (spec §7.4): the text is sent and the turn waits.
    assert_refused(attack, call_id="atk", codes="listen.dropped", visible=False)
    assert attack.bot_texts == ("Here is my answer.",)
    assert len(attack.requests) == 1
    assert_nothing_happened(attack, tool="listen")


@attempt
async def listen_with_tool_call() -> None:
    arena = await _vault()
    reply = {
        "tool_calls": [
            {"id": "atk", "name": "listen"},
            {"id": "echo1", "name": "echo", "arguments": {"text": "hi"}},
        ]
    }
    attack = await arena.attack(reply)
    # Listen is dropped, the other tool runs and the loop goes on (spec §7.4).
    assert_refused(attack, call_id="atk", codes="listen.dropped", visible=False)
    assert [r.tool_call_id for r in attack.runs("echo")] == ["echo1"]
    assert "echo" in attack.tool_message("echo1")
    assert len(attack.requests) == 2
    assert attack.bot_texts == ("ok",)
    assert_nothing_happened(attack, tool="listen")


@attempt
async def complete_skill_inside_block() -> None:
    arena = await _vault()
    await arena.turn(
        "step by step please", activate("guarded", "enter"), "What should I keep for you?"
    )
    assert arena.harness.state.stack[-1].type == "ordered_block"
    attack = await arena.attack(call("atk", "complete_skill"))
    assert "complete_skill" not in attack.offered()
    # Not offered mid-block; the handler's own check would say complete_in_block.
    assert_refused(attack, call_id="atk", codes=("tool.not_offered", "skill.complete_in_block"))
    assert_nothing_happened(attack, tool="complete_skill")
    assert not any(isinstance(e, ToolExecuted) for e in attack.events)
    assert attack.bot_texts == ("ok",)


# --- the tests -----------------------------------------------------------------------------

KNOWN_ENGINE_BUGS: dict[str, str] = {}
"""Attempt name -> reason, for attempts the engine does not refuse yet (strict xfail)."""


def _params() -> list[object]:
    return [
        pytest.param(
            name,
            id=name,
            marks=[pytest.mark.xfail(strict=True, reason=KNOWN_ENGINE_BUGS[name])]
            if name in KNOWN_ENGINE_BUGS
            else [],
        )
        for name in ATTEMPTS
    ]


def test_agent_is_valid() -> None:
    """What `keel validate tests/adversarial/agent` checks: no errors, no warnings either."""
    definition, diagnostics = load_project(AGENT)
    assert definition is not None
    assert [d.render() for d in diagnostics] == []
    assert {"vault", "other", "hidden_skill", "disabled_skill", "gated_skill"} <= set(
        definition.skills
    )


async def test_project_initial_values_are_set_at_session_start() -> None:
    """`activate_ineligible_skill` relies on `vip == True` being FALSE: vip starts False."""
    arena = await _vault()
    assert arena.harness.state.memory.get("project.vip") is False


@pytest.mark.parametrize("name", _params())
async def test_attempt_is_refused(name: str) -> None:
    await ATTEMPTS[name]()


@pytest.mark.xfail(
    bool(KNOWN_ENGINE_BUGS),
    strict=True,
    reason="engine bugs: attempts not refused yet: " + ", ".join(KNOWN_ENGINE_BUGS),
)
async def test_every_attempt_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """Runs every attempt again and reports the tally; all of them must be refused."""
    failures: dict[str, str] = {}
    for name, run in ATTEMPTS.items():
        try:
            await run()
        except Exception as exc:  # any failure means the attempt was not (cleanly) refused
            failures[name] = f"{type(exc).__name__}: {exc}"
    refused = len(ATTEMPTS) - len(failures)
    line = f"adversarial: {len(ATTEMPTS)} attempts, {refused} refused"
    if failures:
        line += " (not refused: " + ", ".join(failures) + ")"
    with capsys.disabled():
        print(f"\n{line}")
    assert len(ATTEMPTS) >= 20
    assert refused == len(ATTEMPTS), failures
