"""Idempotency keys: one row per (player, key), holding the request's hash and the answer."""

from dataclasses import dataclass
from uuid import UUID

import asyncpg

from service.store.database import one_statement
from service.store.params import Statement


@dataclass(frozen=True)
class KeyRow:
    request_hash: bytes
    response: bytes | None


class KeyTaken(Exception):
    """A write's key was stored by another request between the write's read and its statement:
    nothing was written; read again to learn whose it is."""


@dataclass(frozen=True)
class Kept:
    """A key and its answer, stored by a write in its own statement (only if the write applies)."""

    key: str
    request_hash: bytes
    response: bytes


async def try_insert(
    conn: asyncpg.Connection, player_id: UUID, key: str, request_hash: bytes
) -> bool:
    """True when this transaction now owns the key; a concurrent owner makes us wait for it."""
    inserted = await conn.fetchval(
        """
        INSERT INTO idempotency_keys (player_id, key, request_hash) VALUES ($1, $2, $3)
        ON CONFLICT (player_id, key) DO NOTHING RETURNING true
        """,
        player_id,
        key,
        request_hash,
    )
    return bool(inserted)


async def get(conn: asyncpg.Connection, player_id: UUID, key: str) -> KeyRow:
    row = await conn.fetchrow(
        "SELECT request_hash, response FROM idempotency_keys WHERE player_id = $1 AND key = $2",
        player_id,
        key,
    )
    return KeyRow(bytes(row["request_hash"]), row["response"])


async def set_response(
    conn: asyncpg.Connection, player_id: UUID, key: str, response: bytes
) -> None:
    await conn.execute(
        "UPDATE idempotency_keys SET response = $3 WHERE player_id = $1 AND key = $2",
        player_id,
        key,
        response,
    )


# The tail of a write statement that stores its key's answer along with its change, given the
# statement's CTE `moved` (the changed row, with its player_id); `write_keeping` names its values.
KEEP_ANSWER = """
    INSERT INTO idempotency_keys (player_id, key, request_hash, response)
    SELECT player_id, :key::text, :request_hash::bytea, :answer::bytea FROM moved
     WHERE :key::text IS NOT NULL"""


async def write_keeping(
    conn: asyncpg.Connection, kept: Kept | None, statement: Statement, **values: object
) -> object:
    """Run a write statement that ends with KEEP_ANSWER, with its own `values`; `KeyTaken` when
    the key was stored meanwhile (the statement then wrote nothing)."""
    args = statement.args(
        **values,
        key=None if kept is None else kept.key,
        request_hash=None if kept is None else kept.request_hash,
        answer=None if kept is None else kept.response,
    )
    try:
        return await one_statement(conn, statement.sql, *args)
    except asyncpg.UniqueViolationError as exc:
        if exc.constraint_name == "idempotency_keys_pkey":
            raise KeyTaken from exc
        raise
