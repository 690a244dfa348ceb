"""Seasons and the OpenSkill ratings of the turn-based games, per game and season.

A board is a game and season's ratings with a match played, in `ordinal` order (down, then
player id), on game_ratings_leaderboard_idx; a player's rank is 1 + the players of the board
rated strictly higher, from game_rating_counts. A deleted player's ratings are flagged as it is
deleted (schema.sql) and leave every board.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias
from uuid import UUID

import asyncpg

from service.store.database import Conn
from service.store.params import named

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


_START_SEASON = named(
    "INSERT INTO seasons (name) VALUES (:name) ON CONFLICT DO NOTHING RETURNING true"
)


async def start_season(conn: Conn, name: str) -> bool:
    """Start the season `name` now; False (nothing changed) if it exists."""
    started = await conn.fetchval(_START_SEASON.sql, *_START_SEASON.args(name=name))
    return bool(started)


_SEASON_EXISTS = named("SELECT true FROM seasons WHERE name = :name")


async def season_exists(conn: Conn, name: str) -> bool:
    return bool(await conn.fetchval(_SEASON_EXISTS.sql, *_SEASON_EXISTS.args(name=name)))


async def current_season(conn: Conn) -> str | None:
    """The latest season started, None before the first."""
    name: str | None = await conn.fetchval(
        "SELECT name FROM seasons ORDER BY started_at DESC, name DESC LIMIT 1"
    )
    return name


_PREVIOUS_SEASON = named("""
        SELECT s.name FROM seasons s, seasons this
         WHERE this.name = :season
           AND (s.started_at, s.name) < (this.started_at, this.name)
         ORDER BY s.started_at DESC, s.name DESC LIMIT 1
        """)


async def previous_season(conn: Conn, season: str) -> str | None:
    """The season started just before `season`, None if it is the first."""
    name: str | None = await conn.fetchval(
        _PREVIOUS_SEASON.sql, *_PREVIOUS_SEASON.args(season=season)
    )
    return name


_SKILLS = named("""
        SELECT player_id, mu, sigma FROM game_ratings
         WHERE game = :game AND season = :season AND player_id = ANY(:players::uuid[])
        """)


async def skills(conn: Conn, game: str, season: str, players: Sequence[UUID]) -> Skills:
    """The players' (mu, sigma) in that game and season, for those who have one."""
    rows = await conn.fetch(
        _SKILLS.sql, *_SKILLS.args(game=game, season=season, players=list(players))
    )
    return {r["player_id"]: (r["mu"], r["sigma"]) for r in rows}


def _columns(skills: Mapping[UUID, tuple[float, float]]) -> dict[str, list[Any]]:
    """Players' (mu, sigma) as the columns `unnest` reads, in player id order."""
    players = sorted(skills)
    return {
        "players": players,
        "mus": [skills[p][0] for p in players],
        "sigmas": [skills[p][1] for p in players],
    }


_INSERT_SKILLS = named("""
        INSERT INTO game_ratings (player_id, game, season, mu, sigma)
        SELECT p, :game, :season, mu, sigma
          FROM unnest(:players::uuid[], :mus::float8[], :sigmas::float8[]) AS s(p, mu, sigma)
         ORDER BY p
        ON CONFLICT DO NOTHING
        """)
_LOCK_SKILLS = named("""
        SELECT player_id, mu, sigma FROM game_ratings
         WHERE game = :game AND season = :season AND player_id = ANY(:players::uuid[])
         ORDER BY player_id FOR UPDATE
        """)


async def lock_skills(
    conn: asyncpg.Connection, game: str, season: str, starting: Mapping[UUID, tuple[float, float]]
) -> Skills:
    """The players' (mu, sigma), locked until the transaction ends; a player without a row is
    given one at `starting`'s (with no match counted yet). Rows are made and locked in player id
    order, so that two matches ending together with the same players wait, not deadlock; the
    second reads what the first wrote."""
    columns = _columns(starting)
    await conn.execute(
        _INSERT_SKILLS.sql, *_INSERT_SKILLS.args(game=game, season=season, **columns)
    )
    args = _LOCK_SKILLS.args(game=game, season=season, players=columns["players"])
    rows = await conn.fetch(_LOCK_SKILLS.sql, *args)
    return {r["player_id"]: (r["mu"], r["sigma"]) for r in rows}


_RECORD_MATCH = named("""
        UPDATE game_ratings g
           SET mu = s.mu, sigma = s.sigma, matches = g.matches + 1, updated_at = now()
          FROM unnest(:players::uuid[], :mus::float8[], :sigmas::float8[]) AS s(p, mu, sigma)
         WHERE g.game = :game AND g.season = :season AND g.player_id = s.p
        """)


async def record_match(conn: asyncpg.Connection, game: str, season: str, rated: Skills) -> None:
    """Store the players' new (mu, sigma), one more match each."""
    args = _RECORD_MATCH.args(game=game, season=season, **_columns(rated))
    await conn.execute(_RECORD_MATCH.sql, *args)


_OF_PLAYER = named("""
        SELECT game, season, mu, sigma, ordinal, matches FROM game_ratings
         WHERE player_id = :player_id AND season = :season AND matches > 0
         ORDER BY game
        """)


async def of_player(conn: Conn, player_id: UUID, season: str) -> list[RatingRow]:
    """The player's ratings in `season`, by game."""
    rows = await conn.fetch(_OF_PLAYER.sql, *_OF_PLAYER.args(player_id=player_id, season=season))
    return [RatingRow(**dict(r)) for r in rows]


# A board is a game and season's ratings with a match played, of players not deleted: the
# rows of game_ratings_leaderboard_idx, whose predicate each walk repeats.
_ON_BOARD = "game = :game AND season = :season AND matches > 0 AND NOT player_deleted"
_RATING = "player_id, mu, sigma, ordinal, matches"


_TOP = named(f"""
        SELECT rank() OVER (ORDER BY b.ordinal DESC)::int AS rank,
               b.player_id, p.name, p.tag, b.mu, b.sigma, b.ordinal, b.matches
          FROM (SELECT {_RATING} FROM game_ratings WHERE {_ON_BOARD}
                 ORDER BY ordinal DESC, player_id LIMIT :limit) AS b
          JOIN players p USING (player_id)
         ORDER BY b.ordinal DESC, b.player_id
        """)


async def top(conn: Conn, game: str, season: str, limit: int) -> list[RankedRating]:
    """The best `limit` of the board: one walk of its index from the top, where the ranks are
    the page's own."""
    rows = await conn.fetch(_TOP.sql, *_TOP.args(game=game, season=season, limit=limit))
    return [RankedRating(**dict(r)) for r in rows]


_AROUND = named(f"""
        WITH me AS (
            SELECT {_RATING} FROM game_ratings WHERE {_ON_BOARD} AND player_id = :player_id),
        above AS (
            SELECT * FROM (
                (SELECT {_RATING} FROM game_ratings
                  WHERE {_ON_BOARD} AND ordinal = (SELECT ordinal FROM me)
                    AND player_id < (SELECT player_id FROM me)
                  ORDER BY player_id DESC LIMIT :each_side)
                UNION ALL
                (SELECT {_RATING} FROM game_ratings
                  WHERE {_ON_BOARD} AND ordinal > (SELECT ordinal FROM me)
                  ORDER BY ordinal, player_id DESC LIMIT :each_side)) AS near
             ORDER BY ordinal, player_id DESC LIMIT :each_side),
        below AS (
            SELECT * FROM (
                (SELECT {_RATING} FROM game_ratings
                  WHERE {_ON_BOARD} AND ordinal = (SELECT ordinal FROM me)
                    AND player_id > (SELECT player_id FROM me)
                  ORDER BY player_id LIMIT :each_side)
                UNION ALL
                (SELECT {_RATING} FROM game_ratings
                  WHERE {_ON_BOARD} AND ordinal < (SELECT ordinal FROM me)
                  ORDER BY ordinal DESC, player_id LIMIT :each_side)) AS near
             ORDER BY ordinal DESC, player_id LIMIT :each_side),
        page AS (
            SELECT * FROM above UNION ALL SELECT * FROM me UNION ALL SELECT * FROM below),
        first AS (SELECT max(ordinal) AS ordinal FROM page),
        higher AS (
            SELECT (SELECT coalesce(sum(c.players), 0) FROM game_rating_counts c
                     WHERE c.game = :game AND c.season = :season AND c.grain = 0
                       AND c.ordinal > game_rating_bucket(0, first.ordinal))
                 + (SELECT coalesce(sum(c.players), 0) FROM game_rating_counts c
                     WHERE c.game = :game AND c.season = :season AND c.grain = 1
                       AND c.ordinal > game_rating_bucket(1, first.ordinal)
                       AND c.ordinal < game_rating_bucket_end(0, first.ordinal))
                 + (SELECT coalesce(sum(c.players), 0) FROM game_rating_counts c
                     WHERE c.game = :game AND c.season = :season AND c.grain = 2
                       AND c.ordinal > first.ordinal
                       AND c.ordinal < game_rating_bucket_end(1, first.ordinal)) AS players
              FROM first),
        counted AS (
            SELECT c.ordinal, sum(c.players) AS players FROM game_rating_counts c
             WHERE c.game = :game AND c.season = :season AND c.grain = 2
               AND c.ordinal BETWEEN (SELECT min(ordinal) FROM page)
                                 AND (SELECT ordinal FROM first)
             GROUP BY c.ordinal),
        ranked AS (
            SELECT ordinal,
                   (1 + (SELECT players FROM higher) + sum(players) OVER (ORDER BY ordinal DESC)
                    - players)::int AS rank
              FROM counted)
        SELECT ranked.rank, page.player_id, p.name, p.tag, page.mu, page.sigma, page.ordinal,
               page.matches
          FROM page JOIN ranked USING (ordinal) JOIN players p USING (player_id)
         ORDER BY page.ordinal DESC, page.player_id
        """)


async def around(
    conn: Conn, game: str, season: str, player_id: UUID, each_side: int
) -> list[RankedRating]:
    """The player with up to `each_side` neighbours above and below; none if it is not on the
    board of that game and season.

    Every part reads a bounded range of an index, whatever the size of the board: the
    neighbours are two walks of game_ratings_leaderboard_idx from the player (those tied with
    it first, then the next ordinals), each stopping after `each_side` rows; the ranks come from
    game_rating_counts (schema.sql): the players above the page are three short sums (the whole
    units of ordinal above the page's first, the 64ths above its own inside that unit, the
    ordinals above it inside that 64th), and the page's own ordinals are counted exactly.
    """
    args = _AROUND.args(game=game, season=season, player_id=player_id, each_side=each_side)
    rows = await conn.fetch(_AROUND.sql, *args)
    return [RankedRating(**dict(r)) for r in rows]
