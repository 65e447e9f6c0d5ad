"""Facts the user already gave, over the OpenAI wire: the conversation tests of
`tests/conversations/activation_fill.yml` pass when every model call goes through the
OpenAI adapter to the local Chat Completions server, and the `activate` function sent over
the wire offers the target skill's collect entries as the optional `fields` argument."""

from __future__ import annotations

from pathlib import Path

from wire_harness import DeltaRecorder, single_model_factory

from keel.testing.conversation import arun_paths
from keel.testing.openai_wire_server import OpenAIWireServer

FILE = Path(__file__).resolve().parents[1] / "conversations" / "activation_fill.yml"


async def test_activation_fill_passes_over_the_wire() -> None:
    observers: list[DeltaRecorder] = []
    with OpenAIWireServer() as server:
        factory = single_model_factory(server, model="gpt-4.1", stream=False, observers=observers)
        summary = await arun_paths([FILE], factory)
        requests = server.requests

    lines = "\n".join(summary.lines())
    assert summary.exit_code == 0, lines
    assert summary.final_line() == "6 passed, 0 failed", lines
    activate = next(
        tool["function"]
        for tool in requests[0].body["tools"]
        if tool["function"]["name"] == "activate"
    )
    parameters = activate["parameters"]
    assert parameters["required"] == ["target_id"]
    fields = parameters["properties"]["fields"]
    assert fields["type"] == "object"
    assert list(fields["properties"]) == ["book_id", "weeks"]
    assert fields["properties"]["book_id"]["description"] == (
        "renew_loan (text): The id of the borrowed book, like B-10002."
    )
