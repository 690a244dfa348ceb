"""Operator endpoints, guarded by the ops token."""

from typing import Annotated

from pydantic import Field
from typing_extensions import TypedDict

from service.api.endpoints import Body, Call, Endpoints
from service.api.keys import POOL, SETTINGS
from service.api.matches import MatchSpec
from service.config import SEASON_NAME
from service.usecases import game_ratings, ops
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
        " gap, pairing latency), the last 24 hours, match health per game, and the age of the"
        " backups this instance sees (null when it sees none)"
    ),
    auth="ops",
    response=ops.Matchmaking,
    rate_limited=False,
    errors=(401, 403),
)
async def matchmaking(call: Call) -> ops.Matchmaking:
    settings = call.request.app[SETTINGS]
    limits = ops.Thresholds(
        settings.ops_thin_pool,
        settings.ops_high_bot_rate,
        settings.ops_slow_queue_seconds,
        settings.ops_high_queue_bot_share,
        settings.ops_backup_max_age_seconds,
        settings.ops_wal_max_age_seconds,
    )
    return await ops.matchmaking(
        call.request.app[POOL],
        settings.snapshot_ttl_seconds,
        limits,
        ops.watched_backups(settings),
    )


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


class NewSeason(Body):
    name: Annotated[str, Field(pattern=SEASON_NAME, description="the season's name: 2027-01")]


@endpoints.route(
    "POST",
    "/v1/ops/seasons",
    summary=(
        "Start a new season now: the turn-based games' ratings count in it from now on, each"
        " player's starting from a soft reset of its previous season's; 409 season_exists if"
        " the name was used. Past seasons stay readable (docs/api.md#ratings-per-game-and-season)"
    ),
    auth="ops",
    body=NewSeason,
    response=game_ratings.Season,
    status=201,
    rate_limited=False,
    errors=(400, 401, 403, 409, 413, 415, 422),
)
async def new_season(call: Call) -> game_ratings.Season:
    body: NewSeason = call.body
    return await game_ratings.new_season(call.request.app[POOL], body.name)
