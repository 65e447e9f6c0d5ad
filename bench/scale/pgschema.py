"""A fresh PostgreSQL schema for one benchmark case, dropped afterwards."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy import text

from keel.stores.postgres import create_postgres_engine


class Unavailable(Exception):
    """PostgreSQL cannot be reached."""


async def _sql(url: str, statement: str) -> None:
    engine = create_postgres_engine(url, pool_size=1)
    try:
        async with engine.begin() as conn:
            await conn.execute(text(statement))
    finally:
        await engine.dispose()


@asynccontextmanager
async def fresh_schema(url: str, label: str) -> AsyncIterator[str]:
    """`url` with a new schema as its search path; the schema is dropped on the way out."""
    name = f"keel_scale_{label}_{os.getpid()}"
    try:
        await _sql(url, f'CREATE SCHEMA "{name}"')
    except Exception as exc:
        raise Unavailable(f"PostgreSQL at {url}: {type(exc).__name__}: {exc}") from exc
    separator = "&" if "?" in url else "?"
    try:
        yield f"{url}{separator}options=-csearch_path%3D{name}"
    finally:
        await _sql(url, f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
