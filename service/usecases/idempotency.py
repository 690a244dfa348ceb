"""Retried writes: the same Idempotency-Key with the same request gets the same answer.

The words, here and in service/store/idempotency.py, one for each idea:

- a `KeyedRequest` is a request's key and the hash of what it asks (its scope and body);
  `keyed_request` makes one, or None for a request without a key;
- to claim a key is to take its row, one per (player, key): the first request to do so holds
  it. A one-statement write whose key was claimed by another request since its read raises
  `KeyClaimed` and writes nothing; it is read again;
- to keep an answer is to store it in the row of the key its request claimed;
- a `KeptAnswer` is what the row holds: the hash of the request that claimed the key, and that
  request's answer once it is done (None while it runs);
- an `AnswerToKeep` is the key, the hash and the answer that a write keeps beside its change,
  in the same statement (`answer_to_keep`; the statement ends with `KEEP_ANSWER` and is run by
  `write_keeping`);
- `answer_for_retry` is what a `KeptAnswer` gives a request: the kept answer when the request
  is the same, a conflict when it is another or the first one still runs.

Two ways to keep an answer. `write_once` runs inside the write's own transaction: it claims the
key (or finds the kept answer), runs the write, and keeps its answer; a rollback releases the
key with everything else. A write that is one statement reads the `KeptAnswer` with what it
reads, and its statement claims the key and keeps the `AnswerToKeep` with its change.
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
from service.store.idempotency import AnswerToKeep, KeptAnswer
from service.usecases.errors import Conflict

T = TypeVar("T")


def request_hash(scope: str, body: Any) -> bytes:
    canonical = json.dumps([scope, body], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).digest()


@dataclass(frozen=True)
class KeyedRequest:
    key: str
    request_hash: bytes


def keyed_request(key: str | None, scope: str, request: Any) -> KeyedRequest | None:
    return None if key is None else KeyedRequest(key, request_hash(scope, request))


def answer_to_keep(keyed: KeyedRequest | None, answer: Any) -> AnswerToKeep | None:
    if keyed is None:
        return None
    return AnswerToKeep(keyed.key, keyed.request_hash, msgpack.packb(answer))


def answer_for_retry(keyed: KeyedRequest | None, kept: KeptAnswer | None) -> Any | None:
    """The answer kept for this request, or None when its key is new (or it has none)."""
    if keyed is None or kept is None:
        return None
    if kept.request_hash != keyed.request_hash:
        raise Conflict(
            "this Idempotency-Key was used with another request", code="idempotency_conflict"
        )
    if kept.answer is None:
        raise Conflict("the first request with this key is still running", code="in_progress")
    return msgpack.unpackb(kept.answer, raw=False)


async def write_once(
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
    keyed = KeyedRequest(key, request_hash(scope, request))
    if not await store.claim(conn, player_id, key, keyed.request_hash):
        return cast(T, answer_for_retry(keyed, await store.get(conn, player_id, key)))
    answer = await write()
    await store.keep(conn, player_id, key, msgpack.packb(answer))
    return answer
