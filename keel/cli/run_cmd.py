"""`keel run PATH`: serve an agent over HTTP with uvicorn.

Safe by default: bound to 127.0.0.1, and when no API key is configured a local key is
used and printed (scopes chat and admin), kept in `.keel/local-key` (mode 0600) across
restarts unless `--new-key` (`keel.cli.local_key`); serving on any other address
without configured keys is refused. Keys come from `KEEL_API_KEYS` and/or a keys file
(`--keys`, `KEEL_API_KEYS_FILE`), see docs/deploy.md. The event store is SQLite under
`.keel/` of the current directory unless `--database-url` / `KEEL_DATABASE_URL` says
otherwise. Settings reach the uvicorn workers as JSON in `KEEL_SERVER_SETTINGS`.
`--rasa-no-key` (Rasa's channels without a key) is refused on any address but loopback.
`--reload` watches the project and swaps a changed agent in between turns, keeping the
old one while the new one has errors (`keel.server.runtime.ServerRuntime.reload`).
"""

# lazy imports: each command imports what it uses when it runs (`keel --help` loads no server).
from __future__ import annotations

import ipaddress
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from keel.cli.local_key import LocalKey, local_key, new_secret
from keel.source.diagnostics import has_errors

if TYPE_CHECKING:
    from keel.llm.port import Model
    from keel.project.definition import AgentDefinition
    from keel.project.model_groups import ModelSpec
    from keel.server.auth import KeyRing
    from keel.server.settings import ServerSettings
    from keel.source.diagnostics import Diagnostic

LOCAL_KEY_NAME = "local"
GRACEFUL_SHUTDOWN_SECONDS = 10
"""On SIGTERM, how long requests in flight may take before they are cut (an open
Inspector stream never ends by itself); turns still running are then recorded cancelled."""


def is_loopback(host: str) -> bool:
    """Whether `host` only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def default_database_url(cwd: Path) -> str:
    """SQLite under `.keel/` of `cwd` (an absolute path, the same for every worker)."""
    return f"sqlite:///{(cwd / '.keel' / 'keel.db').resolve()}"


def _salt(env: dict[str, str]) -> tuple[bytes, bool]:
    from keel.server.auth import KeyRing

    configured = env.get("KEEL_API_KEY_SALT")
    if configured:
        return configured.encode("utf-8"), True
    return KeyRing.new_salt(), False


def load_keys(
    env: dict[str, str], keys_file: Path | None, local_secret: Callable[[], str] = new_secret
) -> tuple[KeyRing, str | None]:
    """(KeyRing, local secret or None) from the environment and the keys file; with no key
    configured the ring holds the local key `local_secret()` gives (a new one by default)."""
    from keel.server.auth import KeyConfigError, KeyRing, check_unique, parse_keys

    salt, configured = _salt(env)
    path = keys_file or (Path(env["KEEL_API_KEYS_FILE"]) if env.get("KEEL_API_KEYS_FILE") else None)
    try:
        keys = parse_keys(
            env.get("KEEL_API_KEYS", ""), salt, salt_configured=configured, source="KEEL_API_KEYS"
        )
        if path is not None:
            text = path.read_text(encoding="utf-8")
            keys += parse_keys(text, salt, salt_configured=configured, source=f"keys file {path}")
        check_unique(keys)
    except (OSError, KeyConfigError) as exc:
        # The messages show no key text (keel.server.auth.parse_key).
        raise typer.BadParameter(str(exc)) from None
    if keys:
        return KeyRing(salt=salt, keys=keys), None
    secret = local_secret()
    local = parse_keys(f"{LOCAL_KEY_NAME}:chat,admin:{secret}", salt)
    return KeyRing(salt=salt, keys=local), secret


def _check_project(path: Path) -> AgentDefinition:
    from keel.project.load import load_project

    definition, diagnostics = load_project(path)
    if definition is not None and not has_errors(diagnostics):
        diagnostics = _check_mcp(definition)
    if definition is None or has_errors(diagnostics):
        for d in diagnostics:
            typer.echo(d.render(), err=True)
        typer.echo(f"{path}: the agent has errors; not serving it", err=True)
        raise typer.Exit(1)
    return definition


def _check_mcp(definition: AgentDefinition) -> list[Diagnostic]:
    """What the workers will find when they connect the `start: startup` MCP servers."""
    if not any(skill.mcp_imports for skill in definition.skills.values()):
        return []
    import asyncio

    from keel.mcp.runtime import check_mcp

    return asyncio.run(check_mcp(definition, startup_only=True))


def _check_model(spec: str | None, definition: AgentDefinition) -> Model:
    from keel.server.model_spec import ModelSpecError, build_model

    try:
        return build_model(spec, definition)
    except ModelSpecError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


def _check_embedder(definition: AgentDefinition, model: Model) -> None:
    """The embedder of the knowledge base and of the offline router (with no model, or
    `routing.offline.enabled`) can be built: a remote one needs its key, the local one its
    weights package."""
    from keel.knowledge.sources import has_knowledge
    from keel.loop.offline import routes_offline

    knowledge = has_knowledge(definition.root)
    if not knowledge and not routes_offline(definition, model):
        return
    from keel.embeddings.factory import embedder_for
    from keel.embeddings.port import EmbeddingError

    try:
        embedder_for(definition)
    except EmbeddingError as exc:
        where = "references.embeddings" if knowledge else "the offline router"
        typer.echo(f"error: {where}: {exc}", err=True)
        raise typer.Exit(2) from None


def model_mode(spec: str | None, definition: AgentDefinition) -> str:
    """What answers where a model would: `none`, `scripted (FILE)`, or provider and model."""
    if spec == "none":
        return "none (no model: offline router, typed extractors, fixed replies)"
    if spec is not None:
        return f"scripted ({spec.partition(':')[2]})"
    from keel.llm.tiers import TIERS, resolve

    integrations = definition.integrations
    default = resolve(integrations, "default")
    text = _group_text(default.models[0]) if default.models else default.id
    others = []
    for tier in TIERS:
        group = resolve(integrations, tier)
        if tier != "default" and group.id != default.id and group.models:
            others.append(f"{tier}: {_group_text(group.models[0])}")
    return text + (f" ({', '.join(others)})" if others else "")


def _group_text(spec: ModelSpec) -> str:
    return f"{spec.provider} {spec.model}"


def _banner(
    agent: str,
    host: str,
    port: int,
    secret: str | None,
    *,
    mode: str = "",
    key: LocalKey | None = None,
    reload: bool = False,
) -> str:
    shown = f"[{host}]" if ":" in host else host
    base = f"http://{shown}:{port}"
    # The pages take a key from `#key=`: a fragment never reaches the server or its logs.
    fragment = f"#key={secret}" if secret is not None else ""
    lines = [
        f"Keel is serving {agent} at {base}",
        f"  model           {mode}" if mode else "",
        "  reload          on: the agent is reloaded when its files change" if reload else "",
        f"  web chat        {base}/ui/chat{fragment}",
        f"  Inspector       {base}/ui/inspector{fragment}",
        f"  plan console    {base}/ui/plans{fragment}",
        f"  chat API        {base}/v1/conversations/{{id}}/messages",
        f"  OpenAI-style    {base}/v1  (model {agent!r})",
        f"  REST webhook    {base}/webhooks/rest/webhook",
        f"  Rasa socket.io  {base}/socket.io/",
        f"  API docs        {base}/docs  ({base}/openapi.json)",
        f"  health          {base}/health",
    ]
    if secret is not None:
        lines += [
            "No API key is configured, so this run uses a local key (scopes chat, admin):",
            f"  {secret}",
            *_key_lines(key),
            f"  curl -H 'Authorization: Bearer {secret}' -H 'Content-Type: application/json' \\",
            f'       -d \'{{"text": "hello"}}\' {base}/v1/conversations/demo/messages',
        ]
    return "\n".join(line for line in lines if line)


def _key_lines(key: LocalKey | None) -> list[str]:
    if key is None:
        return []
    if key.path is None:
        return [f"  (not kept: {key.note}; the next run makes a new one)"]
    kept = {
        "kept": f"  kept in {key.path} (mode 0600) from an earlier run",
        "new": f"  kept in {key.path} (mode 0600) for the next runs",
        "replaced": f"  a new key, kept in {key.path} (mode 0600): {key.note}",
    }[key.origin]
    return [kept, "  (keel run --new-key replaces it)"]


def build_settings(
    path: Path,
    *,
    host: str,
    database_url: str | None,
    model: str | None,
    keys_file: Path | None,
    env: dict[str, str],
    cwd: Path,
    cors_origins: str | None = None,
    rasa_no_key: bool = False,
    local_secret: Callable[[], str] = new_secret,
    reload: bool = False,
) -> tuple[ServerSettings, str | None]:
    """The server settings for `keel run`, and the local key (when no key is configured:
    `local_secret()` on a loopback address, which keeps it; a throwaway one elsewhere,
    refused)."""
    from keel.server.cors import parse_origins
    from keel.server.http_protocol import read_timeout
    from keel.server.ratelimit import RateLimit
    from keel.server.settings import DEFAULT_MAX_BODY_BYTES, ServerSettings

    keys, secret = load_keys(env, keys_file, local_secret if is_loopback(host) else new_secret)
    if secret is not None and not is_loopback(host):
        raise typer.BadParameter(
            f"refusing to serve on {host} without API keys: set KEEL_API_KEYS or --keys",
            param_hint="--host",
        )
    if rasa_no_key and not is_loopback(host):
        raise typer.BadParameter(
            f"refusing to serve Rasa's channels without a key on {host}: --rasa-no-key is "
            "for local use on a loopback address (127.0.0.1, ::1, localhost) only",
            param_hint="--rasa-no-key",
        )
    try:
        origins = parse_origins(cors_origins or "")
        rate = (
            RateLimit.parse(env["KEEL_RATE_LIMIT"]) if env.get("KEEL_RATE_LIMIT") else RateLimit()
        )
        max_body = int(env.get("KEEL_MAX_BODY_BYTES") or DEFAULT_MAX_BODY_BYTES)
        read_timeout(env)  # read again by each worker's HTTP protocol
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    settings = ServerSettings(
        project=path.resolve(),
        database_url=database_url or env.get("KEEL_DATABASE_URL") or default_database_url(cwd),
        model=model,
        keys=keys,
        rate_limit=rate,
        max_body_bytes=max_body,
        cors_origins=origins,
        rasa_no_key=rasa_no_key,
        reload=reload,
    )
    return settings, secret


PathArg = Annotated[Path, typer.Argument(help="Agent project folder.")]
HostOption = Annotated[str, typer.Option("--host", help="Address to bind.")]
PortOption = Annotated[int, typer.Option("--port", help="Port to bind.")]
WorkersOption = Annotated[int, typer.Option("--workers", min=1, help="Worker processes.")]
DatabaseUrlOption = Annotated[
    str | None,
    typer.Option(
        "--database-url",
        help="Event store URL (default: KEEL_DATABASE_URL, else SQLite under .keel/).",
    ),
]
ModelOption = Annotated[
    str | None,
    typer.Option(
        "--model",
        help="scripted:FILE; none: no model at all (offline router, extractors); "
        "left out: the agent's model groups.",
    ),
]
KeysOption = Annotated[
    Path | None, typer.Option("--keys", help="API keys file (name:scopes:key per line).")
]
LogLevelOption = Annotated[str, typer.Option("--log-level", help="uvicorn log level.")]
CorsOption = Annotated[
    str | None,
    typer.Option(
        "--cors-origins",
        envvar="KEEL_CORS_ORIGINS",
        help="Origins whose pages may call the API (comma-separated; default none).",
    ),
]
RasaNoKeyOption = Annotated[
    bool,
    typer.Option(
        "--rasa-no-key",
        envvar="KEEL_RASA_NO_KEY",
        help="Rasa's REST and socket.io channels take messages without a key "
        "(loopback addresses only).",
    ),
]
ReloadOption = Annotated[
    bool,
    typer.Option(
        "--reload",
        help="Reload the agent when its files change (between turns; the old one is kept "
        "while the new one has errors). One worker.",
    ),
]
NewKeyOption = Annotated[
    bool,
    typer.Option(
        "--new-key",
        help="Replace the local key kept in .keel/local-key (used when no API key is set).",
    ),
]
LogFormatOption = Annotated[
    str,
    typer.Option(
        "--log-format",
        envvar="KEEL_LOG_FORMAT",
        help="text (readable, the default) or json (one JSON object a line).",
    ),
]


def run_command(
    path: PathArg,
    host: HostOption = "127.0.0.1",
    port: PortOption = 8000,
    workers: WorkersOption = 1,
    database_url: DatabaseUrlOption = None,
    model: ModelOption = None,
    keys_file: KeysOption = None,
    log_level: LogLevelOption = "info",
    cors_origins: CorsOption = None,
    rasa_no_key: RasaNoKeyOption = False,
    log_format: LogFormatOption = "text",
    reload: ReloadOption = False,
    new_key: NewKeyOption = False,
) -> None:
    """Serve an agent over HTTP (chat API, SSE, REST webhook, OpenAI-compatible)."""
    import uvicorn

    from keel.server import http_protocol
    from keel.server.log_config import LOG_FORMATS, server_log_config
    from keel.server.master_watch import MASTER_PID_ENV
    from keel.server.settings import SETTINGS_ENV

    if log_format not in LOG_FORMATS:
        raise typer.BadParameter(
            f"{log_format!r} is not one of {', '.join(LOG_FORMATS)}", param_hint="--log-format"
        )
    if reload and workers > 1:
        raise typer.BadParameter(
            "--reload serves with one worker (each would reload on its own)",
            param_hint="--workers",
        )
    definition = _check_project(path)
    _check_embedder(definition, _check_model(model, definition))
    env = dict(os.environ)
    kept: list[LocalKey] = []

    def keep_local_key() -> str:
        key = local_key(Path.cwd(), renew=new_key)
        kept.append(key)
        return key.secret

    settings, secret = build_settings(
        path,
        host=host,
        database_url=database_url,
        model=model,
        keys_file=keys_file,
        env=env,
        cwd=Path.cwd(),
        cors_origins=cors_origins,
        rasa_no_key=rasa_no_key,
        local_secret=keep_local_key,
        reload=reload,
    )
    agent = definition.config.id or definition.root.name
    mode = model_mode(model, definition)
    key = kept[0] if kept else None
    typer.echo(_banner(agent, host, port, secret, mode=mode, key=key, reload=reload))
    os.environ[SETTINGS_ENV] = settings.to_json()
    # Workers leave when this master dies, even by SIGKILL (keel.server.master_watch).
    os.environ.pop(MASTER_PID_ENV, None)
    if workers > 1:
        os.environ[MASTER_PID_ENV] = str(os.getpid())
    uvicorn.run(
        "keel.server.asgi:app_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level=log_level,
        log_config=server_log_config(log_level, "json" if log_format == "json" else "text"),
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
        http=http_protocol.PROTOCOL,  # h11 with the read timeout for slow clients
    )


def register(app: typer.Typer) -> None:
    """Add `keel run` to the CLI."""
    app.command("run")(run_command)


def main() -> None:
    """Run `keel run` on its own (`python -c "from keel.cli.run_cmd import main; main()"`)."""
    standalone = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    register(standalone)
    standalone()
