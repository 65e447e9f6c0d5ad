"""Readable memory (spec §4.2) and every write rule of spec §3.3."""

from __future__ import annotations

import pytest

from keel.conditions import Outcome, Reference, Unreadable, evaluate, parse_condition
from keel.memory.access import (
    ENGINE_READER,
    WRITE_CODES,
    WriteDecision,
    Writer,
    can_read,
    check_write,
    is_collect_owned,
    reader_for,
)
from keel.memory.schema import MemoryField, MemorySchema


def make(namespace: str, name: str, visibility: str, **kw: object) -> MemoryField:
    return MemoryField(namespace=namespace, name=name, type="text", visibility=visibility, **kw)  # type: ignore[arg-type]


SCHEMA = MemorySchema.of(
    [
        make("project", "city", "project"),
        make("project", "plan", "project", mutable=True),
        make("project", "phone", "project", seed=True),
        make("project", "both", "project"),
    ],
    [
        make("weather", "city", "public", llm_settable=True),
        make("weather", "forecast", "public"),
        make("weather", "days", "private"),
        make("weather", "both", "private"),
    ],
    [
        make("billing", "amount", "public", llm_settable=True),
        make("billing", "card", "private"),
    ],
)


def field(key: str) -> MemoryField:
    found = SCHEMA.field(key)
    assert found is not None
    return found


# --- reading -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "reader", "readable"),
    [
        ("weather.city", "weather", True),  # own public
        ("weather.days", "weather", True),  # own private
        ("weather.city", "billing", True),  # other's public
        ("weather.days", "billing", False),  # other's private
        ("project.city", "billing", True),
        ("project.city", None, True),
        ("weather.city", None, True),
        ("weather.days", None, False),
        ("system.pending_tool_confirmation", "weather", False),
        ("system.__discovered__", None, False),
        ("system.session_started_metadata", ENGINE_READER, True),
        ("billing.card", ENGINE_READER, True),
    ],
)
def test_can_read_field(key: str, reader: str | None, readable: bool) -> None:
    assert can_read(field(key), reader) is readable


@pytest.mark.parametrize(
    ("key", "reader", "readable"),
    [
        ("project.anything", "weather", True),
        ("weather.days", "weather", True),
        ("weather.city", "billing", False),  # visibility unknown from a key: fail closed
        ("system.__discovered__", "weather", False),
        ("system.__discovered__", ENGINE_READER, True),
        ("bare", "weather", False),
    ],
)
def test_can_read_key(key: str, reader: str | None, readable: bool) -> None:
    assert can_read(key, reader) is readable


def test_reader_returns_values_and_none_when_unset() -> None:
    read = reader_for({"weather.days": 3, "project.city": "Oslo"}, SCHEMA, "weather")
    assert read(Reference(namespace="weather", entry="days")) == 3
    assert read(Reference(namespace="project", entry="city")) == "Oslo"
    assert read(Reference(namespace="weather", entry="city")) is None
    assert read(Reference(namespace="billing", entry="amount")) is None


@pytest.mark.parametrize(
    ("namespace", "entry"),
    [
        ("weather", "nothing"),  # undeclared
        ("billing", "card"),  # another skill's private
        ("system", "pending_tool_confirmation"),
        ("nobody", "x"),
    ],
)
def test_reader_refuses_unreadable(namespace: str, entry: str) -> None:
    read = reader_for({"billing.card": "4111", "weather.nothing": 1}, SCHEMA, "weather")
    with pytest.raises(Unreadable) as caught:
        read(Reference(namespace=namespace, entry=entry))
    assert caught.value.reference == Reference(namespace=namespace, entry=entry)


def test_engine_reader_reads_system_memory() -> None:
    read = reader_for({"system.__discovered__": {"a": 1}}, SCHEMA, ENGINE_READER)
    assert read(Reference(namespace="system", entry="__discovered__")) == {"a": 1}


def test_reader_plugs_into_condition_evaluation() -> None:
    values = {"weather.days": 5, "billing.card": "x"}
    read = reader_for(values, SCHEMA, "weather")
    assert evaluate(parse_condition("session.weather.days > 2"), read) is Outcome.TRUE
    assert evaluate(parse_condition("session.weather.city"), read) is Outcome.FALSE
    assert evaluate(parse_condition("session.billing.card"), read) is Outcome.CLOSED


# --- writing -----------------------------------------------------------------------

NONE: frozenset[str] = frozenset()
UNDECLARED = "memory.write.undeclared"
NOT_LLM = "memory.write.not_llm_settable"
BY_LLM = "memory.write.project_by_llm"
ONCE = "memory.write.write_once"
FOREIGN = "memory.write.foreign_namespace"
SYSTEM = "memory.write.system"
NOT_SEED = "memory.write.not_seed"
PENDING = "system.pending_tool_confirmation"
FOUND = "system.__discovered__"
META = "system.session_started_metadata"

# (writer, key, active skill, already set, collect-owned, refusal code or None, field key)
WRITE_TABLE: list[tuple[Writer, str, str | None, bool, frozenset[str], str | None, str | None]] = [
    # tools: active skill or project; bare names resolve in the own skill first
    ("tool", "forecast", "weather", False, NONE, None, "weather.forecast"),
    ("tool", "days", "weather", True, NONE, None, "weather.days"),  # skill fields rewrite
    ("tool", "city", "weather", False, NONE, None, "weather.city"),
    ("tool", "project.city", "weather", False, NONE, None, "project.city"),
    ("tool", "phone", "weather", False, NONE, None, "project.phone"),
    ("tool", "city", None, False, NONE, None, "project.city"),
    ("tool", "billing.amount", "weather", False, NONE, FOREIGN, "billing.amount"),
    ("tool", "weather.days", None, False, NONE, FOREIGN, "weather.days"),
    ("tool", "nothing", "weather", False, NONE, UNDECLARED, None),
    ("tool", "amount", "weather", False, NONE, UNDECLARED, None),
    ("tool", FOUND, "weather", False, NONE, SYSTEM, FOUND),
    ("tool", "project.city", "weather", True, NONE, ONCE, "project.city"),
    ("tool", "plan", "weather", True, NONE, None, "project.plan"),  # mutable
    # LLM: own llm_settable or collect-owned entries only, never project
    ("llm", "city", "weather", False, NONE, None, "weather.city"),
    ("llm", "city", "weather", True, NONE, None, "weather.city"),
    ("llm", "forecast", "weather", False, NONE, NOT_LLM, "weather.forecast"),
    ("llm", "forecast", "weather", False, frozenset({"forecast"}), None, "weather.forecast"),
    ("llm", "days", "weather", False, frozenset({"weather.days"}), None, "weather.days"),
    ("llm", "days", "weather", False, frozenset({"billing.days"}), NOT_LLM, "weather.days"),
    ("llm", "plan", "weather", False, NONE, BY_LLM, "project.plan"),
    ("llm", "project.city", "weather", False, frozenset({"city"}), BY_LLM, "project.city"),
    ("llm", "project.city", "weather", False, frozenset({"project.city"}), BY_LLM, "project.city"),
    ("llm", "billing.amount", "weather", False, NONE, FOREIGN, "billing.amount"),
    ("llm", "weather.city", None, False, NONE, FOREIGN, "weather.city"),
    ("llm", "nothing", "weather", False, NONE, UNDECLARED, None),
    ("llm", PENDING, "weather", False, NONE, SYSTEM, PENDING),
    # ordered block set_memory: literals into the active skill or project
    ("block", "forecast", "weather", False, NONE, None, "weather.forecast"),
    ("block", "both", "weather", False, NONE, None, "weather.both"),
    ("block", "project.both", "weather", False, NONE, None, "project.both"),
    ("block", "city", "billing", False, NONE, None, "project.city"),
    ("block", "city", "billing", True, NONE, ONCE, "project.city"),
    ("block", "weather.forecast", "billing", False, NONE, FOREIGN, "weather.forecast"),
    ("block", "nope", "billing", False, NONE, UNDECLARED, None),
    # buttons: any declared field of the active skill or project; llm_settable not needed
    ("button", "weather.forecast", "weather", False, NONE, None, "weather.forecast"),
    ("button", "weather.days", "weather", True, NONE, None, "weather.days"),
    ("button", "project.city", "weather", False, NONE, None, "project.city"),
    ("button", "project.city", "weather", True, NONE, ONCE, "project.city"),
    ("button", "project.plan", "weather", True, NONE, None, "project.plan"),
    ("button", "billing.amount", "weather", False, NONE, FOREIGN, "billing.amount"),
    ("button", "weather.nothing", "weather", False, NONE, UNDECLARED, None),
    ("button", FOUND, "weather", False, NONE, SYSTEM, FOUND),
    # session start: seed project fields only, then locked
    ("session_start", "project.phone", None, False, NONE, None, "project.phone"),
    ("session_start", "phone", None, False, NONE, None, "project.phone"),
    ("session_start", "project.phone", None, True, NONE, ONCE, "project.phone"),
    ("session_start", "project.city", None, False, NONE, NOT_SEED, "project.city"),
    ("session_start", "weather.city", "weather", False, NONE, NOT_SEED, "weather.city"),
    ("session_start", META, None, False, NONE, SYSTEM, META),
    # post-write hooks write like tools of the owning (active) skill
    ("hook", "forecast", "weather", False, NONE, None, "weather.forecast"),
    ("hook", "project.city", "weather", True, NONE, ONCE, "project.city"),
    ("hook", "billing.card", "weather", False, NONE, FOREIGN, "billing.card"),
    # the engine writes anything declared, system memory included, write-once aside
    ("engine", PENDING, "weather", True, NONE, None, PENDING),
    ("engine", "billing.card", "weather", False, NONE, None, "billing.card"),
    ("engine", "project.city", None, True, NONE, None, "project.city"),
    ("engine", "system.other", None, False, NONE, UNDECLARED, None),
]


@pytest.mark.parametrize(
    ("writer", "key", "active", "is_set", "collect", "code", "field_key"), WRITE_TABLE
)
def test_write_rules(
    writer: Writer,
    key: str,
    active: str | None,
    is_set: bool,
    collect: frozenset[str],
    code: str | None,
    field_key: str | None,
) -> None:
    decision = check_write(SCHEMA, key, writer, active, is_set, collect)
    assert (decision.allowed, decision.code, decision.key) == (code is None, code, field_key)
    assert bool(decision.reason) is (code is not None)


def test_write_table_covers_every_code_and_writer() -> None:
    assert {row[5] for row in WRITE_TABLE} - {None} == WRITE_CODES
    assert {row[0] for row in WRITE_TABLE} == {
        "tool",
        "llm",
        "block",
        "button",
        "session_start",
        "hook",
        "engine",
    }


def test_write_decision_defaults() -> None:
    decision = check_write(SCHEMA, "forecast", "tool", "weather", False)
    assert decision == WriteDecision(allowed=True, field=field("weather.forecast"))


@pytest.mark.parametrize(
    ("key", "owned", "expected"),
    [
        ("weather.days", frozenset({"days"}), True),
        ("weather.days", frozenset({"weather.days"}), True),
        ("weather.days", frozenset({"other"}), False),
        ("project.city", frozenset({"city"}), False),  # collects never own project fields
        ("project.city", frozenset({"project.city"}), False),
        ("system.__discovered__", frozenset({"system.__discovered__"}), False),
    ],
)
def test_is_collect_owned(key: str, owned: frozenset[str], expected: bool) -> None:
    assert is_collect_owned(field(key), owned) is expected
