"""Operator endpoints, guarded by the ops token."""

from typing_extensions import TypedDict

from service.api.endpoints import Call, Endpoints
from service.api.keys import POOL, SETTINGS
from service.api.matches import MatchSpec
from service.usecases import ops
from service.usecases.matches import answers, lobby

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


@endpoints.route(
    "POST",
    "/v1/ops/matches",
    summary=(
        "Create a match as the operator (a lesson, a tournament, an exhibition): every seat not"
        " in `bots` is left free for players to join; it may seat bots only, and may use a"
        " public deal, which reveals every hand and draw to anyone who knows it"
    ),
    auth="ops",
    body=MatchSpec,
    response=answers.Joined,
    status=201,
    rate_limited=False,
    errors=(400, 401, 403, 413, 415, 422),
)
async def create_match(call: Call) -> answers.Joined:
    body: MatchSpec = call.body
    new = body.new_match(call.request.app[SETTINGS])
    return await lobby.create_for_operator(call.request.app[POOL], new)
