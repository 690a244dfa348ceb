"""Warband snapshots, the pairing query over them, and what rating needs of a ghost's owner."""

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import asyncpg

from service.store.params import named


@dataclass(frozen=True)
class Candidate:
    snapshot_id: int
    snapshot_at: datetime  # with the id, the snapshot's key (its partition)
    player_id: UUID
    rating: int
    warband_json: str  # parsed only for the one chosen

    def warband(self) -> list[list[Any]]:
        found: list[list[Any]] = json.loads(self.warband_json)
        return found


@dataclass(frozen=True)
class SnapshotRow:
    snapshot_id: int
    run_id: UUID | None
    player_id: UUID | None
    round: int
    ruleset: str
    rating: int
    wins: int
    lives: int
    warband: list[list[Any]]
    is_bot: bool


async def next_id(conn: asyncpg.Connection) -> int:
    """An id for a snapshot that a write will store under it."""
    found: int = await conn.fetchval(
        "SELECT nextval(pg_get_serial_sequence('snapshots', 'snapshot_id'))"
    )
    return found


# The pairing scans are the function pairing_candidates in schema.sql, so that they run under
# a generic plan (see there).
_NEAREST = named(
    "SELECT snapshot_id, snapshot_at, player_id, rating, warband"
    " FROM pairing_candidates(:ruleset, :round, :rating, :exclude_players, :ttl_seconds, :limit)"
)


async def nearest(
    conn: asyncpg.Connection,
    *,
    ruleset: str,
    round_: int,
    rating: int,
    exclude_players: list[UUID],
    ttl_seconds: float,
    limit: int,
) -> list[Candidate]:
    """Up to `limit` fresh snapshots on each side of `rating`, nearest first overall."""
    args = _NEAREST.args(
        ruleset=ruleset,
        round=round_,
        rating=rating,
        exclude_players=exclude_players,
        ttl_seconds=ttl_seconds,
        limit=limit,
    )
    rows = await conn.fetch(_NEAREST.sql, *args)
    found = [
        Candidate(r["snapshot_id"], r["snapshot_at"], r["player_id"], r["rating"], r["warband"])
        for r in rows
    ]
    return sorted(found, key=lambda c: (abs(c.rating - rating), c.snapshot_id))


_GET = named(
    "SELECT snapshot_id, run_id, player_id, round, ruleset, rating, wins, lives, warband,"
    " is_bot FROM snapshots WHERE snapshot_id = :snapshot_id"
)


async def get(conn: asyncpg.Connection | asyncpg.Pool, snapshot_id: int) -> SnapshotRow:
    row = await conn.fetchrow(_GET.sql, *_GET.args(snapshot_id=snapshot_id))
    return SnapshotRow(**{**dict(row), "warband": json.loads(row["warband"])})


@dataclass(frozen=True)
class Owner:
    """What decides whether a battle against this owner's ghost moves the player's rating."""

    age_seconds: float  # how old the owner's account is
    fought_runs: int  # the owner's runs that played a battle, counted up to the number asked for
    since_rated: float | None  # seconds since this owner last moved the player's rating


# A run counts once it played a battle: one ended won or lost, or abandoned past round 1 (its
# shop's round is the battles played + 1), so that runs started and abandoned at once buy
# nothing. The condition is runs_fought_idx's (schema.sql), and the count stops at
# `:runs_needed` rows: it reads at most that many index entries, however many runs the owner
# has left empty.
_OWNER = named("""
SELECT extract(epoch FROM now() - p.created_at)::float8 AS age_seconds,
       (SELECT count(*) FROM (SELECT 1 FROM runs r
                               WHERE r.player_id = p.player_id
                                 AND (r.status IN ('won', 'lost')
                                      OR (r.status = 'abandoned'
                                          AND (r.shop ->> 'round')::integer > 1))
                               LIMIT :runs_needed) fought)::int AS fought_runs,
       (SELECT extract(epoch FROM now() - q.rated_at)::float8 FROM rated_pairs q
         WHERE q.player_id = :player_id AND q.owner_id = p.player_id) AS since_rated
  FROM players p
 WHERE p.player_id = :owner_id
""")


async def owner(
    conn: asyncpg.Connection, player_id: UUID, owner_id: UUID, runs_needed: int
) -> Owner | None:
    """The ghost owner's standing toward `player_id`; None if the owner is gone."""
    args = _OWNER.args(player_id=player_id, owner_id=owner_id, runs_needed=runs_needed)
    row = await conn.fetchrow(_OWNER.sql, *args)
    if row is None:
        return None
    return Owner(row["age_seconds"], row["fought_runs"], row["since_rated"])


_FORGET_RATED = named("""
WITH gone AS (
    DELETE FROM rated_pairs WHERE (player_id, owner_id) IN (
        SELECT player_id, owner_id FROM rated_pairs
         WHERE rated_at < now() - make_interval(secs => :older_than_seconds)
         LIMIT :limit
           FOR UPDATE SKIP LOCKED)
    RETURNING 1)
SELECT count(*) FROM gone
""")


async def forget_rated(conn: asyncpg.Connection, older_than_seconds: float, limit: int) -> int:
    """Delete up to `limit` remembered ratings older than `older_than_seconds`, which decide
    nothing any more; rows a turn is writing are left for the next sweep."""
    args = _FORGET_RATED.args(older_than_seconds=older_than_seconds, limit=limit)
    deleted: int = await conn.fetchval(_FORGET_RATED.sql, *args)
    return deleted
