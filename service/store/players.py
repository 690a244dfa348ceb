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


@dataclass(frozen=True)
class RankedPlayer:
    rank: int
    player_id: UUID
    name: str
    rating: int


# Leaderboard order: rating down, then player id; rank = 1 + players rated strictly higher.
async def top(conn: asyncpg.Pool, limit: int) -> list[RankedPlayer]:
    rows = await conn.fetch(
        """
        SELECT rank() OVER (ORDER BY rating DESC) AS rank, player_id, name, rating
          FROM (SELECT player_id, name, rating FROM players
                 ORDER BY rating DESC, player_id LIMIT $1) AS best
         ORDER BY rating DESC, player_id
        """,
        limit,
    )
    return [RankedPlayer(**dict(r)) for r in rows]


async def around(conn: asyncpg.Pool, player_id: UUID, each_side: int) -> list[RankedPlayer]:
    """The player with up to `each_side` neighbours above and below."""
    rows = await conn.fetch(
        """
        WITH me AS (SELECT rating, player_id FROM players WHERE player_id = $1),
        above AS (
            SELECT p.player_id, p.name, p.rating FROM players p, me
             WHERE (p.rating, me.player_id) > (me.rating, p.player_id)
             ORDER BY p.rating, p.player_id DESC LIMIT $2),
        below AS (
            SELECT p.player_id, p.name, p.rating FROM players p, me
             WHERE (p.rating, me.player_id) < (me.rating, p.player_id)
             ORDER BY p.rating DESC, p.player_id LIMIT $2),
        page AS (
            SELECT * FROM above UNION ALL SELECT * FROM below
            UNION ALL SELECT p.player_id, p.name, p.rating FROM players p JOIN me USING (player_id))
        SELECT (SELECT count(*) FROM players q WHERE q.rating > page.rating) + 1 AS rank,
               player_id, name, rating
          FROM page ORDER BY rating DESC, player_id
        """,
        player_id,
        each_side,
    )
    return [RankedPlayer(**dict(r)) for r in rows]
