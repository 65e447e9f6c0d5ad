"""`mcp_servers:` in integrations.yml: remote tool servers and how to authenticate.

A server is reached over streamable HTTP (`url`) or started as a local process speaking
stdio (`command`, `args`, `env`). `start` says when Keel connects: `startup` (the default;
an unavailable server or tool stops the app from starting) or `lazy` (on the first turn).
`token` and `api_key` are sent as `Authorization: Bearer <secret>`; `header_name` and
`header_format` (`{key}` marks the secret) send an `api_key` in another header.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from keel.project.envvars import Expander, Secret
from keel.source.reporter import Reporter, is_number, key_line, warn_unknown_keys

AuthKind = Literal["token", "api_key", "oauth", "module"]
AUTH_KEYS: tuple[AuthKind, ...] = ("token", "api_key", "oauth", "module")
StartMode = Literal["startup", "lazy"]
START_MODES: tuple[StartMode, ...] = ("startup", "lazy")
HEADER_KEYS = ("header_name", "header_format")
SERVER_KEYS = frozenset(
    {"name", "url", "command", "args", "env", "tool_timeout", "start", *AUTH_KEYS, *HEADER_KEYS}
)


@dataclass(frozen=True, kw_only=True, slots=True)
class McpAuth:
    """The one authentication strategy of a server."""

    kind: AuthKind
    secret: Secret | None = None
    """For `token` and `api_key`."""
    module: str | None = None
    """For `module`: dotted path of the code that authenticates."""
    settings: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}), repr=False)
    """For `oauth`: its settings, `${VAR}`-expanded; hidden from repr."""
    header_name: str = "Authorization"
    """For `api_key`: the HTTP header that carries it (`token` always uses Authorization)."""
    header_format: str = "Bearer {key}"
    """For `api_key`: the header value, `{key}` standing for the secret."""


@dataclass(frozen=True, kw_only=True, slots=True)
class McpServerConfig:
    """One MCP server: reached by `url`, or started with `command` + `args` + `env`."""

    name: str
    line: int | None
    url: str | None = None
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, Secret] = field(default_factory=lambda: MappingProxyType({}), repr=False)
    auth: McpAuth | None = None
    tool_timeout: float | None = None
    """Seconds; None means the agent's `tool_timeout`."""
    start: StartMode = "startup"
    """When Keel connects: at startup (checked before serving) or lazily on the first turn."""
    unset_vars: tuple[str, ...] = ()
    """`${VAR}`s used by this server that were not set; such a server is not connected."""

    @property
    def transport(self) -> Literal["http", "stdio"]:
        """`http` for a `url` server, `stdio` for a `command` server."""
        return "http" if self.url is not None else "stdio"


def parse_mcp_servers(
    r: Reporter, data: Any, line: int | None, x: Expander
) -> list[McpServerConfig]:
    """Read `mcp_servers`; duplicate names and several auth strategies are errors."""
    if data is None:
        return []
    if not isinstance(data, list):
        r.error("config.mcp.bad_value", line, "`mcp_servers` must be a list")
        return []
    servers: list[McpServerConfig] = []
    names: set[str] = set()
    for index, item in enumerate(data):
        server = _server(r, item, key_line(data, index), x)
        if server is None:
            continue
        if server.name in names:
            message = f"MCP server `{server.name}` is declared twice"
            r.error("config.mcp.duplicate_name", server.line, message, key=server.name)
            continue
        names.add(server.name)
        servers.append(server)
    return servers


def _server(r: Reporter, item: Any, line: int | None, x: Expander) -> McpServerConfig | None:
    if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item["name"]:
        r.error("config.mcp.missing_name", line, "each MCP server needs a string `name`")
        return None
    name: str = item["name"]
    where = f"mcp_servers.{name}"
    warn_unknown_keys(r, item, SERVER_KEYS, "config.mcp.unknown_key", where=f"{where}.")
    mark = len(x.unset)
    url, command = _transport(r, item, line, where, x)
    timeout = item.get("tool_timeout")
    if timeout is not None and (not is_number(timeout) or timeout <= 0):
        message = f"`{where}.tool_timeout` must be a number of seconds above 0"
        r.error("config.mcp.bad_tool_timeout", key_line(item, "tool_timeout"), message)
        timeout = None
    args, env, auth = (
        _args(r, item, where, x),
        _env(r, item, where, x),
        _auth(r, item, line, where, x),
    )
    return McpServerConfig(
        name=name,
        line=line,
        url=url,
        command=command,
        args=args,
        env=env,
        auth=auth,
        tool_timeout=None if timeout is None else float(timeout),
        start=_start(r, item, where),
        unset_vars=tuple(dict.fromkeys(u.name for u in x.unset[mark:])),
    )


def _start(r: Reporter, item: dict[Any, Any], where: str) -> StartMode:
    value = item.get("start", "startup")
    for mode in START_MODES:
        if value == mode:
            return mode
    message = f"`{where}.start` must be `startup` or `lazy`"
    r.error("config.mcp.bad_value", key_line(item, "start"), message)
    return "startup"


def _transport(
    r: Reporter, item: dict[Any, Any], line: int | None, where: str, x: Expander
) -> tuple[str | None, str | None]:
    found: dict[str, str] = {}
    for key in ("url", "command"):
        value = item.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or not value:
            r.error("config.mcp.bad_value", key_line(item, key), f"`{where}.{key}` must be text")
            continue
        found[key] = x.text(value, line=key_line(item, key), key=f"{where}.{key}")
    if "url" in item and "command" in item:
        message = f"`{where}` has both `url` and `command`; choose one"
        r.error("config.mcp.multiple_transports", line, message, key=where)
    elif "url" not in item and "command" not in item:
        message = f"`{where}` needs `url` (remote) or `command` (local process)"
        r.error("config.mcp.missing_transport", line, message, key=where)
    return found.get("url"), found.get("command")


def _args(r: Reporter, item: dict[Any, Any], where: str, x: Expander) -> tuple[str, ...]:
    args = item.get("args")
    if args is None:
        return ()
    if not isinstance(args, list) or not all(isinstance(a, str | int | float) for a in args):
        r.error("config.mcp.bad_value", key_line(item, "args"), f"`{where}.args` must be a list")
        return ()
    return tuple(
        x.text(str(a), line=key_line(args, i), key=f"{where}.args[{i}]") for i, a in enumerate(args)
    )


def _env(r: Reporter, item: dict[Any, Any], where: str, x: Expander) -> Mapping[str, Secret]:
    env = item.get("env")
    if env is None:
        return MappingProxyType({})
    if not isinstance(env, dict) or not all(isinstance(v, str | int | float) for v in env.values()):
        message = f"`{where}.env` must map names to text"
        r.error("config.mcp.bad_value", key_line(item, "env"), message)
        return MappingProxyType({})
    return MappingProxyType(
        {
            str(k): x.secret(str(v), line=key_line(env, k), key=f"{where}.env.{k}")
            for k, v in env.items()
        }
    )


def _auth(
    r: Reporter, item: dict[Any, Any], line: int | None, where: str, x: Expander
) -> McpAuth | None:
    present = [k for k in AUTH_KEYS if item.get(k) is not None]
    if not present:
        return None
    if len(present) > 1:
        listed = ", ".join(present)
        message = f"`{where}` has several auth strategies ({listed}); use at most one"
        r.error("config.mcp.multiple_auth", line, message, key=where)
        return None
    kind = present[0]
    value = item[kind]
    key_at = key_line(item, kind)
    if kind == "oauth":
        if not isinstance(value, dict):
            r.error("config.mcp.bad_value", key_at, f"`{where}.oauth` must be a mapping")
            return None
        _warn_literal_oauth(r, value, where)
        return McpAuth(kind=kind, settings=x.mapping(value, line=key_at, key=f"{where}.oauth"))
    if not isinstance(value, str) or not value:
        r.error("config.mcp.bad_value", key_at, f"`{where}.{kind}` must be text")
        return None
    if kind == "module":
        return McpAuth(kind=kind, module=value)
    secret = x.secret(value, line=key_at, key=f"{where}.{kind}")
    if secret.literal:
        message = f"`{where}.{kind}` is written literally; secrets must come from `${{VAR}}`"
        r.warning("config.mcp.literal_secret", key_at, message, key=f"{where}.{kind}")
    if kind == "api_key":
        header = _header(r, item, where)
        return McpAuth(
            kind=kind,
            secret=secret,
            header_name=header.get("header_name", "Authorization"),
            header_format=header.get("header_format", "Bearer {key}"),
        )
    return McpAuth(kind=kind, secret=secret)


def _header(r: Reporter, item: dict[Any, Any], where: str) -> dict[str, str]:
    """`header_name` / `header_format` of an `api_key` server (only those that are valid)."""
    found: dict[str, str] = {}
    for key in HEADER_KEYS:
        value = item.get(key)
        if value is None:
            continue
        if (
            not isinstance(value, str)
            or not value
            or (key == "header_format" and "{key}" not in value)
        ):
            extra = " containing `{key}`" if key == "header_format" else ""
            r.error(
                "config.mcp.bad_value", key_line(item, key), f"`{where}.{key}` must be text{extra}"
            )
            continue
        found[key] = value
    return found


def _warn_literal_oauth(r: Reporter, oauth: dict[Any, Any], where: str) -> None:
    for key, value in oauth.items():
        if "secret" in str(key) and isinstance(value, str) and "${" not in value:
            line = key_line(oauth, key)
            message = (
                f"`{where}.oauth.{key}` is written literally; secrets must come from `${{VAR}}`"
            )
            r.warning("config.mcp.literal_secret", line, message, key=f"{where}.oauth.{key}")
