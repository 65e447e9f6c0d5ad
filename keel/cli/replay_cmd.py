"""`keel replay CONVERSATION_ID --agent PATH`: re-run a stored conversation and diff it.

The stored log gives the requests (user messages with their session metadata, approvals,
and when each came) and, from each `model_called` event, the model's reply and usage; the
conversation runs again through the agent with those replies (a `ReplayModel`; no model
for a log without model calls), in memory, and the two event logs are compared with
engine ids numbered by first use. Measurements (`keel.replay.measurements`) are reported
apart: exit 0 when the behaviour is the same.
"""

# lazy imports: each command imports what it uses when it runs (`keel --help` loads no server).
from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Annotated

import typer


async def _replay(conversation_id: str, agent: Path, url: str) -> int:
    from keel.errors import DefinitionError
    from keel.replay.measurements import summary
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
    measured = summary(report.measurements)
    if measured is not None:
        typer.echo(measured)
    verdict = "same behaviour" if report.same else "behaviour differs"
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
    """Replay a stored conversation through the agent and print a diff of its behaviour."""
    from keel.cli.run_cmd import default_database_url

    url = database_url or os.environ.get("KEEL_DATABASE_URL") or default_database_url(Path.cwd())
    raise typer.Exit(asyncio.run(_replay(conversation_id, agent, url)))


def register(app: typer.Typer) -> None:
    """Add `keel replay` to the CLI."""
    app.command("replay")(replay_command)
