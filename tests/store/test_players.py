import statistics
import time
import uuid

import asyncpg
import pytest

from bench.database import as_release_before_0_1_0
from bench.leaderboard import fill, ladder_positions
from service.store import players as store
from service.store.players import PlayerRow
from service.usecases import players
from tests.conftest import migrated

# Generous: the read takes a few milliseconds on a laptop; counting over the table took seconds.
AROUND_ME_MS = 20.0
# Players per rating, from the table itself, beside what rating_counts says.
_MISCOUNTED = """
SELECT count(*) FROM (SELECT rating, count(*) AS n FROM players GROUP BY rating) AS truth
  FULL JOIN (SELECT rating, sum(players) AS n FROM rating_counts GROUP BY rating
              HAVING sum(players) <> 0) AS kept USING (rating)
 WHERE truth.n IS DISTINCT FROM kept.n
"""


@pytest.fixture
def pool(fresh_pool: asyncpg.Pool) -> asyncpg.Pool:
    return fresh_pool


async def test_around_me_among_a_million_players_reads_a_bounded_page(pool: asyncpg.Pool) -> None:
    await fill(pool, 1_000_000)
    for where, player_id in (await ladder_positions(pool)).items():
        timings = []
        for _ in range(5):
            started = time.perf_counter()
            board = await players.leaderboard(pool, 100, player_id)
            timings.append((time.perf_counter() - started) * 1000)
        assert statistics.median(timings) < AROUND_ME_MS, (where, timings)
        entries = board["entries"]
        me = next(e for e in entries if e["player_id"] == str(player_id))
        assert len(entries) == (51 if where in ("top", "bottom") else 101)
        for entry in (entries[0], me, entries[-1]):
            higher = await pool.fetchval(
                "SELECT count(*) FROM players WHERE rating > $1", entry["rating"]
            )
            assert entry["rank"] == higher + 1, (where, entry)
    assert await pool.fetchval(_MISCOUNTED) == 0


async def test_rating_counts_follow_every_write_to_players(pool: asyncpg.Pool) -> None:
    await fill(pool, 500)
    await pool.execute("INSERT INTO players (name) VALUES ('new')")
    await pool.execute("UPDATE players SET rating = rating + 7 WHERE name LIKE 'p1%'")
    await pool.execute("UPDATE players SET name = 'renamed' WHERE name LIKE 'p2%'")
    await pool.execute("DELETE FROM players WHERE name = 'p3'")
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute("UPDATE players SET rating = 0 WHERE name = 'p4'")
        await conn.execute("UPDATE players SET rating = 2000 WHERE name = 'p4'")
    assert await pool.fetchval(_MISCOUNTED) == 0
    assert await pool.fetchval("SELECT sum(players) FROM rating_counts") == 500


async def test_a_database_made_before_rating_counts_gets_them_once(pool: asyncpg.Pool) -> None:
    await fill(pool, 300)
    # As a database made before: the players are there, the counts and their triggers are not.
    for event in ("insert", "update", "delete"):
        await pool.execute(f"DROP TRIGGER players_rating_counts_{event} ON players")
    await pool.execute("DROP TABLE rating_counts")
    await as_release_before_0_1_0(pool)
    await pool.execute("UPDATE players SET rating = rating - 3 WHERE name LIKE 'p1%'")
    await migrated(pool)
    assert await pool.fetchval(_MISCOUNTED) == 0
    assert await pool.fetchval("SELECT sum(players) FROM rating_counts") == 300


async def test_a_player_gets_a_tag_of_four_digits_that_a_rename_keeps(pool: asyncpg.Pool) -> None:
    made = [await store.insert(pool, "ana") for _ in range(50)]
    assert all(0 <= row.tag <= 9999 for row in made)
    assert len({row.tag for row in made}) > 1  # drawn, not one fixed value
    renamed = await store.rename(pool, made[0].player_id, "bea")
    assert renamed == PlayerRow(made[0].player_id, "bea", made[0].tag, made[0].rating)
    assert await store.get(pool, made[0].player_id) == renamed
    assert await pool.fetchval(_MISCOUNTED) == 0


async def test_a_deleted_player_reads_without_a_name_and_is_not_renamed(pool: asyncpg.Pool) -> None:
    row = await store.insert(pool, "gone")
    await pool.execute(
        "UPDATE players SET name = NULL, deleted_at = now() WHERE player_id = $1", row.player_id
    )
    assert await store.get(pool, row.player_id) == PlayerRow(row.player_id, None, row.tag, 1000)
    assert await store.rename(pool, row.player_id, "back") is None
    assert await store.rename(pool, uuid.uuid4(), "nobody") is None
    assert (
        await pool.fetchval("SELECT name FROM players WHERE player_id = $1", row.player_id) is None
    )
