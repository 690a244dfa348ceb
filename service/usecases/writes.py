"""Writes computed from a read and stored by one statement that checks that nothing moved.

The first attempt reads without a lock and outside a transaction: two round trips, the
writing statement being its own commit. If another request changed the row between the read
and the write, the statement writes nothing and the next attempt reads under the row's lock,
in a transaction, so that it cannot lose again. A key claimed meanwhile by a concurrent retry
is found by reading again.
"""

from collections.abc import Awaitable, Callable
from typing import TypeVar

import asyncpg

from service.store.database import transaction
from service.store.idempotency import KeyClaimed
from service.usecases.errors import Conflict

T = TypeVar("T")

# One optimistic attempt, then locked ones; losing all of them takes a retry storm on one row.
ATTEMPTS = 3

# An attempt reads (under the row's lock when asked), computes, and writes; None when the row
# moved on between its read and its write.
Attempt = Callable[[asyncpg.Connection, bool], Awaitable[T | None]]


async def checked_write(pool: asyncpg.Pool, attempt: Attempt[T], what: str) -> T:
    for number in range(ATTEMPTS):
        try:
            if number == 0:
                async with pool.acquire() as conn:
                    answer = await attempt(conn, False)
            else:
                async with transaction(pool) as conn:
                    answer = await attempt(conn, True)
        except KeyClaimed:
            continue
        if answer is not None:
            return answer
    raise Conflict(
        f"{what} is being changed by other requests; send this one again", code="in_progress"
    )
