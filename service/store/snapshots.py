"""Warband snapshots and the pairing query over them."""

import json
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import asyncpg


@dataclass(frozen=True)
class Candidate:
    snapshot_id: int
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


# Two range scans of snapshots_pairing_idx, one upward and one downward from the rating, each
# stopping after `limit` eligible rows: cost grows with `limit`, not with the pool. The scans
# read the index alone; only the candidates found fetch their warbands, each from the one
# partition its key names. The age bounds (closed at now(), so that the default partition is
# left out too) let PostgreSQL prune every daily partition outside the time-to-live as the
# query starts, in the scans and in the warbands' look-up alike.
def _live(alias: str) -> str:
    return f"{alias}.created_at > now() - make_interval(secs => $5) AND {alias}.created_at <= now()"


NEAREST = f"""
SELECT c.snapshot_id, c.player_id, c.rating,
       (SELECT s.warband::text FROM snapshots s
         WHERE s.snapshot_id = c.snapshot_id AND s.created_at = c.created_at
           AND {_live("s")}) AS warband
  FROM ((SELECT snapshot_id, created_at, player_id, rating FROM snapshots u
          WHERE NOT is_bot AND ruleset = $1 AND round = $2 AND rating >= $3 AND {_live("u")}
            AND player_id <> ALL($4::uuid[])
          ORDER BY rating, snapshot_id LIMIT $6)
        UNION ALL
        (SELECT snapshot_id, created_at, player_id, rating FROM snapshots d
          WHERE NOT is_bot AND ruleset = $1 AND round = $2 AND rating < $3 AND {_live("d")}
            AND player_id <> ALL($4::uuid[])
          ORDER BY rating DESC, snapshot_id DESC LIMIT $6)) c
"""


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
    rows = await conn.fetch(NEAREST, ruleset, round_, rating, exclude_players, ttl_seconds, limit)
    found = [Candidate(r["snapshot_id"], r["player_id"], r["rating"], r["warband"]) for r in rows]
    return sorted(found, key=lambda c: (abs(c.rating - rating), c.snapshot_id))


async def get(conn: asyncpg.Connection | asyncpg.Pool, snapshot_id: int) -> SnapshotRow:
    row = await conn.fetchrow(
        "SELECT snapshot_id, run_id, player_id, round, ruleset, rating, wins, lives, warband,"
        " is_bot FROM snapshots WHERE snapshot_id = $1",
        snapshot_id,
    )
    return SnapshotRow(**{**dict(row), "warband": json.loads(row["warband"])})
