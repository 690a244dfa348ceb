"""The matchmaking queue's health, per game, for the ops report and /metrics
(docs/operations.md#matchmaking-health): tickets searching now, and over the last hour the
time to match, the share of matches filled with bots, the rating spread within matched groups
and the tickets cancelled."""

from collections.abc import Sequence

import asyncpg
from prometheus_client.core import Metric
from typing_extensions import TypedDict

from service.runtime import metrics
from service.store import matchmaking
from service.store.matchmaking import QueueHealth

QUANTILES = (("0.5", "wait_p50"), ("0.95", "wait_p95"), ("0.99", "wait_p99"))


class QueueReport(TypedDict):
    game: str
    searching: int
    matched_hour: int
    wait_seconds_p50: float | None
    wait_seconds_p95: float | None
    wait_seconds_p99: float | None
    bot_share_hour: float | None
    rating_spread_p50: float | None
    rating_spread_max: float | None
    cancelled_hour: int
    alerts: list[str]


def _bot_share(row: QueueHealth) -> float | None:
    return row.bot_matches / row.matches if row.matches else None


def report(row: QueueHealth, slow_seconds: float, high_bot_share: float) -> QueueReport:
    """One game's queue, with its alerts: `slow_queue` when the p95 time to match passes
    `slow_seconds`, `bot_filled` when the share of matches completed with bots passes
    `high_bot_share`."""
    bot_share = _bot_share(row)
    alerts = []
    if row.wait_p95 is not None and row.wait_p95 > slow_seconds:
        alerts.append("slow_queue")
    if bot_share is not None and bot_share > high_bot_share:
        alerts.append("bot_filled")
    return {
        "game": row.game,
        "searching": row.searching,
        "matched_hour": row.matched,
        "wait_seconds_p50": row.wait_p50,
        "wait_seconds_p95": row.wait_p95,
        "wait_seconds_p99": row.wait_p99,
        "bot_share_hour": bot_share,
        "rating_spread_p50": row.spread_p50,
        "rating_spread_max": row.spread_max,
        "cancelled_hour": row.cancelled,
        "alerts": alerts,
    }


async def queues(pool: asyncpg.Pool) -> list[QueueHealth]:
    return await matchmaking.queue_health(pool)


def gauges(rows: Sequence[QueueHealth]) -> list[Metric]:
    """The queue's figures as Prometheus gauges, labelled by game."""
    return [
        metrics.gauge(
            "matchmaking_queue_depth",
            "Tickets searching now, by game",
            ("game",),
            {(r.game,): float(r.searching) for r in rows},
        ),
        metrics.gauge(
            "matchmaking_time_to_match_seconds",
            "Time from ticket to match over the last hour, by game and quantile",
            ("game", "quantile"),
            {
                (r.game, q): float(value)
                for r in rows
                for q, field in QUANTILES
                if (value := getattr(r, field)) is not None
            },
        ),
        metrics.gauge(
            "matchmaking_queue_bot_share",
            "Share of the last hour's queued matches completed with bots, by game",
            ("game",),
            {(r.game,): share for r in rows if (share := _bot_share(r)) is not None},
        ),
        metrics.gauge(
            "matchmaking_queue_rating_spread",
            "Median rating spread within the last hour's matched groups, by game",
            ("game",),
            {(r.game,): float(r.spread_p50) for r in rows if r.spread_p50 is not None},
        ),
        metrics.gauge(
            "matchmaking_tickets_cancelled",
            "Tickets cancelled in the last hour, by game",
            ("game",),
            {(r.game,): float(r.cancelled) for r in rows},
        ),
    ]
