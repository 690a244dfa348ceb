"""Idempotency keys: one row per (player, key), holding the hash of the request that claimed the
key and, once it is done, its answer (the column `response`). The words used here are those of
service/usecases/idempotency.py, which explains them.
"""

from dataclasses import dataclass
from uuid import UUID

import asyncpg

from service.store.database import one_statement
from service.store.params import Statement, named


@dataclass(frozen=True)
class KeptAnswer:
    request_hash: bytes
    answer: bytes | None


class KeyClaimed(Exception):
    """Raised by `write_keeping`: nothing was written."""


@dataclass(frozen=True)
class AnswerToKeep:
    key: str
    request_hash: bytes
    answer: bytes


_CLAIM = named("""
    INSERT INTO idempotency_keys (player_id, key, request_hash)
    VALUES (:player_id, :key, :request_hash)
    ON CONFLICT (player_id, key) DO NOTHING RETURNING true
""")


async def claim(conn: asyncpg.Connection, player_id: UUID, key: str, request_hash: bytes) -> bool:
    """True when this transaction now holds the key; a concurrent holder makes us wait for it."""
    args = _CLAIM.args(player_id=player_id, key=key, request_hash=request_hash)
    inserted = await conn.fetchval(_CLAIM.sql, *args)
    return bool(inserted)


_GET = named(
    "SELECT request_hash, response FROM idempotency_keys"
    " WHERE player_id = :player_id AND key = :key"
)


async def get(conn: asyncpg.Connection, player_id: UUID, key: str) -> KeptAnswer:
    row = await conn.fetchrow(_GET.sql, *_GET.args(player_id=player_id, key=key))
    return KeptAnswer(bytes(row["request_hash"]), row["response"])


_KEEP = named(
    "UPDATE idempotency_keys SET response = :answer WHERE player_id = :player_id AND key = :key"
)


async def keep(conn: asyncpg.Connection, player_id: UUID, key: str, answer: bytes) -> None:
    await conn.execute(_KEEP.sql, *_KEEP.args(player_id=player_id, key=key, answer=answer))


# The tail of a write statement that keeps an answer along with its change, given the
# statement's CTE `moved` (the changed row, with its player_id); `write_keeping` names its values.
KEEP_ANSWER = """
    INSERT INTO idempotency_keys (player_id, key, request_hash, response)
    SELECT player_id, :key::text, :request_hash::bytea, :answer::bytea FROM moved
     WHERE :key::text IS NOT NULL"""


async def write_keeping(
    conn: asyncpg.Connection,
    to_keep: AnswerToKeep | None,
    statement: Statement,
    **values: object,
) -> object:
    """Run a write statement that ends with KEEP_ANSWER, with its own `values`; `KeyClaimed`
    when another request claimed the key meanwhile."""
    args = statement.args(
        **values,
        key=None if to_keep is None else to_keep.key,
        request_hash=None if to_keep is None else to_keep.request_hash,
        answer=None if to_keep is None else to_keep.answer,
    )
    try:
        return await one_statement(conn, statement.sql, *args)
    except asyncpg.UniqueViolationError as exc:
        if exc.constraint_name == "idempotency_keys_pkey":
            raise KeyClaimed from exc
        raise


_SWEEP = named("""
    DELETE FROM idempotency_keys k USING (
        SELECT player_id, key FROM idempotency_keys
         WHERE created_at < now() - make_interval(secs => :older_than::float8)
         ORDER BY created_at
         LIMIT :rows
         FOR UPDATE SKIP LOCKED) old
     WHERE k.player_id = old.player_id AND k.key = old.key
    RETURNING 1
""")


async def sweep(
    conn: asyncpg.Pool | asyncpg.Connection, older_than_seconds: float, rows: int
) -> int:
    """Delete at most `rows` keys first used more than `older_than_seconds` ago, oldest first, in
    one statement; rows another instance is deleting are skipped. The number deleted."""
    deleted = await conn.fetch(_SWEEP.sql, *_SWEEP.args(older_than=older_than_seconds, rows=rows))
    return len(deleted)
