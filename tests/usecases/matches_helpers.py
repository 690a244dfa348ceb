"""What the match use-case tests share: a pool of their own and a Duelo against a bot."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from uuid import UUID

import asyncpg

from service.config import Settings
from service.store import players
from service.store.database import create_pool
from service.usecases.matches import lobby
from tests.conftest import migrated


@asynccontextmanager
async def own_pool(settings: Settings, max_size: int) -> AsyncIterator[asyncpg.Pool]:
    """A pool on the session's database, of at most `max_size` connections."""
    assert settings.database_url is not None
    pool = await create_pool(settings.database_url, 1, max_size, 10.0)
    try:
        await migrated(pool)
        yield pool
    finally:
        await pool.close()


async def duel_against_bot(pool: asyncpg.Pool, name: str) -> tuple[UUID, UUID]:
    """A new player's two-seat Duelo against a bot seat: the player and the match."""
    player = (await players.insert(pool, name)).player_id
    new = lobby.NewMatch("necromancers", None, 2, {}, [1], None, 60)
    joined = await lobby.create(
        pool, player, new, loadout=None, caps=lobby.Caps(5, 20), idempotency_key=None
    )
    return player, UUID(joined["match_id"])
