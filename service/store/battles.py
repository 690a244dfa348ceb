"""Battles: their inputs and results, one per (run, round)."""

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

import asyncpg

from service.store.params import named


@dataclass(frozen=True)
class BattleRow:
    battle_id: int
    run_id: UUID
    round: int
    player_id: UUID
    player_snapshot_id: int
    ghost_snapshot_id: int
    ghost_player_id: UUID | None
    ruleset: str
    seed: int
    pairing: str
    rating_gap: int
    winner: str
    rolls: int
    health_player: int
    health_ghost: int
    rating_change: float
    lives_after: int
    wins_after: int
    status_after: str
    rating_pending: float
    unrated: str | None  # why a battle against a player's ghost moved no rating
    created_at: datetime


_SELECT = """
SELECT b.battle_id, b.run_id, b.round, r.player_id, b.player_snapshot_id, b.ghost_snapshot_id,
       b.ghost_player_id, b.ruleset, b.seed, b.pairing, b.rating_gap, b.winner, b.rolls,
       b.health_player, b.health_ghost, b.rating_change, b.lives_after, b.wins_after,
       b.status_after, b.rating_pending, b.unrated, b.created_at
  FROM battles b JOIN runs r USING (run_id)
"""


def _row(row: asyncpg.Record) -> BattleRow:
    return BattleRow(**{**dict(row), "seed": int(row["seed"])})


_OF_ROUND = named(_SELECT + " WHERE b.run_id = :run_id AND b.round = :round")


async def of_round(conn: asyncpg.Connection, run_id: UUID, round_: int) -> BattleRow | None:
    row = await conn.fetchrow(_OF_ROUND.sql, *_OF_ROUND.args(run_id=run_id, round=round_))
    return None if row is None else _row(row)


_GET = named(_SELECT + " WHERE b.battle_id = :battle_id")


async def get(conn: asyncpg.Connection | asyncpg.Pool, battle_id: int) -> BattleRow | None:
    row = await conn.fetchrow(_GET.sql, *_GET.args(battle_id=battle_id))
    return None if row is None else _row(row)
