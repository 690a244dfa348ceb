"""Retried writes: the same Idempotency-Key with the same request gets the stored answer.

`once` runs inside the write's own transaction: it claims the key (or finds the stored answer),
runs the write, and stores its answer; a rollback releases the key with everything else.
"""

import hashlib
import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast
from uuid import UUID

import asyncpg
import msgpack

from service.store import idempotency as store
from service.usecases.errors import Conflict

T = TypeVar("T")


def request_hash(scope: str, body: Any) -> bytes:
    canonical = json.dumps([scope, body], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).digest()


async def once(
    conn: asyncpg.Connection,
    player_id: UUID,
    key: str | None,
    scope: str,
    request: Any,
    write: Callable[[], Awaitable[T]],
) -> T:
    """`write()`'s answer, run at most once per (player, key); without a key, just `write()`.

    The same key with another scope or request is a conflict, as is a key whose first
    request has not finished.
    """
    if key is None:
        return await write()
    digest = request_hash(scope, request)
    if not await store.try_insert(conn, player_id, key, digest):
        row = await store.get(conn, player_id, key)
        if row.request_hash != digest:
            raise Conflict(
                "this Idempotency-Key was used with another request",
                code="idempotency_conflict",
            )
        if row.response is None:
            raise Conflict("the first request with this key is still running", code="in_progress")
        return cast(T, msgpack.unpackb(row.response, raw=False))
    answer = await write()
    await store.set_response(conn, player_id, key, msgpack.packb(answer))
    return answer
