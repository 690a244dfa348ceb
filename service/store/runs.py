"""Runs: one player's attempt at the autobattler.

A write of a run holds its player's row first (service/store/player_lock.py): a move made in
one statement takes it in the statement, before the run's row.
"""

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import asyncpg

from service.store import jsonb
from service.store.idempotency import KEEP_ANSWER, AnswerToKeep, KeptAnswer, write_keeping
from service.store.params import named
from service.store.player_lock import ALIVE

_NAMES = (
    "run_id",
    "player_id",
    "ruleset",
    "seed",
    "status",
    "lives",
    "wins",
    "shop",
    "rating_at_start",
    "rating_change",
    "created_at",
    "version",
)
_COLUMNS = ", ".join(_NAMES)


@dataclass(frozen=True)
class RunRow:
    run_id: UUID
    player_id: UUID
    ruleset: str
    seed: int
    status: str
    lives: int
    wins: int
    shop: dict[str, Any]
    rating_at_start: int
    rating_change: float
    created_at: datetime
    # Counts the run's changes; a client may send it to refuse acting on a run that moved.
    version: int


def _row(row: asyncpg.Record) -> RunRow:
    return RunRow(
        run_id=row["run_id"],
        player_id=row["player_id"],
        ruleset=row["ruleset"],
        seed=int(row["seed"]),
        status=row["status"],
        lives=row["lives"],
        wins=row["wins"],
        shop=json.loads(row["shop"]),
        rating_at_start=row["rating_at_start"],
        rating_change=row["rating_change"],
        created_at=row["created_at"],
        version=row["version"],
    )


_INSERT = named(f"""
INSERT INTO runs (player_id, ruleset, seed, lives, shop, rating_at_start)
SELECT :player_id, :ruleset, :seed, :lives, :shop, rating FROM players WHERE player_id = :player_id
RETURNING {_COLUMNS}
""")


async def insert(
    conn: asyncpg.Connection,
    player_id: UUID,
    ruleset: str,
    seed: int,
    lives: int,
    shop: dict[str, Any],
) -> RunRow:
    """A new run; the player's current rating is kept as the run's rating."""
    args = _INSERT.args(
        player_id=player_id, ruleset=ruleset, seed=seed, lives=lives, shop=jsonb.dumps(shop)
    )
    row = await conn.fetchrow(_INSERT.sql, *args)
    return _row(row)


_GET = f"SELECT {_COLUMNS} FROM runs WHERE run_id = :run_id AND player_id = :player_id"
_GET_UNLOCKED = named(_GET)
_GET_LOCKED = named(_GET + " FOR UPDATE")


async def get(
    conn: asyncpg.Connection | asyncpg.Pool, run_id: UUID, player_id: UUID, *, lock: bool = False
) -> RunRow | None:
    """The player's run; with `lock`, the row stays locked until the transaction ends."""
    statement = _GET_LOCKED if lock else _GET_UNLOCKED
    row = await conn.fetchrow(statement.sql, *statement.args(run_id=run_id, player_id=player_id))
    return None if row is None else _row(row)


_LIST_FOR = named(
    f"SELECT {_COLUMNS} FROM runs WHERE player_id = :player_id"
    " ORDER BY created_at DESC LIMIT :limit"
)


async def list_for(conn: asyncpg.Pool, player_id: UUID, limit: int) -> list[RunRow]:
    rows = await conn.fetch(_LIST_FOR.sql, *_LIST_FOR.args(player_id=player_id, limit=limit))
    return [_row(row) for row in rows]


@dataclass(frozen=True)
class ForWrite:
    """What a write of a run reads in one round trip before it computes its change."""

    run: RunRow
    # What is kept under the request's Idempotency-Key, when it has one and the key is claimed.
    kept: KeptAnswer | None
    # Whether the run's player is deleted: its request is refused, whatever the run's state.
    player_gone: bool
    # For an end-turn: the ghosts' players the run has fought, and the ids its battle and its
    # snapshot will take (taken now, so that the answer kept under the key can name them).
    met: list[UUID]
    battle_id: int
    snapshot_id: int


_TURN_EXTRAS = """,
       r.met,
       nextval(pg_get_serial_sequence('battles', 'battle_id')) AS battle_id,
       nextval(pg_get_serial_sequence('snapshots', 'snapshot_id')) AS snapshot_id"""


def _for_write_sql(turn: bool, lock: bool) -> str:
    return (
        "SELECT "
        + ", ".join(f"r.{name}" for name in _NAMES)
        + ", k.request_hash, k.response"
        + ", NOT EXISTS (SELECT FROM players p"
        + " WHERE p.player_id = :player_id AND p.deleted_at IS NULL)"
        + " AS player_gone"
        + (_TURN_EXTRAS if turn else "")
        + """
          FROM runs r LEFT JOIN idempotency_keys k ON k.player_id = r.player_id AND k.key = :key
         WHERE r.run_id = :run_id AND r.player_id = :player_id"""
        + (" FOR UPDATE OF r" if lock else "")
    )


# Every shop move and end-turn reads through one of these: built once, not per request.
_FOR_WRITE = {
    (turn, lock): named(_for_write_sql(turn, lock))
    for turn in (False, True)
    for lock in (False, True)
}


async def for_write(
    conn: asyncpg.Connection,
    run_id: UUID,
    player_id: UUID,
    key: str | None,
    *,
    lock: bool,
    turn: bool,
) -> ForWrite | None:
    """The player's run and its key's kept answer; with `lock`, the run stays locked until the
    transaction ends; with `turn`, what an end-turn needs besides."""
    statement = _FOR_WRITE[turn, lock]
    row = await conn.fetchrow(
        statement.sql, *statement.args(run_id=run_id, player_id=player_id, key=key)
    )
    if row is None:
        return None
    kept = (
        None
        if row["request_hash"] is None
        else KeptAnswer(bytes(row["request_hash"]), row["response"])
    )
    return ForWrite(
        _row(row),
        kept,
        row["player_gone"],
        list(row["met"]) if turn else [],
        row["battle_id"] if turn else 0,
        row["snapshot_id"] if turn else 0,
    )


_SAVE_SHOP = named(f"""
WITH {ALIVE},
moved AS (
    UPDATE runs SET shop = :shop::jsonb, updated_at = now(), version = version + 1
     WHERE run_id = :run_id AND version = :version AND EXISTS (SELECT FROM alive)
    RETURNING player_id),
kept AS ({KEEP_ANSWER})
SELECT count(*) FROM moved
""")


async def save_shop(
    conn: asyncpg.Connection,
    run: RunRow,
    shop: dict[str, Any],
    to_keep: AnswerToKeep | None,
) -> bool:
    """Store the shop if the run is still at the version it was read at and its player is not
    deleted, and keep `to_keep` with it; False when not (nothing is written then)."""
    moved = await write_keeping(
        conn,
        to_keep,
        _SAVE_SHOP,
        player_id=run.player_id,
        run_id=run.run_id,
        version=run.version,
        shop=jsonb.dumps(shop),
    )
    return bool(moved)


_OPEN_RUNS = named("""
SELECT run_id FROM runs WHERE player_id = :player_id AND status = 'shopping'
 ORDER BY created_at LIMIT :limit
""")


async def open_runs(conn: asyncpg.Connection, player_id: UUID, limit: int) -> list[UUID]:
    """The player's open runs, oldest first, `limit` at most. The caller holds the player's row
    (player_lock.hold): starts of one player take turns, so that none counts the open runs
    while another adds one.

    The limit also keeps the plan on runs_open_idx: without it, for a player with thousands of
    ended runs the planner may prefer walking every open run of every player."""
    rows = await conn.fetch(_OPEN_RUNS.sql, *_OPEN_RUNS.args(player_id=player_id, limit=limit))
    return [row["run_id"] for row in rows]


@dataclass(frozen=True)
class Idle:
    """An open run nobody touched for too long, claimed to be ended."""

    run_id: UUID
    player_id: UUID
    ruleset: str
    rating_change: float


# Sweeps of idle runs take turns, one batch at a time (an advisory lock until the transaction
# ends): each batch skips the runs and players others hold, and one sweep must not skip a
# player another sweep holds, whose other idle runs neither would end this tick.
_SWEEP_TURN = "idle-runs"

_TAKE_TURN = named("SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))")
_CLAIM_IDLE = named("""
SELECT r.run_id, r.player_id, r.ruleset, r.rating_change
  FROM runs r JOIN players p USING (player_id)
 WHERE r.status = 'shopping' AND r.updated_at < now() - make_interval(secs => :idle_seconds)
 LIMIT :limit
   FOR UPDATE OF r SKIP LOCKED
   FOR NO KEY UPDATE OF p SKIP LOCKED
""")


async def claim_idle(conn: asyncpg.Connection, idle_seconds: float, limit: int) -> list[Idle]:
    """Up to `limit` open runs idle for `idle_seconds`, each locked with its player's row until
    the transaction ends, in the sweeps' turn. A run or a player a write holds (a move being
    made, a deletion) is skipped, never waited for: a write holds the player's row before the
    run's, and a sweep that waited for them the other way round would wait in a cycle with it.
    Such a run was touched just now, or is being ended."""
    await conn.execute(_TAKE_TURN.sql, *_TAKE_TURN.args(key=_SWEEP_TURN))
    args = _CLAIM_IDLE.args(idle_seconds=idle_seconds, limit=limit)
    rows = await conn.fetch(_CLAIM_IDLE.sql, *args)
    return [Idle(r["run_id"], r["player_id"], r["ruleset"], r["rating_change"]) for r in rows]


# An open run to end: (run, player, the run's final rating change, the rating it settles).
Ending = tuple[UUID, UUID, float, int]


_ABANDON = named("""
WITH given AS (
    SELECT * FROM unnest(:run_ids::uuid[], :player_ids::uuid[], :changes::float8[],
                         :settled::int[]) AS g(run_id, player_id, change, settled)),
ended AS (
    UPDATE runs r SET status = :status::text, rating_change = given.change, ended_at = now(),
           updated_at = now(), version = r.version + 1
      FROM given WHERE r.run_id = given.run_id AND r.status = 'shopping'
    RETURNING r.run_id),
rated AS (
    UPDATE players p SET rating = p.rating + totals.settled
      FROM (SELECT g.player_id, sum(g.settled)::int AS settled
              FROM given g JOIN ended USING (run_id) GROUP BY g.player_id) totals
     WHERE p.player_id = totals.player_id)
SELECT count(*) FROM ended
""")


async def abandon(conn: asyncpg.Connection, ended: list[Ending], status: str) -> int:
    """End claimed runs with `status`: each (run, player, the run's final rating change, the
    rating it settles). The caller holds the runs' rows and their players' (claimed with the
    runs, or held by the write)."""
    done: int = await conn.fetchval(
        _ABANDON.sql,
        *_ABANDON.args(
            run_ids=[run for run, _, _, _ in ended],
            player_ids=[player for _, player, _, _ in ended],
            changes=[change for _, _, change, _ in ended],
            settled=[settled for _, _, _, settled in ended],
            status=status,
        ),
    )
    return done
