"""Operator endpoints, guarded by the ops token."""

from typing import Any

from pydantic import BaseModel

from service.api.endpoints import Call, Endpoints
from service.api.keys import POOL, SETTINGS
from service.usecases import ops

endpoints = Endpoints("ops")


class DatabasePool(BaseModel):
    size: int
    idle: int
    in_use: int
    max_size: int


@endpoints.route(
    "GET",
    "/v1/ops/database",
    summary="Database connection pool figures of this instance",
    auth="ops",
    response=DatabasePool,
    rate_limited=False,
    errors=(401, 403),
)
async def database(call: Call) -> DatabasePool:
    pool = call.request.app[POOL]
    size, idle = pool.get_size(), pool.get_idle_size()
    return DatabasePool(size=size, idle=idle, in_use=size - idle, max_size=pool.get_max_size())


class RoundHealth(BaseModel):
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


class HourHealth(BaseModel):
    hour: str
    pairings: int
    bot_rate: float | None
    fallback_rate: float | None


class GameHealth(BaseModel):
    game: str
    active_matches: int
    waiting_matches: int
    waiting_seats: int
    median_turn_seconds: float | None
    timeouts_day: int
    actions_hour: int


class Matchmaking(BaseModel):
    generated_at: str
    ruleset: str
    snapshot_ttl_seconds: float
    thresholds: dict[str, float]
    rounds: list[RoundHealth]
    timeline: list[HourHealth]
    games: list[GameHealth]


@endpoints.route(
    "GET",
    "/v1/ops/matchmaking",
    summary=(
        "Pairing health per round (pool depth, pairings by rung, bot and fallback rates, rating"
        " gap, pairing latency), the last 24 hours, and match health per game"
    ),
    auth="ops",
    response=Matchmaking,
    rate_limited=False,
    errors=(401, 403, 503),
)
async def matchmaking(call: Call) -> dict[str, Any]:
    settings = call.request.app[SETTINGS]
    limits = ops.Thresholds(settings.ops_thin_pool, settings.ops_high_bot_rate)
    return await ops.matchmaking(call.request.app[POOL], settings.snapshot_ttl_seconds, limits)
