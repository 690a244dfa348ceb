"""Versioned migrations: numbered SQL files applied in order, each once, by one process at a time.

The files are `migrations/NNNN_name.sql` beside this module, numbered from 1 without a gap.
The database records each one applied in `schema_migrations`, with its text's SHA-256: a file
edited after it was applied stops every start. A migration runs in one transaction with its
ledger row unless its header says `-- transaction: none` (`CREATE INDEX CONCURRENTLY` cannot
run in one); then its statements run one by one and must each be safe to run again.

Migrations expand, then contract: a migration leaves the schema writable by the code of the
release before it, unless its header says `-- writers-from: N`, the lowest migration level
whose code may still write once it is applied (a contract, shipped a release after the code
that stopped needing what it removes). Code that knows fewer migrations than that must not
write (`Level.writable`).

One process applies them, holding a session advisory lock on a connection of its own; others
wait for it. Each statement waits at most LOCK_TIMEOUT for a table's lock, so that an ALTER
queued behind a long transaction does not hold every serving request up behind it; the
migration is then rolled back and tried again, as after a deadlock.
"""

import asyncio
import hashlib
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from importlib.resources.abc import Traversable

import asyncpg
import structlog

from service.store.params import named
from service.version import VERSION

log = structlog.get_logger("service.store")

MIGRATIONS: Traversable = files("service.store").joinpath("migrations")
# The key release 0.1.0 took to apply its schema.sql: an instance of it starting during an
# upgrade waits for the migrations, and they for it.
LOCK_KEY = 727274
LOCK_TIMEOUT = "2s"
ATTEMPTS = 30
_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
_HEADER = re.compile(r"^--\s*(transaction|writers-from):\s*(\S+)\s*$")

LEDGER = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version      integer PRIMARY KEY,
    name         text NOT NULL,
    checksum     text NOT NULL,
    writers_from integer NOT NULL DEFAULT 0,
    release      text NOT NULL,
    seconds      double precision NOT NULL,
    applied_at   timestamptz NOT NULL DEFAULT now()
)
"""


_LOCK = named("SELECT pg_advisory_lock(:key)")
_UNLOCK = named("SELECT pg_advisory_unlock(:key)")
_DIGEST_RECORDED = named("SELECT EXISTS (SELECT 1 FROM schema_applied WHERE digest = :digest)")
_RECORD = named(
    "INSERT INTO schema_migrations (version, name, checksum, writers_from, release, seconds)"
    " VALUES (:version, :name, :checksum, :writers_from, :release, :seconds)"
)


class MigrationError(RuntimeError):
    """The migrations cannot be applied as asked; the message says why and what to do."""


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str
    transactional: bool
    writers_from: int

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()

    @property
    def title(self) -> str:
        return f"{self.version:04d}_{self.name}"

    def statements(self) -> list[str]:
        """A non-transactional migration's statements, one per `;` that ends a line."""
        parts = re.split(r";[ \t]*$", self.sql, flags=re.MULTILINE)
        return [p.strip() for p in parts if _code(p)]


def _code(text: str) -> str:
    return "\n".join(
        line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("--")
    )


def _parse(filename: str, sql: str) -> Migration:
    named = _NAME.match(filename)
    if named is None:
        raise MigrationError(f"{filename}: a migration is named NNNN_name.sql")
    headers: dict[str, str] = {}
    for line in sql.splitlines():
        if not line.startswith("--"):
            break
        if found := _HEADER.match(line):
            headers[found[1]] = found[2]
    transaction = headers.get("transaction", "yes")
    if transaction not in ("yes", "none"):
        raise MigrationError(f"{filename}: `-- transaction:` is yes or none, not {transaction}")
    migration = Migration(
        version=int(named[1]),
        name=named[2],
        sql=sql,
        transactional=transaction == "yes",
        writers_from=int(headers.get("writers-from", "0")),
    )
    if not migration.transactional and "$$" in sql:
        raise MigrationError(f"{filename}: a migration outside a transaction has no $$ bodies")
    if migration.writers_from > migration.version:
        raise MigrationError(f"{filename}: writers-from is at most the migration's own number")
    return migration


# Read once: the files are the release's own, and a running instance reads its level every
# MIGRATION_CHECK_SECONDS.
@cache
def known() -> tuple[Migration, ...]:
    """This release's migrations, in order; refused unless numbered 1, 2, ... without a gap."""
    found = sorted(
        (
            _parse(f.name, f.read_bytes().decode())
            for f in MIGRATIONS.iterdir()
            if f.is_file() and f.name.endswith(".sql")
        ),
        key=lambda m: m.version,
    )
    for expected, migration in enumerate(found, start=1):
        if migration.version != expected:
            raise MigrationError(f"migration {expected} is missing before {migration.title}")
    return tuple(found)


@dataclass(frozen=True)
class Level:
    """Where the database stands against the migrations this code knows."""

    applied: int
    writers_from: int
    known: int

    @property
    def behind(self) -> bool:
        return self.applied < self.known

    @property
    def ahead(self) -> bool:
        return self.applied > self.known

    @property
    def writable(self) -> bool:
        """Whether this code's writes fit the schema: no migration applied asks for newer."""
        return self.known >= self.writers_from

    def __str__(self) -> str:
        return f"database at migration {self.applied}, this release ({VERSION}) knows {self.known}"


async def level(conn: asyncpg.Connection | asyncpg.Pool) -> Level:
    """The database's migration level; 0 before the ledger exists."""
    newest = len(known())
    if not await conn.fetchval("SELECT to_regclass('schema_migrations') IS NOT NULL"):
        return Level(0, 0, newest)
    row = await conn.fetchrow(
        "SELECT coalesce(max(version), 0) AS applied, coalesce(max(writers_from), 0) AS writers"
        " FROM schema_migrations"
    )
    assert row is not None
    return Level(row["applied"], row["writers"], newest)


@dataclass(frozen=True)
class Applied:
    migration: Migration
    seconds: float


@dataclass(frozen=True)
class Plan:
    """What `migrate` would do: the level found and the migrations it would apply."""

    level: Level
    pending: list[Migration]
    adopt_baseline: bool


async def plan(url: str, target: int | None = None) -> Plan:
    """The migrations `migrate(url, target)` would apply, applying nothing."""
    conn = await asyncpg.connect(url)
    try:
        return await _plan(conn, target)
    finally:
        await conn.close()


async def migrate(url: str, target: int | None = None) -> list[Applied]:
    """Apply the pending migrations up to `target` (all by default) on a connection of its own
    to `url` (PostgreSQL itself: a transaction pooler would not keep the session's lock)."""
    conn = await asyncpg.connect(url)
    try:
        return await migrate_on(conn, target)
    finally:
        await conn.close()


async def migrate_on(conn: asyncpg.Connection, target: int | None = None) -> list[Applied]:
    """`migrate` on a connection straight to PostgreSQL, left as it was found."""
    await conn.execute(_LOCK.sql, *_LOCK.args(key=LOCK_KEY))
    try:
        await conn.execute(f"SET lock_timeout = '{LOCK_TIMEOUT}'")
        await conn.execute(LEDGER)
        steps = await _plan(conn, target)
        if steps.adopt_baseline:
            await _record(conn, known()[0], 0.0)
            log.info("migration_adopted", version=1, reason="made by release 0.1.0")
        return [await _apply(conn, migration) for migration in steps.pending]
    finally:
        await conn.execute("RESET lock_timeout")
        await conn.execute(_UNLOCK.sql, *_UNLOCK.args(key=LOCK_KEY))


async def _plan(conn: asyncpg.Connection, target: int | None) -> Plan:
    migrations = known()
    goal = len(migrations) if target is None else target
    if not 0 <= goal <= len(migrations):
        raise MigrationError(
            f"no migration {goal}: this release ({VERSION}) knows 1 to {len(migrations)}"
        )
    found = await level(conn)
    if found.applied:
        await _check_applied(conn, migrations)
    # A database ahead of this release (a newer one is rolling out) has nothing to apply; only
    # an explicit target behind it is refused.
    if goal < found.applied and target is not None:
        raise MigrationError(
            f"the database is at migration {found.applied}; migrations only go forward"
            " (to go back, restore the backup from before the upgrade: deploy/README.md)"
        )
    adopt = found.applied == 0 and await _made_by_baseline(conn, migrations[0])
    start = 1 if adopt else found.applied
    pending = [m for m in migrations if start < m.version <= goal]
    return Plan(found, pending, adopt)


async def _check_applied(conn: asyncpg.Connection, migrations: Sequence[Migration]) -> None:
    by_version = {m.version: m for m in migrations}
    for row in await conn.fetch("SELECT version, checksum FROM schema_migrations ORDER BY 1"):
        migration = by_version.get(row["version"])
        if migration is not None and migration.checksum != row["checksum"]:
            raise MigrationError(
                f"migration {migration.title} differs from the text applied to this database;"
                " an applied migration is never edited: add a new one"
            )


async def _made_by_baseline(conn: asyncpg.Connection, baseline: Migration) -> bool:
    """Whether release 0.1.0, whose schema.sql is migration 1 byte for byte, made the database:
    it recorded that text's SHA-256 in schema_applied."""
    if not await conn.fetchval("SELECT to_regclass('schema_applied') IS NOT NULL"):
        return False
    found: bool = await conn.fetchval(
        _DIGEST_RECORDED.sql, *_DIGEST_RECORDED.args(digest=baseline.checksum)
    )
    return found


async def _apply(conn: asyncpg.Connection, migration: Migration) -> Applied:
    attempt = 1
    while True:
        try:
            applied = await _apply_once(conn, migration)
        except (asyncpg.LockNotAvailableError, asyncpg.DeadlockDetectedError) as exc:
            if attempt == ATTEMPTS:
                raise MigrationError(
                    f"migration {migration.title} could not take its locks in {ATTEMPTS}"
                    f" attempts ({type(exc).__name__}): a long transaction holds its tables"
                ) from exc
            log.warning(
                "migration_retried",
                migration=migration.title,
                attempt=attempt,
                error=type(exc).__name__,
            )
            await asyncio.sleep(min(0.2 * attempt, 2.0))
            attempt += 1
            continue
        log.info("migration_applied", migration=migration.title, seconds=round(applied.seconds, 3))
        return applied


async def _apply_once(conn: asyncpg.Connection, migration: Migration) -> Applied:
    started = time.monotonic()
    if migration.transactional:
        async with conn.transaction():
            await conn.execute(migration.sql)
            await _record(conn, migration, time.monotonic() - started)
    else:
        for statement in migration.statements():
            await conn.execute(statement)
        await _record(conn, migration, time.monotonic() - started)
    return Applied(migration, time.monotonic() - started)


async def _record(conn: asyncpg.Connection, migration: Migration, seconds: float) -> None:
    args = _RECORD.args(
        version=migration.version,
        name=migration.name,
        checksum=migration.checksum,
        writers_from=migration.writers_from,
        release=VERSION,
        seconds=seconds,
    )
    await conn.execute(_RECORD.sql, *args)
