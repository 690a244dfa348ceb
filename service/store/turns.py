"""The end of a turn, written in one statement: the run moves on (and counts its ghost's
player among those it has met), the player's snapshot (and a bot's) and the battle are stored,
the roll-ups counted, a finished run's rating settled, a rated ghost's owner remembered, and
the answer kept under the request's key; all of it only if the run is still at the version the
turn was computed from and its player is not deleted (the player's row is locked first,
service/store/player_lock.py).
"""

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import asyncpg

from service.store import jsonb, stats
from service.store.idempotency import KEEP_ANSWER, AnswerToKeep, write_keeping
from service.store.params import named
from service.store.player_lock import ALIVE


@dataclass(frozen=True)
class Turn:
    run_id: UUID
    player_id: UUID
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
    # Why this battle moved no rating (docs/rules/cryptids.md#rated-ghosts); None when it did,
    # or against a bot. A rated battle against a player's ghost is remembered for the
    # once-a-day rule.
    unrated: str | None
    shard: int


_SAVE = named(f"""
WITH {ALIVE},
moved AS (
    UPDATE runs SET status = :status, lives = :lives, wins = :wins, shop = :shop::jsonb,
           rating_change = :rating_pending, updated_at = now(), version = version + 1,
           met = CASE WHEN :ghost_player_id::uuid IS NULL THEN met
                      ELSE array_append(met, :ghost_player_id::uuid) END,
           ended_at = CASE WHEN :status = 'shopping' THEN NULL ELSE now() END
     WHERE run_id = :run_id AND version = :version AND EXISTS (SELECT FROM alive)
    RETURNING run_id, player_id, ruleset, rating_at_start),
own AS (
    INSERT INTO snapshots (snapshot_id, run_id, player_id, round, ruleset, rating, wins, lives,
                           warband, is_bot)
    SELECT :snapshot_id::bigint, run_id, player_id, :round::int, ruleset, rating_at_start,
           :wins_before::int, :lives_before::int, :warband::jsonb, false
      FROM moved),
bot AS (
    INSERT INTO snapshots (snapshot_id, run_id, player_id, round, ruleset, rating, wins, lives,
                           warband, is_bot)
    SELECT :ghost_snapshot_id::bigint, NULL, NULL, :round::int, ruleset, rating_at_start, 0, 0,
           :bot_warband::jsonb, true
      FROM moved WHERE :bot_warband::jsonb IS NOT NULL),
-- The battle names each snapshot by its key: the player's and a bot's are written here, at
-- now() like the battle; a player's ghost by the key the pairing query found it under.
fought AS (
    INSERT INTO battles (battle_id, run_id, round, player_snapshot_id, player_snapshot_at,
                         ghost_snapshot_id, ghost_snapshot_at, ghost_player_id, ruleset, seed,
                         pairing, rating_gap, pairing_ms, winner, rolls, health_player,
                         health_ghost, rating_change, lives_after, wins_after, status_after,
                         rating_pending, unrated)
    SELECT :battle_id::bigint, run_id, :round::int, :snapshot_id::bigint, now(),
           :ghost_snapshot_id::bigint, coalesce(:ghost_snapshot_at::timestamptz, now()),
           :ghost_player_id::uuid, ruleset,
           :seed::numeric, :pairing::text, :rating_gap::int, :pairing_ms::real, :winner::text,
           :rolls::int, :health_player::int, :health_ghost::int,
           :rating_change::float8, :lives, :wins, :status, :rating_pending, :unrated::text
      FROM moved),
remembered AS (
    INSERT INTO rated_pairs (player_id, owner_id, rated_at)
    SELECT player_id, :ghost_player_id::uuid, now() FROM moved
     WHERE :ghost_player_id::uuid IS NOT NULL AND :unrated::text IS NULL
    ON CONFLICT (player_id, owner_id) DO UPDATE SET rated_at = excluded.rated_at),
rated AS (
    UPDATE players p SET rating = p.rating + :rating_settled::int
      FROM moved WHERE p.player_id = moved.player_id AND :rating_settled::int IS NOT NULL),
pooled AS (
    INSERT INTO pool_counts (ruleset, round, hour, shard, snapshots)
    SELECT ruleset, :round::int, date_trunc('hour', now()), :shard::smallint, 1 FROM moved
    ON CONFLICT (ruleset, round, hour, shard)
    DO UPDATE SET snapshots = pool_counts.snapshots + 1),
paired AS (
    INSERT INTO pairing_stats (hour, round, rung, shard, pairings, gap_buckets, ms_buckets)
    SELECT date_trunc('hour', now()), :round::int, :pairing::text, :shard::smallint, 1,
           :gap_buckets::bigint[], :ms_buckets::bigint[]
      FROM moved
    ON CONFLICT (hour, round, rung, shard) DO UPDATE SET
        pairings = pairing_stats.pairings + 1,
        gap_buckets[:gap_index::int] = pairing_stats.gap_buckets[:gap_index::int] + 1,
        ms_buckets[:ms_index::int] = pairing_stats.ms_buckets[:ms_index::int] + 1),
kept AS ({KEEP_ANSWER})
SELECT count(*) FROM moved
""")


async def save(conn: asyncpg.Connection, turn: Turn, to_keep: AnswerToKeep | None) -> bool:
    """Write the turn, and keep `to_keep` with it, if the run is still at `turn.version` and its
    player is not deleted; False (nothing written) if not."""
    gap_index = stats.bucket(stats.GAP_BOUNDS, turn.rating_gap)
    ms_index = stats.bucket(stats.MS_BOUNDS, turn.pairing_ms)
    moved = await write_keeping(
        conn,
        to_keep,
        _SAVE,
        player_id=turn.player_id,
        run_id=turn.run_id,
        version=turn.version,
        status=turn.status,
        lives=turn.lives,
        wins=turn.wins,
        shop=jsonb.dumps(turn.shop),
        rating_pending=turn.rating_pending,
        snapshot_id=turn.snapshot_id,
        round=turn.round,
        wins_before=turn.wins_before,
        lives_before=turn.lives_before,
        warband=jsonb.dumps(turn.warband),
        ghost_snapshot_id=turn.ghost_snapshot_id,
        bot_warband=None if turn.bot_warband is None else jsonb.dumps(turn.bot_warband),
        battle_id=turn.battle_id,
        ghost_player_id=turn.ghost_player_id,
        seed=turn.seed,
        pairing=turn.pairing,
        rating_gap=turn.rating_gap,
        pairing_ms=turn.pairing_ms,
        winner=turn.winner,
        rolls=turn.rolls,
        health_player=turn.health_player,
        health_ghost=turn.health_ghost,
        rating_change=turn.rating_change,
        unrated=turn.unrated,
        rating_settled=turn.rating_settled,
        shard=turn.shard % stats.SHARDS,
        gap_buckets=stats.one_hot(len(stats.GAP_BOUNDS) + 1, gap_index),
        ms_buckets=stats.one_hot(len(stats.MS_BOUNDS) + 1, ms_index),
        gap_index=gap_index,
        ms_index=ms_index,
        ghost_snapshot_at=turn.ghost_snapshot_at,
    )
    return bool(moved)
