"""Operator endpoints, guarded by the ops token."""

from typing_extensions import TypedDict

from service.api.endpoints import Call, Endpoints
from service.api.keys import POOL, SETTINGS
from service.usecases import ops

endpoints = Endpoints("ops")


class DatabasePool(TypedDict):
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
    return {"size": size, "idle": idle, "in_use": size - idle, "max_size": pool.get_max_size()}


@endpoints.route(
    "GET",
    "/v1/ops/matchmaking",
    summary=(
        "Pairing health per round (pool depth, pairings by rung, bot and fallback rates, rating"
        " gap, pairing latency), the last 24 hours, and match health per game"
    ),
    auth="ops",
    response=ops.Matchmaking,
    rate_limited=False,
    errors=(401, 403),
)
async def matchmaking(call: Call) -> ops.Matchmaking:
    settings = call.request.app[SETTINGS]
    limits = ops.Thresholds(settings.ops_thin_pool, settings.ops_high_bot_rate)
    return await ops.matchmaking(call.request.app[POOL], settings.snapshot_ttl_seconds, limits)
