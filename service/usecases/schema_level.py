"""The database's migration level, as a serving instance sees it.

At start the instance applies the pending migrations (MIGRATE_ON_START), or waits for the
process that does (`python -m service migrate`, a Kubernetes Job). It refuses to start on a
database whose migrations need newer code to write. While it serves, it reads the level again
every MIGRATION_CHECK_SECONDS: a migration applied since that needs newer code to write turns
the instance read-only (service/api/read_only.py) rather than let it write what the new schema
no longer means.
"""

import asyncio
import time
from collections.abc import Callable

import asyncpg
import structlog

from service.store import migrate
from service.store.migrate import Level

log = structlog.get_logger("service.schema")

WAIT_LOG_SECONDS = 5.0


class CannotServe(RuntimeError):
    """The database is not at a level this release can serve; the message says what to do."""


async def prepare(
    pool: asyncpg.Pool, direct_url: str, migrate_on_start: bool, wait_seconds: float
) -> Level:
    """The database migrated (or waited for) up to this release's level, and that level."""
    if migrate_on_start:
        await migrate.migrate(direct_url)
    found = await _waited_for(pool, wait_seconds)
    if not found.writable:
        raise CannotServe(
            f"{found}; its migrations need a release that knows migration {found.writers_from}"
            " to write: run a newer release"
        )
    if found.ahead:
        log.warning("database_ahead", applied=found.applied, known=found.known)
    return found


async def _waited_for(pool: asyncpg.Pool, wait_seconds: float) -> Level:
    deadline = time.monotonic() + wait_seconds
    logged = 0.0
    while (found := await migrate.level(pool)).behind:
        now = time.monotonic()
        if now >= deadline:
            raise CannotServe(
                f"{found}, and no migration came in {wait_seconds:g} s:"
                " run `python -m service migrate`, or set MIGRATE_ON_START=true"
            )
        if now - logged >= WAIT_LOG_SECONDS:
            log.info("waiting_for_migrations", applied=found.applied, known=found.known)
            logged = now
        await asyncio.sleep(min(1.0, deadline - now))
    return found


class SchemaWatch:
    """The level last read, and what to stop when it stops being writable."""

    def __init__(self, level: Level) -> None:
        self.level = level
        self._on_unwritable: list[Callable[[], object]] = []

    def on_unwritable(self, stop: Callable[[], object]) -> None:
        self._on_unwritable.append(stop)

    async def read(self, pool: asyncpg.Pool) -> None:
        found = await migrate.level(pool)
        if found == self.level:
            return
        was_writable, self.level = self.level.writable, found
        log.warning("migration_level_changed", applied=found.applied, known=found.known)
        if was_writable and not found.writable:
            log.error("read_only", reason=str(found), writers_from=found.writers_from)
            for stop in self._on_unwritable:
                stop()
