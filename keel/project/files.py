"""IO for agent projects: find the files of a project and read them.

This is the only module of `keel.project` that touches the file system for project text;
everything it finds is handed to pure parsers as strings. A file that is missing or
unreadable becomes a diagnostic, not an exception.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from keel.source.diagnostics import Diagnostic, diag

REQUIRED_FILES = ("agent.yml", "integrations.yml")
CALM_FILES = ("domain.yml", "config.yml", "credentials.yml")


@dataclass(frozen=True, kw_only=True, slots=True)
class SourceFile:
    """One text file of the project."""

    path: Path
    """Absolute path."""
    rel: str
    """Path relative to the project root, with forward slashes (what diagnostics show)."""
    text: str


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillFolder:
    """The files of one `skills/<id>/` folder."""

    skill_id: str
    folder: Path
    skill_md: SourceFile | None
    memory: SourceFile | None
    responses: SourceFile | None


@dataclass(frozen=True, kw_only=True, slots=True)
class ProjectFiles:
    """Everything read from an agent project folder."""

    root: Path
    agent: SourceFile | None
    integrations: SourceFile | None
    memory: SourceFile | None
    responses: SourceFile | None
    skills: tuple[SkillFolder, ...]
    endpoints: SourceFile | None = None
    """`endpoints.yml` (optional, legacy: `keel.project.endpoints`)."""


def relative(root: Path, path: Path) -> str:
    """`path` relative to `root` with forward slashes."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def read_source(root: Path, path: Path, diagnostics: list[Diagnostic]) -> SourceFile | None:
    """Read one file as UTF-8; a failure is a `project.unreadable_file` diagnostic."""
    rel = relative(root, path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        diagnostics.append(diag("project.unreadable_file", rel, None, f"cannot read: {exc}"))
        return None
    return SourceFile(path=path, rel=rel, text=text)


def _optional(root: Path, name: str, diagnostics: list[Diagnostic]) -> SourceFile | None:
    path = root / name
    return read_source(root, path, diagnostics) if path.is_file() else None


def _skill_folder(root: Path, folder: Path, diagnostics: list[Diagnostic]) -> SkillFolder:
    skill_md = folder / "skill.md"
    if not skill_md.is_file():
        diagnostics.append(
            diag(
                "skill.missing_file",
                relative(root, folder),
                None,
                "skill folder has no skill.md (the only file a skill needs)",
                key=folder.name,
            )
        )
    return SkillFolder(
        skill_id=folder.name,
        folder=folder,
        skill_md=read_source(root, skill_md, diagnostics) if skill_md.is_file() else None,
        memory=_optional(root, f"skills/{folder.name}/memory.yml", diagnostics),
        responses=_optional(root, f"skills/{folder.name}/responses.yml", diagnostics),
    )


def read_project(root: Path) -> tuple[ProjectFiles | None, list[Diagnostic]]:
    """Read the text files of the project at `root`."""
    diagnostics: list[Diagnostic] = []
    if not root.is_dir():
        return None, [diag("project.not_found", root.as_posix(), None, "no such project folder")]
    for name in REQUIRED_FILES:
        if not (root / name).is_file():
            diagnostics.append(diag("project.missing_file", name, None, f"{name} is required"))
    for name in CALM_FILES:
        if (root / name).is_file():
            diagnostics.append(
                diag(
                    "project.calm_file", name, None, f"{name} belongs to the CALM format; remove it"
                )
            )
    skills_dir = root / "skills"
    folders = sorted(p for p in skills_dir.iterdir() if p.is_dir()) if skills_dir.is_dir() else []
    skills = tuple(
        _skill_folder(root, f, diagnostics) for f in folders if not f.name.startswith((".", "_"))
    )
    files = ProjectFiles(
        root=root,
        agent=_optional(root, "agent.yml", diagnostics),
        integrations=_optional(root, "integrations.yml", diagnostics),
        memory=_optional(root, "memory.yml", diagnostics),
        responses=_optional(root, "responses.yml", diagnostics),
        skills=skills,
        endpoints=_endpoints(root, diagnostics),
    )
    return files, diagnostics


def _endpoints(root: Path, diagnostics: list[Diagnostic]) -> SourceFile | None:
    """`endpoints.yml`: an unreadable one is a warning (the file is optional and legacy)."""
    found: list[Diagnostic] = []
    source = _optional(root, "endpoints.yml", found)
    diagnostics.extend(replace(d, severity="warning") for d in found)
    return source


def read_dotenv(root: Path) -> dict[str, str]:
    """Variables from the project's `.env` file (KEY=VALUE lines); the ambient env wins later."""
    path = root / ".env"
    if not path.is_file():
        return {}
    values: dict[str, str] = {}
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.removeprefix("export ").partition("=")
        values[key.strip()] = value.strip().strip("'\"")
    return values
