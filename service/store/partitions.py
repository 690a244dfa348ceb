"""The weekly partitions of snapshots and battles: made ahead, listed, and detached when old.

The migrations define the tables and `ensure_partitions()`, and call it once (schema.sql);
`keep_ahead` calls it at every start-up and again every hour, so that a service running for
weeks still finds its week's partition. `detach` is the operator's tool
(`python -m service partitions detach`).
"""

import asyncio
from dataclasses import dataclass
from datetime import datetime, timedelta

import asyncpg
import structlog

from service.store.database import is_unavailable
from service.store.params import named

log = structlog.get_logger("service.store")

TABLES = ("snapshots", "battles")
# Partitioning DDL takes an exclusive lock on the table; behind a long query it would queue
# every end-turn behind it, so it gives up after this long and tries again later.
LOCK_TIMEOUT = "2s"
ENSURE_INTERVAL_SECONDS = 3600.0
# Weeks of partitions made after this one (ensure_partitions' default in schema.sql).
WEEKS_AHEAD = 2


@dataclass(frozen=True)
class Partition:
    table: str  # the partitioned table: snapshots or battles
    name: str
    lower: datetime | None  # None: from the beginning of time (the legacy partition)
    upper: datetime | None  # None with lower None: the default partition
    rows: int  # the planner's estimate, from the last ANALYZE (or -1 when never analysed)

    @property
    def is_default(self) -> bool:
        return self.lower is None and self.upper is None


_ENSURE = named("SELECT ensure_partitions(:weeks_ahead)")


async def ensure(conn: asyncpg.Connection | asyncpg.Pool, weeks_ahead: int = WEEKS_AHEAD) -> int:
    """Make the weekly partitions from this week (UTC) to `weeks_ahead` weeks after; how many
    were made."""
    made: int = await conn.fetchval(_ENSURE.sql, *_ENSURE.args(weeks_ahead=weeks_ahead))
    return made


async def keep_ahead(pool: asyncpg.Pool, interval_s: float = ENSURE_INTERVAL_SECONDS) -> None:
    """`ensure` every `interval_s` until cancelled; failures are logged and tried again."""
    while True:
        try:
            async with pool.acquire() as conn, conn.transaction():
                await conn.execute(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")
                made = await ensure(conn)
            if made:
                log.info("partitions_made", count=made)
        except Exception as exc:
            if is_unavailable(exc) or isinstance(exc, asyncpg.LockNotAvailableError):
                log.warning("partitions_not_made", error=type(exc).__name__)
            else:
                log.exception("partitions_failed")
        await asyncio.sleep(interval_s)


# A range partition's bounds are only in its FOR VALUES text; MINVALUE and DEFAULT read as NULL.
_LIST = """
SELECT p.relname AS table, c.relname AS name,
       substring(pg_get_expr(c.relpartbound, c.oid) FROM 'FROM \\(''([^'']*)''\\)')::timestamptz
           AS lower,
       substring(pg_get_expr(c.relpartbound, c.oid) FROM 'TO \\(''([^'']*)''\\)')::timestamptz
           AS upper,
       c.reltuples::bigint AS rows
  FROM pg_inherits i
  JOIN pg_class c ON c.oid = i.inhrelid
  JOIN pg_class p ON p.oid = i.inhparent
 WHERE p.oid = ANY(ARRAY[to_regclass('snapshots'), to_regclass('battles')]) AND c.relkind = 'r'
 ORDER BY p.relname, upper NULLS LAST, lower NULLS FIRST
"""


async def list_partitions(conn: asyncpg.Connection | asyncpg.Pool) -> list[Partition]:
    return [Partition(**dict(row)) for row in await conn.fetch(_LIST)]


@dataclass(frozen=True)
class Detached:
    table: str
    name: str
    # detached | dropped | referenced (kept: battles that are kept still name its snapshots)
    # | busy (kept: the table stayed locked past LOCK_TIMEOUT; run the command again)
    outcome: str


_FOREIGN_KEYS = named(
    "SELECT conname FROM pg_constraint WHERE conrelid = :partition::regclass"
    " AND contype = 'f' AND confrelid = 'snapshots'::regclass"
)


async def _detach_one(conn: asyncpg.Connection, part: Partition, drop: bool) -> str:
    """Detach one partition in a transaction of its own, so that the table's lock is short."""
    try:
        async with conn.transaction():
            await conn.execute(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")
            await conn.execute(f'ALTER TABLE {part.table} DETACH PARTITION "{part.name}"')
            # A detached battles partition keeps its foreign keys to snapshots, which would keep
            # those snapshots from ever being detached: the archive stands alone.
            names = await conn.fetch(_FOREIGN_KEYS.sql, *_FOREIGN_KEYS.args(partition=part.name))
            for row in names:
                await conn.execute(f'ALTER TABLE "{part.name}" DROP CONSTRAINT "{row["conname"]}"')
            if drop:
                await conn.execute(f'DROP TABLE "{part.name}"')
    except asyncpg.ForeignKeyViolationError:
        return "referenced"
    except asyncpg.LockNotAvailableError:
        return "busy"
    return "dropped" if drop else "detached"


_CUTOFF = named("SELECT now() - :older_than::interval")


async def detach(conn: asyncpg.Connection, older_than: timedelta, *, drop: bool) -> list[Detached]:
    """Detach (and with `drop`, drop) every weekly or legacy partition that ends more than
    `older_than` ago: battles first, then the snapshots no kept battle names (the database
    refuses the others, which are reported `referenced` and kept)."""
    cutoff: datetime = await conn.fetchval(_CUTOFF.sql, *_CUTOFF.args(older_than=older_than))
    old = [
        part
        for part in await list_partitions(conn)
        if part.upper is not None and part.upper <= cutoff
    ]
    done = []
    for table in ("battles", "snapshots"):
        for part in (p for p in old if p.table == table):
            done.append(Detached(table, part.name, await _detach_one(conn, part, drop)))
    return done
