"""Every event store backend against the one store contract (keel.stores.conformance)."""

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from keel.stores.conformance import CHECKS, Check, MemoryHarness, SqliteHarness, StoreHarness

BACKENDS: dict[str, Callable[[Path], StoreHarness]] = {
    "memory": lambda _tmp: MemoryHarness(),
    "sqlite": SqliteHarness,
}


@pytest.fixture(params=sorted(BACKENDS))
async def harness(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[StoreHarness]:
    made = BACKENDS[request.param](tmp_path)
    yield made
    await made.close()


@pytest.mark.parametrize("check", CHECKS, ids=[check.name for check in CHECKS])
async def test_store_contract(harness: StoreHarness, check: Check) -> None:
    if not check.applies_to(harness.capabilities):
        pytest.skip(f"{harness.name} lacks a capability {check.name} needs")
    await check.run(harness)


def test_contract_names_are_unique() -> None:
    assert len({check.name for check in CHECKS}) == len(CHECKS)
