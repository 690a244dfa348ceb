"""Retried writes: the same Idempotency-Key with the same request gets the stored answer.

Two ways to keep a key. `once` runs inside the write's own transaction: it claims the key (or
finds the stored answer), runs the write, and stores its answer; a rollback releases the key
with everything else. A `Claim` serves writes that are one statement: the key's row is read
with what the write reads, and stored by the writing statement itself, with the answer.
"""

import hashlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast
from uuid import UUID

import asyncpg
import msgpack

from service.store import idempotency as store
from service.store.idempotency import Kept, KeyRow
from service.usecases.errors import Conflict

T = TypeVar("T")


def request_hash(scope: str, body: Any) -> bytes:
    canonical = json.dumps([scope, body], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).digest()


@dataclass(frozen=True)
class Claim:
    """A request's Idempotency-Key and the hash of what it asks."""

    key: str
    request_hash: bytes

    def keep(self, answer: Any) -> Kept:
        return Kept(self.key, self.request_hash, msgpack.packb(answer))


def claim(key: str | None, scope: str, request: Any) -> Claim | None:
    return None if key is None else Claim(key, request_hash(scope, request))


def keep(claim: Claim | None, answer: Any) -> Kept | None:
    """What the write stores beside its change: the answer under the key, if there is one."""
    return None if claim is None else claim.keep(answer)


def stored(claim: Claim | None, row: KeyRow | None) -> Any | None:
    """The answer stored for this request, or None when its key is new (or it has none).

    The same key with another scope or request is a conflict.
    """
    if claim is None or row is None:
        return None
    if row.request_hash != claim.request_hash:
        raise Conflict(
            "this Idempotency-Key was used with another request", code="idempotency_conflict"
        )
    if row.response is None:
        raise Conflict("the first request with this key is still running", code="in_progress")
    return msgpack.unpackb(row.response, raw=False)


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
    claimed = Claim(key, request_hash(scope, request))
    if not await store.try_insert(conn, player_id, key, claimed.request_hash):
        return cast(T, stored(claimed, await store.get(conn, player_id, key)))
    answer = await write()
    await store.set_response(conn, player_id, key, msgpack.packb(answer))
    return answer
