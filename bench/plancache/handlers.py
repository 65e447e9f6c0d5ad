"""The mock executors: each tool of the catalog as a function over a `World`.

`invoke` checks a call against the current catalog first (unknown tool, unknown or missing
argument, wrong type, value outside an enum), as a real tool layer would, so a plan cached
before a catalog change fails visibly when it no longer fits. Outputs are plain JSON.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import date
from fnmatch import fnmatch

from world import PRODUCTS, Event, File, Message, Task, World

from keel.plans.catalog import Catalog

Handler = Callable[[World, Mapping[str, object]], object]


@dataclass(frozen=True, kw_only=True, slots=True)
class Outcome:
    """What a call returned."""

    ok: bool
    output: object = None
    error: str | None = None


class ToolError(Exception):
    """A call the tool refuses (not found, bad value)."""


def invoke(world: World, catalog: Catalog, tool: str, args: Mapping[str, object]) -> Outcome:
    """Run `tool` with `args` on `world` (changing it), after checking the call."""
    spec = catalog.get(tool)
    if spec is None:
        return Outcome(ok=False, error="tool_unknown")
    problem = _check(spec.parameters, args)
    if problem is not None:
        return Outcome(ok=False, error=problem)
    try:
        return Outcome(ok=True, output=HANDLERS[tool](world, args))
    except ToolError as exc:
        return Outcome(ok=False, error=str(exc))


_TYPES: dict[str, type | tuple[type, ...]] = {"string": str, "integer": int, "array": list}


def _check(schema: Mapping[str, object], args: Mapping[str, object]) -> str | None:
    props = schema.get("properties", {})
    assert isinstance(props, Mapping)
    for name in schema.get("required", ()):  # type: ignore[attr-defined]
        if name not in args:
            return f"required_missing:{name}"
    for name, value in args.items():
        spec = props.get(name)
        if not isinstance(spec, Mapping):
            return f"unknown_argument:{name}"
        want = _TYPES.get(str(spec.get("type")), object)
        if not isinstance(value, want) or isinstance(value, bool):
            return f"type_mismatch:{name}"
        if "enum" in spec and value not in spec["enum"]:  # type: ignore[operator]
            return f"enum_invalid:{name}"
    return None


def _entries(items: list[dict[str, object]]) -> dict[str, object]:
    return {"entries": items, "count": len(items)}


def _task_json(t: Task) -> dict[str, object]:
    return {"id": t.id, "title": t.title, "status": t.status, "tag": t.tag, "due": t.due}


def _task(world: World, args: Mapping[str, object]) -> Task:
    task = world.tasks.get(args["task_id"])  # type: ignore[call-overload]
    if task is None:
        raise ToolError("not_found")
    return task


def list_tasks(world: World, args: Mapping[str, object]) -> object:
    status = {"completed": "done"}.get(str(args.get("status", "all")), args.get("status", "all"))
    found = [
        _task_json(t)
        for t in world.tasks.values()
        if status in ("all", t.status)
        and args.get("tag") in (None, t.tag)
        and args.get("due") in (None, t.due)
    ]
    return _entries(found)


def _set_status(status: str) -> Handler:
    def run(world: World, args: Mapping[str, object]) -> object:
        task = _task(world, args)
        world.tasks[task.id] = replace(task, status=status)
        return {"id": task.id, "status": status}

    return run


def create_task(world: World, args: Mapping[str, object]) -> object:
    new = max(world.tasks, default=0) + 1
    world.tasks[new] = Task(new, str(args["title"]), "open", "inbox", world.day(7))
    return {"id": new, "title": args["title"]}


def delete_task(world: World, args: Mapping[str, object]) -> object:
    task = _task(world, args)
    del world.tasks[task.id]
    return {"deleted": 1, "id": task.id}


def _window(world: World, window: object, day: str) -> bool:
    if window is None:
        return True
    age = (world.today - date.fromisoformat(day)).days
    return {"today": age == 0, "yesterday": age == 1, "last_week": 1 <= age <= 7}[str(window)]


def list_files(world: World, args: Mapping[str, object]) -> object:
    base = str(args["base_path"]).rstrip("/") + "/"
    found = [
        {"path": f.path, "name": f.path.rsplit("/", 1)[1], "size": f.size, "modified": f.modified}
        for f in world.files.values()
        if f.path.startswith(base)
        and fnmatch(f.path.rsplit("/", 1)[1], str(args.get("pattern", "*")))
        and not (args.get("exclude") and fnmatch(f.path.rsplit("/", 1)[1], str(args["exclude"])))
        and _window(world, args.get("time_window"), f.modified)
    ]
    return _entries(sorted(found, key=lambda e: str(e["path"])))


def read_file(world: World, args: Mapping[str, object]) -> object:
    found = world.files.get(str(args["path"]))
    if found is None:
        raise ToolError("not_found")
    return {"path": found.path, "text": f"contents of {found.path} ({found.size} bytes)"}


def _move_files(world: World, paths: object, folder: str) -> int:
    moved = 0
    for path in paths if isinstance(paths, list) else []:
        found = world.files.pop(str(path), None)
        if found is not None:
            target = folder.rstrip("/") + "/" + found.path.rsplit("/", 1)[1]
            world.files[target] = File(target, found.size, found.modified)
            moved += 1
    return moved


def archive_files(world: World, args: Mapping[str, object]) -> object:
    return {"archived": _move_files(world, args["paths"], "/archive")}


def delete_files(world: World, args: Mapping[str, object]) -> object:
    gone = [p for p in args["paths"] if world.files.pop(str(p), None)]  # type: ignore[attr-defined]
    return {"deleted": len(gone)}


def move_file(world: World, args: Mapping[str, object]) -> object:
    if str(args["path"]) not in world.files:
        raise ToolError("not_found")
    return {"moved": _move_files(world, [args["path"]], str(args["dest"]))}


def find_messages(world: World, args: Mapping[str, object]) -> object:
    folder = args.get("folder", "inbox")
    found = [
        {"id": m.id, "sender": m.sender, "subject": m.subject, "date": m.date, "folder": m.folder}
        for m in world.messages.values()
        if m.folder == folder
        and _window(world, args.get("time_window"), m.date)
        and str(args.get("from_contains", "")) in m.sender
        and str(args.get("query", "")) in m.subject
    ]
    return _entries(found)


def _refile(folder: str | None) -> Handler:
    def run(world: World, args: Mapping[str, object]) -> object:
        target = folder or str(args["folder"])
        done = 0
        for mid in args["ids"]:  # type: ignore[attr-defined]
            found = world.messages.get(str(mid))
            if found is not None:
                world.messages[found.id] = Message(*_moved(found, target))
                done += 1
        return {"moved": done, "folder": target}

    return run


def _moved(m: Message, folder: str) -> tuple[str, str, str, str, str]:
    return (m.id, folder, m.sender, m.subject, m.date)


def delete_messages(world: World, args: Mapping[str, object]) -> object:
    gone = [i for i in args["ids"] if world.messages.pop(str(i), None)]  # type: ignore[attr-defined]
    return {"deleted": len(gone)}


def send_message(world: World, args: Mapping[str, object]) -> object:
    world.outbox.append((str(args["to"]), str(args["body"])))
    return {"sent": 1, "to": args["to"]}


def summarize_messages(world: World, args: Mapping[str, object]) -> object:
    subjects = sorted({world.messages[str(i)].subject for i in args["ids"]})  # type: ignore[attr-defined]
    return {"summary": "about " + ", ".join(subjects), "count": len(args["ids"])}  # type: ignore[arg-type]


def list_events(world: World, args: Mapping[str, object]) -> object:
    found = [
        {"id": e.id, "title": e.title, "date": e.date, "time": e.time}
        for e in world.events.values()
        if e.date == args["date"] and args.get("title") in (None, e.title)
    ]
    return _entries(found)


def create_event(world: World, args: Mapping[str, object]) -> object:
    eid = f"e{len(world.events) + 1:02d}"
    world.events[eid] = Event(eid, str(args["title"]), str(args["date"]), str(args["time"]))
    return {"id": eid}


def cancel_event(world: World, args: Mapping[str, object]) -> object:
    if world.events.pop(str(args["event_id"]), None) is None:
        raise ToolError("not_found")
    return {"cancelled": args["event_id"]}


def _feature(value: bool | None) -> Handler:
    def run(world: World, args: Mapping[str, object]) -> object:
        name = str(args["feature"])
        if value is not None:
            world.settings[name] = value
        return {"feature": name, "enabled": world.settings[name]}

    return run


def find_orders(world: World, args: Mapping[str, object]) -> object:
    found = [vars_of(o) for o in world.orders.values() if o.customer == args["customer"]]
    return _entries(found)


def vars_of(o: object) -> dict[str, object]:
    return {name: getattr(o, name) for name in o.__slots__}  # type: ignore[attr-defined]


def _order(status: str | None) -> Handler:
    def run(world: World, args: Mapping[str, object]) -> object:
        found = world.orders.get(str(args["order_id"]))
        if found is None:
            raise ToolError("not_found")
        if status is not None:
            reason = str(args.get("reason", found.reason))
            world.orders[found.order_id] = replace(found, status=status, reason=reason)
        return vars_of(world.orders[found.order_id])

    return run


def list_products(world: World, args: Mapping[str, object]) -> object:
    del world, args
    return _entries([{"name": name, "price": price} for name, price in PRODUCTS])


HANDLERS: dict[str, Handler] = {
    "list_tasks": list_tasks,
    "get_task": lambda w, a: _task_json(_task(w, a)),
    "create_task": create_task,
    "complete_task": _set_status("done"),
    "reopen_task": _set_status("open"),
    "delete_task": delete_task,
    "list_files": list_files,
    "read_file": read_file,
    "archive_files": archive_files,
    "delete_files": delete_files,
    "move_file": move_file,
    "find_messages": find_messages,
    "move_messages": _refile(None),
    "archive_messages": _refile("archive"),
    "delete_messages": delete_messages,
    "send_message": send_message,
    "summarize_messages": summarize_messages,
    "list_events": list_events,
    "create_event": create_event,
    "cancel_event": cancel_event,
    "get_setting": _feature(None),
    "enable_feature": _feature(True),
    "disable_feature": _feature(False),
    "find_orders": find_orders,
    "get_order": _order(None),
    "cancel_order": _order("cancelled"),
    "refund_order": _order("refunded"),
    "list_products": list_products,
}
