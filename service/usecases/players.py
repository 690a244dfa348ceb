"""Use-cases for players: register one, read one, rename one, the leaderboard."""

from typing import Annotated
from uuid import UUID

import asyncpg
from pydantic import Field
from typing_extensions import TypedDict

from service.store import players as store
from service.store.players import PlayerRow
from service.usecases import names

Tag = Annotated[str, Field(description="four digits shown after the name: ana#0042")]
Handle = Annotated[
    str, Field(description="the name and tag, as others see them; tells apart two of one name")
]


class Player(TypedDict):
    player_id: str
    name: str
    tag: Tag
    handle: Handle
    rating: int


class Entry(TypedDict):
    rank: int
    player_id: str
    name: str
    tag: Tag
    handle: Handle
    rating: int


class Leaderboard(TypedDict):
    entries: list[Entry]


async def register(pool: asyncpg.Pool, name: str) -> PlayerRow:
    """A new player under `name` as names.normalise_name gives it, with a random tag."""
    return await store.insert(pool, names.normalise_name(name))


async def is_live(pool: asyncpg.Pool, player_id: UUID) -> bool:
    """Whether the player exists and has not deleted its account."""
    return await store.is_live(pool, player_id)


def _player(row: PlayerRow, name: str) -> Player:
    return {
        "player_id": str(row.player_id),
        "name": name,
        "tag": names.tag_text(row.tag),
        "handle": names.handle(name, row.tag),
        "rating": row.rating,
    }


async def find(pool: asyncpg.Pool, player_id: UUID) -> Player | None:
    """The player; None if there is none, or it deleted its account (it has no name left)."""
    row = await store.get(pool, player_id)
    if row is None or row.name is None:
        return None
    return _player(row, row.name)


async def rename(pool: asyncpg.Pool, player_id: UUID, name: str) -> Player | None:
    """The player under its new name (see names.normalise_name); its tag stays. The same name
    again changes nothing. None if there is no such player, or it deleted its account."""
    chosen = names.normalise_name(name)
    row = await store.rename(pool, player_id, chosen)
    return None if row is None else _player(row, chosen)


async def leaderboard(pool: asyncpg.Pool, limit: int, around: UUID | None) -> Leaderboard:
    """The best `limit` ratings; with `around`, that player and those just above and below."""
    if around is not None:
        rows = await store.around(pool, around, limit // 2)
    else:
        rows = await store.top(pool, limit)
    return {
        "entries": [
            {
                "rank": r.rank,
                "player_id": str(r.player_id),
                "name": r.name,
                "tag": names.tag_text(r.tag),
                "handle": names.handle(r.name, r.tag),
                "rating": r.rating,
            }
            for r in rows
        ]
    }
