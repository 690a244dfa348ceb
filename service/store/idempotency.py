"""Idempotency keys: one row per (player, key), holding the request's hash and the answer."""

from dataclasses import dataclass
from uuid import UUID

import asyncpg


@dataclass(frozen=True)
class KeyRow:
    request_hash: bytes
    response: bytes | None


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
