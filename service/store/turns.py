"""The end of a turn, written in one statement: the run moves on (and counts its ghost's
player among those it has met), the player's snapshot (and a bot's) and the battle are stored,
the roll-ups counted, a finished run's rating settled, and the answer kept under the request's
key; all of it only if the run is still at the version the turn was computed from.
"""

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import asyncpg

from service.store import jsonb, stats
from service.store.idempotency import Kept, keep_answer, write_keeping


@dataclass(frozen=True)
class Turn:
    run_id: UUID
    version: int  # the run's version the turn was computed from
    round: int
    # The run after the battle.
    status: str
    lives: int
    wins: int
    shop: dict[str, Any]
    rating_pending: float
    rating_settled: int | None  # added to the player's rating when the run ends with this turn
    # The player's snapshot, with the run's lives and wins before the battle.
    snapshot_id: int
    lives_before: int
    wins_before: int
    warband: list[list[Any]]
    # The ghost: a player's snapshot, or a bot's stored here (bot_warband set).
    ghost_snapshot_id: int
    ghost_snapshot_at: datetime | None  # None for a bot's, stored with the turn
    ghost_player_id: UUID | None
    bot_warband: list[list[Any]] | None
    # The battle and how its ghost was found.
    battle_id: int
    seed: int
    pairing: str
    rating_gap: int
    pairing_ms: float
    winner: str
    rolls: int
    health_player: int
    health_ghost: int
    rating_change: float
    shard: int


_SAVE = f"""
WITH moved AS (
    UPDATE runs SET status = $3, lives = $4, wins = $5, shop = $6::jsonb, rating_change = $7,
           updated_at = now(), version = version + 1,
           met = CASE WHEN $16::uuid IS NULL THEN met ELSE array_append(met, $16::uuid) END,
           ended_at = CASE WHEN $3 = 'shopping' THEN NULL ELSE now() END
     WHERE run_id = $1 AND version = $2
    RETURNING run_id, player_id, ruleset, rating_at_start),
own AS (
    INSERT INTO snapshots (snapshot_id, run_id, player_id, round, ruleset, rating, wins, lives,
                           warband, is_bot)
    SELECT $8::bigint, run_id, player_id, $9::int, ruleset, rating_at_start, $10::int, $11::int,
           $12::jsonb, false
      FROM moved),
bot AS (
    INSERT INTO snapshots (snapshot_id, run_id, player_id, round, ruleset, rating, wins, lives,
                           warband, is_bot)
    SELECT $13::bigint, NULL, NULL, $9::int, ruleset, rating_at_start, 0, 0, $14::jsonb, true
      FROM moved WHERE $14::jsonb IS NOT NULL),
-- The battle names each snapshot by its key: the player's and a bot's are written here, at
-- now() like the battle; a player's ghost by the key the pairing query found it under.
fought AS (
    INSERT INTO battles (battle_id, run_id, round, player_snapshot_id, player_snapshot_at,
                         ghost_snapshot_id, ghost_snapshot_at, ghost_player_id, ruleset, seed,
                         pairing, rating_gap, pairing_ms, winner, rolls, health_player,
                         health_ghost, rating_change, lives_after, wins_after, status_after,
                         rating_pending)
    SELECT $15::bigint, run_id, $9::int, $8::bigint, now(), $13::bigint,
           coalesce($32::timestamptz, now()),
           $16::uuid, ruleset,
           $17::numeric, $18::text, $19::int, $20::real, $21::text, $22::int, $23::int, $24::int,
           $25::float8, $4, $5, $3, $7
      FROM moved),
rated AS (
    UPDATE players p SET rating = p.rating + $26::int
      FROM moved WHERE p.player_id = moved.player_id AND $26::int IS NOT NULL),
pooled AS (
    INSERT INTO pool_counts (ruleset, round, hour, shard, snapshots)
    SELECT ruleset, $9::int, date_trunc('hour', now()), $27::smallint, 1 FROM moved
    ON CONFLICT (ruleset, round, hour, shard)
    DO UPDATE SET snapshots = pool_counts.snapshots + 1),
paired AS (
    INSERT INTO pairing_stats (hour, round, rung, shard, pairings, gap_buckets, ms_buckets)
    SELECT date_trunc('hour', now()), $9::int, $18::text, $27::smallint, 1, $28::bigint[],
           $29::bigint[]
      FROM moved
    ON CONFLICT (hour, round, rung, shard) DO UPDATE SET
        pairings = pairing_stats.pairings + 1,
        gap_buckets[$30::int] = pairing_stats.gap_buckets[$30::int] + 1,
        ms_buckets[$31::int] = pairing_stats.ms_buckets[$31::int] + 1),
kept AS ({keep_answer(33)})
SELECT count(*) FROM moved
"""


async def save(conn: asyncpg.Connection, turn: Turn, kept: Kept | None) -> bool:
    """Write the turn if the run is still at `turn.version`; False (nothing written) if not."""
    gap_index = stats.bucket(stats.GAP_BOUNDS, turn.rating_gap)
    ms_index = stats.bucket(stats.MS_BOUNDS, turn.pairing_ms)
    moved = await write_keeping(
        conn,
        kept,
        _SAVE,
        turn.run_id,
        turn.version,
        turn.status,
        turn.lives,
        turn.wins,
        jsonb.dumps(turn.shop),
        turn.rating_pending,
        turn.snapshot_id,
        turn.round,
        turn.wins_before,
        turn.lives_before,
        jsonb.dumps(turn.warband),
        turn.ghost_snapshot_id,
        None if turn.bot_warband is None else jsonb.dumps(turn.bot_warband),
        turn.battle_id,
        turn.ghost_player_id,
        turn.seed,
        turn.pairing,
        turn.rating_gap,
        turn.pairing_ms,
        turn.winner,
        turn.rolls,
        turn.health_player,
        turn.health_ghost,
        turn.rating_change,
        turn.rating_settled,
        turn.shard % stats.SHARDS,
        stats.one_hot(len(stats.GAP_BOUNDS) + 1, gap_index),
        stats.one_hot(len(stats.MS_BOUNDS) + 1, ms_index),
        gap_index,
        ms_index,
        turn.ghost_snapshot_at,
    )
    return bool(moved)
