"""Request parameters of a model entry (`keel.project.model_params`): read, checked with a
coded error at the key's line, expanded from `${VAR}`; other keys are provider extras."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from _project_helpers import codes, only, yaml_data

from keel.project.integrations import IntegrationsConfig, parse_integrations
from keel.project.model_params import ModelParams
from keel.source.diagnostics import Diagnostic

HEAD = """\
llm:
  model_group: main
model_groups:
  - id: main
    models:
      - provider: {provider}
        model: m
        api_base: http://127.0.0.1:9/v1
"""


def parse(
    body: str, *, provider: str = "openai", env: Mapping[str, str] | None = None
) -> tuple[IntegrationsConfig | None, list[Diagnostic]]:
    text = HEAD.format(provider=provider) + body
    return parse_integrations(yaml_data(text, "integrations.yml"), env=env or {})


def params(body: str, **options: object) -> ModelParams:
    config, diagnostics = parse(body, **options)  # type: ignore[arg-type]
    assert config is not None, [d.render() for d in diagnostics]
    return config.model_groups[0].models[0].params


def test_the_five_parameters_are_read() -> None:
    found = params(
        "        temperature: 0\n        max_tokens: 300\n        top_p: 1\n"
        "        seed: 42\n        stop: ['###', 'User:']\n"
    )
    assert (found.temperature, found.max_tokens, found.top_p, found.seed) == (0.0, 300, 1.0, 42)
    assert found.stop == ("###", "User:")
    assert dict(found.extra) == {}


def test_one_stop_text_is_a_list_of_one() -> None:
    assert params("        stop: END\n").stop == ("END",)


def test_values_from_variables_are_numbers() -> None:
    found = params(
        "        temperature: ${T}\n        max_tokens: ${N}\n",
        env={"T": "0.7", "N": "250"},
    )
    assert (found.temperature, found.max_tokens) == (0.7, 250)


def test_an_unset_variable_sends_nothing_and_warns_once() -> None:
    config, diagnostics = parse("        temperature: ${T}\n")
    assert config is not None
    assert config.model_groups[0].models[0].params.temperature is None
    assert codes(diagnostics) == [("config.env.unset", 6)]  # the model entry's line


def test_other_keys_are_provider_extras_and_client_settings_are_not() -> None:
    found = params(
        "        presence_penalty: 0.5\n        logit_bias: {'50256': -100}\n"
        "        timeout: 30\n        extra_body: {top_k: 3}\n        api_version: '2024-06-01'\n"
    )
    assert set(found.extra) == {"presence_penalty", "logit_bias"}
    assert found.extra["presence_penalty"] == 0.5


@pytest.mark.parametrize(
    ("body", "line", "key"),
    [
        ("        temperature: hot\n", 9, "temperature"),
        ("        temperature: 2.5\n", 9, "temperature"),
        ("        temperature: true\n", 9, "temperature"),
        ("        top_p: 1.5\n", 9, "top_p"),
        ("        max_tokens: 0\n", 9, "max_tokens"),
        ("        max_tokens: 12.5\n", 9, "max_tokens"),
        ("        seed: lucky\n", 9, "seed"),
        ("        stop: [1, 2]\n", 9, "stop"),
        ("        stop: {a: b}\n", 9, "stop"),
    ],
)
def test_a_bad_value_is_an_error_at_its_line(body: str, line: int, key: str) -> None:
    config, diagnostics = parse(body)
    assert config is None
    found = only(diagnostics, "config.model_groups.bad_param")
    assert (found.file, found.line, found.severity) == ("integrations.yml", line, "error")
    assert found.key == f"model_groups.main.models[0].{key}"


def test_anthropic_has_no_seed_and_a_temperature_up_to_one() -> None:
    config, diagnostics = parse("        seed: 3\n        temperature: 0.9\n", provider="anthropic")
    assert config is not None
    found = config.model_groups[0].models[0].params
    assert (found.seed, found.temperature) == (None, 0.9)
    warning = only(diagnostics, "config.model_groups.unsupported_param")
    assert (warning.line, warning.severity) == (9, "warning")
    _, too_hot = parse("        temperature: 1.5\n", provider="anthropic")
    assert ("config.model_groups.bad_param", 9) in codes(too_hot)


def test_the_legacy_inline_llm_carries_parameters_too() -> None:
    text = "llm:\n  provider: openai\n  model: m\n  api_base: http://x/v1\n  temperature: 0.1\n"
    text += "  top_k: 4\n"
    config, diagnostics = parse_integrations(yaml_data(text, "integrations.yml"), env={})
    assert config is not None, [d.render() for d in diagnostics]
    found = config.model_groups[0].models[0].params
    assert (found.temperature, dict(found.extra)) == (0.1, {"top_k": 4})
    _, bad = parse_integrations(yaml_data(text.replace("0.1", "warm"), "integrations.yml"), env={})
    assert ("config.model_groups.bad_param", 5) in codes(bad)
