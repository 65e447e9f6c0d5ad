"""One memory entry's attribute map -> a `MemoryField` plus diagnostics (spec §3.2).

Pure: the input is YAML already parsed by `keel.source.yaml.load_yaml`, so mappings
and lists carry line numbers. A field whose attributes have mistakes is still returned
(with the bad attribute at its default, and type `any` when the type itself is wrong) so
later checks do not pile "undeclared" findings on top of the real one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, cast

from keel.memory.coerce import coerce_value
from keel.memory.extract_spec import ExtractSpec, parse_spec
from keel.memory.frozen import freeze
from keel.memory.schema import (
    FIELD_TYPES,
    PROJECT_NAMESPACE,
    FieldType,
    MemoryField,
    Visibility,
    is_entry_name,
    qualify,
)
from keel.source.diagnostics import Diagnostic, Severity, diag
from keel.source.yaml import line_of

KNOWN_ATTRIBUTES: Final = frozenset(
    {
        "type",
        "enum_values",
        "description",
        "initial_value",
        "llm_settable",
        "pii",
        "anonymization",
        "mutable",
        "seed",
        "extract",
    }
)
LEGACY_ACCESS_KEY: Final = "access"
_ACCESS_LISTS: Final = ("deny_read", "deny_write")
_LEGACY_TYPES: Final = {"string": "text", "str": "text", "boolean": "bool", "integer": "int"}


@dataclass(slots=True)
class _Reader:
    """Reads one attribute map, collecting diagnostics against the field's key."""

    attrs: Mapping[Any, Any]
    file: str
    line: int | None
    key: str
    diagnostics: list[Diagnostic]

    def line_of(self, attr: object) -> int | None:
        return line_of(self.attrs, attr, self.line)

    def report(self, code: str, attr: object, message: str, severity: Severity = "error") -> None:
        where = self.line if attr is None else self.line_of(attr)
        self.diagnostics.append(
            diag(code, self.file, where, message, key=self.key, severity=severity)
        )

    def bad_value(self, attr: str, expected: str) -> None:
        value = self.attrs[attr]
        self.report(
            "memory.bad_attribute_value",
            attr,
            f"`{attr}` of `{self.key}` must be {expected}, got {value!r}",
        )

    def flag(self, attr: str) -> bool:
        value = self.attrs.get(attr, False)
        if isinstance(value, bool):
            return value
        self.bad_value(attr, "true or false")
        return False

    def text(self, attr: str) -> str | None:
        value = self.attrs.get(attr)
        if value is None or isinstance(value, str):
            return value
        self.bad_value(attr, "text")
        return None

    def anonymization(self) -> Mapping[str, object] | None:
        value = self.attrs.get("anonymization")
        if value is None:
            return None
        if isinstance(value, Mapping):
            return cast(Mapping[str, object], freeze(value))
        self.bad_value("anonymization", "a mapping")
        return None

    def unknown_attributes(self) -> None:
        for attr in self.attrs:
            if attr == LEGACY_ACCESS_KEY:
                check_access_block(
                    self.attrs, LEGACY_ACCESS_KEY, self.file, self.diagnostics, key=self.key
                )
            elif attr not in KNOWN_ATTRIBUTES:
                known = ", ".join(sorted(KNOWN_ATTRIBUTES))
                # Ignored, like unknown keys elsewhere in Mantle files: warn, do not refuse.
                self.report(
                    "memory.unknown_attribute",
                    attr,
                    f"`{self.key}` has unknown attribute `{attr}`, which is ignored "
                    f"(known: {known})",
                    severity="warning",
                )

    def field_type(self) -> FieldType | None:
        if "type" not in self.attrs:
            self.report("memory.missing_type", None, f"`{self.key}` declares no `type`")
            return None
        value = self.attrs["type"]
        if isinstance(value, str) and value in FIELD_TYPES:
            return cast(FieldType, value)
        hint = ""
        if isinstance(value, str) and value in _LEGACY_TYPES:
            hint = f" (legacy spelling; use `{_LEGACY_TYPES[value]}`)"
        allowed = ", ".join(sorted(FIELD_TYPES))
        self.report(
            "memory.unknown_type",
            "type",
            f"`{self.key}` has unknown type {value!r}{hint}; allowed: {allowed}",
        )
        return None

    def enum_values(self) -> tuple[str, ...]:
        raw = self.attrs.get("enum_values")
        if raw is None:
            return ()
        if not isinstance(raw, list | tuple):
            self.bad_value("enum_values", "a list")
            return ()
        values: list[str] = []
        for index, item in enumerate(raw):
            item_line = line_of(raw, index, self.line_of("enum_values"))
            if isinstance(item, bool) or not isinstance(item, str | int | float):
                self._bad_enum_item(item, item_line)
            elif str(item).casefold() in (v.casefold() for v in values):
                self._report_at(
                    "memory.duplicate_enum_value",
                    item_line,
                    f"`{self.key}` lists enum value {item!r} twice (matching ignores case); "
                    "the repeat is ignored",
                    severity="warning",
                )
            else:
                values.append(str(item))
        return tuple(values)

    def _bad_enum_item(self, item: object, item_line: int | None) -> None:
        hint = " (YAML reads yes/no/on/off as booleans; quote it)" if isinstance(item, bool) else ""
        self._report_at(
            "memory.bad_attribute_value",
            item_line,
            f"enum value {item!r} of `{self.key}` must be text{hint}",
        )

    def _report_at(
        self, code: str, line: int | None, message: str, severity: Severity = "error"
    ) -> None:
        self.diagnostics.append(
            diag(code, self.file, line, message, key=self.key, severity=severity)
        )


def check_access_block(
    container: Mapping[Any, Any],
    attr: str,
    file: str,
    diagnostics: list[Diagnostic],
    *,
    key: str | None = None,
) -> None:
    """Warn about a legacy `access:` block; check its shape; never enforce it (spec §3.1)."""
    block = container[attr]
    where = line_of(container, attr)
    diagnostics.append(
        diag(
            "memory.access_block",
            file,
            where,
            "`access:` (deny_read / deny_write) is legacy: it is parsed but not enforced",
            key=key,
            severity="warning",
        )
    )
    if block is None:
        return
    if not isinstance(block, Mapping):
        diagnostics.append(
            diag("memory.bad_attribute_value", file, where, "`access` must be a mapping", key=key)
        )
        return
    for name, value in block.items():
        line = line_of(block, name, where)
        if name not in _ACCESS_LISTS:
            message = (
                f"`access` has unknown key `{name}`, which is ignored (known: deny_read, "
                "deny_write)"
            )
            diagnostics.append(
                diag("memory.unknown_attribute", file, line, message, key=key, severity="warning")
            )
        elif value is not None and not (
            isinstance(value, list) and all(isinstance(v, str) for v in value)
        ):
            message = f"`access.{name}` must be a list of entry names"
            diagnostics.append(diag("memory.bad_attribute_value", file, line, message, key=key))


def _scope_flags(reader: _Reader, namespace: str) -> dict[str, bool]:
    """Read the boolean attributes, dropping (and reporting) the ones invalid in this scope."""
    flags = {name: reader.flag(name) for name in ("llm_settable", "pii", "mutable", "seed")}
    if namespace == PROJECT_NAMESPACE:
        invalid = {"llm_settable": "memory.llm_settable_on_project"}
        scope = "project fields (only skill entries can be LLM-settable)"
    else:
        invalid = {"mutable": "memory.mutable_on_skill", "seed": "memory.seed_on_skill"}
        scope = "skill entries (project-only attribute)"
    for name, code in invalid.items():
        if flags[name]:
            reader.report(code, name, f"`{name}` on `{reader.key}` is not allowed on {scope}")
            flags[name] = False
    return flags


def _check_enum(reader: _Reader, type_: FieldType | None, enum_values: tuple[str, ...]) -> None:
    if type_ == "categorical" and not enum_values:
        reader.report(
            "memory.categorical_without_values",
            "type",
            f"categorical `{reader.key}` needs a non-empty `enum_values` list",
        )
    elif type_ not in (None, "categorical", "int") and enum_values:
        reader.report(
            "memory.enum_values_on_non_categorical",
            "enum_values",
            f"`enum_values` of `{reader.key}` is ignored: its type is {type_}, not categorical",
            severity="warning",
        )


def _initial_value(
    reader: _Reader, type_: FieldType | None, enum_values: tuple[str, ...]
) -> object:
    if "initial_value" not in reader.attrs or type_ is None:
        return None
    if type_ == "categorical" and not enum_values:
        return None  # already reported as categorical_without_values
    result = coerce_value(type_, reader.attrs["initial_value"], enum_values)
    if not result.ok:
        reader.report(
            "memory.bad_initial_value",
            "initial_value",
            f"`initial_value` of `{reader.key}` does not fit type {type_}: {result.error}",
        )
        return None
    return freeze(result.value)


def parse_field(
    *,
    namespace: str,
    name: object,
    attrs: object,
    visibility: Visibility,
    file: str,
    line: int | None,
) -> tuple[MemoryField | None, list[Diagnostic]]:
    """Parse one `entry: {attributes}` pair; None when no field can be made of it."""
    if not is_entry_name(name):
        message = f"memory entry name {name!r} is not an identifier (letters, digits, _)"
        return None, [diag("memory.bad_entry_name", file, line, message, key=str(name))]
    entry = cast(str, name)
    key = qualify(namespace, entry)
    if attrs is None:
        attrs = {}
    if not isinstance(attrs, Mapping):
        message = f"`{key}` must map to attributes (e.g. `type: text`), got {attrs!r}"
        return None, [diag("memory.not_a_mapping", file, line, message, key=key)]
    reader = _Reader(attrs=attrs, file=file, line=line, key=key, diagnostics=[])
    reader.unknown_attributes()
    type_ = reader.field_type()
    enum_values = reader.enum_values()
    flags = _scope_flags(reader, namespace)
    _check_enum(reader, type_, enum_values)
    field = MemoryField(
        namespace=namespace,
        name=entry,
        type=type_ or "any",
        visibility=visibility,
        description=reader.text("description"),
        enum_values=enum_values,
        initial_value=_initial_value(reader, type_, enum_values),
        anonymization=reader.anonymization(),
        extract=_extract(reader, type_, enum_values),
        file=file,
        line=line,
        **flags,
    )
    return field, reader.diagnostics


def _extract(
    reader: _Reader, type_: FieldType | None, enum_values: tuple[str, ...]
) -> ExtractSpec | None:
    """The `extract:` attribute (Keel), checked against the field's type."""
    if "extract" not in reader.attrs:
        return None
    spec, problems = parse_spec(reader.attrs["extract"])
    if spec is not None and spec.kind == "enum" and type_ != "categorical":
        problems.append("the `enum` extractor needs a categorical entry")
    if spec is not None:
        problems += [
            f"synonyms name {v!r}, not one of enum_values"
            for v in spec.synonyms
            if v not in enum_values
        ]
    for problem in problems:
        reader.report("memory.bad_extract", "extract", f"`extract` of `{reader.key}`: {problem}")
    return None if problems else spec
