"""`keel validate`: the project's own Python dependencies are installed where Keel runs.

A project may ship `requirements.txt` and/or a `pyproject.toml` with `[project]
dependencies` for the packages its tools import. Each declared requirement is looked up
among the distributions installed in Keel's environment (`importlib.metadata`):

    project.dependency.missing           warning  not installed; the message gives the command
    project.dependency.version_mismatch  warning  installed, but not a version the project asks for
    project.dependency.engine            info     `rasa` / `rasa-pro`: the engine Keel stands in for
    project.dependency.unchecked         info     a path, URL or editable install: not looked up
    project.dependency.unreadable        warning  a line or file that cannot be read as requirements

Requirements are parsed with `packaging` when it is installed (markers such as
`; sys_platform == "win32"` are evaluated, and a requirement that does not apply here is
skipped); without it, a plain `name[extras] <specifier>` is read, only presence is checked,
and lines with markers are not checked. `-r other.txt` includes are followed (relative to
the including file); other pip options (`--index-url`, `-c`, ...) are ignored.
"""

from __future__ import annotations

import importlib.metadata
import re
import shlex
import sys
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from keel.source.diagnostics import Diagnostic, Severity, diag

try:
    from packaging.requirements import InvalidRequirement, Requirement
except ImportError:  # pragma: no cover - a declared dependency; kept for odd installs
    Requirement = None  # type: ignore[assignment,misc]
    InvalidRequirement = ValueError  # type: ignore[assignment,misc]

REQUIREMENTS = "requirements.txt"
PYPROJECT = "pyproject.toml"
ENGINE_PACKAGES = frozenset({"rasa", "rasa-pro", "rasa-plus"})
"""Distributions of the engine itself: Keel provides the `rasa.*` modules tools import."""
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*([^;]*?)\s*(;.*)?$")
_MAX_INCLUDES = 5
"""How deep `-r` includes are followed (a loop of includes stops there)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Declared:
    """One requirement as the project wrote it."""

    file: str
    """Relative to the project root."""
    line: int | None
    text: str
    install: str
    """The command that installs what this file declares into Keel's environment."""


def check_dependencies(root: Path) -> list[Diagnostic]:
    """A diagnostic for each declared requirement not satisfied in this environment."""
    found: list[Diagnostic] = []
    for declared in _declared(root, found):
        found.extend(_check(declared))
    return found


def _pip() -> str:
    return f"{shlex.quote(sys.executable)} -m pip install"


def _declared(root: Path, out: list[Diagnostic]) -> Iterator[Declared]:
    requirements = root / REQUIREMENTS
    if requirements.is_file():
        yield from _requirements_file(root, requirements, out, depth=0)
    pyproject = root / PYPROJECT
    if pyproject.is_file():
        yield from _pyproject(root, pyproject, out)


def _requirements_file(
    root: Path, path: Path, out: list[Diagnostic], *, depth: int
) -> Iterator[Declared]:
    rel = _rel(root, path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        out.append(_unreadable(rel, None, f"{rel} cannot be read: {error}"))
        return
    install = f"{_pip()} -r {shlex.quote(str(path))}"
    for line, requirement in _logical_lines(text):
        if requirement.startswith(("-r ", "--requirement ", "-r\t")):
            include = path.parent / requirement.split(None, 1)[1].strip()
            if depth < _MAX_INCLUDES and include.is_file():
                yield from _requirements_file(root, include, out, depth=depth + 1)
            else:
                out.append(_unreadable(rel, line, f"`{requirement}`: no such file to include"))
        elif requirement.startswith("-e ") or requirement.startswith("--editable"):
            out.append(_unchecked(rel, line, requirement))
        elif requirement.startswith("-"):
            continue  # --index-url, -c constraints and other pip options
        else:
            yield Declared(file=rel, line=line, text=requirement, install=install)


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """(first line number, requirement) with comments dropped and `\\` continuations joined."""
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), start=1):
        content = re.sub(r"(^|\s)#.*$", "", raw).rstrip()
        if not pending:
            start = number
        if content.endswith("\\"):
            pending += content[:-1] + " "
            continue
        joined = (pending + content).strip()
        pending = ""
        if joined:
            yield start, joined
    if pending.strip():
        yield start, pending.strip()


def _pyproject(root: Path, path: Path, out: list[Diagnostic]) -> Iterator[Declared]:
    rel = _rel(root, path)
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        out.append(_unreadable(rel, None, f"{rel} cannot be read as TOML: {error}"))
        return
    project = data.get("project")
    dependencies = project.get("dependencies") if isinstance(project, dict) else None
    if dependencies is None:
        return
    if not isinstance(dependencies, list) or not all(isinstance(d, str) for d in dependencies):
        out.append(_unreadable(rel, None, "`[project] dependencies` must be a list of strings"))
        return
    lines = text.splitlines()
    for requirement in dependencies:
        install = f"{_pip()} {shlex.quote(requirement)}"
        line = _line_of(lines, requirement)
        yield Declared(file=rel, line=line, text=requirement.strip(), install=install)


def _line_of(lines: list[str], requirement: str) -> int | None:
    """The line where the requirement is written as a TOML string (tomllib gives no lines)."""
    for quote in ('"', "'"):
        needle = f"{quote}{requirement}{quote}"
        for number, line in enumerate(lines, start=1):
            if needle in line:
                return number
    return None


def _check(declared: Declared) -> Iterator[Diagnostic]:
    text = declared.text
    if "://" in text or text.startswith((".", "/")) or " @ " in text:
        yield _unchecked(declared.file, declared.line, text)
        return
    parsed = _parse(declared)
    if isinstance(parsed, Diagnostic):
        yield parsed
        return
    if parsed is None:
        return  # a marker that does not apply to this environment
    name, specifier = parsed
    canonical = re.sub(r"[-_.]+", "-", name).lower()
    if canonical in ENGINE_PACKAGES:
        message = (
            f"`{text}` is the engine Keel stands in for: tools importing `rasa.*` get Keel's "
            "compatibility modules; it need not be installed"
        )
        yield _at(declared, "project.dependency.engine", message, name, "info")
        return
    try:
        installed = importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        message = (
            f"`{text}` is not installed in Keel's environment ({sys.prefix}); the tools that "
            f"import it will fail to load. Install it with: {declared.install}"
        )
        yield _at(declared, "project.dependency.missing", message, name, "warning")
        return
    if specifier is not None and not specifier(installed):
        if canonical in _keel_requirements():
            advice = (
                f"Keel itself requires {name}, so another version could break Keel: loosen "
                f"the project's requirement if its tools work with {installed}"
            )
        else:
            advice = f"Install a matching version with: {declared.install}"
        message = f"`{text}` is declared, but {name} {installed} is installed. {advice}"
        yield _at(declared, "project.dependency.version_mismatch", message, name, "warning")


VersionCheck = Callable[[str], bool]
"""Whether an installed version satisfies the requirement's specifier."""


def _parse(declared: Declared) -> tuple[str, VersionCheck | None] | Diagnostic | None:
    """(name, version check or None), a diagnostic when unreadable, None when not for here."""
    if Requirement is not None:
        try:
            requirement = Requirement(declared.text)
        except InvalidRequirement as error:
            reason = str(error).splitlines()[0] if str(error) else "not a requirement"
            return _unreadable(declared.file, declared.line, f"`{declared.text}`: {reason}")
        if requirement.marker is not None and not requirement.marker.evaluate():
            return None
        spec = requirement.specifier
        if not spec:
            return requirement.name, None
        return requirement.name, lambda version: spec.contains(version, prereleases=True)
    match = _NAME.match(declared.text)
    if match is None:
        return _unreadable(declared.file, declared.line, f"`{declared.text}` is not a requirement")
    if match.group(4):
        return None  # markers cannot be evaluated without `packaging`
    return match.group(1), None


def _keel_requirements() -> frozenset[str]:
    """Canonical names of the distributions Keel itself requires (empty when Keel runs
    from a checkout that is not installed)."""
    try:
        required = importlib.metadata.requires("keel") or []
    except importlib.metadata.PackageNotFoundError:
        return frozenset()
    names = (_NAME.match(line) for line in required if "extra ==" not in line)
    return frozenset(re.sub(r"[-_.]+", "-", m.group(1)).lower() for m in names if m)


def _at(declared: Declared, code: str, message: str, key: str, severity: Severity) -> Diagnostic:
    return diag(code, declared.file, declared.line, message, key=key, severity=severity)


def _unreadable(file: str, line: int | None, message: str) -> Diagnostic:
    return diag("project.dependency.unreadable", file, line, message, severity="warning")


def _unchecked(file: str, line: int | None, text: str) -> Diagnostic:
    message = f"`{text}` is a path, URL or editable install; it is not checked"
    return diag("project.dependency.unchecked", file, line, message, severity="info")


def _rel(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


__all__ = ["ENGINE_PACKAGES", "Declared", "check_dependencies"]
