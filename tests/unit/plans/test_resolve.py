"""Ref resolution with provenance tags, paths, piping and lenient fallbacks."""

from __future__ import annotations

from datetime import datetime

import pytest
from executor_kit import tool

from keel.plans.paths import MISSING, brief, is_empty, walk
from keel.plans.piping import pipe_target
from keel.plans.plan import PlanError, Step
from keel.plans.resolve import (
    SAFE_FOR_EFFECTS,
    ResolveEnv,
    Tagged,
    resolve_args,
    resolve_value,
    runtime_value,
)

ORDERS = {
    "entries": [{"id": "W1", "path": "/a"}, {"id": "W2", "path": "/b"}],
    "metadata": {"source": "db"},
}
READ = tool("find_things", props={"q": "string", "n": "integer", "opt": "string"}, required=("q",))
WRITE = tool(
    "send_note",
    effect="send",
    props={"to": "string", "body": "string", "kind": "string"},
    required=("to",),
    bindings={"kind": "structural"},
)


def env(*, served: bool = True, **kw: object) -> ResolveEnv:
    base: dict[str, object] = {
        "outputs": {1: ORDERS, 2: [1, 2, 3], 3: []},
        "runtime": {"actor": "ann", "lang": "", "now": datetime(2024, 5, 1, 12, 0)},
        "fillers": {"greeting": "hello"},
        "slots": {"user": "bob@example.com", "n": 5, "first": "Bob", "last": "Smith"},
        "served": served,
    }
    base.update(kw)
    return ResolveEnv(**base)  # type: ignore[arg-type]


def resolve(args: dict[str, object], target=READ, step_id: int = 4, **kw: object):  # type: ignore[no-untyped-def]
    step = Step(id=step_id, tool=target.name, args=args)
    return resolve_args(step, target.contract, env(**kw), parameters=target.parameters)


def test_the_safe_set() -> None:
    assert SAFE_FOR_EFFECTS == {
        "request_span",
        "runtime",
        "memory",
        "step_output",
        "contract_const",
    }


def test_full_match_refs_keep_native_types_and_tags() -> None:
    args, tags = resolve({"q": "${SLOT:user}", "n": "${SLOT:n}", "opt": "${step1.entries.1.id}"})  # type: ignore[misc]
    assert args == {"q": "bob@example.com", "n": 5, "opt": "W2"}
    assert tags == {"q": "request_span", "n": "request_span", "opt": "step_output"}
    args, tags = resolve({"q": "${RUNTIME:actor}", "opt": "${FILLER:greeting}"})  # type: ignore[misc]
    assert args == {"q": "ann", "opt": "hello"}
    assert tags == {"q": "runtime", "opt": "filler_llm"}


def test_literal_tags_depend_on_binding_and_origin() -> None:
    _, served = resolve({"to": "x@y.z", "kind": "memo"}, target=WRITE)  # type: ignore[misc]
    assert served == {"to": "cache_literal", "kind": "contract_const"}
    _, fresh = resolve({"to": "x@y.z", "kind": "memo"}, target=WRITE, served=False)  # type: ignore[misc]
    assert fresh == {"to": "proposed", "kind": "contract_const"}


def test_embedded_refs_render_text_and_take_the_weakest_tag() -> None:
    args, tags = resolve(
        {
            "to": "${SLOT:first} ${SLOT:last}",
            "body": "Dear ${SLOT:first}, ${FILLER:greeting}",
            "kind": "re: ${SLOT:last}",
        },
        target=WRITE,
    )  # type: ignore[misc]
    assert args["to"] == "Bob Smith" and tags["to"] == "request_span"
    assert args["body"] == "Dear Bob, hello" and tags["body"] == "cache_literal"
    assert args["kind"] == "re: Smith" and tags["kind"] == "contract_const"
    _, mixed = resolve({"to": "${SLOT:first}${FILLER:greeting}"}, target=WRITE)  # type: ignore[misc]
    assert mixed["to"] == "filler_llm"
    args, _ = resolve({"q": "ids: ${step1.entries.*.id} n=${step2.@count} ${step1.@brief}"})  # type: ignore[misc]
    assert args["q"] == "ids: W1, W2 n=3 /a, /b"  # an entry's label: its path before its id


def test_lists_and_objects_take_the_weakest_tag_of_their_items() -> None:
    tagged = resolve_value(
        ["${SLOT:user}", "${step1.entries.0.id}"], literal="cache_literal", env=env(), lenient=False
    )
    assert tagged == Tagged(value=["bob@example.com", "W1"], tag="step_output")
    assert tagged.tag in SAFE_FOR_EFFECTS
    tagged = resolve_value(
        {"a": "${SLOT:user}", "b": "literal"}, literal="cache_literal", env=env(), lenient=False
    )
    assert tagged is not None and tagged.tag == "cache_literal"
    empty = resolve_value([], literal="cache_literal", env=env(), lenient=False)
    assert empty == Tagged(value=[], tag="cache_literal")


def test_paths_index_projection_and_magic_fields() -> None:
    assert walk(ORDERS, ("entries", "0", "id"), lenient=False) == "W1"
    assert walk(ORDERS, ("entries", "*", "path"), lenient=False) == ["/a", "/b"]
    assert walk(ORDERS, ("@count",), lenient=False) == 2
    assert walk(ORDERS, ("entries", "@count"), lenient=False) == 2
    assert walk(ORDERS, ("entries", "5"), lenient=False) is MISSING
    assert walk([{"a": 1}, {"b": 2}], ("*", "a"), lenient=False) is MISSING
    assert walk([{"a": 1}, {"b": 2}], ("*", "a"), lenient=True) == [1]
    assert brief(list(range(8))) == "0, 1, 2, 3, 4 and 3 more"
    assert is_empty({"entries": []}) and is_empty([]) and is_empty(None)
    assert not is_empty({"entries": [1]}) and not is_empty(0)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (("results",), ORDERS["entries"]),  # entries <-> results
        (("source",), "db"),  # metadata.<field>
        (("total",), 2),  # count synonyms
        (("ids",), ["W1", "W2"]),  # plural -> singular over entries
        (("id",), ["W1", "W2"]),  # a field projected over entries
        (("files",), ["/a", "/b"]),  # entries.*.path
        (("entries", "paths"), ["/a", "/b"]),  # a name over a list
    ],
)
def test_lenient_fallbacks_for_read_only_consumers(path: tuple[str, ...], expected: object) -> None:
    assert walk(ORDERS, path, lenient=True) == expected
    assert walk(ORDERS, path, lenient=False) is MISSING


def test_effectful_consumers_get_exact_paths_or_an_error() -> None:
    args, _ = resolve({"q": "${step1.ids}"})  # type: ignore[misc]
    assert args == {"q": ["W1", "W2"]}
    error = resolve({"to": "${step1.ids}"}, target=WRITE)
    assert isinstance(error, PlanError) and error.code == "plan.unresolved"
    assert error.argument == "to" and "${step1.ids}" in error.message


def test_unresolved_optional_arguments_drop_only_for_read_only_consumers() -> None:
    args, _ = resolve({"q": "x", "opt": "${SLOT:missing}"})  # type: ignore[misc]
    assert args == {"q": "x"}
    required = resolve({"q": "${SLOT:missing}"})
    assert isinstance(required, PlanError) and required.argument == "q"
    optional_write = resolve({"to": "${SLOT:user}", "body": "${SLOT:missing}"}, target=WRITE)
    assert isinstance(optional_write, PlanError) and optional_write.argument == "body"
    empty_runtime = resolve({"q": "${RUNTIME:lang}"})
    assert isinstance(empty_runtime, PlanError)


def test_without_a_schema_every_argument_is_required() -> None:
    step = Step(id=2, tool=READ.name, args={"opt": "${SLOT:missing}"})
    assert isinstance(resolve_args(step, READ.contract, env()), PlanError)


def test_from_step_pipes_a_list_into_the_consumers_list_argument() -> None:
    piped = tool(
        "delete_files",
        effect="delete",
        props={"paths": "array", "force": "boolean"},
        bindings={"paths": "piped"},
    )
    args, tags = resolve({"from_step": "1", "force": True}, target=piped)  # type: ignore[misc]
    assert args["paths"] == ORDERS["entries"] and tags["paths"] == "step_output"
    assert "from_step" not in args
    array = tool("tag_items", props={"items": "array", "label": "string"})
    assert pipe_target(array.contract, array.parameters) == "items"
    args, _ = resolve({"from_step": 2, "label": "x"}, target=array)  # type: ignore[misc]
    assert args["items"] == [1, 2, 3]
    plain = tool("show", props={"title": "string"}, required=())
    assert pipe_target(plain.contract, plain.parameters) == "entries"
    explicit = resolve({"from_step": 1, "items": ["mine"], "label": "x"}, target=array)
    assert explicit[0]["items"] == ["mine"]  # type: ignore[index]


def test_piping_is_exact_for_effects_and_lenient_for_reads() -> None:
    outputs = {1: {"results": [1, 2]}}
    reader = tool("tag_items", props={"items": "array"})
    writer = tool("drop_items", effect="delete", props={"items": "array"})
    args, _ = resolve({"from_step": 1}, target=reader, outputs=outputs)  # type: ignore[misc]
    assert args["items"] == [1, 2]
    error = resolve({"from_step": 1}, target=writer, outputs=outputs)
    assert isinstance(error, PlanError) and error.code == "plan.unresolved"
    bad = resolve({"from_step": 9}, target=writer)
    assert isinstance(bad, PlanError) and bad.code == "plan.from_step_invalid"


def test_runtime_resolved_and_hidden_arguments_come_from_the_runtime() -> None:
    target = tool(
        "list_mail",
        props={"account": "string", "q": "string"},
        required=("q",),
        runtime_resolved=frozenset({"account"}),
    )
    args, tags = resolve(
        {"q": "x", "account": "evil", "_actor": "mallory"},
        target=target,
        runtime={"account": "acme"},
    )  # type: ignore[misc]
    assert args == {"q": "x", "account": "acme"} and tags["account"] == "runtime"
    args, _ = resolve({"q": "x", "account": "evil"}, target=target, runtime={})  # type: ignore[misc]
    assert args == {"q": "x"}


def test_runtime_time_keys() -> None:
    runtime = {"now": datetime(2024, 5, 1, 12, 0)}
    assert runtime_value("now_plus_2d", runtime) == "2024-05-03T12:00:00"
    assert runtime_value("now_minus_3h", runtime) == "2024-05-01T09:00:00"
    assert runtime_value("today", runtime) == "2024-05-01"
    assert runtime_value("now_plus_1h", {"now": 1000.0}) == 4600.0
    assert runtime_value("now_plus_1h", {}) is None
    assert runtime_value("actor", {"actor": ""}) is None


def test_resolved_values_are_fresh_copies() -> None:
    args, _ = resolve({"q": "${step1.entries}"})  # type: ignore[misc]
    args["q"].append("junk")  # type: ignore[attr-defined]
    assert len(ORDERS["entries"]) == 2
