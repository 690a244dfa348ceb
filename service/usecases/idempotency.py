"""Retried writes: the same Idempotency-Key with the same body gets the stored answer.

Use inside the write's own transaction: `begin` claims the key (or returns the stored answer),
the write runs, `finish` stores its answer; a rollback releases the key with everything else.
"""

import hashlib
import json
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import asyncpg
import msgpack

from service.store import idempotency as store
from service.usecases.errors import Conflict, ServiceError

MAX_KEY_LENGTH = 200


@dataclass(frozen=True)
class StoredAnswer:
    status: int
    body: Any


def request_hash(scope: str, body: Any) -> bytes:
    canonical = json.dumps([scope, body], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).digest()


def check_key(key: str) -> None:
    if not 1 <= len(key) <= MAX_KEY_LENGTH:
        raise ServiceError(
            f"Idempotency-Key must be 1 to {MAX_KEY_LENGTH} characters",
            code="invalid_idempotency_key",
            status=400,
        )


async def begin(
    conn: asyncpg.Connection, player_id: UUID, key: str, scope: str, body: Any
) -> StoredAnswer | None:
    """None when the caller should do the write; else the answer stored for this key."""
    check_key(key)
    digest = request_hash(scope, body)
    if await store.try_insert(conn, player_id, key, digest):
        return None
    row = await store.get(conn, player_id, key)
    if row.request_hash != digest:
        raise Conflict(
            "this Idempotency-Key was used with another request",
            code="idempotency_conflict",
        )
    if row.status is None or row.response is None:
        raise Conflict("the first request with this key is still running", code="in_progress")
    return StoredAnswer(row.status, msgpack.unpackb(row.response, raw=False))


async def finish(
    conn: asyncpg.Connection, player_id: UUID, key: str, status: int, body: Any
) -> None:
    await store.set_response(conn, player_id, key, status, msgpack.packb(body))
