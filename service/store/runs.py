"""Runs: one player's attempt at the autobattler."""

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import asyncpg

_COLUMNS = (
    "run_id, player_id, ruleset, seed, status, lives, wins, shop, rating_at_start,"
    " rating_change, created_at, version"
)


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


async def insert(
    conn: asyncpg.Connection,
    player_id: UUID,
    ruleset: str,
    seed: int,
    lives: int,
    shop: dict[str, Any],
) -> RunRow:
    """A new run; the player's current rating is kept as the run's rating."""
    row = await conn.fetchrow(
        f"""
        INSERT INTO runs (player_id, ruleset, seed, lives, shop, rating_at_start)
        SELECT $1, $2, $3, $4, $5, rating FROM players WHERE player_id = $1
        RETURNING {_COLUMNS}
        """,
        player_id,
        ruleset,
        seed,
        lives,
        json.dumps(shop),
    )
    return _row(row)


async def get(
    conn: asyncpg.Connection | asyncpg.Pool, run_id: UUID, player_id: UUID, *, lock: bool = False
) -> RunRow | None:
    """The player's run; with `lock`, the row stays locked until the transaction ends."""
    row = await conn.fetchrow(
        f"SELECT {_COLUMNS} FROM runs WHERE run_id = $1 AND player_id = $2"
        + (" FOR UPDATE" if lock else ""),
        run_id,
        player_id,
    )
    return None if row is None else _row(row)


async def list_for(conn: asyncpg.Pool, player_id: UUID, limit: int) -> list[RunRow]:
    rows = await conn.fetch(
        f"SELECT {_COLUMNS} FROM runs WHERE player_id = $1 ORDER BY created_at DESC LIMIT $2",
        player_id,
        limit,
    )
    return [_row(row) for row in rows]


async def save_shop(conn: asyncpg.Connection, run_id: UUID, shop: dict[str, Any]) -> None:
    await conn.execute(
        "UPDATE runs SET shop = $2, updated_at = now(), version = version + 1 WHERE run_id = $1",
        run_id,
        json.dumps(shop),
    )


async def save_after_battle(
    conn: asyncpg.Connection,
    run_id: UUID,
    *,
    status: str,
    lives: int,
    wins: int,
    shop: dict[str, Any],
    rating_change: float,
) -> None:
    await conn.execute(
        """
        UPDATE runs SET status = $2, lives = $3, wins = $4, shop = $5, rating_change = $6,
               updated_at = now(), version = version + 1,
               ended_at = CASE WHEN $2 = 'shopping' THEN NULL ELSE now() END
        WHERE run_id = $1
        """,
        run_id,
        status,
        lives,
        wins,
        json.dumps(shop),
        rating_change,
    )
