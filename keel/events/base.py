"""Shared vocabulary of the event model: JSON values, the event base class, small value types.

Events are values: frozen, keyword-only, slotted dataclasses. JSON-shaped payloads (tool
arguments, memory values, metadata) are deep-frozen when an event is built: mappings become
`MappingProxyType` over a private copy and sequences become tuples. So an event never
shares mutable state with its caller, and an event built from Python lists compares equal
to the same event decoded from JSON. Events compare by value; they are not hashable
(their mappings are not), and nothing in Keel hashes them.

This module deliberately avoids `from __future__ import annotations`: the codec reads the
dataclass field types at runtime, so they must be real objects, not strings.
"""

import dataclasses
import math
import operator
import typing
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import ClassVar, Literal, TypeAlias

from keel.errors import KeelError

JsonValue: TypeAlias = (
    bool | int | float | str | Sequence["JsonValue"] | Mapping[str, "JsonValue"] | None
)
"""A JSON-compatible value. Inside events: tuples for arrays, read-only mappings for objects."""

JsonMapping: TypeAlias = Mapping[str, JsonValue]
"""A JSON object with string keys."""

EMPTY: JsonMapping = MappingProxyType({})
"""The shared empty, read-only mapping used as the default for mapping fields."""

ToolSource = Literal["local", "mcp"]
ResponseSource = Literal["verbatim", "llm", "filler", "rephrased", "plan"]
FrameType = Literal["skill", "ordered_block"]
StopReason = Literal["end_turn", "paused", "budget_exhausted", "cancelled", "error"]
ConversationStatus = Literal["idle", "running", "paused", "ended", "failed"]
RoutingSource = Literal["slash", "sticky", "router", "model", "none"]


class NotJsonValue(KeelError, TypeError):
    """A value put into an event is not JSON every store can hold (e.g. a set, a datetime,
    NaN, a string with a lone surrogate, nesting deeper than `MAX_JSON_DEPTH`)."""

    code = "keel.events.not_json"


MAX_JSON_DEPTH = 100
"""Deepest nesting of arrays and objects an event value may have: deeper values are refused
with `NotJsonValue` (the freezing, the codec and the stores recurse once per level)."""


class _NotJson(Exception):
    """Internal signal: a value is not JSON; the public functions then find where."""


def utf8_encodable(text: str) -> bool:
    """Whether `text` can be written as UTF-8 (False when it holds a lone surrogate, which
    JSON parsers let through from `\\ud800` escapes but no store can write)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# `room` is how many more levels of arrays and objects the value may open.
def _freeze(value: object, room: int) -> JsonValue:
    # Exact-type checks first: this runs for every value put into every event, and
    # isinstance against the collections ABCs costs several times more.
    kind = type(value)
    if kind is str:
        if value.isascii() or utf8_encodable(value):  # type: ignore[attr-defined,arg-type]
            return value  # type: ignore[return-value]
        raise _NotJson
    if kind is int or kind is bool or value is None:
        return value  # type: ignore[return-value]
    if kind is float:
        if math.isfinite(value):  # type: ignore[arg-type]
            return value  # type: ignore[return-value]
        raise _NotJson
    if kind is dict or kind is MappingProxyType:
        return _freeze_items(value, room)  # type: ignore[arg-type]
    if kind is list or kind is tuple:
        return _freeze_items_of(value, room)  # type: ignore[arg-type]
    return _freeze_subclass(value, room)


def _freeze_items_of(value: Sequence[object], room: int) -> JsonValue:
    if room <= 0:
        raise _NotJson
    room -= 1
    frozen: list[JsonValue] = []
    for item in value:
        # Strings and the other scalars inline (as in `_freeze_items`): most items are.
        kind = type(item)
        if kind is str:
            if not (item.isascii() or utf8_encodable(item)):  # type: ignore[attr-defined,arg-type]
                raise _NotJson
        elif kind is float:
            # x - x is 0.0 for every finite float, NaN for infinities and NaN (no call).
            if item - item != 0.0:  # type: ignore[operator]
                raise _NotJson
        elif not (kind is int or kind is bool or item is None):
            item = _freeze(item, room)
        frozen.append(item)  # type: ignore[arg-type]
    return tuple(frozen)


_CHECKED_KEYS: set[str] = set()
"""Keys already found valid UTF-8: the same few names (role, content, ...) come back in
every event, and a set lookup costs no call. Bounded by `_MAX_CHECKED_KEYS`."""
_MAX_CHECKED_KEYS = 4096


def _freeze_items(value: Mapping[object, object], room: int) -> JsonMapping:
    if room <= 0:
        raise _NotJson
    if not value:
        return EMPTY
    room -= 1
    frozen: dict[str, JsonValue] = {}
    for key, item in value.items():
        if type(key) is not str or key not in _CHECKED_KEYS:
            key = _checked_key(key)  # the rare case: a new key, or a str subclass
        # Strings and the other scalars inline, without a call per value: most values are.
        kind = type(item)
        if kind is str:
            if not (item.isascii() or utf8_encodable(item)):  # type: ignore[attr-defined,arg-type]
                raise _NotJson
        elif kind is float:
            # x - x is 0.0 for every finite float, NaN for infinities and NaN (no call).
            if item - item != 0.0:  # type: ignore[operator]
                raise _NotJson
        elif not (kind is int or kind is bool or item is None):
            item = _freeze(item, room)
        frozen[key] = item  # type: ignore[assignment]
    return MappingProxyType(frozen)


def _checked_key(key: object) -> str:
    """`key` as a plain string known to be valid UTF-8 (remembered when there is room)."""
    if type(key) is not str:
        if not isinstance(key, str):
            raise _NotJson
        key = str.__str__(key)
    if key not in _CHECKED_KEYS:
        if not (key.isascii() or utf8_encodable(key)):
            raise _NotJson
        if len(_CHECKED_KEYS) < _MAX_CHECKED_KEYS:
            _CHECKED_KEYS.add(key)
    return key


def _freeze_subclass(value: object, room: int) -> JsonValue:
    """Subclasses of the JSON types (str/int enums, OrderedDict...) become the base type."""
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, str):
        return _freeze(str.__str__(value), room)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if math.isfinite(value):
            return float(value)
        raise _NotJson
    if isinstance(value, Mapping):
        return _freeze_items(value, room)
    if isinstance(value, list | tuple):
        return _freeze_items_of(value, room)
    raise _NotJson


def _fails(value: object, room: int) -> bool:
    try:
        _freeze(value, room)
    except _NotJson:
        return True
    return False


def _locate(value: object, path: str, room: int, limit: int) -> str:
    """Describe the first non-JSON part of `value` (slow; only used to report an error)."""
    if isinstance(value, Mapping | list | tuple) and room <= 0:
        return f"{path}: nested deeper than {limit} levels"
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{path}: key {key!r} is not a string"
            if not utf8_encodable(key):
                return f"{path}: key {key!r} is not valid UTF-8 (a lone surrogate)"
            if _fails(item, room - 1):
                return _locate(item, f"{path}.{key}", room - 1, limit)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            if _fails(item, room - 1):
                return _locate(item, f"{path}[{index}]", room - 1, limit)
    elif isinstance(value, str):
        return f"{path}: a string is not valid UTF-8 (a lone surrogate)"
    elif isinstance(value, float):
        return f"{path}: {value!r} is not a finite number"
    return f"{path}: {type(value).__name__} is not a JSON value"


def freeze_json(value: object, *, path: str = "$", max_depth: int = MAX_JSON_DEPTH) -> JsonValue:
    """Return a deep, read-only copy of a JSON-compatible value.

    Mappings become `MappingProxyType` over a fresh dict, lists and tuples become tuples,
    subclasses of str/int/float (e.g. enums) their base type. Raises `NotJsonValue`
    (naming the offending part from `path`) for anything JSON cannot hold or a store
    cannot write: non-finite numbers, strings or keys that are not valid UTF-8, more than
    `max_depth` levels of arrays and objects.
    """
    try:
        return _freeze(value, max_depth)
    except _NotJson:
        raise NotJsonValue(_locate(value, path, max_depth, max_depth)) from None


def freeze_mapping(
    value: Mapping[object, object], *, path: str = "$", max_depth: int = MAX_JSON_DEPTH
) -> JsonMapping:
    """Return a deep, read-only copy of a JSON object (string keys only; the object itself
    is the first of its `max_depth` levels)."""
    try:
        return _freeze_items(value, max_depth)
    except _NotJson:
        raise NotJsonValue(_locate(value, path, max_depth, max_depth)) from None


class EncodedTuple(tuple):  # type: ignore[type-arg]
    """A frozen JSON array that carries its own compact JSON text (`encoded`, UTF-8 bytes,
    exactly what the codec would write for it), so the codec writes that text instead of
    walking the items again: `model_called.metadata.request.messages`, whose messages are
    frozen and encoded once each and reused by the calls after (`keel.loop.model_record`).
    It equals the plain tuple of its items and reads like one; decoded, it is a plain tuple.
    Its maker sets `encoded` once, right after building it."""

    encoded: bytes


def to_plain(value: object) -> object:
    """Turn a frozen value (JSON values, nested value dataclasses) into plain JSON data.

    Mappings become dicts, tuples become lists, dataclass instances become dicts of
    their fields. The result is ready for `json.dumps` and shares nothing with `value`.
    """
    kind = type(value)
    if kind is MappingProxyType or kind is dict:
        return {key: to_plain(item) for key, item in value.items()}  # type: ignore[attr-defined]
    if kind is tuple or kind is list or kind is EncodedTuple:
        return [to_plain(item) for item in value]  # type: ignore[attr-defined]
    if isinstance(value, Mapping):
        return {str(key): to_plain(item) for key, item in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return value


_Freeze = Literal["mapping", "value", "tuple"]


_FROZEN_FIELDS: dict[type, tuple[tuple[str, _Freeze], ...]] = {}


def _frozen_fields(cls: type) -> tuple[tuple[str, _Freeze], ...]:
    """The fields of `cls` that need freezing after construction, and how (cached per class)."""
    cached = _FROZEN_FIELDS.get(cls)
    if cached is not None:
        return cached
    specs: list[tuple[str, _Freeze]] = []
    for f in dataclasses.fields(cls):
        if f.type == JsonMapping:
            specs.append((f.name, "mapping"))
        elif f.type == JsonValue:
            specs.append((f.name, "value"))
        elif typing.get_origin(f.type) is tuple:
            specs.append((f.name, "tuple"))
    names = [name for name, _ in specs]
    # One getter of every such field's value, a tuple even for one field (named twice).
    if names:
        _FROZEN_GETTERS[cls] = operator.attrgetter(*names, *names[:1])
    found = tuple(specs)
    # Most kinds freeze only their metadata: one shared tuple tells them apart at once.
    _FROZEN_FIELDS[cls] = _METADATA_ONLY if found == _METADATA_ONLY else found
    return _FROZEN_FIELDS[cls]


_METADATA_ONLY: tuple[tuple[str, _Freeze], ...] = (("metadata", "mapping"),)


_FROZEN_GETTERS: dict[type, typing.Callable[[object], tuple[typing.Any, ...]]] = {}


def _freeze_fields(obj: object) -> None:
    """Deep-freeze the JSON and tuple fields of a just-built frozen dataclass, in place."""
    cls = type(obj)
    # A subscript, not a call (this runs for every event built).
    specs = _FROZEN_FIELDS[cls] if cls in _FROZEN_FIELDS else _frozen_fields(cls)
    if not specs or (specs is _METADATA_ONLY and obj.metadata is EMPTY):  # type: ignore[attr-defined]
        return  # nothing to freeze (the usual event: no metadata)
    for (name, how), raw in zip(specs, _FROZEN_GETTERS[cls](obj), strict=False):
        frozen: object
        if how == "mapping":
            if raw is EMPTY:
                continue
            if type(raw) is not dict and not isinstance(raw, Mapping):
                raise NotJsonValue(f"{type(obj).__name__}.{name}: expected a mapping")
            frozen = freeze_mapping(raw, path=name)
        elif how == "value":
            frozen = freeze_json(raw, path=name)
        elif type(raw) is tuple:
            continue
        else:
            # A list passed where a tuple is declared would break equality with decoded events.
            frozen = tuple(raw)
        # Frozen dataclasses allow attribute writes only through object.__setattr__.
        object.__setattr__(obj, name, frozen)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Button:
    """A button on a bot message: the `title` shown and the `payload` sent back when tapped."""

    title: str
    payload: str


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class StackFrame:
    """One frame of the dialogue stack.

    A `skill` frame carries no block; an `ordered_block` frame sits above its skill's frame
    and holds the block's step pointer in `step_id`.
    """

    frame_id: str
    skill_id: str
    type: FrameType
    block_id: str | None = None
    step_id: str | None = None


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class EventBase:
    """Fields every event has. Subclasses set the class-level wire name `kind`."""

    kind: ClassVar[str]
    """The wire name of the event kind (the `type` field of the encoded event)."""

    timestamp: float = 0.0
    """Epoch seconds, supplied by the caller (core code never reads the clock)."""

    metadata: JsonMapping = dataclasses.field(default_factory=lambda: EMPTY)
    """Free-form JSON metadata (provenance, latency breakdowns, ids of related things)."""

    def __post_init__(self) -> None:
        _freeze_fields(self)


_METADATA_FACTORY = next(
    f.default_factory for f in dataclasses.fields(EventBase) if f.name == "metadata"
)
"""`EventBase.metadata`'s default factory, which makes `EMPTY` (`from_frozen` skips it)."""


_Stamped = typing.TypeVar("_Stamped", bound=EventBase)
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def stamped(event: _Stamped, timestamp: float) -> _Stamped:
    """A copy of `event` at `timestamp`: what `dataclasses.replace(event, timestamp=...)`
    returns, without freezing its fields again (they were frozen when `event` was built,
    and the copy shares them: nothing in them can change)."""
    cls = type(event)
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    copy = object.__new__(cls)
    for name in names:
        # Frozen dataclasses allow attribute writes only through object.__setattr__.
        object.__setattr__(copy, name, getattr(event, name))
    object.__setattr__(copy, "timestamp", timestamp)
    return copy


def stamp(event: EventBase, timestamp: float) -> None:
    """Give `event` its `timestamp`, in place: the recorder stamps an event once, when it
    is emitted, without copying it (`stamped` is the copying form). Only for an event that
    has none yet (timestamp 0) and that nothing has stored or compared."""
    # Frozen dataclasses allow attribute writes only through object.__setattr__.
    object.__setattr__(event, "timestamp", timestamp)


_Built = typing.TypeVar("_Built")
_MISSING = dataclasses.MISSING
_DEFAULTS: dict[type, tuple[tuple[str, object, typing.Any], ...]] = {}


def _defaults(cls: type) -> tuple[tuple[str, object, typing.Any], ...]:
    """Each field's name, then its default: a value, `_MISSING` (required), or a factory
    to call (in a one-tuple); the metadata's factory, which always makes `EMPTY`, as the
    value `EMPTY` itself."""
    found = _DEFAULTS.get(cls)
    if found is None:
        specs: list[tuple[str, object, typing.Any]] = []
        for f in dataclasses.fields(cls):
            if f.default_factory is _METADATA_FACTORY:
                specs.append((f.name, EMPTY, None))
            elif f.default_factory is not _MISSING:
                specs.append((f.name, _MISSING, f.default_factory))
            else:
                specs.append((f.name, f.default, None))
        found = _DEFAULTS[cls] = tuple(specs)
    return found


def from_frozen(cls: type[_Built], /, **fields: object) -> _Built:
    """What `cls(**fields)` builds, without freezing the fields again: for values taken
    from other events, which were frozen when those were built (a `slot_set` copy of a
    `memory_set`, a `mcp_tool_executed` copy of a `tool_executed`). Anything else must go
    through the constructor, which freezes it."""
    built = object.__new__(cls)
    # Frozen dataclasses allow attribute writes only through object.__setattr__.
    setattr_ = object.__setattr__
    used = 0
    for name, default, factory in _DEFAULTS[cls] if cls in _DEFAULTS else _defaults(cls):
        if name in fields:
            setattr_(built, name, fields[name])
            used += 1
        elif default is not _MISSING:
            setattr_(built, name, default)
        elif factory is not None:
            setattr_(built, name, factory())
        else:
            raise TypeError(f"{cls.__name__}: missing field {name!r}")
    if used != len(fields):
        names = {name for name, _, _ in _defaults(cls)}
        raise TypeError(f"{cls.__name__}: unexpected field(s) {sorted(set(fields) - names)}")
    return built
