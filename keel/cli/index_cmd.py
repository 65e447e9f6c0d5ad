"""`keel index PATH`: build (or check) an agent's knowledge index, with a progress bar.

The index of `references/**/*.md` is stored in the same database as the conversations
(`--database-url`, else `KEEL_DATABASE_URL`, else SQLite under `.keel/` of the current
directory, as `keel run` uses), so a later `keel run` finds it current and embeds nothing.
It is rebuilt only when a document, the chunking settings or the embedder changed; then only
changed chunks are embedded. `make run` runs this before `keel run`; without it the server
builds the index on the first `search_knowledge`. `keel chat` indexes up front with the same
progress bar (`prepare_with_progress`).
"""

# lazy imports: each command imports what it uses when it runs (`keel --help` loads no server).
from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from keel.knowledge.build import BuildReport
    from keel.knowledge.service import ProjectKnowledge


async def prepare_with_progress(knowledge: ProjectKnowledge) -> BuildReport:
    """`knowledge.prepare()` with a progress bar on standard error while chunks embed."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    console = Console(stderr=True)
    columns = (
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("embedding reference chunks", total=None)

        def advance(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        return await knowledge.prepare(advance)


def describe(report: BuildReport) -> str:
    """One line saying what indexing did."""
    if not report.rebuilt:
        return f"knowledge index is up to date ({report.chunks} chunks)"
    return (
        f"knowledge index built: {report.chunks} chunks ({report.embedded} embedded, "
        f"{report.reused} reused) in {report.seconds:.1f} s"
    )


async def _index(path: Path, database_url: str) -> int:
    from keel.errors import KeelError
    from keel.knowledge.service import ProjectKnowledge
    from keel.knowledge.sources import has_knowledge
    from keel.stores.factory import open_store
    from keel.testing.harness import load_definition

    try:
        definition = load_definition(path)
    except KeelError as exc:
        for d in getattr(exc, "diagnostics", ()):
            typer.echo(d.render(), err=True)
        typer.echo(f"{path}: the agent has errors; not indexing it", err=True)
        return 1
    if not has_knowledge(definition.root):
        typer.echo(f"{path}: no reference documents (references/**/*.md); nothing to index")
        return 0
    store = await open_store(database_url)
    try:
        knowledge = ProjectKnowledge.for_definition(definition, store)
        report = await prepare_with_progress(knowledge)
    except KeelError as exc:
        typer.echo(f"error: indexing failed: {exc}", err=True)
        return 1
    finally:
        await store.close()
    typer.echo(f"{describe(report)}; embedder {knowledge.embedder.name}")
    for line in truncation_warnings(knowledge):
        typer.echo(line, err=True)
    return 0


def truncation_warnings(knowledge: ProjectKnowledge) -> list[str]:
    """A warning per chunk longer than the local embedder reads (its tail is not embedded)."""
    from keel.embeddings.local import LocalEmbedder

    embedder = knowledge.embedder
    if not isinstance(embedder, LocalEmbedder):
        return []
    limit = embedder.max_tokens
    return [
        f"warning: {c.source} ({c.heading or 'before the first heading'}): "
        f"{count} word pieces, more than the embedder's {limit}; the rest is found by "
        "keywords only (lower references.chunking.chunk_size)"
        for c in knowledge.chunks
        if (count := embedder.token_count(c.search_text)) > limit
    ]


def index_command(
    path: Annotated[Path, typer.Argument(help="Agent project folder.")],
    database_url: Annotated[
        str | None,
        typer.Option(
            "--database-url",
            help="Database URL (default: KEEL_DATABASE_URL, else SQLite under .keel/).",
        ),
    ] = None,
) -> None:
    """Build the knowledge index of an agent's reference documents."""
    from keel.cli.run_cmd import default_database_url

    url = database_url or os.environ.get("KEEL_DATABASE_URL") or default_database_url(Path.cwd())
    raise typer.Exit(asyncio.run(_index(path, url)))


def register(app: typer.Typer) -> None:
    """Add `keel index` to the CLI."""
    app.command("index")(index_command)
