"""Building models from `integrations.yml`: one adapter per `ModelSpec`, a resilient model
per `ModelGroup`, and `TieredModel`, which picks the group for each request's tier.

Providers (`provider:` of a model; case, `-`, `.` and spaces do not matter):

* `openai`: `OpenAIChatModel` (`api_base` optional, e.g. a proxy);
* `anthropic`: `AnthropicModel` (`max_tokens:` on the model entry sets the reply limit);
* `openai_compatible`, `self_hosted`: `OpenAIChatModel` at `api_base` (required);
* `ollama`, `llamacpp` / `llama_cpp`, `vllm`: `OpenAIChatModel` at `api_base`, else at
  the server's usual local address (`LOCAL_BASE_URLS`);
* any other name starting with `openai`, with an `api_base`: `OpenAIChatModel` there.

Anything else is a `ModelConfigError` naming the provider (a configuration mistake, never
retried). API keys are revealed from their `Secret` only here, when the adapter is built; a
key whose `${VAR}` is unset is a `ModelConfigError` naming the variable. The official
OpenAI API needs a configured key (`api_key_env:`); Anthropic without one lets its SDK
read `ANTHROPIC_API_KEY`; OpenAI-compatible servers need none. The entry's request
parameters (`temperature`, `max_tokens`, `top_p`, `seed`, `stop`) and provider extras
(`ModelSpec.params`, see `keel.project.model_params`) are sent with each request, and an
`extra_body:` mapping is merged into each request body over the extras (vLLM/llama.cpp
server settings). Only `openai` models send a request's prompt cache key
(`prompt_cache_key`): other servers may refuse fields they do not know.

Adapters and the resilience wrappers are imported inside the functions that use them, so
this module (and `TieredModel` with a custom `build`) imports without the provider SDKs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import aclosing
from dataclasses import dataclass, replace

from keel.llm.errors import ModelConfigError
from keel.llm.port import Model, ModelRequest, ModelResponse, StreamDone, StreamEvent
from keel.llm.resilience import FallbackModel, RetryingModel, stream_reply
from keel.llm.tiers import TIERS, resolve
from keel.project.integrations import IntegrationsConfig
from keel.project.model_groups import ModelGroup, ModelSpec

OPENAI_COMPATIBLE = frozenset(
    {"openai_compatible", "self_hosted", "ollama", "llamacpp", "llama_cpp", "vllm"}
)
"""Providers served through the Chat Completions adapter at a base URL."""

LOCAL_BASE_URLS: Mapping[str, str] = {
    "ollama": "http://localhost:11434/v1",
    "llamacpp": "http://localhost:8080/v1",
    "llama_cpp": "http://localhost:8080/v1",
    "vllm": "http://localhost:8000/v1",
}
"""Where these servers listen by default, used when a model gives no `api_base`."""

DEFAULT_MAX_TOKENS = 1024
"""Anthropic's reply limit when the model entry sets no `max_tokens`."""

Build = Callable[[ModelGroup], Model]
"""How `TieredModel` turns a model group into a model (`build_group` unless given)."""


def provider_kind(spec: ModelSpec) -> str | None:
    """`openai`, `anthropic` or `openai_compatible` for `spec`, or None when unknown."""
    name = normalized(spec.provider)
    if name in ("openai", "anthropic"):
        return name
    if name in OPENAI_COMPATIBLE or (name.startswith("openai") and spec.api_base):
        return "openai_compatible"
    return None


def normalized(provider: str) -> str:
    """`provider` in lower case with `-`, `.` and spaces as `_` (`Self-Hosted` -> `self_hosted`)."""
    name = provider.strip().lower()
    for mark in ("-", ".", " "):
        name = name.replace(mark, "_")
    return name


def build_model(spec: ModelSpec, *, timeout: float = 60.0) -> Model:
    """The adapter for one model entry; raises `ModelConfigError` when it cannot be built."""
    kind = provider_kind(spec)
    if kind is None:
        known = "openai, anthropic, " + ", ".join(sorted(OPENAI_COMPATIBLE))
        message = f"model `{spec.model}`: unknown provider `{spec.provider}` (known: {known})"
        raise ModelConfigError(message, provider=spec.provider)
    api_key = api_key_of(spec)
    if kind == "anthropic":
        from keel.llm.anthropic import AnthropicModel  # lazy: the Anthropic SDK

        return AnthropicModel(
            model=spec.model,
            api_key=api_key,
            base_url=spec.api_base,
            timeout=timeout,
            max_tokens=_max_tokens(spec),
            params=spec.params,
            extra_body=_extra_body(spec),
        )
    base_url = spec.api_base or LOCAL_BASE_URLS.get(normalized(spec.provider))
    if kind == "openai_compatible" and base_url is None:
        message = f"model `{spec.model}`: provider `{spec.provider}` needs `api_base`"
        raise ModelConfigError(message, provider=spec.provider)
    if kind == "openai" and base_url is None and api_key is None:
        message = (
            f"model `{spec.model}`: provider `openai` needs an API key "
            "(`api_key_env: OPENAI_API_KEY` or `api_key: ${VAR}`)"
        )
        raise ModelConfigError(message, provider=spec.provider)
    return _openai_chat(spec, api_key=api_key, base_url=base_url, timeout=timeout)


def _openai_chat(
    spec: ModelSpec, *, api_key: str | None, base_url: str | None, timeout: float
) -> Model:
    from keel.llm.openai import OpenAIChatModel  # lazy: the OpenAI SDK

    return OpenAIChatModel(
        model=spec.model,
        api_key=api_key,
        base_url=base_url,
        timeout=timeout,
        extra_body=_extra_body(spec),
        reasoning_effort=spec.reasoning_effort,
        params=spec.params,
        # Only OpenAI's own API is known to take `prompt_cache_key`.
        send_cache_key=provider_kind(spec) == "openai",
    )


def _extra_body(spec: ModelSpec) -> Mapping[str, object] | None:
    extra_body = spec.extra.get("extra_body")
    return extra_body if isinstance(extra_body, Mapping) else None


def api_key_of(spec: ModelSpec) -> str | None:
    """The key to send (revealed here only), None when none is configured.

    Raises `ModelConfigError` when a key is configured but its variable is unset or empty.
    """
    secret = spec.api_key
    if secret is None:
        return None
    if not secret.is_set:
        names = ", ".join(secret.unset or secret.env_vars) or "the literal value"
        message = f"model `{spec.model}`: the API key is empty ({names} not set)"
        raise ModelConfigError(message, provider=spec.provider)
    return secret.reveal()


def _max_tokens(spec: ModelSpec) -> int:
    if spec.params.max_tokens is not None:
        return spec.params.max_tokens
    value = spec.extra.get("max_tokens")
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    if isinstance(value, str) and value.isdigit() and int(value) > 0:
        return int(value)  # `max_tokens: ${LIMIT}` arrives as text
    return DEFAULT_MAX_TOKENS


def build_group(group: ModelGroup, *, timeout: float = 60.0, attempts: int = 3) -> Model:
    """Each model of `group` with retries, tried in order: `FallbackModel` of `RetryingModel`s
    (a single model is just its `RetryingModel`)."""
    try:
        models = [
            RetryingModel(build_model(s, timeout=timeout), attempts=attempts) for s in group.models
        ]
    except ModelConfigError as error:
        message = f"model group `{group.id}`: {error}"
        raise ModelConfigError(message, provider=error.provider, group=group.id) from error
    if len(models) == 1:
        return models[0]
    return FallbackModel(models)


@dataclass(frozen=True, kw_only=True, slots=True)
class Answered:
    """Which concrete model answered the last request, through which tier and group."""

    tier: str
    group: str
    model: str


class TieredModel:
    """A `Model` that answers each request with the model group of `request.tier`.

    Groups are built lazily, once per group id (tiers that share a group share its model),
    so a configuration error surfaces on first use; call `build_all()` at startup to surface
    it early. The response's `model` names the concrete model that answered (the group's
    primary model id when the adapter left it empty), and `last` records it with the tier.
    """

    def __init__(self, integrations: IntegrationsConfig, *, build: Build = build_group) -> None:
        self._integrations = integrations
        self._build = build
        self._models: dict[str, Model] = {}
        self._last: Answered | None = None

    @property
    def last(self) -> Answered | None:
        """The tier, group and concrete model of the last answered request."""
        return self._last

    def model_for(self, tier: str) -> tuple[ModelGroup, Model]:
        """The group `tier` resolves to and its (cached) model."""
        group = resolve(self._integrations, tier)
        model = self._models.get(group.id)
        if model is None:
            model = self._build(group)
            self._models[group.id] = model
        return group, model

    def build_all(self) -> None:
        """Build the group of every tier now; raises `ModelConfigError` for a bad one."""
        for tier in TIERS:
            self.model_for(tier)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """The reply of the model group for `request.tier`."""
        group, model = self.model_for(request.tier)
        return self._answered(request, group, await model.complete(request))

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """The group's stream (a non-streaming group yields one `StreamDone`)."""
        group, model = self.model_for(request.tier)
        async with aclosing(stream_reply(model, request)) as events:
            async for event in events:
                if isinstance(event, StreamDone):
                    event = StreamDone(response=self._answered(request, group, event.response))
                yield event

    def _answered(
        self, request: ModelRequest, group: ModelGroup, response: ModelResponse
    ) -> ModelResponse:
        if not response.model:
            response = replace(response, model=group.models[0].model)
        self._last = Answered(tier=request.tier, group=group.id, model=response.model)
        return response


__all__ = [
    "DEFAULT_MAX_TOKENS",
    "LOCAL_BASE_URLS",
    "OPENAI_COMPATIBLE",
    "Answered",
    "Build",
    "TieredModel",
    "api_key_of",
    "build_group",
    "build_model",
    "normalized",
    "provider_kind",
]
