"""Idempotency keys: one row per (player, key), holding the request's hash and the answer."""

from dataclasses import dataclass
from uuid import UUID

import asyncpg

from service.store.database import one_statement


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
# statement's CTE `moved` (the changed row, with its player_id) and its last three parameters.
KEEP_ANSWER = """
    INSERT INTO idempotency_keys (player_id, key, request_hash, response)
    SELECT player_id, ${key}::text, ${hash}::bytea, ${answer}::bytea FROM moved
     WHERE ${key}::text IS NOT NULL"""


def keep_answer(first: int) -> str:
    """KEEP_ANSWER for a statement whose key parameters start at `$first`."""
    return KEEP_ANSWER.format(key=first, hash=first + 1, answer=first + 2)


async def write_keeping(
    conn: asyncpg.Connection, kept: Kept | None, sql: str, *args: object
) -> object:
    """Run a write statement that ends with `keep_answer(len(args) + 1)`; `KeyTaken` when the
    key was stored meanwhile (the statement then wrote nothing)."""
    values = (None, None, None) if kept is None else (kept.key, kept.request_hash, kept.response)
    try:
        return await one_statement(conn, sql, *args, *values)
    except asyncpg.UniqueViolationError as exc:
        if exc.constraint_name == "idempotency_keys_pkey":
            raise KeyTaken from exc
        raise
