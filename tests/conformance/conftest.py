"""Readable assertion failures inside the shipped contract checks; the PostgreSQL fixtures.

PostgreSQL tests use the server at `KEEL_TEST_POSTGRES_URL` (default: the local test
database below). When it cannot be reached they are skipped with the reason, which is also
printed at the end of the run, unless `KEEL_REQUIRE_POSTGRES=1` (as in `.ci/run`): then
they fail.
"""

import asyncio
import functools
import os
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import text

pytest.register_assert_rewrite("keel.stores.conformance")

from keel.stores import postgres  # noqa: E402
from keel.stores.conformance import PostgresHarness  # noqa: E402

DEFAULT_POSTGRES_URL = "postgresql://postgres@127.0.0.1:5432/test"
POSTGRES_URL = os.environ.get("KEEL_TEST_POSTGRES_URL", DEFAULT_POSTGRES_URL)
REQUIRED = os.environ.get("KEEL_REQUIRE_POSTGRES") == "1"
_skipped: list[str] = []


async def _probe(url: str) -> None:
    engine = postgres.create_postgres_engine(url, pool_size=1)
    try:
        async with engine.connect() as conn:
            await conn.execute(text("SELECT 1"))
    finally:
        await engine.dispose()


@functools.cache
def _unreachable(url: str) -> str | None:
    """Why PostgreSQL at `url` cannot be used, or None when it can."""
    try:
        asyncio.run(asyncio.wait_for(_probe(url), 5))
    except Exception as exc:  # anything: refused, timeout, auth, bad URL
        return f"{type(exc).__name__}: {exc}".splitlines()[0]
    return None


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """The URL of a reachable PostgreSQL; skips (or fails when required) otherwise."""
    reason = _unreachable(POSTGRES_URL)
    if reason is not None:
        where = postgres.postgres_url(POSTGRES_URL).render_as_string(hide_password=True)
        message = f"PostgreSQL not reachable at {where} ({reason})"
        if REQUIRED:
            pytest.fail(f"{message}; KEEL_REQUIRE_POSTGRES=1 makes it mandatory")
        _skipped.append(message)
        pytest.skip(f"{message}; set KEEL_TEST_POSTGRES_URL or start the server")
    return POSTGRES_URL


@pytest.fixture
async def pg_harness(postgres_url: str) -> AsyncIterator[PostgresHarness]:
    """A `PostgresHarness` in its own fresh schema, dropped afterwards."""
    harness = PostgresHarness(postgres_url)
    yield harness
    await harness.drop()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _skipped:
        terminalreporter.write_line(
            f"PostgreSQL tests SKIPPED: {_skipped[0]} (KEEL_REQUIRE_POSTGRES=1 fails instead)",
            yellow=True,
        )
