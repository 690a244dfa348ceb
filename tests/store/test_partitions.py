"""Weekly partitions of snapshots and battles: made ahead, pruned by the pairing query, one row
per (run, round) across partitions, converted in place from the unpartitioned tables, and
detached when old."""

import asyncio
import dataclasses
import json
import re
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from aiohttp import web

from service.api.keys import POOL
from service.config import Settings
from service.games.cryptids.content import DEFAULT_RULESET, load_ruleset
from service.store import partitions
from service.store.database import create_pool
from tests.api.runs_helpers import STRONG, WEAK, add_snapshot, ghost_player, seeded_run, spend_gold
from tests.conftest import migrated, running_service
from tests.http import Api

BEFORE = Path(__file__).parent / "fixtures" / "schema_before_partitions.sql"
WEEK = timedelta(weeks=1)


@pytest.fixture
async def pool(fresh_database_url: str) -> AsyncIterator[asyncpg.Pool]:
    """A pool on an empty database with the schema applied."""
    pool = await create_pool(fresh_database_url, 1, 4, 10.0)
    await migrated(pool)
    yield pool
    await pool.close()


async def _monday(conn: asyncpg.Connection | asyncpg.Pool) -> date:
    """This week's first day (UTC), which names its partitions."""
    monday: date = await conn.fetchval("SELECT date_trunc('week', now() AT TIME ZONE 'UTC')::date")
    return monday


def _week_name(table: str, day: date) -> str:
    """The partition of the week holding `day`."""
    return f"{table}_p{day - timedelta(days=day.weekday()):%Y%m%d}"


async def _older_than(pool: asyncpg.Pool, age: timedelta) -> set[str]:
    """The partitions that end more than `age` ago."""
    cutoff: datetime = await pool.fetchval("SELECT now() - $1::interval", age)
    return {
        p.name
        for p in await partitions.list_partitions(pool)
        if p.upper is not None and p.upper <= cutoff
    }


async def _partition_of(pool: asyncpg.Pool, table: str, key: str, value: object) -> str:
    found: str = await pool.fetchval(
        f"SELECT tableoid::regclass::text FROM {table} WHERE {key} = $1", value
    )
    return found


async def _run(pool: asyncpg.Pool, player_id: uuid.UUID) -> uuid.UUID:
    run_id: uuid.UUID = await pool.fetchval(
        "INSERT INTO runs (player_id, ruleset, seed, lives, shop, rating_at_start)"
        " VALUES ($1, $2, 1, 5, '{}', 1000) RETURNING run_id",
        player_id,
        DEFAULT_RULESET,
    )
    return run_id


async def test_a_new_database_has_the_weeks_ahead_and_an_end_turn_writes_into_this_one(
    fresh_service: tuple[Api, web.Application],
) -> None:
    api, app = fresh_service
    pool = app[POOL]
    monday = await _monday(pool)
    names = {p.name for p in await partitions.list_partitions(pool)}
    for table in partitions.TABLES:
        assert f"{table}_default" in names
        for ahead in range(partitions.WEEKS_AHEAD + 1):
            assert _week_name(table, monday + ahead * WEEK) in names
    token, run_id = await seeded_run(app, api, seed=3)
    await spend_gold(api, token, (await api.get(f"/v1/runs/{run_id}", token=token)).body)
    turn = await api.post(f"/v1/runs/{run_id}/end-turn", {"round": 1}, token=token)
    assert turn.status == 200, turn.body
    # The player's snapshot, the bot's, and the battle: this week's partitions, not the default.
    assert turn.body["pairing"] == "bot"
    battle = await _partition_of(pool, "battles", "battle_id", turn.body["battle_id"])
    assert battle == _week_name("battles", monday)
    where = await pool.fetch(
        "SELECT DISTINCT tableoid::regclass::text AS name FROM snapshots"
        " WHERE run_id = $1 OR snapshot_id = $2",
        uuid.UUID(run_id),
        turn.body["opponent"]["snapshot_id"],
    )
    assert [row["name"] for row in where] == [_week_name("snapshots", monday)]


# pairing_candidates' parameters, in the order store/snapshots.py passes them.
_PARAMETERS = ("p_ruleset", "p_round", "p_rating", "p_exclude", "p_ttl", "p_limit")


async def _scanned(conn: asyncpg.Connection, ttl_seconds: float) -> set[str]:
    """The partitions the pairing query reads: the query of pairing_candidates as the database
    holds it, EXPLAINed under the function's generic plan with the service's parameters."""
    source: str = await conn.fetchval(
        "SELECT prosrc FROM pg_proc WHERE proname = 'pairing_candidates'"
    )
    query = source[source.index("RETURN QUERY") + len("RETURN QUERY") : source.rindex(";")]
    for number, name in enumerate(_PARAMETERS, start=1):
        query = re.sub(rf"\b{name}\b", f"${number}", query)
    await conn.execute("SET plan_cache_mode = force_generic_plan")
    rules = load_ruleset(DEFAULT_RULESET).pairing
    rows = await conn.fetch(
        "EXPLAIN " + query,
        DEFAULT_RULESET,
        3,
        1000,
        [uuid.uuid4()],
        ttl_seconds,
        rules.candidates_per_side,
    )
    plan = "\n".join(row[0] for row in rows)
    # Three scans of snapshots (up, down, the warbands), each of the live partitions alone.
    assert plan.count("Subplans Removed") == 3
    return set(re.findall(r" on (snapshots_\w+)", plan))


@pytest.mark.parametrize("ttl_days", [7, 2, 0.5])
async def test_the_pairing_query_reads_only_the_partitions_of_the_time_to_live(
    pool: asyncpg.Pool, ttl_days: float
) -> None:
    await pool.fetchval("SELECT ensure_partitions(2, 6)")
    owner = await ghost_player(pool)
    for age_days in (0, 1, 3, 6, 10, 20, 39):
        await add_snapshot(pool, owner, 3, 1000, WEAK, age_seconds=age_days * 86400)
    await pool.execute("ANALYZE snapshots")
    ttl = ttl_days * 86400
    async with pool.acquire() as conn:
        now: datetime = await conn.fetchval("SELECT now()")
        scanned = await _scanned(conn, ttl)
    first = (now - timedelta(seconds=ttl)).astimezone(UTC).date()
    last = now.astimezone(UTC).date()
    live = {
        _week_name("snapshots", first + n * timedelta(days=1))
        for n in range((last - first).days + 1)
    }
    assert scanned == live
    assert "snapshots_default" not in scanned


async def test_one_battle_and_one_snapshot_per_run_and_round_across_partitions(
    pool: asyncpg.Pool,
) -> None:
    player = await ghost_player(pool, "player")
    run_id = await _run(pool, player)
    insert_snapshot = """
        INSERT INTO snapshots (run_id, player_id, round, ruleset, rating, wins, lives, warband,
                               created_at)
        VALUES ($1, $2, 1, $3, 1000, 0, 5, '[]', now() + make_interval(weeks => $4))
        RETURNING snapshot_id, created_at"""
    first = await pool.fetchrow(insert_snapshot, run_id, player, DEFAULT_RULESET, 0)
    # Next week's partition has no unique index that sees this week's row: the trigger does.
    with pytest.raises(asyncpg.UniqueViolationError) as caught:
        await pool.fetchrow(insert_snapshot, run_id, player, DEFAULT_RULESET, 1)
    assert caught.value.constraint_name == "snapshots_once_per_round"
    insert_battle = """
        INSERT INTO battles (run_id, round, player_snapshot_id, player_snapshot_at,
            ghost_snapshot_id, ghost_snapshot_at, ruleset, seed, pairing, rating_gap, pairing_ms,
            winner, rolls, health_player, health_ghost, rating_change, lives_after, wins_after,
            status_after, rating_pending, created_at)
        VALUES ($1, 1, $2, $3, $2, $3, $4, 1, 'bot', 0, 1, 'draw', 1, 1, 1, 0, 5, 0,
                'shopping', 0, now() + make_interval(weeks => $5))"""
    args = (run_id, first["snapshot_id"], first["created_at"], DEFAULT_RULESET)
    await pool.execute(insert_battle, *args, 0)
    with pytest.raises(asyncpg.UniqueViolationError) as caught:
        await pool.execute(insert_battle, *args, 1)
    assert caught.value.constraint_name == "battles_once_per_round"
    # Bots' snapshots have no run and are not limited.
    for _ in range(2):
        await pool.execute(
            "INSERT INTO snapshots (round, ruleset, rating, wins, lives, warband, is_bot)"
            " VALUES (1, $1, 1000, 0, 0, '[]', true)",
            DEFAULT_RULESET,
        )


async def test_two_transactions_writing_one_round_in_two_partitions_cannot_both_commit(
    pool: asyncpg.Pool,
) -> None:
    player = await ghost_player(pool, "player")
    run_id = await _run(pool, player)
    insert = """
        INSERT INTO snapshots (run_id, player_id, round, ruleset, rating, wins, lives, warband,
                               created_at)
        VALUES ($1, $2, 4, $3, 1000, 0, 5, '[]', now() + make_interval(weeks => $4))"""
    async with pool.acquire() as one, pool.acquire() as two:
        tx = one.transaction()
        await tx.start()
        await one.execute(insert, run_id, player, DEFAULT_RULESET, 0)
        # The second waits on the run's row lock that the first took, then sees its row.
        second = asyncio.create_task(two.execute(insert, run_id, player, DEFAULT_RULESET, 1))
        await asyncio.sleep(0.3)
        assert not second.done()
        await tx.commit()
        with pytest.raises(asyncpg.UniqueViolationError):
            await second
    assert await pool.fetchval("SELECT count(*) FROM snapshots WHERE run_id = $1", run_id) == 1


async def test_a_week_whose_rows_are_in_the_default_partition_is_left_to_it(
    pool: asyncpg.Pool,
) -> None:
    monday = await _monday(pool)
    owner = await ghost_player(pool)
    # Four weeks ahead, past the weeks made: the row goes to the default partition.
    snapshot_id = await add_snapshot(pool, owner, 1, 1000, WEAK, age_seconds=-4 * 7 * 86400)
    assert await _partition_of(pool, "snapshots", "snapshot_id", snapshot_id) == (
        "snapshots_default"
    )
    await partitions.ensure(pool, weeks_ahead=5)
    names = {p.name for p in await partitions.list_partitions(pool)}
    assert _week_name("snapshots", monday + 4 * WEEK) not in names
    assert _week_name("battles", monday + 4 * WEEK) in names
    assert _week_name("snapshots", monday + 5 * WEEK) in names
    assert await _partition_of(pool, "snapshots", "snapshot_id", snapshot_id) == (
        "snapshots_default"
    )


async def test_the_service_makes_the_weeks_ahead_again_when_they_are_missing(
    pool: asyncpg.Pool,
) -> None:
    last = _week_name("battles", await _monday(pool) + partitions.WEEKS_AHEAD * WEEK)
    await pool.execute(f"DROP TABLE {last}")
    keeper = asyncio.create_task(partitions.keep_ahead(pool, interval_s=0.05))
    try:
        for _ in range(100):
            if await pool.fetchval("SELECT to_regclass($1)", last) is not None:
                break
            await asyncio.sleep(0.05)
    finally:
        keeper.cancel()
        await asyncio.gather(keeper, return_exceptions=True)
    assert await pool.fetchval("SELECT to_regclass($1)::text", last) == last


async def _battle(
    pool: asyncpg.Pool,
    run_id: uuid.UUID,
    round_: int,
    player: asyncpg.Record,
    ghost: asyncpg.Record,
    age_days: int,
) -> int:
    battle_id: int = await pool.fetchval(
        """
        INSERT INTO battles (run_id, round, player_snapshot_id, player_snapshot_at,
            ghost_snapshot_id, ghost_snapshot_at, ruleset, seed, pairing, rating_gap, pairing_ms,
            winner, rolls, health_player, health_ghost, rating_change, lives_after, wins_after,
            status_after, rating_pending, created_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, 1, 'same_round_100', 0, 1, 'draw', 1, 1, 1, 0, 5, 0,
                'shopping', 0, now() - make_interval(days => $8))
        RETURNING battle_id""",
        run_id,
        round_,
        player["snapshot_id"],
        player["created_at"],
        ghost["snapshot_id"],
        ghost["created_at"],
        DEFAULT_RULESET,
        age_days,
    )
    return battle_id


async def _snapshot(
    pool: asyncpg.Pool, run_id: uuid.UUID | None, owner: uuid.UUID, round_: int, age_days: int
) -> asyncpg.Record:
    found: asyncpg.Record = await pool.fetchrow(
        """
        INSERT INTO snapshots (run_id, player_id, round, ruleset, rating, wins, lives, warband,
                               created_at)
        VALUES ($1, $2, $3, $4, 1000, 0, 5, '[]', now() - make_interval(days => $5))
        RETURNING snapshot_id, created_at""",
        run_id,
        owner,
        round_,
        DEFAULT_RULESET,
        age_days,
    )
    return found


async def test_detach_takes_old_battles_then_the_snapshots_no_kept_battle_names(
    pool: asyncpg.Pool,
) -> None:
    await pool.fetchval("SELECT ensure_partitions(2, 12)")
    today: date = await pool.fetchval("SELECT (now() AT TIME ZONE 'UTC')::date")
    player, ghost_owner = await ghost_player(pool, "player"), await ghost_player(pool, "ghost")
    # The run started ten weeks ago (its rows are never older than itself).
    run_id = await pool.fetchval(
        "INSERT INTO runs (player_id, ruleset, seed, lives, shop, rating_at_start, created_at)"
        " VALUES ($1, $2, 1, 5, '{}', 1000, now() - interval '70 days') RETURNING run_id",
        player,
        DEFAULT_RULESET,
    )
    # An old battle against an old ghost (9 weeks), and a kept one (20 days) against a ghost of
    # 7 weeks; all but the kept battle's week end more than 30 days ago.
    old_ghost = await _snapshot(pool, None, ghost_owner, 1, 63)
    kept_ghost = await _snapshot(pool, None, ghost_owner, 2, 49)
    old_mine = await _snapshot(pool, run_id, player, 1, 63)
    kept_mine = await _snapshot(pool, run_id, player, 2, 20)
    old_battle = await _battle(pool, run_id, 1, old_mine, old_ghost, 63)
    kept_battle = await _battle(pool, run_id, 2, kept_mine, kept_ghost, 20)

    old = await _older_than(pool, timedelta(days=30))
    async with pool.acquire() as conn:
        done = await partitions.detach(conn, timedelta(days=30), drop=False)
    outcome = {d.name: d.outcome for d in done}
    week = {age: _week_name("snapshots", today - age * timedelta(days=1)) for age in (49, 63)}
    archived = _week_name("battles", today - 63 * timedelta(days=1))
    assert outcome[archived] == "detached"
    assert outcome[week[63]] == "detached"
    assert outcome[week[49]] == "referenced"
    # Every partition ending more than 30 days ago was handled, battles first, nothing younger.
    assert {d.name for d in done} == old
    assert [d.table for d in done] == sorted(d.table for d in done)
    assert await pool.fetchval("SELECT count(*) FROM battles WHERE battle_id = $1", old_battle) == 0
    kept = await pool.fetchrow("SELECT * FROM battles WHERE battle_id = $1", kept_battle)
    names = await pool.fetch(
        "SELECT snapshot_id FROM snapshots WHERE snapshot_id = ANY($1) ORDER BY snapshot_id",
        [kept["player_snapshot_id"], kept["ghost_snapshot_id"]],
    )
    assert len(names) == 2
    # The detached tables stay, standing alone: the old battle is in its archive.
    assert await pool.fetchval(f"SELECT battle_id FROM {archived}") == old_battle
    assert (
        await pool.fetchval(
            "SELECT count(*) FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'f'"
            " AND confrelid = 'snapshots'::regclass",
            archived,
        )
        == 0
    )

    # Once the kept battle is old too, its snapshots' partition goes with it; --drop drops.
    async with pool.acquire() as conn:
        done = await partitions.detach(conn, timedelta(days=10), drop=True)
    outcome = {d.name: d.outcome for d in done}
    assert outcome[week[49]] == "dropped"
    assert outcome[_week_name("battles", today - 20 * timedelta(days=1))] == "dropped"
    assert await pool.fetchval("SELECT to_regclass($1)", week[49]) is None
    assert await pool.fetchval("SELECT count(*) FROM battles") == 0
    remaining = {p.name for p in await partitions.list_partitions(pool)}
    assert {"snapshots_default", "battles_default", _week_name("battles", today)} <= remaining


# The upgrade: a database made by the schema before partitioning, with rows in it.


async def _old_database(url: str) -> dict[str, Any]:
    """Apply the old schema and fill it; what was stored, to compare after the upgrade."""
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(BEFORE.read_text())
        players = [
            await conn.fetchval("INSERT INTO players (name) VALUES ($1) RETURNING player_id", n)
            for n in ("ana", "bea")
        ]
        run_id = await conn.fetchval(
            "INSERT INTO runs (player_id, ruleset, seed, lives, shop, rating_at_start, created_at)"
            " VALUES ($1, $2, 9, 5, '{}', 1000, now() - interval '40 days') RETURNING run_id",
            players[0],
            DEFAULT_RULESET,
        )
        snapshot = """
            INSERT INTO snapshots (run_id, player_id, round, ruleset, rating, wins, lives,
                                   warband, is_bot, created_at)
            VALUES ($1, $2, $3, $4, $5, 0, 5, $6, $7, now() - make_interval(days => $8))
            RETURNING snapshot_id"""
        ids = [
            await conn.fetchval(
                snapshot, run_id, players[0], 1, DEFAULT_RULESET, 1000, json.dumps(WEAK), False, 39
            ),
            await conn.fetchval(
                snapshot, None, None, 1, DEFAULT_RULESET, 1000, json.dumps(STRONG), True, 39
            ),
            await conn.fetchval(
                snapshot, run_id, players[0], 2, DEFAULT_RULESET, 1010, json.dumps(WEAK), False, 2
            ),
            # bea's ghost, still in the pool: the upgraded service must pair with it.
            await conn.fetchval(
                snapshot, None, players[1], 1, DEFAULT_RULESET, 1000, json.dumps(WEAK), False, 1
            ),
        ]
        battle = """
            INSERT INTO battles (run_id, round, player_snapshot_id, ghost_snapshot_id,
                ghost_player_id, ruleset, seed, pairing, rating_gap, pairing_ms, winner, rolls,
                health_player, health_ghost, rating_change, lives_after, wins_after,
                status_after, rating_pending, created_at)
            VALUES ($1, $2, $3, $4, $5, $6, 77, $7, 0, 0.5, 'ghost', 9, 0, 3, -16, 4, 0,
                    'shopping', -16, now() - make_interval(days => $8))"""
        await conn.execute(battle, run_id, 1, ids[0], ids[1], None, DEFAULT_RULESET, "bot", 39)
        await conn.execute(
            battle, run_id, 2, ids[2], ids[3], players[1], DEFAULT_RULESET, "same_round_100", 2
        )
        return {
            "snapshots": [
                dict(r) for r in await conn.fetch("SELECT * FROM snapshots ORDER BY snapshot_id")
            ],
            "battles": [
                dict(r) for r in await conn.fetch("SELECT * FROM battles ORDER BY battle_id")
            ],
            "next_snapshot": max(ids) + 1,
            "run_id": run_id,
            "players": players,
        }
    finally:
        await conn.close()


async def _catalogue(pool: asyncpg.Pool) -> list[Any]:
    """What a start-up could change: tables, their partitions' bounds, constraints, indexes,
    triggers, sequences' positions, and rows."""
    return [
        await pool.fetch(
            "SELECT c.relname, c.relkind, pg_get_expr(c.relpartbound, c.oid) AS bound"
            " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = 'public' ORDER BY c.relname"
        ),
        await pool.fetch(
            "SELECT conrelid::regclass::text AS rel, conname, pg_get_constraintdef(oid) AS def"
            " FROM pg_constraint WHERE connamespace = 'public'::regnamespace ORDER BY 1, 2"
        ),
        await pool.fetch(
            "SELECT tgrelid::regclass::text AS rel, tgname FROM pg_trigger"
            " WHERE NOT tgisinternal ORDER BY 1, 2"
        ),
        await pool.fetch("SELECT last_value FROM snapshots_snapshot_id_seq"),
        await pool.fetch("SELECT * FROM snapshots ORDER BY snapshot_id"),
        await pool.fetch("SELECT * FROM battles ORDER BY battle_id"),
    ]


async def test_an_unpartitioned_database_is_converted_on_start_up_keeping_every_row(
    fresh_database_url: str, settings: Settings
) -> None:
    before = await _old_database(fresh_database_url)
    pool = await create_pool(fresh_database_url, 1, 4, 10.0)
    try:
        await migrated(pool)
        kinds = await pool.fetch(
            "SELECT relname, relkind::text FROM pg_class WHERE relname IN ('snapshots', 'battles')"
        )
        assert {r["relname"]: r["relkind"] for r in kinds} == {"snapshots": "p", "battles": "p"}
        snapshots = [
            dict(r) for r in await pool.fetch("SELECT * FROM snapshots ORDER BY snapshot_id")
        ]
        assert snapshots == before["snapshots"]
        battles = [dict(r) for r in await pool.fetch("SELECT * FROM battles ORDER BY battle_id")]
        created = {s["snapshot_id"]: s["created_at"] for s in snapshots}
        # Columns added since (the snapshots' keys, and later ones) are left out.
        old_columns = set(before["battles"][0])
        assert [{k: v for k, v in b.items() if k in old_columns} for b in battles] == before[
            "battles"
        ]
        for b in battles:
            assert b["player_snapshot_at"] == created[b["player_snapshot_id"]]
            assert b["ghost_snapshot_at"] == created[b["ghost_snapshot_id"]]
        where = await pool.fetch(
            "SELECT DISTINCT tableoid::regclass::text AS name FROM snapshots"
            " UNION SELECT DISTINCT tableoid::regclass::text FROM battles ORDER BY 1"
        )
        assert [r["name"] for r in where] == ["battles_legacy", "snapshots_legacy"]
        # Ids go on from where the old sequences were.
        assert (
            await pool.fetchval(
                "SELECT nextval(pg_get_serial_sequence('snapshots', 'snapshot_id'))"
            )
            == before["next_snapshot"]
        )
        assert (
            await pool.fetchval("SELECT nextval(pg_get_serial_sequence('battles', 'battle_id'))")
            == len(before["battles"]) + 1
        )
        # The constraints: keys, foreign keys to the snapshots' keys, one row per (run, round).
        defs = {
            r["conname"]: r["def"]
            for r in await pool.fetch(
                "SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint"
                " WHERE conrelid IN ('snapshots'::regclass, 'battles'::regclass)"
            )
        }
        assert defs["snapshots_pkey"] == "PRIMARY KEY (snapshot_id, created_at)"
        assert defs["battles_pkey"] == "PRIMARY KEY (battle_id, created_at)"
        assert defs["battles_ghost_snapshot_fkey"].startswith(
            "FOREIGN KEY (ghost_snapshot_id, ghost_snapshot_at) REFERENCES"
            " snapshots(snapshot_id, created_at)"
        )
        assert {"snapshots_run_id_fkey", "battles_run_id_fkey", "battles_winner_check"} <= set(defs)
        with pytest.raises(asyncpg.UniqueViolationError):
            await pool.execute(
                "INSERT INTO snapshots (run_id, player_id, round, ruleset, rating, wins, lives,"
                " warband) SELECT run_id, player_id, 2, ruleset, 1, 0, 5, '[]' FROM snapshots"
                " WHERE snapshot_id = $1",
                before["snapshots"][0]["snapshot_id"],
            )
        with pytest.raises(asyncpg.ForeignKeyViolationError):
            await pool.execute(
                "DELETE FROM snapshots WHERE snapshot_id = $1",
                before["battles"][1]["ghost_snapshot_id"],
            )
        # The run still being played counts bea, whose ghost it fought, among those it met.
        met = await pool.fetchval("SELECT met FROM runs WHERE run_id = $1", before["run_id"])
        assert met == [before["players"][1]]
        # A second start-up changes nothing.
        catalogue = await _catalogue(pool)
        await migrated(pool)
        assert await _catalogue(pool) == catalogue
    finally:
        await pool.close()

    # The upgraded service plays on: bea's two-day-old ghost, in the legacy partition, is found.
    upgraded = dataclasses.replace(settings, database_url=fresh_database_url)
    async with running_service(upgraded) as api:
        _, token = await api.new_player("cid")
        run = (await api.post("/v1/runs", {}, token=token)).body
        await spend_gold(api, token, run)
        turn = await api.post(f"/v1/runs/{run['run_id']}/end-turn", {"round": 1}, token=token)
        assert turn.status == 200, turn.body
        assert turn.body["opponent"]["snapshot_id"] == before["snapshots"][3]["snapshot_id"]
        replay = await api.get(f"/v1/battles/{turn.body['battle_id']}/replay", token=token)
        assert replay.status == 200
