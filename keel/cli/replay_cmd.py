"""`keel replay CONVERSATION_ID --agent PATH`: re-run a stored conversation and diff it.

The stored log gives the requests (user messages, approvals) and, from each
`model_called` event, the model's reply; the conversation runs again through the agent
with those replies (a `ReplayModel`), in memory, and the two event logs are compared
with timestamps left out and engine ids numbered by first use.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Annotated

import typer


async def _replay(conversation_id: str, agent: Path, url: str) -> int:
    from keel.errors import DefinitionError
    from keel.replay.run import replay
    from keel.stores.factory import open_store
    from keel.testing.harness import load_definition

    try:
        definition = load_definition(agent)
    except DefinitionError as exc:
        for d in exc.diagnostics:
            typer.echo(d.render(), err=True)
        return 2
    store = await open_store(url)
    try:
        events = tuple(s.event for s in await store.read(conversation_id))
    finally:
        await store.close()
    if not events:
        typer.echo(f"no conversation {conversation_id!r} in {url}", err=True)
        return 2
    report = await replay(definition, events)
    for line in report.diff:
        typer.echo(line)
    verdict = "same events" if report.same else "events differ"
    typer.echo(
        f"{conversation_id}: {len(events)} stored, {len(report.replayed)} replayed: {verdict}"
    )
    return 0 if report.same else 1


def replay_command(
    conversation_id: Annotated[str, typer.Argument(help="The stored conversation's id.")],
    agent: Annotated[Path, typer.Option("--agent", help="Agent project folder.")] = Path("."),
    database_url: Annotated[
        str | None,
        typer.Option("--database-url", help="Store URL (default: KEEL_DATABASE_URL or .keel/)."),
    ] = None,
) -> None:
    """Replay a stored conversation through the agent and print a diff of the events."""
    from keel.cli.run_cmd import default_database_url

    url = database_url or os.environ.get("KEEL_DATABASE_URL") or default_database_url(Path.cwd())
    raise typer.Exit(asyncio.run(_replay(conversation_id, agent, url)))


def register(app: typer.Typer) -> None:
    """Add `keel replay` to the CLI."""
    app.command("replay")(replay_command)
