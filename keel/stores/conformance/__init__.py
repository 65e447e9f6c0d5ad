"""The event store contract, written once as reusable async checks.

A backend's test module supplies a `StoreHarness` and runs every check in `CHECKS` (each
with a fresh harness), skipping those whose capability the backend lacks::

    @pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.name)
    async def test_contract(check: Check, tmp_path: Path) -> None:
        harness = SqliteHarness(tmp_path)
        ...
        await check.run(harness)

Checks use plain `assert`; register this package for pytest's assertion rewriting
(`pytest.register_assert_rewrite("keel.stores.conformance")`) for readable failures.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from keel.stores.conformance import basic, locking, safety
from keel.stores.conformance.harness import (
    Capabilities,
    MemoryHarness,
    PostgresHarness,
    SqliteHarness,
    StoreHarness,
)


@dataclass(frozen=True, kw_only=True, slots=True)
class Check:
    """One clause of the contract."""

    name: str
    run: Callable[[StoreHarness], Awaitable[None]]
    durable_only: bool = False
    """Needs `Capabilities.durable`."""

    def applies_to(self, capabilities: Capabilities) -> bool:
        """Whether a backend with `capabilities` must pass this check."""
        return capabilities.durable or not self.durable_only


CHECKS: tuple[Check, ...] = (
    Check(name="append_and_read_in_order", run=basic.append_and_read_in_order),
    Check(name="read_after_seq", run=basic.read_after_seq),
    Check(name="empty_conversation", run=basic.empty_conversation),
    Check(name="conversations_are_independent", run=basic.conversations_are_independent),
    Check(name="list_conversations", run=basic.list_conversations),
    Check(name="stale_expected_seq_conflicts", run=basic.stale_expected_seq_conflicts),
    Check(name="stores_values_exactly", run=basic.stores_values_exactly),
    Check(name="large_batch", run=basic.large_batch),
    Check(name="saved_data_is_immutable", run=safety.saved_data_is_immutable),
    Check(
        name="reopen_reads_everything_back",
        run=safety.reopen_reads_everything_back,
        durable_only=True,
    ),
    Check(
        name="concurrent_appends_same_instance",
        run=safety.concurrent_appends_same_instance,
    ),
    Check(
        name="concurrent_appends_two_instances",
        run=safety.concurrent_appends_two_instances,
    ),
    Check(name="retrying_writers_lose_nothing", run=safety.retrying_writers_lose_nothing),
    Check(
        name="lock_serialises_one_conversation",
        run=locking.lock_serialises_one_conversation,
    ),
    Check(
        name="lock_leaves_other_conversations_free",
        run=locking.lock_leaves_other_conversations_free,
    ),
    Check(
        name="lock_released_on_error_and_cancel",
        run=locking.lock_released_on_error_and_cancel,
    ),
    Check(name="locked_turns_never_conflict", run=locking.locked_turns_never_conflict),
)
"""The whole contract, in a stable order."""

__all__ = [
    "CHECKS",
    "Capabilities",
    "Check",
    "MemoryHarness",
    "PostgresHarness",
    "SqliteHarness",
    "StoreHarness",
]
