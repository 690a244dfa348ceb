"""Where a database benchmark runs: on `DATABASE_URL` when it is set, else on an embedded
PostgreSQL of its own in a temporary folder, removed afterwards; and a database as an earlier
release left it, for the upgrade's figures (bench.migrations, bench.leaderboard) and tests."""

import asyncio
import os
import tempfile
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import asyncpg

from service.runtime.embedded_db import EmbeddedPostgres
from service.store import migrate
from service.store.database import Conn

T = TypeVar("T")


def on_database(name: str, measure: Callable[[str], Coroutine[Any, Any, T]]) -> T:
    """`measure(url)` run to its end on that database; `name` labels the temporary folder."""
    url = os.environ.get("DATABASE_URL")
    if url:
        return asyncio.run(measure(url))
    with tempfile.TemporaryDirectory(prefix=f"bench-{name}-") as folder:
        db = EmbeddedPostgres(Path(folder) / "pgdata")
        try:
            return asyncio.run(measure(db.start()))
        finally:
            db.stop()


async def as_release_0_1_0(url: str) -> None:
    """Migration 1's text applied and its digest recorded, as 0.1.0's start-up left them."""
    baseline = migrate.known()[0]
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(baseline.sql)
        await conn.execute("INSERT INTO schema_applied (digest) VALUES ($1)", baseline.checksum)
    finally:
        await conn.close()


async def as_release_before_0_1_0(conn: Conn) -> None:
    """The database as a release before 0.1.0 left it: no ledger of migrations and no record of
    0.1.0's schema, so that the next migration runs the baseline's conversions again."""
    await conn.execute("DROP TABLE schema_migrations")
    await conn.execute("DELETE FROM schema_applied")
