"""Registering a player and reading oneself."""

from typing import Annotated

from pydantic import StringConstraints
from typing_extensions import TypedDict

from service.api import auth
from service.api.address import client_address
from service.api.endpoints import Body, Call, Endpoints
from service.api.errors import unauthorized
from service.api.keys import POOL, SETTINGS, SHARED_LIMITS
from service.usecases import players

endpoints = Endpoints("players")

PlayerName = Annotated[
    str,
    StringConstraints(
        strip_whitespace=True, min_length=1, max_length=32, pattern=r"^[^\x00-\x1f\x7f]+$"
    ),
]


class NewPlayer(Body):
    name: PlayerName


class PlayerCreated(TypedDict):
    player_id: str
    name: str
    token: str


@endpoints.route(
    "POST",
    "/v1/players",
    summary=(
        "Register a player and get its bearer token; registrations are limited per client"
        " address, by the hour and by the day (429 with Retry-After)"
    ),
    auth="none",
    body=NewPlayer,
    response=PlayerCreated,
    status=201,
    errors=(400, 413, 415, 422, 429),
)
async def create_player(call: Call) -> PlayerCreated:
    body: NewPlayer = call.body
    app = call.request.app
    # Each account brings a per-player limit of its own: the accounts one address may make are
    # what stops it multiplying that limit.
    shared, address = app[SHARED_LIMITS], client_address(call.request)
    await shared.take(
        app[POOL],
        shared.registrations_per_hour.take(address),
        shared.registrations_per_day.take(address),
    )
    row = await players.register(app[POOL], body.name)
    settings = app[SETTINGS]
    token = auth.issue_token(settings.secret_key, row.player_id, settings.token_ttl_seconds)
    return {"player_id": str(row.player_id), "name": row.name, "token": token}


@endpoints.route(
    "GET",
    "/v1/players/me",
    summary="The authenticated player",
    response=players.Player,
    errors=(401, 429),
)
async def me(call: Call) -> players.Player:
    player = await players.find(call.request.app[POOL], call.player)
    if player is None:
        raise unauthorized("token names no known player")
    return player
