"""A condition written in a skill file, parsed, or reported where it is written."""

from __future__ import annotations

from keel.conditions import Condition, ConditionSyntaxError, parse_condition
from keel.source.reporter import Reporter


def read_condition(
    rep: Reporter,
    source: object,
    line: int,
    *,
    where: str,
    key: str | None = None,
    column_offset: int | None = None,
) -> Condition | None:
    """Parse a condition written at `line`; None (and a diagnostic) when it is bad.

    `source` is whatever YAML produced: a non-string is reported as
    `skill.condition.not_a_string` (quote it), a syntax error under the code the
    condition parser gives. `column_offset` is where the condition starts on its line
    (0-based) when that is known exactly (prose `if:` lines).
    """
    if not isinstance(source, str):
        rep.error(
            "skill.condition.not_a_string",
            line,
            f"{where}: a condition must be a string, got {type(source).__name__} "
            f"{source!r} (quote it)",
            key=key,
        )
        return None
    try:
        return parse_condition(source)
    except ConditionSyntaxError as exc:
        if column_offset is None:
            at = f"at column {exc.column + 1} of {source!r}"
        else:
            at = f"at column {column_offset + exc.column + 1}"
        rep.error(exc.code, line, f"{where}: {exc.message} ({at})", key=key)
        return None
