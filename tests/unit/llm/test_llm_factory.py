"""Building models from config: provider dispatch, groups with retries and fallbacks, tiers.

No network: adapters are replaced by `RecordingAdapter` (a test double that records the
keyword arguments the factory passed), and `TieredModel` is given `FakeModel`s (test
doubles answering from a fixed reply or failing with a fixed error).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import pytest

import keel.llm.anthropic
import keel.llm.factory
import keel.llm.openai
from keel.llm import Model, ModelError, ModelRequest, ModelResponse, user_message
from keel.llm.errors import AuthenticationFailed, ModelConfigError
from keel.llm.factory import (
    LOCAL_BASE_URLS,
    TieredModel,
    build_group,
    build_model,
)
from keel.llm.port import StreamDone, StreamEvent, TextDelta
from keel.llm.resilience import FallbackModel, RetryingModel
from keel.project.envvars import Secret
from keel.project.integrations import IntegrationsConfig, LlmConfig
from keel.project.model_groups import ModelGroup, ModelSpec
from keel.project.model_params import ModelParams

REQUEST = ModelRequest(messages=(user_message("hi"),))


class RecordingAdapter:
    """Test double for an adapter class: keeps the keyword arguments it was built with."""

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs

    async def complete(self, request: ModelRequest) -> ModelResponse:
        return ModelResponse(text="recorded", model=str(self.kwargs["model"]))


class OpenAIDouble(RecordingAdapter):
    """Stands in for `OpenAIChatModel`."""


class AnthropicDouble(RecordingAdapter):
    """Stands in for `AnthropicModel`."""


@pytest.fixture
def adapters(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keel.llm.openai, "OpenAIChatModel", OpenAIDouble)
    monkeypatch.setattr(keel.llm.anthropic, "AnthropicModel", AnthropicDouble)


def spec(provider: str, model: str = "m", **fields: Any) -> ModelSpec:
    return ModelSpec(provider=provider, model=model, line=None, **fields)


def key(value: str, *env: str, unset: tuple[str, ...] = ()) -> Secret:
    return Secret(value=value, env_vars=env, unset=unset)


def built(model: Model) -> dict[str, Any]:
    assert isinstance(model, RecordingAdapter)
    return model.kwargs


@pytest.mark.usefixtures("adapters")
def test_openai_gets_the_revealed_key_and_settings() -> None:
    model = build_model(
        spec("openai", "o3", api_key=key("sk-1", "OPENAI_API_KEY"), reasoning_effort="high"),
        timeout=12.0,
    )
    assert isinstance(model, OpenAIDouble)
    assert built(model) == {
        "model": "o3",
        "api_key": "sk-1",
        "base_url": None,
        "timeout": 12.0,
        "extra_body": None,
        "reasoning_effort": "high",
        "params": ModelParams(),
        "send_cache_key": True,
    }


@pytest.mark.usefixtures("adapters")
def test_official_openai_without_a_key_is_a_config_error() -> None:
    with pytest.raises(ModelConfigError, match="needs an API key") as caught:
        build_model(spec("openai", "gpt-4o"))
    assert caught.value.provider == "openai"
    proxied = build_model(spec("openai", "gpt-4o", api_base="http://127.0.0.1:9/v1"))
    assert built(proxied)["base_url"] == "http://127.0.0.1:9/v1"


@pytest.mark.usefixtures("adapters")
def test_anthropic_gets_base_url_and_max_tokens() -> None:
    extra = MappingProxyType({"max_tokens": 4096})
    model = build_model(
        spec("Anthropic", "claude-sonnet-4", api_key=key("ak", "ANTHROPIC_API_KEY"), extra=extra)
    )
    assert isinstance(model, AnthropicDouble)
    assert built(model) == {
        "model": "claude-sonnet-4",
        "api_key": "ak",
        "base_url": None,
        "timeout": 60.0,
        "max_tokens": 4096,
        "params": ModelParams(),
        "extra_body": None,
    }
    plain = build_model(spec("anthropic", extra=MappingProxyType({"max_tokens": "2048"})))
    assert (built(plain)["api_key"], built(plain)["max_tokens"]) == (None, 2048)
    assert built(build_model(spec("anthropic")))["max_tokens"] == 1024
    configured = spec("anthropic", params=ModelParams(max_tokens=300, temperature=0.5))
    assert built(build_model(configured))["max_tokens"] == 300
    assert built(build_model(configured))["params"].temperature == 0.5


@pytest.mark.usefixtures("adapters")
@pytest.mark.parametrize(
    ("provider", "base_url"),
    [
        ("ollama", LOCAL_BASE_URLS["ollama"]),
        ("llamacpp", "http://localhost:8080/v1"),
        ("llama.cpp", "http://localhost:8080/v1"),
        ("vLLM", "http://localhost:8000/v1"),
    ],
)
def test_local_servers_default_to_their_usual_address(provider: str, base_url: str) -> None:
    model = build_model(spec(provider, "qwen2.5"))
    assert isinstance(model, OpenAIDouble)
    assert (built(model)["base_url"], built(model)["api_key"]) == (base_url, None)


@pytest.mark.usefixtures("adapters")
@pytest.mark.parametrize("provider", ["openai_compatible", "self-hosted", "Self Hosted", "vllm"])
def test_compatible_servers_use_api_base(provider: str) -> None:
    body = MappingProxyType({"chat_template_kwargs": MappingProxyType({"thinking": False})})
    model = build_model(
        spec(
            provider,
            api_base="http://10.0.0.5:8000/v1",
            extra=MappingProxyType({"extra_body": body}),
        )
    )
    assert isinstance(model, OpenAIDouble)
    assert built(model)["base_url"] == "http://10.0.0.5:8000/v1"
    assert built(model)["extra_body"] == body
    assert built(model)["send_cache_key"] is False  # a server may reject unknown fields


@pytest.mark.usefixtures("adapters")
def test_openai_style_provider_names_need_an_api_base() -> None:
    model = build_model(spec("openai_like", api_base="http://127.0.0.1:1234/v1"))
    assert isinstance(model, OpenAIDouble)
    with pytest.raises(ModelConfigError, match="unknown provider `openai_like`"):
        build_model(spec("openai_like"))
    with pytest.raises(ModelConfigError, match="`self_hosted` needs `api_base`"):
        build_model(spec("self_hosted"))


def test_unknown_provider_is_a_config_error_naming_it() -> None:
    with pytest.raises(ModelConfigError) as caught:
        build_model(spec("gemini", "gemini-2.5-pro"))
    error = caught.value
    assert error.provider == "gemini"
    assert "unknown provider `gemini`" in str(error) and "ollama" in str(error)
    assert not isinstance(error, ModelError)  # never retried, never a fallback trigger


@pytest.mark.usefixtures("adapters")
def test_unset_key_variable_is_a_config_error_without_the_value() -> None:
    with pytest.raises(ModelConfigError, match="OPENAI_API_KEY not set") as caught:
        build_model(spec("openai", api_key=key("", "OPENAI_API_KEY", unset=("OPENAI_API_KEY",))))
    assert caught.value.provider == "openai"


def test_real_adapters_are_built_offline() -> None:
    from keel.llm.anthropic import AnthropicModel
    from keel.llm.openai import OpenAIChatModel

    local = build_model(spec("ollama", "qwen2.5"))
    assert isinstance(local, OpenAIChatModel) and local.model == "qwen2.5"
    claude = build_model(spec("anthropic", "claude-sonnet-4", api_key=key("ak", "K")))
    assert isinstance(claude, AnthropicModel) and claude.model == "claude-sonnet-4"


@dataclass
class FakeModel:
    """Test double: answers `reply` (or raises `error`) and counts its calls."""

    reply: str = "ok"
    model: str = ""
    error: ModelError | None = None
    calls: int = 0

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        if self.error is not None:
            raise self.error
        return ModelResponse(text=self.reply, model=self.model)


@dataclass
class FakeStreamingModel(FakeModel):
    """Test double that also streams: one text delta, then the whole reply."""

    streamed: list[str] = field(default_factory=list)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.streamed.append(self.reply)
        yield TextDelta(text=self.reply)
        yield StreamDone(response=ModelResponse(text=self.reply, model=self.model))


def group(group_id: str, *models: str) -> ModelGroup:
    specs = tuple(spec("openai", m) for m in models)
    return ModelGroup(id=group_id, models=specs, line=None)


def test_single_model_group_is_one_retrying_model(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeModel()
    monkeypatch.setattr(keel.llm.factory, "build_model", lambda s, timeout: fake)
    model = build_group(group("main", "a"), attempts=5)
    assert isinstance(model, RetryingModel)
    assert (model.inner, model.attempts) == (fake, 5)


async def test_group_falls_back_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    fakes = {
        "primary": FakeModel(error=AuthenticationFailed("refused", status=401)),
        "backup": FakeModel(reply="from backup", model="backup"),
    }
    monkeypatch.setattr(keel.llm.factory, "build_model", lambda s, timeout: fakes[s.model])
    model = build_group(group("main", "primary", "backup"), attempts=1)
    assert isinstance(model, FallbackModel)
    assert [m.inner for m in model.models if isinstance(m, RetryingModel)] == list(fakes.values())
    response = await model.complete(REQUEST)
    assert (response.text, response.model) == ("from backup", "backup")
    assert (fakes["primary"].calls, fakes["backup"].calls) == (1, 1)


def test_group_config_errors_name_the_group() -> None:
    with pytest.raises(ModelConfigError, match="model group `main`: model `x`") as caught:
        build_group(ModelGroup(id="main", models=(spec("nope", "x"),), line=None))
    assert (caught.value.group, caught.value.provider) == ("main", "nope")


def integrations(tiers: dict[str, str]) -> IntegrationsConfig:
    return IntegrationsConfig(
        llm=LlmConfig(model_group="main"),
        model_groups=(group("main", "gpt-4o-mini"), group("small", "nano"), group("big", "o3")),
        tiers=MappingProxyType(tiers),
    )


class Builder:
    """Test double for `build_group`: one `FakeStreamingModel` per group, built on demand."""

    def __init__(self) -> None:
        self.built: list[str] = []
        self.models: dict[str, FakeStreamingModel] = {}

    def __call__(self, group: ModelGroup) -> Model:
        self.built.append(group.id)
        self.models[group.id] = FakeStreamingModel(reply=f"{group.id} says hi")
        return self.models[group.id]


async def test_tiered_model_routes_each_tier_to_its_group() -> None:
    build = Builder()
    model = TieredModel(integrations({"router": "small", "reasoning": "big"}), build=build)
    assert build.built == []  # lazily
    routed = await model.complete(ModelRequest(messages=REQUEST.messages, tier="router"))
    assert (routed.text, routed.model) == ("small says hi", "nano")
    acted = await model.complete(REQUEST)
    assert (acted.text, acted.model) == ("main says hi", "gpt-4o-mini")
    reasoned = await model.complete(ModelRequest(messages=REQUEST.messages, tier="reasoning"))
    assert reasoned.model == "o3"
    assert model.last is not None
    assert (model.last.tier, model.last.group, model.last.model) == ("reasoning", "big", "o3")
    await model.complete(REQUEST)
    assert build.built == ["small", "main", "big"]  # one build per group


async def test_tiers_sharing_a_group_share_its_model() -> None:
    build = Builder()
    model = TieredModel(integrations({}), build=build)
    for tier in ("router", "default", "reasoning"):
        await model.complete(ModelRequest(messages=REQUEST.messages, tier=tier))
    assert build.built == ["main"]
    assert build.models["main"].calls == 3


async def test_the_model_the_adapter_names_is_kept() -> None:
    inner = FakeModel(model="gpt-4o-mini-2024-07-18")
    model = TieredModel(integrations({}), build=lambda g: inner)
    response = await model.complete(REQUEST)
    assert response.model == "gpt-4o-mini-2024-07-18"
    assert model.last is not None and model.last.model == "gpt-4o-mini-2024-07-18"


async def test_build_all_surfaces_config_errors_early() -> None:
    build = Builder()
    model = TieredModel(integrations({"router": "small"}), build=build)
    model.build_all()
    assert build.built == ["small", "main"]
    broken = TieredModel(integrations({"reasoning": "missing"}), build=build)
    with pytest.raises(ModelConfigError, match="`missing`"):
        broken.build_all()
    with pytest.raises(ModelConfigError):
        await broken.complete(ModelRequest(messages=REQUEST.messages, tier="reasoning"))


async def test_tiered_stream_passes_deltas_and_names_the_model() -> None:
    build = Builder()
    model = TieredModel(integrations({"router": "small"}), build=build)
    events = [e async for e in model.stream(ModelRequest(messages=REQUEST.messages, tier="router"))]
    assert events[0] == TextDelta(text="small says hi")
    done = events[-1]
    assert isinstance(done, StreamDone) and done.response.model == "nano"
    assert build.models["small"].streamed == ["small says hi"]


async def test_tiered_stream_of_a_non_streaming_group_is_one_reply() -> None:
    model = TieredModel(integrations({}), build=lambda g: FakeModel(reply="whole"))
    events = [e async for e in model.stream(REQUEST)]
    assert len(events) == 1 and isinstance(events[0], StreamDone)
    assert (events[0].response.text, events[0].response.model) == ("whole", "gpt-4o-mini")
