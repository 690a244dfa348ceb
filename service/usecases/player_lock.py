"""A write of a player holds the player's row before anything else, and a deleted player's
write is refused (401) whatever it asks: service/store/player_lock.py gives the lock order."""

from uuid import UUID

import asyncpg

from service.store import player_lock as store
from service.usecases.errors import PlayerGone


def refuse_gone(gone: bool) -> None:
    """Refuse the request of a player found deleted, before any other refusal."""
    if gone:
        raise PlayerGone("this account was deleted")


async def hold(conn: asyncpg.Connection, player_id: UUID) -> None:
    """Lock the player's row until the transaction ends, or refuse a deleted player."""
    refuse_gone(not await store.hold(conn, player_id))
