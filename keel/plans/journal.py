"""The effect journal of a turn (plan-cache spec §3.11): the `Journal` port and its keys.

Before an effectful step runs, the executor writes an `intended` entry (tool, idempotency
key, arguments hash); after, `done` or `failed` with the result. Running the same turn again
reads the entries back: a `done` step is not run again (its stored result is reused), and
an `intended` step without an outcome may have happened, so it runs again only when the
tool has an idempotency key and the key is the same. `StoreJournal` adapts a `PlanStore`.
Pure except the adapter, which delegates to the store.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Protocol

from keel.plans.store_port import JournalEntry, PlanStore
from keel.tools.contract import ToolContract


class Journal(Protocol):
    """Where a turn's effect journal lives."""

    async def entries(self, turn_id: str) -> list[JournalEntry]: ...
    async def write(self, entry: JournalEntry) -> None:
        """Insert, or replace the (turn_id, step_id) entry."""
        ...


class StoreJournal:
    """A `PlanStore` as a `Journal`."""

    def __init__(self, store: PlanStore) -> None:
        self._store = store

    async def entries(self, turn_id: str) -> list[JournalEntry]:
        return await self._store.journal(turn_id)

    async def write(self, entry: JournalEntry) -> None:
        await self._store.write_journal(entry)


def args_hash(args: Mapping[str, object]) -> str:
    """16 hex of SHA-256 over the arguments' key-sorted JSON."""
    return _digest(args)


def idem_key(tool: str, contract: ToolContract, args: Mapping[str, object]) -> str:
    """The tool's natural key over these arguments; empty when it declares none."""
    if not contract.idempotency_key:
        return ""
    return tool + ":" + _digest({name: args.get(name) for name in contract.idempotency_key})


def encode_result(*, output: object, text: str, error_code: str | None = None) -> str:
    """What an outcome entry stores (non-JSON values as their text)."""
    body: dict[str, object] = {"output": output, "text": text}
    if error_code is not None:
        body["error_code"] = error_code
    return json.dumps(body, default=str, ensure_ascii=False, sort_keys=True)


def decode_result(text: str) -> tuple[object, str]:
    """The output and text of a stored outcome (None and "" when unreadable)."""
    try:
        body = json.loads(text) if text else {}
    except ValueError:
        return None, ""
    if not isinstance(body, dict):
        return None, ""
    stored = body.get("text")
    return body.get("output"), stored if isinstance(stored, str) else ""


def _digest(value: object) -> str:
    payload = json.dumps(value, default=str, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()[:16]
