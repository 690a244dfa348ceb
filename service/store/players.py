"""Players: identity and rating."""

from dataclasses import dataclass
from uuid import UUID

import asyncpg


@dataclass(frozen=True)
class PlayerRow:
    player_id: UUID
    name: str
    rating: int


async def insert(conn: asyncpg.Pool | asyncpg.Connection, name: str) -> PlayerRow:
    row = await conn.fetchrow(
        "INSERT INTO players (name) VALUES ($1) RETURNING player_id, name, rating", name
    )
    return PlayerRow(row["player_id"], row["name"], row["rating"])


async def get(conn: asyncpg.Pool | asyncpg.Connection, player_id: UUID) -> PlayerRow | None:
    row = await conn.fetchrow(
        "SELECT player_id, name, rating FROM players WHERE player_id = $1", player_id
    )
    return None if row is None else PlayerRow(row["player_id"], row["name"], row["rating"])
