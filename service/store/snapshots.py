"""Warband snapshots and the pairing query over them."""

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import asyncpg


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
_NEAREST = (
    "SELECT snapshot_id, snapshot_at, player_id, rating, warband"
    " FROM pairing_candidates($1, $2, $3, $4, $5, $6)"
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
    rows = await conn.fetch(_NEAREST, ruleset, round_, rating, exclude_players, ttl_seconds, limit)
    found = [
        Candidate(r["snapshot_id"], r["snapshot_at"], r["player_id"], r["rating"], r["warband"])
        for r in rows
    ]
    return sorted(found, key=lambda c: (abs(c.rating - rating), c.snapshot_id))


async def get(conn: asyncpg.Connection | asyncpg.Pool, snapshot_id: int) -> SnapshotRow:
    row = await conn.fetchrow(
        "SELECT snapshot_id, run_id, player_id, round, ruleset, rating, wins, lives, warband,"
        " is_bot FROM snapshots WHERE snapshot_id = $1",
        snapshot_id,
    )
    return SnapshotRow(**{**dict(row), "warband": json.loads(row["warband"])})
