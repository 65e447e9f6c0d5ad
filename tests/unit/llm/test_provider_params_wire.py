"""Request parameters from integrations.yml (`temperature`, `max_tokens`, `top_p`, `seed`,
`stop` and provider extras) reach the provider's request body, for the OpenAI and the
Anthropic adapter, through the real SDKs against local wire-format servers; the project
fixture `tests/project_compat/agents/provider_params` is loaded and built as `keel run`
builds it (`TieredModel` over `build_group`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from anthropic_server import FakeAnthropicServer, message_body, text_block
from anthropic_server import serve as serve_anthropic
from openai_server import FakeOpenAIServer, chunk, completion
from openai_server import serve as serve_openai

from keel.llm import ModelRequest, user_message
from keel.llm.anthropic import AnthropicModel
from keel.llm.factory import TieredModel
from keel.llm.openai import OpenAIChatModel
from keel.llm.port import StreamDone
from keel.project.load import load_project
from keel.project.model_params import ModelParams

AGENT = Path(__file__).resolve().parents[2] / "project_compat" / "agents" / "provider_params"
HI = ModelRequest(messages=(user_message("hi"),))
PARAMS = ModelParams(
    temperature=0.0,
    max_tokens=400,
    top_p=0.9,
    seed=7,
    stop=("\nUser:",),
    extra={"presence_penalty": 0.1},
)


def _sampling(body: dict[str, Any]) -> dict[str, Any]:
    keys = ("temperature", "max_tokens", "top_p", "seed", "stop", "presence_penalty", "top_k")
    return {key: body[key] for key in keys if key in body}


async def test_openai_sends_the_parameters_and_extras() -> None:
    with serve_openai() as server:
        server.reply_json(completion(content="ok"))
        model = OpenAIChatModel(
            model="m", base_url=server.base_url, params=PARAMS, extra_body={"top_k": 20}
        )
        await model.complete(HI)
        await model.aclose()
        assert _sampling(server.bodies()[0]) == {
            "temperature": 0.0,
            "max_tokens": 400,
            "top_p": 0.9,
            "seed": 7,
            "stop": ["\nUser:"],
            "presence_penalty": 0.1,
            "top_k": 20,
        }


async def test_openai_streams_send_them_too() -> None:
    with serve_openai() as server:
        server.reply_stream([chunk({"content": "ok"}), chunk({}, finish_reason="stop")])
        model = OpenAIChatModel(model="m", base_url=server.base_url, params=PARAMS)
        events = [event async for event in model.stream(HI)]
        await model.aclose()
        assert isinstance(events[-1], StreamDone)
        body = server.bodies()[0]
        assert body["stream"] is True
        assert (body["temperature"], body["seed"], body["presence_penalty"]) == (0.0, 7, 0.1)


async def test_openai_without_parameters_sends_none_of_them() -> None:
    with serve_openai() as server:
        server.reply_json(completion(content="ok"))
        model = OpenAIChatModel(model="m", base_url=server.base_url)
        await model.complete(HI)
        await model.aclose()
        assert _sampling(server.bodies()[0]) == {}


async def test_anthropic_sends_the_parameters_it_knows_and_the_extras() -> None:
    with serve_anthropic() as server:
        server.reply_json(message_body([text_block("ok")]))
        params = ModelParams(temperature=0.3, top_p=0.8, stop=("END",), extra={"top_k": 5})
        model = AnthropicModel(
            model="c", api_key="k", base_url=server.base_url, max_tokens=128, params=params
        )
        await model.complete(HI)
        body = server.bodies()[0]
        assert _sampling(body) == {"temperature": 0.3, "max_tokens": 128, "top_p": 0.8, "top_k": 5}
        assert body["stop_sequences"] == ["END"]


def _served(openai_server: FakeOpenAIServer, anthropic_server: FakeAnthropicServer) -> TieredModel:
    env = {
        "MAIN_API_BASE": openai_server.base_url,
        "QUICK_API_BASE": anthropic_server.base_url,
        "QUICK_API_KEY": "sk-ant-test",
        "QUICK_TEMPERATURE": "0.4",
    }
    definition, diagnostics = load_project(AGENT, env=env)
    assert definition is not None, [d.render() for d in diagnostics]
    assert diagnostics == [], [d.render() for d in diagnostics]
    return TieredModel(definition.integrations)


async def test_the_project_parameters_reach_both_providers() -> None:
    with serve_openai() as openai_server, serve_anthropic() as anthropic_server:
        openai_server.reply_json(completion(content="main"))
        anthropic_server.reply_json(message_body([text_block("quick")]))
        model = _served(openai_server, anthropic_server)
        await model.complete(HI)
        await model.complete(ModelRequest(messages=HI.messages, tier="router"))
        main = openai_server.bodies()[0]
        assert main["model"] == "tram-main"
        assert _sampling(main) == {
            "temperature": 0.2,
            "max_tokens": 400,
            "top_p": 0.9,
            "seed": 7,
            "stop": ["\nUser:"],
            "presence_penalty": 0.1,
            "top_k": 20,
        }
        assert "timeout" not in main and "extra_body" not in main
        quick = anthropic_server.bodies()[0]
        assert quick["model"] == "claude-tram"
        assert _sampling(quick) == {"temperature": 0.4, "max_tokens": 128, "top_k": 5}
        assert quick["stop_sequences"] == ["END"]
