"""The per-game boards' counts (schema.sql game_rating_counts) and the ranks read from them
(service/store/game_ratings.py): every write to game_ratings and every deletion of a player
keeps them exact, a rank is 1 + the players rated strictly higher at every edge of a bucket and
inside every tie, and matches ending together never deadlock on them."""

import asyncio
import random
from uuid import UUID

import asyncpg
import pytest

from bench.database import as_release_before_0_1_0
from service.store import game_ratings as store
from service.store.database import create_pool
from tests.conftest import migrated

GAME = "necromancers"
SEASON = "s1"
# What the counts say per (game, season, grain, bucket, shard), beside the board itself.
_MISCOUNTED = """
SELECT count(*) FROM (
    SELECT r.game, r.season, g.grain::smallint AS grain,
           game_rating_bucket(g.grain, r.ordinal) AS ordinal, rating_shard(r.player_id) AS shard,
           count(*) AS n
      FROM game_ratings r, generate_series(0, 2) AS g(grain)
     WHERE r.matches > 0 AND NOT r.player_deleted
     GROUP BY 1, 2, 3, 4, 5) AS truth
  FULL JOIN (SELECT game, season, grain, ordinal, shard, players AS n
               FROM game_rating_counts) AS kept USING (game, season, grain, ordinal, shard)
 WHERE truth.n IS DISTINCT FROM kept.n
"""
# Ratings whose flag disagrees with their player's deletion.
_MISFLAGGED = """
SELECT count(*) FROM game_ratings r JOIN players p USING (player_id)
 WHERE r.player_deleted <> (p.deleted_at IS NOT NULL)
"""
# Ordinals at the edges of the buckets (whole units and 64ths, on both sides of 0), inside
# them, and ties; each is exact as mu - 3 sigma with sigma 1.
ORDINALS = [
    40.0,
    5.0,
    5.0,
    5.0,
    4.999,
    4.015625,
    4.0,
    4.0,
    3.984375,
    3.99,
    0.5,
    0.0,
    0.0,
    -0.015625,
    -0.5,
    -1.0,
    -1.0,
    -1.015625,
    -7.25,
]


@pytest.fixture
def pool(fresh_pool: asyncpg.Pool) -> asyncpg.Pool:
    return fresh_pool


async def _players(pool: asyncpg.Pool, count: int) -> list[UUID]:
    rows = await pool.fetch(
        "INSERT INTO players (name) SELECT 'p' || i FROM generate_series(1, $1::int) AS i"
        " RETURNING player_id",
        count,
    )
    return [r["player_id"] for r in rows]


async def _rate(
    pool: asyncpg.Pool, ordinals: dict[UUID, float], matches: int = 1, season: str = SEASON
) -> None:
    await pool.execute("INSERT INTO seasons (name) VALUES ($1) ON CONFLICT DO NOTHING", season)
    await pool.execute(
        """
        INSERT INTO game_ratings (player_id, game, season, mu, sigma, matches)
        SELECT p, $1, $2, o + 3, 1, $5
          FROM unnest($3::uuid[], $4::float8[]) AS s(p, o)
        """,
        GAME,
        season,
        list(ordinals),
        list(ordinals.values()),
        matches,
    )


async def _board(pool: asyncpg.Pool) -> list[tuple[float, UUID]]:
    """The board in its order, from the table itself."""
    rows = await pool.fetch(
        """
        SELECT r.ordinal, r.player_id FROM game_ratings r JOIN players p USING (player_id)
         WHERE r.game = $1 AND r.season = $2 AND r.matches > 0 AND p.deleted_at IS NULL
        """,
        GAME,
        SEASON,
    )
    return sorted(((r["ordinal"], r["player_id"]) for r in rows), key=lambda r: (-r[0], r[1]))


def _rank(board: list[tuple[float, UUID]], ordinal: float) -> int:
    return 1 + sum(1 for o, _ in board if o > ordinal)


async def test_every_around_me_and_top_ranks_one_plus_those_rated_strictly_higher(
    pool: asyncpg.Pool,
) -> None:
    ids = await _players(pool, len(ORDINALS) + 2)
    await _rate(pool, dict(zip(ids, ORDINALS, strict=False)))
    # Not on the board: a rating without a match yet, and a deleted player's.
    await _rate(pool, {ids[-2]: 100.0}, matches=0)
    await _rate(pool, {ids[-1]: 4.5})
    await pool.execute("UPDATE players SET deleted_at = now() WHERE player_id = $1", ids[-1])
    board = await _board(pool)
    assert len(board) == len(ORDINALS)
    order = [p for _, p in board]
    for each_side in (1, 2, 3):
        for at, (_, player_id) in enumerate(board):
            page = await store.around(pool, GAME, SEASON, player_id, each_side)
            assert [e.player_id for e in page] == order[max(0, at - each_side) : at + each_side + 1]
            assert [e.rank for e in page] == [_rank(board, e.ordinal) for e in page]
    for limit in (1, 3, 8, 50):
        page = await store.top(pool, GAME, SEASON, limit)
        assert [e.player_id for e in page] == order[:limit]
        assert [e.rank for e in page] == [_rank(board, e.ordinal) for e in page]
    assert await store.around(pool, GAME, SEASON, ids[-2], 2) == []
    assert await store.around(pool, GAME, SEASON, ids[-1], 2) == []
    assert await store.around(pool, GAME, "other", ids[0], 2) == []


async def test_a_page_starting_inside_a_tie_ranks_below_the_whole_tie(pool: asyncpg.Pool) -> None:
    """The tie's members above the page count for the ranks under it."""
    ids = await _players(pool, 8)
    await _rate(pool, {p: 10.0 for p in ids[:7]} | {ids[7]: 9.0})
    board = await _board(pool)
    last_tied = board[6][1]
    page = await store.around(pool, GAME, SEASON, last_tied, 1)
    assert [(e.rank, e.ordinal) for e in page] == [(1, 10.0), (1, 10.0), (8, 9.0)]


async def test_the_counts_follow_every_write_and_every_deletion(pool: asyncpg.Pool) -> None:
    ids = await _players(pool, 40)
    await _rate(pool, {p: random.Random(i).uniform(-20, 40) for i, p in enumerate(ids[:30])})
    await _rate(pool, {p: 1.0 for p in ids[30:]}, matches=0)
    await _rate(pool, {p: 2.0 for p in ids[:10]}, season="s2")
    assert await pool.fetchval(_MISCOUNTED) == 0
    # A match's end, as the service writes it: its rows locked, then re-rated in one statement.
    async with pool.acquire() as conn, conn.transaction():
        skills = await store.lock_skills(conn, GAME, SEASON, {p: (25.0, 8.0) for p in ids[28:32]})
        await store.record_match(
            conn, GAME, SEASON, {p: (mu + 1, s) for p, (mu, s) in skills.items()}
        )
    assert await pool.fetchval(_MISCOUNTED) == 0
    # Moves that stay inside every bucket, and moves across them.
    await pool.execute(
        "UPDATE game_ratings SET mu = mu + 0.0001 WHERE player_id = ANY($1)", ids[:5]
    )
    await pool.execute("UPDATE game_ratings SET mu = mu - 7 WHERE player_id = ANY($1)", ids[5:15])
    await pool.execute("UPDATE game_ratings SET updated_at = now()")
    assert await pool.fetchval(_MISCOUNTED) == 0
    # Deleted, as the deletion writes it, and (by an operator) restored.
    for player_id in ids[:3]:
        await pool.execute(
            "UPDATE players SET name = NULL, deleted_at = coalesce(deleted_at, now())"
            " WHERE player_id = $1",
            player_id,
        )
    await pool.execute("UPDATE players SET deleted_at = now() WHERE player_id = $1", ids[0])
    assert await pool.fetchval(_MISCOUNTED) == 0
    assert await pool.fetchval(_MISFLAGGED) == 0
    # ids[0..2], each rated in two seasons.
    assert await pool.fetchval("SELECT count(*) FROM game_ratings WHERE player_deleted") == 6
    await pool.execute(
        "UPDATE players SET name = 'back', deleted_at = NULL WHERE player_id = $1", ids[2]
    )
    await pool.execute(
        "DELETE FROM game_ratings WHERE season = 's2' AND player_id = ANY($1)", ids[5:]
    )
    assert await pool.fetchval(_MISCOUNTED) == 0
    assert await pool.fetchval(_MISFLAGGED) == 0
    # Emptied rows are gone: the exact ordinals a board has held do not pile up.
    assert await pool.fetchval("SELECT count(*) FROM game_rating_counts WHERE players = 0") == 0


async def test_a_rating_made_for_a_deleted_player_is_born_off_the_board(pool: asyncpg.Pool) -> None:
    (gone,) = await _players(pool, 1)
    await pool.execute("UPDATE players SET deleted_at = now() WHERE player_id = $1", gone)
    await pool.execute("INSERT INTO seasons (name) VALUES ($1)", SEASON)
    async with pool.acquire() as conn, conn.transaction():
        await store.lock_skills(conn, GAME, SEASON, {gone: (25.0, 8.0)})
        await store.record_match(conn, GAME, SEASON, {gone: (30.0, 7.0)})
    assert await pool.fetchval(_MISFLAGGED) == 0
    assert await store.top(pool, GAME, SEASON, 10) == []
    assert await pool.fetchval("SELECT count(*) FROM game_rating_counts") == 0


async def test_matches_ending_together_never_deadlock_on_the_counts(
    pool: asyncpg.Pool, fresh_database_url: str
) -> None:
    """Forty matches of two players each end at once, again and again, their players moving
    between the same few buckets in every order: each statement takes its counts' locks in key
    order, so they wait for one another and none is chosen as a deadlock's victim."""
    ids = await _players(pool, 80)
    await _rate(pool, {p: float(i % 4) for i, p in enumerate(ids)}, matches=1)
    pairs = [ids[i : i + 2] for i in range(0, 80, 2)]
    many = await create_pool(fresh_database_url, 1, len(pairs), 60.0)

    async def end_match(pair: list[UUID], turn: int) -> None:
        async with many.acquire() as conn, conn.transaction():
            skills = await store.lock_skills(conn, GAME, SEASON, {p: (25.0, 8.0) for p in pair})
            await asyncio.sleep(0)
            step = random.Random(turn).choice([-1.0, 1.0, 0.015625, -0.015625])
            await store.record_match(
                conn,
                GAME,
                SEASON,
                {p: (mu + step * (1 + i), s) for i, (p, (mu, s)) in enumerate(skills.items())},
            )

    try:
        for turn in range(5):
            await asyncio.gather(*(end_match(pair, turn * 100 + i) for i, pair in enumerate(pairs)))
    finally:
        await many.close()
    assert await pool.fetchval(_MISCOUNTED) == 0


async def test_a_database_made_before_gets_the_flags_indexes_and_counts_once(
    pool: asyncpg.Pool,
) -> None:
    ids = await _players(pool, 30)
    await _rate(pool, {p: float(i) / 3 for i, p in enumerate(ids)})
    await pool.execute("UPDATE game_ratings SET matches = 0 WHERE player_id = $1", ids[0])
    # As a database made before: no flag, no counts or their triggers, the old indexes.
    await pool.execute("DROP TRIGGER players_game_ratings_deleted ON players")
    await pool.execute("DROP TRIGGER game_ratings_player_deleted ON game_ratings")
    for event in ("insert", "update", "delete"):
        await pool.execute(f"DROP TRIGGER game_ratings_counts_{event} ON game_ratings")
    await pool.execute("DROP TABLE game_rating_counts")
    await pool.execute("ALTER TABLE game_ratings DROP COLUMN player_deleted")
    await pool.execute("DROP INDEX players_leaderboard_idx")
    await pool.execute("CREATE INDEX players_rating_idx ON players (rating DESC, player_id)")
    await pool.execute(
        "CREATE INDEX game_ratings_board_idx"
        " ON game_ratings (game, season, ordinal DESC, player_id)"
    )
    await as_release_before_0_1_0(pool)
    # Players it deleted while it ran the previous version.
    await pool.execute("UPDATE players SET deleted_at = now() WHERE player_id = ANY($1)", ids[1:4])
    await migrated(pool)
    assert await pool.fetchval(_MISFLAGGED) == 0
    assert await pool.fetchval(_MISCOUNTED) == 0
    assert await pool.fetchval("SELECT sum(players) FROM game_rating_counts WHERE grain = 0") == 26
    indexes = {
        r["indexname"]
        for r in await pool.fetch(
            "SELECT indexname FROM pg_indexes WHERE tablename IN ('players', 'game_ratings')"
        )
    }
    assert {"players_leaderboard_idx", "game_ratings_leaderboard_idx"} <= indexes
    assert not {"players_rating_idx", "game_ratings_board_idx"} & indexes
    # The trigger is back: a deletion from now on leaves the board too.
    await pool.execute("UPDATE players SET deleted_at = now() WHERE player_id = $1", ids[10])
    assert await pool.fetchval(_MISCOUNTED) == 0
    board = await store.top(pool, GAME, SEASON, 100)
    assert len(board) == 25 and ids[10] not in {e.player_id for e in board}
