"""Use-cases for players: register one, read one, the leaderboard."""

from uuid import UUID

import asyncpg
from typing_extensions import TypedDict

from service.store import players as store
from service.store.players import PlayerRow


class Player(TypedDict):
    player_id: str
    name: str
    rating: int


class Entry(TypedDict):
    rank: int
    player_id: str
    name: str
    rating: int


class Leaderboard(TypedDict):
    entries: list[Entry]


async def register(pool: asyncpg.Pool, name: str) -> PlayerRow:
    return await store.insert(pool, name)


async def exists(pool: asyncpg.Pool, player_id: UUID) -> bool:
    return await store.get(pool, player_id) is not None


async def find(pool: asyncpg.Pool, player_id: UUID) -> Player | None:
    row = await store.get(pool, player_id)
    if row is None:
        return None
    return {"player_id": str(row.player_id), "name": row.name, "rating": row.rating}


async def leaderboard(pool: asyncpg.Pool, limit: int, around: UUID | None) -> Leaderboard:
    """The best `limit` ratings; with `around`, that player and those just above and below."""
    if around is not None:
        rows = await store.around(pool, around, limit // 2)
    else:
        rows = await store.top(pool, limit)
    return {
        "entries": [
            {"rank": r.rank, "player_id": str(r.player_id), "name": r.name, "rating": r.rating}
            for r in rows
        ]
    }
