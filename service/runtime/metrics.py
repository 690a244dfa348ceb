"""Prometheus metrics of this process.

With several workers, each writes its figures to PROMETHEUS_MULTIPROC_DIR (set by the
master before the workers start) and a scrape of any worker sums them all.
"""

import os
from functools import cache
from typing import Any

import asyncpg
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import REGISTRY, Collector

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)

HTTP_REQUESTS = Counter(
    "http_requests", "HTTP requests answered, by route template", ["route", "method", "status"]
)
HTTP_SECONDS = Histogram(
    "http_request_duration_seconds", "Time to answer, by route", ["route"], buckets=LATENCY_BUCKETS
)
BATTLES = Counter("battles_resolved", "Battles resolved", ["source"])
BATTLE_SECONDS = Histogram(
    "battle_duration_seconds",
    "Engine time per battle",
    ["source"],
    buckets=(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025),
)
PAIRINGS = Counter("pairings", "Ghost pairings, by ladder rung", ["rung"])
PAIRING_GAP = Histogram(
    "pairing_rating_gap",
    "Absolute rating difference between a player and its ghost",
    buckets=(0, 25, 50, 100, 200, 400, 800, 1600),
)
PAIRING_SECONDS = Histogram(
    "pairing_duration_seconds", "Time to find a ghost", buckets=LATENCY_BUCKETS
)
MATCH_ACTIONS = Counter("match_actions", "Actions applied to matches", ["game", "by"])
MATCH_TIMEOUTS = Counter("match_timeouts", "Turn timers that ran out", ["game"])
WEBSOCKETS = Gauge("websocket_connections", "Open match WebSockets", multiprocess_mode="livesum")
DB_POOL_IN_USE = Gauge(
    "db_pool_connections_in_use", "Database connections checked out", multiprocess_mode="livesum"
)
DB_POOL_WAITING = Gauge(
    "db_pool_waiting", "Requests waiting for a database connection", multiprocess_mode="livesum"
)
DB_POOL_SIZE = Gauge(
    "db_pool_connections", "Database connections open", multiprocess_mode="livesum"
)


@cache
def child(metric: Counter | Histogram, *labels: str) -> Any:
    """`metric.labels(*labels)`, looked up once per process: `labels` builds and checks the
    label tuple under a lock on every call, and the hot paths count every request."""
    return metric.labels(*labels)


def process_metrics_text() -> bytes:
    """The text exposition of every process's metrics (all workers when there are several)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry)
    return generate_latest(REGISTRY)


def pool_waiting(pool: object) -> int:
    """Tasks blocked in `pool.acquire()`; asyncpg keeps them in its holder queue's getters."""
    queue = getattr(pool, "_queue", None)
    return len(getattr(queue, "_getters", ()))


def sample_pool(pool: asyncpg.Pool) -> None:
    """Set this process's database pool gauges from the pool as it is now."""
    size = pool.get_size()
    DB_POOL_SIZE.set(size)
    DB_POOL_IN_USE.set(size - pool.get_idle_size())
    DB_POOL_WAITING.set(pool_waiting(pool))


class _Fixed(Collector):
    def __init__(self, families: list[Metric]) -> None:
        self.families = families

    def collect(self) -> list[Metric]:
        return self.families


def gauge(
    name: str, documentation: str, labels: tuple[str, ...], values: dict[tuple[str, ...], float]
) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, documentation, labels=list(labels))
    for label_values, value in sorted(values.items()):
        family.add_metric(list(label_values), value)
    return family


def families_text(families: list[Metric]) -> bytes:
    """Figures computed elsewhere (from the database), in the text format."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Fixed(families))
    return generate_latest(registry)


def backup_gauges(base_age: float | None, wal_age: float | None) -> list[Metric]:
    """The backups' ages, in seconds; +Inf for one never made, so that an alert on the age
    fires for it too."""
    never = float("inf")
    return [
        gauge(
            "backup_last_base_age_seconds",
            "Seconds since the newest complete base backup finished",
            (),
            {(): never if base_age is None else base_age},
        ),
        gauge(
            "backup_last_wal_age_seconds",
            "Seconds since the newest WAL segment was archived",
            (),
            {(): never if wal_age is None else wal_age},
        ),
    ]
