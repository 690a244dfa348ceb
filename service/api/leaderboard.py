"""The leaderboards: the autobattler's Elo, and each turn-based game's ratings per season."""

from typing import Annotated, Literal

from pydantic import Field

from service.api.endpoints import Call, Endpoints, Query
from service.api.keys import POOL
from service.usecases import game_ratings

endpoints = Endpoints("leaderboard")


class LeaderboardQuery(Query):
    limit: int = Field(20, ge=1, le=100)
    around: Literal["me"] | None = None
    game: Annotated[
        str | None,
        Field(
            description=(
                "a turn-based game's id: its OpenSkill board for a season"
                " (docs/api.md#ratings-per-game-and-season); without it, the autobattler's Elo"
            ),
            max_length=64,
        ),
    ] = None
    season: Annotated[
        str | None,
        Field(description="with `game`: the season's name; the current season if left out"),
    ] = None


@endpoints.route(
    "GET",
    "/v1/leaderboard",
    summary=(
        "Best ratings; with around=me, you and the players just above and below you; with"
        " `game`, that turn-based game's board for a season (404 unknown_season)"
    ),
    query=LeaderboardQuery,
    response=game_ratings.Board,
    errors=(401, 404, 422, 429),
)
async def leaderboard(call: Call) -> game_ratings.Board:
    query: LeaderboardQuery = call.query
    around = call.player if query.around == "me" else None
    pool = call.request.app[POOL]
    if query.game is None:
        return await game_ratings.autobattler_leaderboard(pool, query.limit, around)
    return await game_ratings.leaderboard(pool, query.game, query.season, query.limit, around)
