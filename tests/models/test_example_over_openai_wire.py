"""The example agent passes the same conversation tests through the OpenAI-compatible adapter
against a local Chat Completions server as with `ScriptedModel` (issue 4, acceptance 2).

Every test file of `examples/support/tests` runs through the runner API three times: with
`keel test`'s own harness (the engine calls the `ScriptedModel` directly), and with a
harness whose model is `OpenAIChatModel(model=..., base_url=<server>, timeout=...)` (the
official `openai` SDK over HTTP to `keel.testing.OpenAIWireServer`, which answers from the
same script), once plain and once streaming (SSE). The tiers agent's conversation tests run
over the wire too, through a `TieredModel` of adapters, so each tier's concrete model id is
what goes over the wire.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from wire_harness import DeltaRecorder, single_model_factory, tiered_factory

from keel.llm.port import Usage
from keel.testing.conversation import Summary, arun_paths, parse_test_file
from keel.testing.harness import make_harness
from keel.testing.openai_wire_server import OpenAIWireServer

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_TESTS = ROOT / "examples" / "support" / "tests"
HERE = Path(__file__).resolve().parent
TIERS = {"fast-1": "router", "main-1": "default", "deep-1": "reasoning"}
"""The tiers agent's model ids and the tier each serves (one group per tier)."""

TIER_FILES = [HERE / "tiers.yml", HERE / "routing.yml", HERE / "escalation.yml"]


def _case_count(paths: list[Path]) -> int:
    total = 0
    for path in paths:
        parsed, diagnostics = parse_test_file(path)
        assert parsed is not None, "\n".join(d.render() for d in diagnostics)
        total += len(parsed.cases)
    return total


def _passed(summary: Summary, expected: int) -> None:
    lines = "\n".join(summary.lines())
    assert summary.exit_code == 0, lines
    assert summary.final_line() == f"{expected} passed, 0 failed", lines


@pytest.fixture
def server() -> Iterator[OpenAIWireServer]:
    with OpenAIWireServer() as wire:
        yield wire


def test_the_example_has_conversation_tests() -> None:
    files = sorted(EXAMPLE_TESTS.glob("*.yml"))
    assert len(files) >= 2
    assert _case_count(files) >= 4


async def test_example_passes_with_the_scripted_model() -> None:
    summary = await arun_paths([EXAMPLE_TESTS], make_harness)
    _passed(summary, _case_count(sorted(EXAMPLE_TESTS.glob("*.yml"))))


async def test_example_passes_through_the_openai_adapter(server: OpenAIWireServer) -> None:
    observers: list[DeltaRecorder] = []
    factory = single_model_factory(server, model="gpt-4.1", stream=False, observers=observers)

    summary = await arun_paths([EXAMPLE_TESTS], factory)

    _passed(summary, _case_count(sorted(EXAMPLE_TESTS.glob("*.yml"))))
    requests = server.requests
    assert requests, "no request crossed the wire"
    assert all(not r.stream and r.body["model"] == "gpt-4.1" for r in requests)
    # The engine's tool schemas went over the wire as Chat Completions function tools.
    assert any(
        tool["function"]["name"] == "activate" and tool["type"] == "function"
        for r in requests
        for tool in r.body.get("tools", [])
    )


async def test_example_passes_through_the_openai_adapter_streaming(
    server: OpenAIWireServer,
) -> None:
    observers: list[DeltaRecorder] = []
    factory = single_model_factory(server, model="gpt-4.1", stream=True, observers=observers)

    summary = await arun_paths([EXAMPLE_TESTS], factory)

    _passed(summary, _case_count(sorted(EXAMPLE_TESTS.glob("*.yml"))))
    requests = server.requests
    assert requests and all(r.stream for r in requests)
    assert all(r.body.get("stream_options") == {"include_usage": True} for r in requests)


async def test_tier_tests_pass_over_the_wire_streaming() -> None:
    """Each tier's model id goes over the wire; text streams in pieces to the observer."""
    usage = Usage(input_tokens=2000, output_tokens=500)  # as tests/models/tiered_harness.py
    observers: list[DeltaRecorder] = []
    with OpenAIWireServer(tier_of=lambda model: TIERS.get(model, "?"), usage=usage) as server:
        factory = tiered_factory(server, stream=True, observers=observers)
        summary = await arun_paths(TIER_FILES, factory)
        requests = server.requests

    _passed(summary, _case_count(TIER_FILES))
    assert {r.body["model"] for r in requests} == set(TIERS)
    assert all(r.stream for r in requests)
    deltas = [piece for observer in observers for piece in observer.deltas]
    # "What did you enjoy reading last?" arrives in 8-character pieces, in order.
    pieces = ["What did", " you enj", "oy readi", "ng last?"]
    starts = [n for n, piece in enumerate(deltas) if piece == pieces[0]]
    assert starts and all(deltas[n : n + 4] == pieces for n in starts), deltas
