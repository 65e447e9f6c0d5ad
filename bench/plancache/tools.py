"""The bench world's tools as a Keel catalog (`PlanTool` + `ToolContract`), per catalog version.

Argument bindings are declared as a careful catalog author would: a value the user names
(a task number, a path, a sender, a window) is `request`; list inputs fed by an earlier step
are `piped`; fixed choices are `structural`. Argument names follow Metnos's vocabulary where
the spec reveals it (`time_window`, `from_contains`, `path(s)`, `to`, `body`, `title`,
`query`, `pattern`), and plain names elsewhere (`base_path`, `task_id`, `feature`,
`order_id`, `customer`, `folder`, `status`, `dest`).

`Version` says which of the stream's catalog and logic changes have happened; `catalog_at`
builds the catalog for it (the world validates every call against the same schemas).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from keel.plans.catalog import Catalog, PlanTool, catalog_of, plan_tool
from keel.tools.contract import Binding, Effect, ToolContract

STR = {"type": "string"}
INT = {"type": "integer"}
LIST = {"type": "array", "items": {"type": "string"}}
WINDOWS = ("today", "yesterday", "last_week")
MAIL_FOLDERS = ("inbox", "archive", "spam", "sent")
FEATURES = ("notifications", "dark_mode", "auto_backup", "location_sharing")


@dataclass(frozen=True, kw_only=True, slots=True)
class Version:
    """Which stream changes have happened (each flips once, at a fixed turn)."""

    done_renamed: bool = False
    """C1, a contract edit: list_tasks' status value `done` becomes `completed`."""
    summarize: bool = False
    """C2, a sibling tool: summarize_messages appears (summaries stop needing synthesis)."""
    no_archive_messages: bool = False
    """C3, a removed tool: archive_messages goes; archiving mail moves it instead."""
    verbose_tasks: bool = False
    """C4, a logic change: the planner's task-list answer now names the tasks."""


def _enum(values: tuple[str, ...]) -> dict[str, object]:
    return {"type": "string", "enum": list(values)}


def _schema(props: Mapping[str, object], required: tuple[str, ...]) -> dict[str, object]:
    return {"type": "object", "properties": dict(props), "required": list(required)}


def _entries(*fields: str) -> dict[str, object]:
    item = {"type": "object", "properties": {f: {} for f in fields}}
    return {
        "type": "object",
        "properties": {"entries": {"type": "array", "items": item}, "count": INT},
    }


def _tool(
    name: str,
    props: Mapping[str, object],
    required: tuple[str, ...],
    effect: Effect,
    *,
    bindings: Mapping[str, Binding] | None = None,
    idem: tuple[str, ...] | None = None,
    output: Mapping[str, object] | None = None,
    outbound: frozenset[str] = frozenset(),
    verbs: tuple[str, ...] = (),
    code: str = "v1",
) -> PlanTool:
    contract = ToolContract(
        effect=effect,
        bindings=MappingProxyType(dict(bindings or {})),
        idempotency_key=idem,
        output_schema=MappingProxyType(dict(output)) if output else None,
        outbound_args=outbound,
        verbs=verbs,
        declared=True,
    )
    return plan_tool(name, _schema(props, required), contract, code=f"{name}:{code}")


TASK = _entries("id", "title", "status", "tag", "due")
FILES = _entries("path", "name", "size", "modified")
MAIL = _entries("id", "sender", "subject", "date", "folder")
EVENTS = _entries("id", "title", "date", "time")
ORDERS = _entries("order_id", "customer", "status", "amount", "address", "reason")
PRODUCTS = _entries("name", "price")
CANCEL_REASONS = ("no longer needed", "ordered by mistake")
ONE_TASK = {"type": "object", "properties": {f: {} for f in ("id", "title", "status", "tag")}}
PIPED: dict[str, Binding] = {"ids": "piped"}


def _task_tools(version: Version) -> list[PlanTool]:
    statuses = ("open", "completed", "all") if version.done_renamed else ("open", "done", "all")
    code = "v2" if version.done_renamed else "v1"
    single = {"task_id": INT}
    return [
        _tool(
            "list_tasks",
            {"status": _enum(statuses), "tag": STR, "due": STR},
            (),
            "read_only",
            output=TASK,
            code=code,
        ),
        _tool("get_task", single, ("task_id",), "read_only", output=ONE_TASK),
        _tool("create_task", {"title": STR}, ("title",), "write"),
        _tool("complete_task", single, ("task_id",), "write_idempotent", idem=("task_id",)),
        _tool("reopen_task", single, ("task_id",), "write_idempotent", idem=("task_id",)),
        _tool("delete_task", single, ("task_id",), "delete", idem=("task_id",)),
    ]


def _file_tools() -> list[PlanTool]:
    return [
        _tool(
            "list_files",
            {"base_path": STR, "pattern": STR, "exclude": STR, "time_window": _enum(WINDOWS)},
            ("base_path",),
            "read_only",
            output=FILES,
        ),
        _tool("read_file", {"path": STR}, ("path",), "read_only"),
        _tool("archive_files", {"paths": LIST}, ("paths",), "write", idem=("paths",)),
        _tool("delete_files", {"paths": LIST}, ("paths",), "delete", idem=("paths",)),
        _tool("move_file", {"path": STR, "dest": STR}, ("path", "dest"), "write"),
    ]


def _mail_tools(version: Version) -> list[PlanTool]:
    find = {
        "folder": _enum(MAIL_FOLDERS),
        "time_window": _enum(WINDOWS),
        "from_contains": STR,
        "query": STR,
    }
    ids = {"ids": LIST}
    tools = [
        _tool("find_messages", find, (), "read_only", output=MAIL),
        _tool(
            "move_messages",
            {"ids": LIST, "folder": _enum(MAIL_FOLDERS)},
            ("ids", "folder"),
            "write",
            bindings=PIPED,
            idem=("ids", "folder"),
            verbs=("archive",),
        ),
        _tool("delete_messages", ids, ("ids",), "delete", bindings=PIPED, idem=("ids",)),
        _tool(
            "send_message",
            {"to": STR, "body": STR},
            ("to", "body"),
            "send",
            outbound=frozenset({"to", "body"}),
            verbs=("email", "mail"),
        ),
    ]
    if not version.no_archive_messages:
        tools.append(
            _tool("archive_messages", ids, ("ids",), "write", bindings=PIPED, idem=("ids",))
        )
    if version.summarize:
        summary = {"type": "object", "properties": {"summary": STR, "count": INT}}
        tools.append(
            _tool("summarize_messages", ids, ("ids",), "read_only", bindings=PIPED, output=summary)
        )
    return tools


def _other_tools() -> list[PlanTool]:
    feature = {"feature": _enum(FEATURES)}
    order = {"order_id": STR}
    return [
        _tool("list_events", {"date": STR, "title": STR}, ("date",), "read_only", output=EVENTS),
        _tool(
            "create_event",
            {"title": STR, "date": STR, "time": STR},
            ("title", "date", "time"),
            "write",
            verbs=("schedule",),
        ),
        _tool("cancel_event", {"event_id": STR}, ("event_id",), "delete", idem=("event_id",)),
        _tool("get_setting", feature, ("feature",), "read_only"),
        _tool("enable_feature", feature, ("feature",), "write_idempotent", idem=("feature",)),
        _tool("disable_feature", feature, ("feature",), "write_idempotent", idem=("feature",)),
        _tool("find_orders", {"customer": STR}, ("customer",), "read_only", output=ORDERS),
        _tool("get_order", order, ("order_id",), "read_only"),
        _tool(
            "cancel_order",
            {**order, "reason": _enum(CANCEL_REASONS)},
            ("order_id",),
            "write",
            idem=("order_id",),
        ),
        _tool("refund_order", order, ("order_id",), "write", idem=("order_id",)),
        _tool("list_products", {}, (), "read_only", output=PRODUCTS),
    ]


def catalog_at(version: Version) -> Catalog:
    """The catalog the agent has at `version`."""
    tools = _task_tools(version) + _file_tools() + _mail_tools(version) + _other_tools()
    return catalog_of(tools)
