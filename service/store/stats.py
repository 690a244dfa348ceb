"""Hourly roll-ups of matchmaking: snapshots entering the pool, pairings by rung and round, and
match actions by game; and the live runs and matches.

The roll-ups are counted as they happen (the end-turn's own statement, store/turns.py; a
trigger on match_actions, schema.sql) and read here."""

import bisect
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

import asyncpg

from service.store.params import named

# Upper bounds of the histogram buckets; the last bucket is everything above.
GAP_BOUNDS = (0, 25, 50, 100, 200, 400, 800, 1600)
MS_BOUNDS = (0.5, 1, 2, 5, 10, 25, 50, 100, 250, 1000)
# Seconds of a match's turn; the database buckets them (schema.sql match_turn_bounds()).
TURN_BOUNDS = (1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600)
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


_POOL_DEPTH = named("""
        SELECT round, sum(snapshots)::bigint AS depth FROM pool_counts
         WHERE ruleset = :ruleset AND hour > date_trunc('hour', now() - make_interval(secs => :ttl))
         GROUP BY round ORDER BY round
        """)


async def pool_depth(
    conn: asyncpg.Pool | asyncpg.Connection, ruleset: str, ttl_seconds: float
) -> dict[int, int]:
    """Snapshots per round that entered the pool within the time-to-live (to the hour)."""
    args = _POOL_DEPTH.args(ruleset=ruleset, ttl=ttl_seconds)
    rows = await conn.fetch(_POOL_DEPTH.sql, *args)
    return {r["round"]: r["depth"] for r in rows}


_PAIRINGS_SINCE = named("""
        SELECT hour, round, rung, sum(pairings)::bigint AS pairings,
               array_agg(gap_buckets) AS gaps, array_agg(ms_buckets) AS ms
          FROM pairing_stats
         WHERE hour >= date_trunc('hour', now()) - make_interval(hours => :hours - 1)
         GROUP BY hour, round, rung ORDER BY hour, round, rung
        """)


async def pairings_since(conn: asyncpg.Pool | asyncpg.Connection, hours: int) -> list[PairingRow]:
    """Pairings per (hour, round, rung) over the last `hours` hours, shards summed."""
    rows = await conn.fetch(_PAIRINGS_SINCE.sql, *_PAIRINGS_SINCE.args(hours=hours))
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
    """Runs still shopping, counted in runs_active_idx (as many entries as open runs)."""
    count: int = await conn.fetchval("SELECT count(*) FROM runs WHERE status = 'shopping'")
    return count


@dataclass(frozen=True)
class OpenMatches:
    game: str
    active: int
    waiting: int
    waiting_seats: int


async def open_matches(conn: asyncpg.Pool | asyncpg.Connection) -> list[OpenMatches]:
    """Matches not over by game, and the seats still free in those waiting: read from indexes
    of the live matches and the free seats alone (matches_live_idx, match_seats_free_idx), so
    the cost follows the matches in play, not all those ever played."""
    rows = await conn.fetch(
        """
        WITH open AS (
            SELECT game, count(*) FILTER (WHERE status = 'active') AS active,
                   count(*) FILTER (WHERE status = 'waiting') AS waiting
              FROM matches WHERE status IN ('waiting', 'active') GROUP BY game),
        seats AS (
            SELECT m.game, count(*) AS free
              FROM matches m JOIN match_seats s ON s.match_id = m.match_id
             WHERE m.status = 'waiting' AND s.player_id IS NULL AND NOT s.bot
             GROUP BY m.game)
        SELECT o.game, o.active, o.waiting, coalesce(s.free, 0) AS waiting_seats
          FROM open o LEFT JOIN seats s USING (game)
         ORDER BY o.game
        """
    )
    return [OpenMatches(r["game"], r["active"], r["waiting"], r["waiting_seats"]) for r in rows]


@dataclass(frozen=True)
class MatchHour:
    hour: datetime
    game: str
    actions: int
    timeouts: int
    turns: list[int]  # turns per bucket of TURN_BOUNDS; a match's first action has none


_MATCH_HOURS = named("""
        SELECT hour, game, bucket, sum(actions)::bigint AS actions,
               sum(timeouts)::bigint AS timeouts
          FROM match_stats
         WHERE hour >= date_trunc('hour', now()) - make_interval(hours => :hours - 1)
         GROUP BY hour, game, bucket ORDER BY hour, game, bucket
        """)


async def match_hours(conn: asyncpg.Pool | asyncpg.Connection, hours: int) -> list[MatchHour]:
    """Actions, timeouts and turn times per (hour, game) over the last `hours` hours, from the
    roll-up that storing actions keeps (schema.sql match_stats), shards summed."""
    rows = await conn.fetch(_MATCH_HOURS.sql, *_MATCH_HOURS.args(hours=hours))
    actions: dict[tuple[datetime, str], int] = defaultdict(int)
    timeouts: dict[tuple[datetime, str], int] = defaultdict(int)
    turns: dict[tuple[datetime, str], list[int]] = {}
    for r in rows:
        key = (r["hour"], r["game"])
        actions[key] += r["actions"]
        timeouts[key] += r["timeouts"]
        counts = turns.setdefault(key, [0] * (len(TURN_BOUNDS) + 1))
        if r["bucket"] > 0:
            counts[r["bucket"] - 1] += r["actions"]
    return [MatchHour(*key, actions[key], timeouts[key], counts) for key, counts in turns.items()]
