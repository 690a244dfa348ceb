"""Seasons and the OpenSkill ratings of the turn-based games, per game and season.

The leaderboard's order is `ordinal` down, then player id, on game_ratings_board_idx; a
player's rank is 1 + the players of the board rated strictly higher. Deleted players are left
out of every board.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeAlias
from uuid import UUID

import asyncpg

Conn: TypeAlias = asyncpg.Pool | asyncpg.Connection
# (mu, sigma) by player.
Skills: TypeAlias = dict[UUID, tuple[float, float]]


@dataclass(frozen=True)
class RatingRow:
    game: str
    season: str
    mu: float
    sigma: float
    ordinal: float
    matches: int


@dataclass(frozen=True)
class RankedRating:
    rank: int
    player_id: UUID
    name: str
    tag: int
    mu: float
    sigma: float
    ordinal: float
    matches: int


async def start_season(conn: Conn, name: str) -> bool:
    """Start the season `name` now; False (nothing changed) if it exists."""
    started = await conn.fetchval(
        "INSERT INTO seasons (name) VALUES ($1) ON CONFLICT DO NOTHING RETURNING true", name
    )
    return bool(started)


async def season_exists(conn: Conn, name: str) -> bool:
    return bool(await conn.fetchval("SELECT true FROM seasons WHERE name = $1", name))


async def current_season(conn: Conn) -> str | None:
    """The latest season started, None before the first."""
    name: str | None = await conn.fetchval(
        "SELECT name FROM seasons ORDER BY started_at DESC, name DESC LIMIT 1"
    )
    return name


async def previous_season(conn: Conn, season: str) -> str | None:
    """The season started just before `season`, None if it is the first."""
    name: str | None = await conn.fetchval(
        """
        SELECT s.name FROM seasons s, seasons this
         WHERE this.name = $1
           AND (s.started_at, s.name) < (this.started_at, this.name)
         ORDER BY s.started_at DESC, s.name DESC LIMIT 1
        """,
        season,
    )
    return name


async def skills(conn: Conn, game: str, season: str, players: Sequence[UUID]) -> Skills:
    """The players' (mu, sigma) in that game and season, for those who have one."""
    rows = await conn.fetch(
        """
        SELECT player_id, mu, sigma FROM game_ratings
         WHERE game = $1 AND season = $2 AND player_id = ANY($3::uuid[])
        """,
        game,
        season,
        list(players),
    )
    return {r["player_id"]: (r["mu"], r["sigma"]) for r in rows}


async def lock_skills(
    conn: asyncpg.Connection, game: str, season: str, starting: Mapping[UUID, tuple[float, float]]
) -> Skills:
    """The players' (mu, sigma), locked until the transaction ends; a player without a row is
    given one at `starting`'s (with no match counted yet). Rows are made and locked in player id
    order, so that two matches ending together with the same players wait, not deadlock; the
    second reads what the first wrote."""
    players = sorted(starting)
    await conn.execute(
        """
        INSERT INTO game_ratings (player_id, game, season, mu, sigma)
        SELECT p, $1, $2, mu, sigma
          FROM unnest($3::uuid[], $4::float8[], $5::float8[]) AS s(p, mu, sigma)
         ORDER BY p
        ON CONFLICT DO NOTHING
        """,
        game,
        season,
        players,
        [starting[p][0] for p in players],
        [starting[p][1] for p in players],
    )
    rows = await conn.fetch(
        """
        SELECT player_id, mu, sigma FROM game_ratings
         WHERE game = $1 AND season = $2 AND player_id = ANY($3::uuid[])
         ORDER BY player_id FOR UPDATE
        """,
        game,
        season,
        players,
    )
    return {r["player_id"]: (r["mu"], r["sigma"]) for r in rows}


async def record_match(conn: asyncpg.Connection, game: str, season: str, rated: Skills) -> None:
    """Store the players' new (mu, sigma), one more match each."""
    players = sorted(rated)
    await conn.execute(
        """
        UPDATE game_ratings g
           SET mu = s.mu, sigma = s.sigma, matches = g.matches + 1, updated_at = now()
          FROM unnest($3::uuid[], $4::float8[], $5::float8[]) AS s(p, mu, sigma)
         WHERE g.game = $1 AND g.season = $2 AND g.player_id = s.p
        """,
        game,
        season,
        players,
        [rated[p][0] for p in players],
        [rated[p][1] for p in players],
    )


async def of_player(conn: Conn, player_id: UUID, season: str) -> list[RatingRow]:
    """The player's ratings in `season`, by game."""
    rows = await conn.fetch(
        """
        SELECT game, season, mu, sigma, ordinal, matches FROM game_ratings
         WHERE player_id = $1 AND season = $2 AND matches > 0
         ORDER BY game
        """,
        player_id,
        season,
    )
    return [RatingRow(**dict(r)) for r in rows]


# The board of one game and season, inlined into each query that reads it.
_BOARD = """
    board AS NOT MATERIALIZED (
        SELECT g.player_id, p.name, p.tag, g.mu, g.sigma, g.ordinal, g.matches
          FROM game_ratings g JOIN players p USING (player_id)
         WHERE g.game = $1 AND g.season = $2 AND g.matches > 0 AND p.deleted_at IS NULL)
"""

# A page of the board, contiguous in its order, ranked: the players above its first row plus
# the rank within the page (rows tied with the first row share its rank).
_RANKED_PAGE = """
    SELECT (SELECT count(*) FROM board
             WHERE ordinal > (SELECT max(ordinal) FROM page))::int
           + rank() OVER (ORDER BY ordinal DESC)::int AS rank,
           player_id, name, tag, mu, sigma, ordinal, matches
      FROM page
     ORDER BY ordinal DESC, player_id
"""


async def top(conn: Conn, game: str, season: str, limit: int) -> list[RankedRating]:
    rows = await conn.fetch(
        f"""
        WITH {_BOARD},
        page AS (SELECT * FROM board ORDER BY ordinal DESC, player_id LIMIT $3)
        {_RANKED_PAGE}
        """,
        game,
        season,
        limit,
    )
    return [RankedRating(**dict(r)) for r in rows]


async def around(
    conn: Conn, game: str, season: str, player_id: UUID, each_side: int
) -> list[RankedRating]:
    """The player with up to `each_side` neighbours above and below; none if it is not rated
    in that game and season."""
    rows = await conn.fetch(
        f"""
        WITH {_BOARD},
        me AS (SELECT * FROM board WHERE player_id = $3),
        page AS (
            (SELECT * FROM board
              WHERE ordinal > (SELECT ordinal FROM me)
                 OR (ordinal = (SELECT ordinal FROM me) AND player_id < $3)
              ORDER BY ordinal, player_id DESC LIMIT $4)
            UNION ALL
            (SELECT * FROM me)
            UNION ALL
            (SELECT * FROM board
              WHERE ordinal < (SELECT ordinal FROM me)
                 OR (ordinal = (SELECT ordinal FROM me) AND player_id > $3)
              ORDER BY ordinal DESC, player_id LIMIT $4))
        {_RANKED_PAGE}
        """,
        game,
        season,
        player_id,
        each_side,
    )
    return [RankedRating(**dict(r)) for r in rows]
