"""The rating leaderboard."""

from typing import Literal

from pydantic import Field

from service.api.endpoints import Call, Endpoints, Query
from service.api.keys import POOL
from service.usecases import players

endpoints = Endpoints("leaderboard")


class LeaderboardQuery(Query):
    limit: int = Field(20, ge=1, le=100)
    around: Literal["me"] | None = None


@endpoints.route(
    "GET",
    "/v1/leaderboard",
    summary="Best ratings; with around=me, you and the players just above and below you",
    query=LeaderboardQuery,
    response=players.Leaderboard,
    errors=(401, 422, 429),
)
async def leaderboard(call: Call) -> players.Leaderboard:
    query: LeaderboardQuery = call.query
    around = call.player if query.around == "me" else None
    return await players.leaderboard(call.request.app[POOL], query.limit, around)
