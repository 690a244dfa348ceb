"""Use-cases for operators: matchmaking health from the hourly roll-ups, cluster gauges, and
the age of the backups this instance can see."""

import asyncio
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
from prometheus_client.core import Metric
from typing_extensions import TypedDict

from service.config import Settings
from service.games.cryptids.content import DEFAULT_RULESET, load_ruleset
from service.runtime import backups, metrics
from service.store import stats
from service.store.stats import (
    GAP_BOUNDS,
    MS_BOUNDS,
    TURN_BOUNDS,
    MatchHour,
    OpenMatches,
    PairingRow,
)
from service.usecases import queue_health
from service.usecases.pairing import FALLBACK_RUNGS, RUNG_BOT, rungs


@dataclass(frozen=True)
class Thresholds:
    thin_pool: int
    high_bot_rate: float
    slow_queue_seconds: float
    high_queue_bot_share: float
    backup_max_age_seconds: float
    wal_max_age_seconds: float


class RoundHealth(TypedDict):
    round: int
    pool_depth: int
    pairings_hour: dict[str, int]
    pairings_day: dict[str, int]
    total_hour: int
    total_day: int
    bot_rate_hour: float | None
    bot_rate_day: float | None
    fallback_rate_hour: float | None
    fallback_rate_day: float | None
    rating_gap_p50: float | None
    rating_gap_p90: float | None
    pairing_ms_p50: float | None
    pairing_ms_p99: float | None
    alerts: list[str]


class HourHealth(TypedDict):
    hour: str
    pairings: int
    bot_rate: float | None
    fallback_rate: float | None


class GameHealth(TypedDict):
    game: str
    active_matches: int
    waiting_matches: int
    waiting_seats: int
    median_turn_seconds: float | None
    timeouts_day: int
    actions_hour: int


class BackupHealth(TypedDict):
    directory: str
    last_base_at: str | None
    last_wal_at: str | None
    base_age_seconds: float | None
    wal_age_seconds: float | None
    base_max_age_seconds: float
    wal_max_age_seconds: float
    alerts: list[str]


class Matchmaking(TypedDict):
    generated_at: str
    ruleset: str
    snapshot_ttl_seconds: float
    thresholds: dict[str, float]
    rounds: list[RoundHealth]
    timeline: list[HourHealth]
    games: list[GameHealth]
    queues: list[queue_health.QueueReport]
    # None: this instance sees no backups (an external database without BACKUP_DIR).
    backups: BackupHealth | None


def quantile(bounds: Sequence[float], counts: Sequence[int], q: float) -> float | None:
    """The q-quantile of a bucketed histogram, interpolated inside its bucket."""
    total = sum(counts)
    if total == 0:
        return None
    rank, seen = q * total, 0
    for i, count in enumerate(counts):
        if count and seen + count >= rank:
            lower = bounds[i - 1] if i > 0 else 0
            upper = bounds[i] if i < len(bounds) else bounds[-1]
            return round(lower + (upper - lower) * (rank - seen) / count, 2)
        seen += count
    return float(bounds[-1])


def _rates(by_rung: dict[str, int]) -> tuple[int, float | None, float | None]:
    total = sum(by_rung.values())
    if total == 0:
        return 0, None, None
    bots = by_rung.get(RUNG_BOT, 0)
    fallbacks = sum(n for rung, n in by_rung.items() if rung in FALLBACK_RUNGS)
    return total, round(bots / total, 4), round(fallbacks / total, 4)


def _sum_columns(
    rows: Sequence[PairingRow] | Sequence[MatchHour], attribute: str, width: int
) -> list[int]:
    totals = [0] * width
    for row in rows:
        for i, value in enumerate(getattr(row, attribute)):
            totals[i] += value
    return totals


def _round_report(
    round_: int,
    depth: int,
    rows: list[PairingRow],
    ladder: tuple[str, ...],
    hour_start: datetime,
    limits: Thresholds,
) -> RoundHealth:
    hour = dict.fromkeys(ladder, 0)
    day = dict.fromkeys(ladder, 0)
    for row in rows:
        day[row.rung] = day.get(row.rung, 0) + row.pairings
        if row.hour >= hour_start:
            hour[row.rung] = hour.get(row.rung, 0) + row.pairings
    total_hour, bot_hour, fallback_hour = _rates(hour)
    total_day, bot_day, fallback_day = _rates(day)
    gaps = _sum_columns(rows, "gap_buckets", len(GAP_BOUNDS) + 1)
    latency = _sum_columns(rows, "ms_buckets", len(MS_BOUNDS) + 1)
    alerts = []
    if depth < limits.thin_pool:
        alerts.append("thin_pool")
    if bot_hour is not None and bot_hour > limits.high_bot_rate:
        alerts.append("high_bot_rate")
    return {
        "round": round_,
        "pool_depth": depth,
        "pairings_hour": hour,
        "pairings_day": day,
        "total_hour": total_hour,
        "total_day": total_day,
        "bot_rate_hour": bot_hour,
        "bot_rate_day": bot_day,
        "fallback_rate_hour": fallback_hour,
        "fallback_rate_day": fallback_day,
        "rating_gap_p50": quantile(GAP_BOUNDS, gaps, 0.5),
        "rating_gap_p90": quantile(GAP_BOUNDS, gaps, 0.9),
        "pairing_ms_p50": quantile(MS_BOUNDS, latency, 0.5),
        "pairing_ms_p99": quantile(MS_BOUNDS, latency, 0.99),
        "alerts": alerts,
    }


def _timeline(rows: Sequence[PairingRow], now: datetime) -> list[HourHealth]:
    by_hour: dict[datetime, dict[str, int]] = defaultdict(dict)
    for row in rows:
        counts = by_hour[row.hour]
        counts[row.rung] = counts.get(row.rung, 0) + row.pairings
    start = now.replace(minute=0, second=0, microsecond=0) - timedelta(hours=23)
    timeline: list[HourHealth] = []
    for step in range(24):
        hour = start + timedelta(hours=step)
        total, bots, fallbacks = _rates(by_hour.get(hour, {}))
        timeline.append(
            {
                "hour": hour.isoformat(),
                "pairings": total,
                "bot_rate": bots,
                "fallback_rate": fallbacks,
            }
        )
    return timeline


def watched_backups(settings: Settings) -> Path | None:
    """The backup directory this instance reports on: its embedded server's, or BACKUP_DIR's.
    With an external database and no BACKUP_DIR the backups are someone else's to watch (on
    Kubernetes, CloudNativePG's)."""
    if settings.database_url is None or settings.backup_dir is not None:
        return settings.backups
    return None


@dataclass(frozen=True)
class BackupAges:
    last_base: datetime | None
    last_wal: datetime | None
    now: datetime

    def age(self, moment: datetime | None) -> float | None:
        # Clocks of two processes may disagree by a little: never a negative age.
        return None if moment is None else max(0.0, (self.now - moment).total_seconds())

    @property
    def base_seconds(self) -> float | None:
        return self.age(self.last_base)

    @property
    def wal_seconds(self) -> float | None:
        return self.age(self.last_wal)


def _read_ages(backup_dir: Path) -> BackupAges:
    return BackupAges(
        backups.last_base_backup_time(backup_dir),
        backups.last_archived_wal_time(backup_dir),
        datetime.now(UTC),
    )


async def backup_ages(backup_dir: Path) -> BackupAges:
    """The newest base backup's and archived segment's times; a listing of the archive, which
    holds thousands of segments, so off the event loop."""
    return await asyncio.to_thread(_read_ages, backup_dir)


def backup_health(backup_dir: Path, ages: BackupAges, limits: Thresholds) -> BackupHealth:
    """The backups' ages, and an alert for each one missing or older than its limit."""
    base, wal = ages.base_seconds, ages.wal_seconds
    alerts = []
    if base is None or base > limits.backup_max_age_seconds:
        alerts.append("stale_base_backup")
    if wal is None or wal > limits.wal_max_age_seconds:
        alerts.append("stale_wal_archive")
    return {
        "directory": str(backup_dir),
        "last_base_at": ages.last_base.isoformat() if ages.last_base else None,
        "last_wal_at": ages.last_wal.isoformat() if ages.last_wal else None,
        "base_age_seconds": None if base is None else round(base, 1),
        "wal_age_seconds": None if wal is None else round(wal, 1),
        "base_max_age_seconds": limits.backup_max_age_seconds,
        "wal_max_age_seconds": limits.wal_max_age_seconds,
        "alerts": alerts,
    }


async def matchmaking(
    pool: asyncpg.Pool, ttl_seconds: float, limits: Thresholds, backup_dir: Path | None
) -> Matchmaking:
    """Per round and per game, the figures an operator watches
    (docs/operations.md#matchmaking-health), and the backups' ages when this instance sees them."""
    now = datetime.now(UTC)
    hour_start = now.replace(minute=0, second=0, microsecond=0) - timedelta(hours=1)
    depth = await stats.pool_depth(pool, DEFAULT_RULESET, ttl_seconds)
    rows = await stats.pairings_since(pool, 24)
    by_round: dict[int, list[PairingRow]] = defaultdict(list)
    for row in rows:
        by_round[row.round].append(row)
    rounds = sorted(set(depth) | set(by_round))
    ladder = rungs(load_ruleset(DEFAULT_RULESET).pairing)
    return {
        "generated_at": now.isoformat(),
        "ruleset": DEFAULT_RULESET,
        "snapshot_ttl_seconds": ttl_seconds,
        "thresholds": {
            "thin_pool": limits.thin_pool,
            "high_bot_rate": limits.high_bot_rate,
            "slow_queue_seconds": limits.slow_queue_seconds,
            "high_queue_bot_share": limits.high_queue_bot_share,
        },
        "rounds": [
            _round_report(r, depth.get(r, 0), by_round[r], ladder, hour_start, limits)
            for r in rounds
        ],
        "timeline": _timeline(rows, now),
        "games": _games(
            await stats.open_matches(pool), await stats.match_hours(pool, 24), hour_start
        ),
        "queues": [
            queue_health.report(row, limits.slow_queue_seconds, limits.high_queue_bot_share)
            for row in await queue_health.queues(pool)
        ],
        "backups": None
        if backup_dir is None
        else backup_health(backup_dir, await backup_ages(backup_dir), limits),
    }


def _games(
    live: Sequence[OpenMatches], hours: Sequence[MatchHour], hour_start: datetime
) -> list[GameHealth]:
    """Per game: its matches in play, and its actions of the day, of this hour and the last."""
    games = sorted({g.game for g in live} | {h.game for h in hours})
    open_by_game = {g.game: g for g in live}
    report: list[GameHealth] = []
    for game in games:
        of_game = [h for h in hours if h.game == game]
        recent = [h for h in of_game if h.hour >= hour_start]
        in_play = open_by_game.get(game, OpenMatches(game, 0, 0, 0))
        turns = _sum_columns(recent, "turns", len(TURN_BOUNDS) + 1)
        report.append(
            {
                "game": game,
                "active_matches": in_play.active,
                "waiting_matches": in_play.waiting,
                "waiting_seats": in_play.waiting_seats,
                "median_turn_seconds": quantile(TURN_BOUNDS, turns, 0.5),
                "timeouts_day": sum(h.timeouts for h in of_game),
                "actions_hour": sum(h.actions for h in recent),
            }
        )
    return report


async def cluster_gauges(pool: asyncpg.Pool, ttl_seconds: float) -> list[Metric]:
    """Figures read from the database for /metrics: the same whichever instance is scraped."""
    depth = await stats.pool_depth(pool, DEFAULT_RULESET, ttl_seconds)
    rows = await stats.pairings_since(pool, 1)
    games = await stats.open_matches(pool)
    by_rung: dict[str, int] = {}
    for row in rows:
        by_rung[row.rung] = by_rung.get(row.rung, 0) + row.pairings
    _, bot_rate, fallback_rate = _rates(by_rung)
    return [
        metrics.gauge(
            "matchmaking_pool_depth",
            "Fresh snapshots in the pairing pool, by round",
            ("round",),
            {(str(r),): float(n) for r, n in depth.items()},
        ),
        metrics.gauge(
            "matchmaking_bot_rate",
            "Share of pairings this hour and last that went to a bot",
            (),
            {(): bot_rate or 0.0},
        ),
        metrics.gauge(
            "matchmaking_fallback_rate",
            "Share of pairings this hour and last outside the player's round (or a bot)",
            (),
            {(): fallback_rate or 0.0},
        ),
        metrics.gauge(
            "runs_active", "Runs still shopping", (), {(): float(await stats.active_runs(pool))}
        ),
        metrics.gauge(
            "matches_open",
            "Matches not finished, by game and status",
            ("game", "status"),
            {
                **{(g.game, "active"): float(g.active) for g in games},
                **{(g.game, "waiting"): float(g.waiting) for g in games},
            },
        ),
        *queue_health.gauges(await queue_health.queues(pool)),
    ]


class CachedGauges:
    """The cluster gauges as last read, read again once they are `seconds` old.

    /metrics answers anyone without credentials, and the gauges cost a few queries whose work
    grows with the open runs and matches; kept here, they cost the database one read every
    `seconds` per process however often they are scraped. Scrapes that arrive during a read
    wait for it instead of starting their own.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._families: list[Metric] = []
        self._read_at: float | None = None
        self._reading = asyncio.Lock()

    async def read(self, pool: asyncpg.Pool, ttl_seconds: float) -> list[Metric]:
        async with self._reading:
            started = time.monotonic()
            if self._read_at is None or started - self._read_at >= self.seconds:
                self._families = await cluster_gauges(pool, ttl_seconds)
                self._read_at = started
            return self._families
