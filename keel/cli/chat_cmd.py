"""`keel chat PATH`: talk to an agent in the terminal.

The session starts with `/session_start` (so a greeting override speaks first). Buttons
are shown as numbered choices; typing the number sends that button's payload. When stdin
is not a terminal, lines are read from it one by one (handy for scripted runs).
"""

# lazy imports: each command imports what it uses when it runs (`keel --help` loads no server).
from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TextIO

import typer

from keel.events.model import BotMessage
from keel.ids import Clock, FakeClock, SystemClock

if TYPE_CHECKING:
    from keel.testing.harness import ConversationHarness


def _show(messages: tuple[BotMessage, ...], out: TextIO) -> list[str]:
    payloads: list[str] = []
    for message in messages:
        out.write(f"bot: {message.text.rstrip()}\n")
        for button in message.buttons:
            payloads.append(button.payload)
            out.write(f"  {len(payloads)}) {button.title}\n")
    out.flush()
    return payloads


def chat_clock(spec: str | None) -> Clock:
    """The clock a chat runs on: a script's fake clock (its replies were written against
    that date, and a scripted run stays reproducible), else the system clock, as `keel run`
    uses, so a provider model is told the real date and sessions expire in real time."""
    return FakeClock() if spec is not None and spec.startswith("scripted:") else SystemClock()


async def _chat(
    path: Path, spec: str | None, conversation_id: str, inp: TextIO, out: TextIO
) -> int:
    from keel.errors import DefinitionError
    from keel.server.model_spec import ModelSpecError, build_model
    from keel.testing.harness import ConversationHarness, load_definition

    try:
        definition = load_definition(path)
        model = build_model(spec, definition)
    except DefinitionError as exc:
        for d in exc.diagnostics:
            out.write(d.render() + "\n")
        return 1
    except ModelSpecError as exc:
        typer.echo(f"error: {exc}", err=True)
        return 2
    harness = ConversationHarness(
        definition,
        model,
        clock=chat_clock(spec),
        conversation_id=conversation_id,
        connect_mcp=True,
    )
    try:
        return await _converse(harness, inp, out)
    except DefinitionError as exc:  # an MCP server or tool that is not there
        for d in exc.diagnostics:
            out.write(d.render() + "\n")
        return 1
    finally:
        await harness.aclose()


async def _converse(harness: ConversationHarness, inp: TextIO, out: TextIO) -> int:
    if not await _index(harness):
        return 1
    interactive = inp.isatty()
    payloads = _show((await harness.send("/session_start")).bot_messages, out)
    while True:
        if interactive:
            out.write("you: ")
            out.flush()
        line = inp.readline()
        if not line or line.strip() in ("/exit", "/quit"):
            return 0
        text = line.strip()
        if not text:
            continue
        if not interactive:
            out.write(f"you: {text}\n")
        if text.isdigit() and 0 < int(text) <= len(payloads):
            text = payloads[int(text) - 1]
        result = await harness.send(text)
        payloads = _show(result.bot_messages, out)
        if result.state.status == "ended":
            out.write("(conversation ended)\n")
            return 0


async def _index(harness: ConversationHarness) -> bool:
    """Build the agent's knowledge index up front (progress bar on stderr); False on failure."""
    from keel.knowledge.service import ProjectKnowledge

    knowledge = harness.engine.knowledge
    if not isinstance(knowledge, ProjectKnowledge):
        return True
    from keel.cli.index_cmd import describe, prepare_with_progress
    from keel.errors import KeelError

    try:
        report = await prepare_with_progress(knowledge)
    except KeelError as exc:
        typer.echo(f"error: indexing the reference documents failed: {exc}", err=True)
        return False
    typer.echo(describe(report), err=True)
    return True


def chat_command(
    path: Annotated[Path, typer.Argument(help="Agent project folder.")],
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="scripted:FILE, or none (no model); default: the agent's own model groups.",
        ),
    ] = None,
    conversation_id: Annotated[
        str, typer.Option("--conversation-id", help="Conversation id.")
    ] = "terminal",
) -> None:
    """Chat with an agent in the terminal."""
    code = asyncio.run(_chat(path, model, conversation_id, sys.stdin, sys.stdout))
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    """Add `keel chat` to the CLI."""
    app.command("chat")(chat_command)
