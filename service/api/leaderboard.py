"""The rating leaderboard."""

from typing import Any, Literal

from pydantic import BaseModel, Field

from service.api.endpoints import Call, Endpoints, Query
from service.api.keys import POOL
from service.store import players

endpoints = Endpoints("leaderboard")


class LeaderboardQuery(Query):
    limit: int = Field(20, ge=1, le=100)
    around: Literal["me"] | None = None


class Entry(BaseModel):
    rank: int
    player_id: str
    name: str
    rating: int


class Leaderboard(BaseModel):
    entries: list[Entry]


@endpoints.route(
    "GET",
    "/v1/leaderboard",
    summary="Best ratings; with around=me, you and the players just above and below you",
    query=LeaderboardQuery,
    response=Leaderboard,
    errors=(401, 422, 429),
)
async def leaderboard(call: Call) -> dict[str, Any]:
    query: LeaderboardQuery = call.query
    pool = call.request.app[POOL]
    if query.around == "me":
        rows = await players.around(pool, call.player, query.limit // 2)
    else:
        rows = await players.top(pool, query.limit)
    return {
        "entries": [
            {"rank": r.rank, "player_id": str(r.player_id), "name": r.name, "rating": r.rating}
            for r in rows
        ]
    }
