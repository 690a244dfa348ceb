"""Hourly roll-ups of matchmaking: snapshots entering the pool, pairings by rung and round.

They are counted by the end-turn's own statement (store/turns.py) and read here."""

import bisect
from dataclasses import dataclass
from datetime import datetime

import asyncpg

# Upper bounds of the histogram buckets; the last bucket is everything above.
GAP_BOUNDS = (0, 25, 50, 100, 200, 400, 800, 1600)
MS_BOUNDS = (0.5, 1, 2, 5, 10, 25, 50, 100, 250, 1000)
SHARDS = 8


def bucket(bounds: tuple[float, ...], value: float) -> int:
    """1-based index of the bucket holding `value` (PostgreSQL arrays start at 1)."""
    return bisect.bisect_left(bounds, value) + 1


def one_hot(size: int, index: int) -> list[int]:
    """Counts of `size` buckets with one in bucket `index` (1-based): a roll-up's increment."""
    counts = [0] * size
    counts[index - 1] = 1
    return counts


@dataclass(frozen=True)
class PairingRow:
    hour: datetime
    round: int
    rung: str
    pairings: int
    gap_buckets: list[int]
    ms_buckets: list[int]


async def pool_depth(
    conn: asyncpg.Pool | asyncpg.Connection, ruleset: str, ttl_seconds: float
) -> dict[int, int]:
    """Snapshots per round that entered the pool within the time-to-live (to the hour)."""
    rows = await conn.fetch(
        """
        SELECT round, sum(snapshots)::bigint AS depth FROM pool_counts
         WHERE ruleset = $1 AND hour > date_trunc('hour', now() - make_interval(secs => $2))
         GROUP BY round ORDER BY round
        """,
        ruleset,
        ttl_seconds,
    )
    return {r["round"]: r["depth"] for r in rows}


async def pairings_since(conn: asyncpg.Pool | asyncpg.Connection, hours: int) -> list[PairingRow]:
    """Pairings per (hour, round, rung) over the last `hours` hours, shards summed."""
    rows = await conn.fetch(
        """
        SELECT hour, round, rung, sum(pairings)::bigint AS pairings,
               array_agg(gap_buckets) AS gaps, array_agg(ms_buckets) AS ms
          FROM pairing_stats
         WHERE hour >= date_trunc('hour', now()) - make_interval(hours => $1 - 1)
         GROUP BY hour, round, rung ORDER BY hour, round, rung
        """,
        hours,
    )
    return [
        PairingRow(
            r["hour"],
            r["round"],
            r["rung"],
            r["pairings"],
            [sum(col) for col in zip(*r["gaps"], strict=True)],
            [sum(col) for col in zip(*r["ms"], strict=True)],
        )
        for r in rows
    ]


async def active_runs(conn: asyncpg.Pool | asyncpg.Connection) -> int:
    count: int = await conn.fetchval("SELECT count(*) FROM runs WHERE status = 'shopping'")
    return count


@dataclass(frozen=True)
class GameRow:
    game: str
    active: int
    waiting: int
    waiting_seats: int
    median_turn_seconds: float | None
    timeouts_day: int
    actions_hour: int


async def games(conn: asyncpg.Pool | asyncpg.Connection) -> list[GameRow]:
    """Open matches by game, seats still free, turn times (last hour), timeouts (last day)."""
    rows = await conn.fetch(
        """
        WITH open AS (
            SELECT game, count(*) FILTER (WHERE status = 'active') AS active,
                   count(*) FILTER (WHERE status = 'waiting') AS waiting
              FROM matches WHERE status IN ('waiting', 'active') GROUP BY game),
        seats AS (
            SELECT m.game, count(*) AS free FROM match_seats s JOIN matches m USING (match_id)
             WHERE m.status = 'waiting' AND s.player_id IS NULL AND NOT s.bot GROUP BY m.game),
        recent AS (
            SELECT match_id, source, created_at,
                   created_at - lag(created_at) OVER (PARTITION BY match_id ORDER BY version)
                       AS turn
              FROM match_actions WHERE created_at > now() - interval '1 day'),
        turns AS (
            SELECT m.game,
                   percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM r.turn))
                       FILTER (WHERE r.created_at > now() - interval '1 hour') AS median_turn,
                   count(*) FILTER (WHERE r.source = 'timeout') AS timeouts,
                   count(*) FILTER (WHERE r.created_at > now() - interval '1 hour') AS actions
              FROM recent r JOIN matches m USING (match_id) GROUP BY m.game)
        SELECT g.game, coalesce(o.active, 0) AS active, coalesce(o.waiting, 0) AS waiting,
               coalesce(s.free, 0) AS waiting_seats, t.median_turn,
               coalesce(t.timeouts, 0) AS timeouts, coalesce(t.actions, 0) AS actions
          FROM (SELECT game FROM open UNION SELECT game FROM turns) g
          LEFT JOIN open o USING (game) LEFT JOIN seats s USING (game)
          LEFT JOIN turns t USING (game)
         ORDER BY g.game
        """
    )
    return [
        GameRow(
            r["game"],
            r["active"],
            r["waiting"],
            r["waiting_seats"],
            None if r["median_turn"] is None else float(r["median_turn"]),
            r["timeouts"],
            r["actions"],
        )
        for r in rows
    ]
