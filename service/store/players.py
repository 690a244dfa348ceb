"""Players: identity and rating."""

from dataclasses import dataclass
from uuid import UUID

import asyncpg

from service.store.params import named


@dataclass(frozen=True)
class PlayerRow:
    player_id: UUID
    # None once the player has deleted its account (its row stays, without a name).
    name: str | None
    # 0 to 9999, drawn when the player is made: told apart from others of the same name.
    tag: int
    rating: int


_COLUMNS = "player_id, name, tag, rating"


def _row(row: asyncpg.Record) -> PlayerRow:
    return PlayerRow(row["player_id"], row["name"], row["tag"], row["rating"])


_INSERT = named(f"INSERT INTO players (name) VALUES (:name) RETURNING {_COLUMNS}")


async def insert(conn: asyncpg.Pool | asyncpg.Connection, name: str) -> PlayerRow:
    row = await conn.fetchrow(_INSERT.sql, *_INSERT.args(name=name))
    return _row(row)


_GET = named(f"SELECT {_COLUMNS} FROM players WHERE player_id = :player_id")


async def get(conn: asyncpg.Pool | asyncpg.Connection, player_id: UUID) -> PlayerRow | None:
    row = await conn.fetchrow(_GET.sql, *_GET.args(player_id=player_id))
    return None if row is None else _row(row)


_IS_LIVE = named(
    "SELECT EXISTS (SELECT 1 FROM players WHERE player_id = :player_id AND deleted_at IS NULL)"
)


async def is_live(conn: asyncpg.Pool | asyncpg.Connection, player_id: UUID) -> bool:
    found: bool = await conn.fetchval(_IS_LIVE.sql, *_IS_LIVE.args(player_id=player_id))
    return found


_RENAME = named(f"""
        UPDATE players SET name = :name WHERE player_id = :player_id AND deleted_at IS NULL
        RETURNING {_COLUMNS}
        """)


async def rename(
    conn: asyncpg.Pool | asyncpg.Connection, player_id: UUID, name: str
) -> PlayerRow | None:
    """The player under its new name; None if there is no such player or it was deleted."""
    row = await conn.fetchrow(_RENAME.sql, *_RENAME.args(player_id=player_id, name=name))
    return None if row is None else _row(row)


@dataclass(frozen=True)
class RankedPlayer:
    rank: int
    player_id: UUID
    name: str
    tag: int
    rating: int


# Leaderboard order: rating down, then player id; rank = 1 + players rated strictly higher.
# A deleted player has left the leaderboard (players_leaderboard_idx, whose predicate every walk
# repeats, and rating_counts) and has no name to show.
_TOP = named("""
        SELECT rank() OVER (ORDER BY rating DESC) AS rank, player_id, name, tag, rating
          FROM (SELECT player_id, name, tag, rating FROM players WHERE deleted_at IS NULL
                 ORDER BY rating DESC, player_id LIMIT :limit) AS best
         ORDER BY rating DESC, player_id
        """)


async def top(conn: asyncpg.Pool, limit: int) -> list[RankedPlayer]:
    rows = await conn.fetch(_TOP.sql, *_TOP.args(limit=limit))
    return [RankedPlayer(**dict(r)) for r in rows]


_AROUND = named("""
        WITH me AS (
            SELECT rating, player_id, name, tag FROM players
             WHERE player_id = :player_id AND deleted_at IS NULL),
        above AS (
            SELECT * FROM (
                (SELECT player_id, name, tag, rating FROM players
                  WHERE rating = (SELECT rating FROM me) AND player_id < (SELECT player_id FROM me)
                    AND deleted_at IS NULL
                  ORDER BY player_id DESC LIMIT :each_side)
                UNION ALL
                (SELECT player_id, name, tag, rating FROM players
                  WHERE rating > (SELECT rating FROM me) AND deleted_at IS NULL
                  ORDER BY rating, player_id DESC LIMIT :each_side)) AS near
             ORDER BY rating, player_id DESC LIMIT :each_side),
        below AS (
            SELECT * FROM (
                (SELECT player_id, name, tag, rating FROM players
                  WHERE rating = (SELECT rating FROM me) AND player_id > (SELECT player_id FROM me)
                    AND deleted_at IS NULL
                  ORDER BY player_id LIMIT :each_side)
                UNION ALL
                (SELECT player_id, name, tag, rating FROM players
                  WHERE rating < (SELECT rating FROM me) AND deleted_at IS NULL
                  ORDER BY rating DESC, player_id LIMIT :each_side)) AS near
             ORDER BY rating DESC, player_id LIMIT :each_side),
        page AS (
            SELECT * FROM above UNION ALL SELECT * FROM below
            UNION ALL
            SELECT player_id, name, tag, rating FROM me),
        counted AS (
            SELECT rating, sum(players) AS players FROM rating_counts
             WHERE rating BETWEEN (SELECT min(rating) FROM page) AND (SELECT max(rating) FROM page)
             GROUP BY rating),
        higher AS (
            SELECT coalesce(sum(players), 0) AS players FROM rating_counts
             WHERE rating > (SELECT max(rating) FROM page)),
        ranked AS (
            SELECT rating,
                   (1 + (SELECT players FROM higher) + sum(players) OVER (ORDER BY rating DESC)
                    - players)::bigint AS rank
              FROM counted)
        SELECT ranked.rank, page.player_id, page.name, page.tag, page.rating
          FROM page JOIN ranked USING (rating)
         ORDER BY page.rating DESC, page.player_id
        """)


async def around(conn: asyncpg.Pool, player_id: UUID, each_side: int) -> list[RankedPlayer]:
    """The player with up to `each_side` neighbours above and below.

    Every part reads a bounded range of an index, whatever the number of players: the
    neighbours are two walks of players_leaderboard_idx from the player (those tied with it
    first, then the next ratings), each stopping after `each_side` rows (the index holds no
    deleted player, so none is stepped over); the ranks come from rating_counts (players per
    rating, kept by triggers in schema.sql): one sum of the players rated above the page (a row
    per rating and shard at most, some 14,000 among a million players), and the counts of the
    page's own ratings.
    """
    args = _AROUND.args(player_id=player_id, each_side=each_side)
    rows = await conn.fetch(_AROUND.sql, *args)
    return [RankedPlayer(**dict(r)) for r in rows]
