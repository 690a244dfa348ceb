"""The asyncpg pool, and telling "database down" apart from other errors."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import TypeAlias

import asyncpg
import structlog

log = structlog.get_logger("service.store")

# What a statement runs on: the pool (a connection of its own) or a connection in hand.
Conn: TypeAlias = asyncpg.Pool | asyncpg.Connection

# Errors meaning "the database cannot be reached or is going away" (answered as 503).
_UNAVAILABLE: tuple[type[BaseException], ...] = (
    OSError,
    asyncio.TimeoutError,
    asyncpg.InterfaceError,
    asyncpg.exceptions.PostgresConnectionError,
    asyncpg.exceptions.OperatorInterventionError,
    asyncpg.exceptions.CannotConnectNowError,
    # Raised when a query meets a connection the server has just shut down under it.
    asyncpg.exceptions.InternalClientError,
)


def is_unavailable(exc: BaseException) -> bool:
    return isinstance(exc, _UNAVAILABLE)


# Errors meaning "the database rolled this transaction back to let another one through": a
# deadlock broken, or a serialization conflict. Nothing of it was written.
_ROLLED_BACK = (
    asyncpg.exceptions.DeadlockDetectedError,
    asyncpg.exceptions.SerializationError,
)


def is_rolled_back(exc: BaseException) -> bool:
    return isinstance(exc, _ROLLED_BACK)


class CommitUnknown(Exception):
    """The database went away while committing: the write may or may not have been applied."""


@asynccontextmanager
async def _committing(
    conn: asyncpg.Connection, isolation: str | None = None
) -> AsyncIterator[None]:
    """The block inside a transaction of its own, rolled back on an error; a connection lost
    while COMMIT is in flight raises `CommitUnknown`."""
    tx = conn.transaction(isolation=isolation)
    await tx.start()
    try:
        yield
    except BaseException:
        with suppress(Exception):
            await tx.rollback()
        raise
    try:
        await tx.commit()
    except Exception as exc:
        if is_unavailable(exc):
            raise CommitUnknown(str(exc) or type(exc).__name__) from exc
        raise


@asynccontextmanager
async def within_transaction(conn: asyncpg.Connection) -> AsyncIterator[None]:
    """The block inside one transaction: the caller's when one is open, else one of its own."""
    if conn.is_in_transaction():
        yield
        return
    async with _committing(conn):
        yield


@asynccontextmanager
async def transaction(
    pool: asyncpg.Pool, isolation: str | None = None
) -> AsyncIterator[asyncpg.Connection]:
    """A connection inside one transaction, committed when the block ends without error.

    The outcome of a write is known except while COMMIT itself is in flight: a connection lost
    then raises `CommitUnknown`, so that the caller is told to settle it by retrying with the
    same Idempotency-Key or version. A failure after a successful commit (returning the
    connection to a pool whose server just died) is logged and not raised: the write happened.
    """
    conn = await pool.acquire()
    committed = False
    try:
        async with _committing(conn, isolation):
            yield conn
        committed = True
    finally:
        try:
            await pool.release(conn)
        except Exception as exc:
            if not committed:
                raise
            log.warning("release_after_commit_failed", error=type(exc).__name__)


async def one_statement(conn: asyncpg.Connection, sql: str, *args: object) -> object:
    """The first value of a writing statement run as its own transaction.

    Outside a transaction the statement's commit is part of it, so a connection lost while it
    runs leaves the outcome unknown, as a lost COMMIT does (`CommitUnknown`).
    """
    committing = not conn.is_in_transaction()
    try:
        return await conn.fetchval(sql, *args)
    except Exception as exc:
        if committing and is_unavailable(exc):
            raise CommitUnknown(str(exc) or type(exc).__name__) from exc
        raise


async def _keep_session(conn: asyncpg.Connection) -> None:
    """Nothing to reset when a connection goes back to the pool: no query leaves session state
    behind (LISTEN has a connection of its own), and asyncpg still rolls back an open
    transaction. Its default reset would cost a round trip on every release.

    It would also end the one transaction asyncpg does not know of: a statement's preparation
    cancelled just as it completed leaves one open. So no task is cancelled while it runs a
    statement, but at shutdown, before the pool closes: a match's follower, which is stopped
    by cancelling, shields its reads.
    """


async def create_pool(
    url: str, min_size: int, max_size: int, timeout_s: float, statement_cache_size: int = 100
) -> asyncpg.Pool:
    return await asyncpg.create_pool(
        url,
        min_size=min_size,
        max_size=max_size,
        timeout=timeout_s,
        command_timeout=timeout_s,
        statement_cache_size=statement_cache_size,
        # Broken connections are replaced when the server comes back.
        max_inactive_connection_lifetime=60.0,
        reset=_keep_session,
    )


async def ping(pool: asyncpg.Pool, timeout_s: float) -> None:
    async with pool.acquire(timeout=timeout_s) as conn:
        await conn.fetchval("SELECT 1", timeout=timeout_s)
