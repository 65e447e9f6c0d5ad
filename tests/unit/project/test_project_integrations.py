"""integrations.yml parsing: llm, model groups, tiers, channels, services and diagnostics."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from _project_helpers import codes, only, yaml_data

from keel.project.config import IntegrationsConfig, parse_integrations
from keel.project.integrations import LEGACY_GROUP_ID
from keel.source.diagnostics import Diagnostic

GROUPS = """\
llm:
  model_group: main
model_groups:
  - id: main
    models:
      - provider: openai
        model: gpt-5.1
        api_key_env: OPENAI_API_KEY
  - id: small
    models:
      - provider: openai
        model: gpt-5-mini
        api_key: ${SMALL_KEY}
"""
ENV = {"OPENAI_API_KEY": "sk-main-secret", "SMALL_KEY": "sk-small-secret"}


def parse(
    text: str, env: Mapping[str, str] | None = None
) -> tuple[IntegrationsConfig | None, list[Diagnostic]]:
    config, diagnostics = parse_integrations(
        yaml_data(text, "integrations.yml"), env=ENV if env is None else env
    )
    assert all(d.file == "integrations.yml" for d in diagnostics)
    return config, diagnostics


def test_spec_example_with_groups() -> None:
    config, diagnostics = parse(
        GROUPS + "channels:\n  rest: {enabled: true}\n  inspector: {enabled: true}\n"
    )
    assert diagnostics == []
    assert config is not None
    assert config.llm.model_group == "main" and config.llm.line == 2
    assert [g.id for g in config.model_groups] == ["main", "small"]
    main = config.group("main")
    assert main is not None and main.line == 4
    spec = main.models[0]
    assert (spec.provider, spec.model, spec.api_key_env, spec.line) == (
        "openai",
        "gpt-5.1",
        "OPENAI_API_KEY",
        6,
    )
    assert spec.api_key is not None and spec.api_key.reveal() == "sk-main-secret"
    small = config.group("small")
    assert small is not None and small.models[0].api_key is not None
    assert small.models[0].api_key.reveal() == "sk-small-secret"
    assert config.channels["rest"]["enabled"] is True
    assert config.group("missing") is None


def test_secrets_stay_out_of_reprs() -> None:
    text = GROUPS + (
        "channels:\n  web:\n    token: ${SMALL_KEY}\n"
        "mcp_servers:\n  - name: depot\n    command: run\n    env: {KEY: '${SMALL_KEY}'}\n"
        "    token: ${OPENAI_API_KEY}\n"
        "tracing:\n  type: langfuse\n  private_key: ${SMALL_KEY}\n"
    )
    config, diagnostics = parse(text)
    assert codes(diagnostics) == [("config.integrations.not_used", 22)]
    assert config is not None
    shown = repr(config) + str(config) + repr(config.mcp_servers) + repr(config.model_groups)
    assert "sk-main-secret" not in shown and "sk-small-secret" not in shown
    assert config.services["tracing"]["private_key"] == "sk-small-secret"
    server = config.mcp_server("depot")
    assert server is not None and server.env["KEY"].reveal() == "sk-small-secret"


def test_unset_variables_are_warnings_with_lines() -> None:
    config, diagnostics = parse(
        GROUPS
        + "mcp_servers:\n  - name: depot\n    url: ${DEPOT_URL}\n    token: ${DEPOT_TOKEN}\n",
        env={},
    )
    assert config is not None
    assert codes(diagnostics) == [
        ("config.env.unset", 8),
        ("config.env.unset", 13),
        ("config.env.unset", 16),
        ("config.env.unset", 17),
    ]
    assert all(d.severity == "warning" for d in diagnostics)
    assert [u.name for u in config.unset_env] == [
        "OPENAI_API_KEY",
        "SMALL_KEY",
        "DEPOT_URL",
        "DEPOT_TOKEN",
    ]
    assert config.unset_env[2].key == "mcp_servers.depot.url"
    server = config.mcp_server("depot")
    assert server is not None and server.url == ""
    assert server.auth is not None and server.auth.secret is not None
    assert not server.auth.secret.is_set
    key = config.model_groups[0].models[0].api_key
    assert key is not None and not key.is_set


def test_llm_with_inline_provider_keys() -> None:
    config, diagnostics = parse(
        GROUPS.replace(
            "  model_group: main\n", "  model_group: main\n  provider: openai\n  temperature: 0\n"
        )
    )
    assert config is None
    assert codes(diagnostics) == [("config.llm.inline_provider", 3), ("config.llm.unknown_key", 4)]


def test_llm_max_prompt_tokens() -> None:
    config, _ = parse(GROUPS.replace("llm:\n", "llm:\n  max_prompt_tokens: 8000\n"))
    assert config is not None and config.llm.max_prompt_tokens == 8000
    config, diagnostics = parse(GROUPS.replace("llm:\n", "llm:\n  max_prompt_tokens: -1\n"))
    assert config is None
    assert codes(diagnostics) == [("config.llm.bad_value", 2)]


def test_legacy_inline_llm_becomes_an_implicit_group() -> None:
    config, diagnostics = parse(
        "llm:\n  provider: openai\n  model: gpt-4o\n  api_key_env: OPENAI_API_KEY\n"
    )
    assert codes(diagnostics) == [("config.llm.legacy_inline", 1)]
    assert diagnostics[0].severity == "warning"
    assert config is not None
    assert config.llm.legacy_inline and config.llm.model_group == LEGACY_GROUP_ID
    group = config.group(LEGACY_GROUP_ID)
    assert group is not None and group.models[0].model == "gpt-4o"
    assert config.group_for_tier("reasoning") == LEGACY_GROUP_ID


def test_legacy_inline_llm_clashing_with_a_declared_group() -> None:
    config, diagnostics = parse(
        "llm:\n  provider: openai\n  model: gpt-4o\n"
        "model_groups:\n  - id: llm\n    models: [{provider: x, model: y}]\n"
    )
    assert config is None
    assert ("config.model_groups.duplicate_id", 1) in codes(diagnostics)


def test_missing_llm_section() -> None:
    config, diagnostics = parse("channels: {}\n")
    assert config is None
    assert codes(diagnostics) == [("config.llm.missing_section", None)]
    config, diagnostics = parse("")  # an empty file
    assert codes(diagnostics) == [("config.llm.missing_section", None)]
    config, diagnostics = parse("channels: {}\nllm:\n")
    assert config is None
    assert codes(diagnostics) == [("config.llm.missing_section", 2)]


def test_llm_without_model_group() -> None:
    config, diagnostics = parse(GROUPS.replace("  model_group: main\n", "  model_group: 5\n"))
    assert config is None
    assert codes(diagnostics) == [("config.llm.missing_model_group", 2)]
    _, diagnostics = parse(GROUPS.replace("llm:\n  model_group: main\n", "llm: main\n"))
    assert codes(diagnostics) == [("config.llm.bad_value", 1)]


def test_llm_naming_an_unknown_group() -> None:
    config, diagnostics = parse(GROUPS.replace("model_group: main", "model_group: mian"))
    assert config is None
    found = only(diagnostics, "config.model_groups.unknown_group")
    assert (found.line, found.key) == (2, "mian")


def test_duplicate_group_id_points_at_second() -> None:
    config, diagnostics = parse(GROUPS.replace("id: small", "id: main"))
    assert config is None
    assert codes(diagnostics) == [("config.model_groups.duplicate_id", 9)]


@pytest.mark.parametrize(
    ("group", "line"),
    [
        ("  - id: g\n", 1),
        ("  - id: g\n    models: []\n", 2),
        ("  - id: g\n    models: gpt\n", 2),
    ],
)
def test_group_without_models(group: str, line: int) -> None:
    config, diagnostics = parse("model_groups:\n" + group + "tiers: {default: g}\n")
    assert config is None
    assert codes(diagnostics) == [("config.model_groups.missing_models", line + 1)]


def test_group_without_id_and_bad_models() -> None:
    config, diagnostics = parse(
        "tiers: {default: g}\nmodel_groups:\n  - models: [{provider: a, model: b}]\n"
        "  - id: g\n    models:\n      - provider: openai\n      - just-a-string\n"
    )
    assert config is None
    assert codes(diagnostics) == [
        ("config.model_groups.missing_id", 3),
        ("config.model_groups.bad_model", 6),
        ("config.model_groups.bad_model", 7),
    ]


def test_model_fields_extra_keys_and_costs() -> None:
    config, diagnostics = parse(
        "llm: {model_group: g}\nmodel_groups:\n  - id: g\n    strategy: failover\n"
        "    models:\n      - provider: azure\n        model: gpt\n"
        "        api_base: https://${HOST}/v1\n        reasoning_effort: low\n"
        "        input_cost_per_token: 0.000001\n        output_cost_per_token: 0\n"
        "        deployment: ${DEPLOY}\n",
        env={"HOST": "example.test", "DEPLOY": "dep-1"},
    )
    assert codes(diagnostics) == [("config.model_groups.unknown_key", 4)]
    assert config is not None
    group = config.model_groups[0]
    assert group.extra["strategy"] == "failover"
    spec = group.models[0]
    assert spec.api_base == "https://example.test/v1"
    assert spec.reasoning_effort == "low"
    assert (spec.input_cost_per_token, spec.output_cost_per_token) == (0.000001, 0.0)
    assert spec.extra["deployment"] == "dep-1"
    assert spec.api_key is None


def test_bad_model_values() -> None:
    base = "llm: {model_group: g}\nmodel_groups:\n  - id: g\n    models:\n      - provider: x\n"
    config, diagnostics = parse(
        base + "        model: y\n        api_key_env: NOT-A-NAME\n"
        "        input_cost_per_token: -1\n        api_base: 5\n"
    )
    assert config is None
    assert codes(diagnostics) == [
        ("config.model_groups.bad_model", 9),
        ("config.model_groups.bad_model", 7),
        ("config.model_groups.bad_model", 8),
    ]


def test_a_key_written_as_api_key_env_is_never_echoed() -> None:
    base = "llm: {model_group: g}\nmodel_groups:\n  - id: g\n    models:\n      - provider: x\n"
    _, diagnostics = parse(base + "        model: y\n        api_key_env: sk-live-TOPSECRET888\n")
    found = only(diagnostics, "config.model_groups.bad_model")
    assert "api_key_env" in found.message
    assert "TOPSECRET888" not in found.render()


def test_literal_api_key_is_a_warning() -> None:
    config, diagnostics = parse(GROUPS.replace("${SMALL_KEY}", "sk-literal"))
    assert config is not None
    found = only(diagnostics, "config.model_groups.literal_secret")
    assert (found.line, found.severity) == (13, "warning")
    assert "sk-literal" not in found.message


def test_tiers_resolve_with_fallbacks() -> None:
    config, diagnostics = parse(GROUPS + "tiers:\n  router: small\n")
    assert diagnostics == []
    assert config is not None
    assert config.group_for_tier("router") == "small"
    assert config.group_for_tier("default") == "main"
    assert config.group_for_tier("reasoning") == "main"
    config, _ = parse(GROUPS + "tiers:\n  default: main\n  reasoning: small\n")
    assert config is not None and config.group_for_tier("reasoning") == "small"


def test_tiers_without_llm_section_use_default_tier() -> None:
    config, diagnostics = parse(
        GROUPS.replace("llm:\n  model_group: main\n", "") + "tiers: {default: small}\n"
    )
    assert diagnostics == []
    assert config is not None and config.llm.model_group == "small"


def test_tier_problems() -> None:
    config, diagnostics = parse(GROUPS + "tiers:\n  fast: small\n  reasoning: huge\n  router: 3\n")
    assert config is None
    assert codes(diagnostics) == [
        ("config.tiers.unknown_tier", 15),
        ("config.tiers.unknown_group", 16),
        ("config.tiers.bad_value", 17),
    ]
    _, diagnostics = parse(GROUPS + "tiers: [router]\n")
    assert codes(diagnostics) == [("config.tiers.bad_value", 14)]


def test_default_tier_conflicting_with_llm_group_warns() -> None:
    config, diagnostics = parse(GROUPS + "tiers: {default: small}\n")
    assert config is not None
    found = only(diagnostics, "config.tiers.default_conflict")
    assert (found.line, found.severity) == (2, "warning")
    assert config.group_for_tier("default") == "small"


def test_channels_kept_and_checked() -> None:
    config, diagnostics = parse(
        GROUPS + "channels:\n  rest:\n  browser_audio:\n    asr: {name: deepgram}\n"
        "    silence_timeout: 30\n"
    )
    assert diagnostics == []
    assert config is not None
    assert dict(config.channels["rest"]) == {}
    asr = config.channels["browser_audio"]["asr"]
    assert isinstance(asr, Mapping) and asr["name"] == "deepgram"
    _, diagnostics = parse(GROUPS + "channels:\n  rest: true\n")
    assert codes(diagnostics) == [("config.channels.bad_value", 15)]
    _, diagnostics = parse(GROUPS + "channels: [rest]\n")
    assert codes(diagnostics) == [("config.channels.bad_value", 14)]


def test_services_and_unknown_top_level_keys() -> None:
    config, diagnostics = parse(GROUPS + "tracker_store: {type: sql}\nvoice: {}\n")
    assert config is not None
    assert sorted(codes(diagnostics), key=lambda c: c[1] or 0) == [
        ("config.integrations.not_used", 14),
        ("config.integrations.unknown_key", 15),
    ]
    assert all(d.severity == "warning" for d in diagnostics)
    assert "event store" in only(diagnostics, "config.integrations.not_used").message
    assert config.services["tracker_store"]["type"] == "sql"
    _, diagnostics = parse(GROUPS + "tracing: langfuse\n")
    assert codes(diagnostics) == [("config.integrations.bad_value", 14)]


def test_file_must_be_a_mapping() -> None:
    config, diagnostics = parse("- llm\n")
    assert config is None
    assert codes(diagnostics) == [("config.integrations.not_mapping", 1)]


def test_model_groups_must_be_a_list() -> None:
    config, diagnostics = parse("llm: {model_group: g}\nmodel_groups: {g: 1}\n")
    assert config is None
    assert codes(diagnostics) == [("config.model_groups.bad_value", 2)]


def test_prompt_cache_prices() -> None:
    base = "llm: {model_group: g}\nmodel_groups:\n  - id: g\n    models:\n      - provider: x\n"
    config, diagnostics = parse(
        base + "        model: y\n        input_cost_per_token: 0.000002\n"
        "        cached_input_cost_per_token: 0.0000005\n"
        "        cache_write_cost_per_token: 0.0000025\n"
    )
    assert codes(diagnostics) == []
    assert config is not None
    spec = config.model_groups[0].models[0]
    assert (spec.cached_input_cost_per_token, spec.cache_write_cost_per_token) == (5e-7, 2.5e-6)
    config, diagnostics = parse(
        base + "        model: y\n        cached_input_cost_per_token: -1\n"
    )
    assert config is None
    assert codes(diagnostics) == [("config.model_groups.bad_model", 7)]
