"""`keel run` settings: safe local default, keys from env and file, store URL, worker hand-off."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import typer
from server_kit import EXAMPLE
from typer.testing import CliRunner

from keel.cli.run_cmd import build_settings, default_database_url, is_loopback, register
from keel.server.settings import ServerSettings


def _settings(
    env: dict[str, str], *, host: str = "127.0.0.1", keys_file: Path | None = None, **more: object
) -> tuple[ServerSettings, str | None]:
    options: dict[str, object] = {"database_url": None, "model": None, **more}
    return build_settings(
        EXAMPLE,
        host=host,
        keys_file=keys_file,
        env=env,
        cwd=Path("/srv/app"),
        **options,  # type: ignore[arg-type]
    )


def test_without_keys_a_local_key_is_generated_for_loopback_only() -> None:
    settings, secret = _settings({})
    assert secret is not None and secret.startswith("keel-local-")
    assert [(k.name, sorted(k.scopes)) for k in settings.keys.keys] == [
        ("local", ["admin", "chat"])
    ]
    assert settings.keys.verify(secret) is not None
    with pytest.raises(typer.BadParameter, match="without API keys"):
        _settings({}, host="0.0.0.0")
    assert is_loopback("localhost") and is_loopback("::1") and not is_loopback("example.com")


def test_keys_from_env_and_file(tmp_path: Path) -> None:
    salt = "pepper"
    digest = hashlib.sha256(b"pepperfile-secret").hexdigest()
    keys = tmp_path / "keys"
    keys.write_text(f"# service keys\nsvc:chat:sha256:{digest}\n", encoding="utf-8")
    env = {"KEEL_API_KEYS": "web:chat:env-secret;ops:admin:ops-secret", "KEEL_API_KEY_SALT": salt}
    settings, secret = _settings(env, host="0.0.0.0", keys_file=keys)
    assert secret is None
    ring = settings.keys
    assert [k.name for k in ring.keys] == ["web", "ops", "svc"]
    assert ring.verify("file-secret") is not None and ring.verify("env-secret") is not None
    via_env, _ = _settings({**env, "KEEL_API_KEYS_FILE": str(keys)})
    assert len(via_env.keys.keys) == 3
    with pytest.raises(typer.BadParameter, match="scopes"):
        _settings({"KEEL_API_KEYS": "web:nope:k"})


def test_a_malformed_key_is_never_echoed_by_keel_run(tmp_path: Path) -> None:
    app = typer.Typer()
    register(app)
    keys = tmp_path / "keys"
    keys.write_text("ops:admin:fine\nFILESECRET999\n", encoding="utf-8")
    runner = CliRunner()
    wide = {"COLUMNS": "1000"}  # one line per message in the error box
    from_env = runner.invoke(
        app, [str(EXAMPLE), "--model", "none"], env={**wide, "KEEL_API_KEYS": "TOPSECRET888"}
    )
    from_file = runner.invoke(app, [str(EXAMPLE), "--model", "none", "--keys", str(keys)], env=wide)
    assert from_env.exit_code == 2 and from_file.exit_code == 2
    assert "TOPSECRET888" not in from_env.output
    assert "KEEL_API_KEYS entry 1 is not name:scope1,scope2:key" in from_env.output
    assert "FILESECRET999" not in from_file.output
    assert "entry 2 is not name:scope1,scope2:key" in from_file.output


def test_store_url_rate_limit_and_body_size() -> None:
    default, _ = _settings({})
    assert default.database_url == default_database_url(Path("/srv/app"))
    assert default.database_url == "sqlite:////srv/app/.keel/keel.db"
    env = {
        "KEEL_DATABASE_URL": "sqlite:////data/k.db",
        "KEEL_RATE_LIMIT": "10/second",
        "KEEL_MAX_BODY_BYTES": "2048",
    }
    from_env, _ = _settings(env)
    assert from_env.database_url == "sqlite:////data/k.db"
    assert from_env.rate_limit.burst == 10 and from_env.max_body_bytes == 2048
    option, _ = _settings(env, database_url="memory://")
    assert option.database_url == "memory://"
    with pytest.raises(typer.BadParameter, match="60/minute"):
        _settings({"KEEL_RATE_LIMIT": "lots"})


def test_settings_reach_workers_as_json_without_secrets() -> None:
    settings, secret = _settings({"KEEL_API_KEYS": "web:chat:env-secret"}, model="scripted:x.yml")
    text = settings.to_json()
    assert "env-secret" not in text
    again = ServerSettings.from_json(text)
    assert again == settings
    assert again.keys.verify("env-secret") is not None
    assert secret is None


def test_run_refuses_a_broken_project_and_an_unknown_model(tmp_path: Path) -> None:
    app = typer.Typer()
    register(app)
    runner = CliRunner()
    broken = runner.invoke(app, [str(tmp_path)])
    assert broken.exit_code == 1
    bad_model = runner.invoke(app, [str(EXAMPLE), "--model", "magic"])
    assert bad_model.exit_code == 2
    assert "unknown model" in bad_model.output
    no_provider_key = runner.invoke(app, [str(EXAMPLE)], env={"OPENAI_API_KEY": None})
    assert no_provider_key.exit_code == 2
    assert "OPENAI_API_KEY" in no_provider_key.output
