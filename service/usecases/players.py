"""Use-cases for players: register one, read one."""

from uuid import UUID

import asyncpg

from service.store import players as store
from service.store.players import PlayerRow


async def register(pool: asyncpg.Pool, name: str) -> PlayerRow:
    return await store.insert(pool, name)


async def find(pool: asyncpg.Pool, player_id: UUID) -> PlayerRow | None:
    return await store.get(pool, player_id)
