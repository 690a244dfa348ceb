"""Registering a player, reading oneself and renaming oneself (docs/api.md#names-and-tags)."""

from typing import Annotated

from pydantic import Field

from service.api.address import client_address
from service.api.endpoints import Body, Call, Endpoints
from service.api.errors import unauthorized
from service.api.keys import POOL, SETTINGS, SHARED_LIMITS
from service.api.sessions import Device, Session, devices_answer, session_answer
from service.usecases import game_ratings, names, players, sessions

endpoints = Endpoints("players")

# The rule is names.normalise_name's (a 422 invalid_name naming it), not a pattern: it counts
# after Unicode normalisation, which a JSON Schema cannot express.
PlayerName = Annotated[
    str,
    Field(
        description=(
            "1 to 32 characters after Unicode NFKC normalisation and trimming, without control,"
            " format, separator, unassigned or private-use characters, showing something,"
            " without '#' and with at most 4 combining marks on a character"
        )
    ),
]


class NewPlayer(Body):
    name: PlayerName


class Rename(Body):
    name: PlayerName


class PlayerCreated(Session):
    token: Annotated[str, Field(description="the access token again, for older clients")]


class Me(players.Player):
    devices: Annotated[
        list[Device],
        Field(
            description=(
                "the device ids that sign you in, by fingerprint, in the order they were linked"
                " (MAX_DEVICES at most)"
            )
        ),
    ]
    ratings: Annotated[
        list[game_ratings.Rating],
        Field(description="your rating per turn-based game this season, where you have one"),
    ]


@endpoints.route(
    "POST",
    "/v1/players",
    summary=(
        "Register a player without a device, signed in (as POST /v1/auth/device answers);"
        " registrations are limited per client address, by the hour and by the day (429 with"
        " Retry-After)"
    ),
    auth="none",
    body=NewPlayer,
    response=PlayerCreated,
    status=201,
    errors=(400, 413, 415, 422, 429),
)
async def create_player(call: Call) -> PlayerCreated:
    body: NewPlayer = call.body
    # Before the limits: a refused name does not use up one of the address's registrations.
    name = names.normalise_name(body.name)
    app = call.request.app
    # Each account brings a per-player limit of its own: the accounts one address may make are
    # what stops it multiplying that limit.
    shared, address = app[SHARED_LIMITS], client_address(call.request)
    await shared.take(
        app[POOL],
        shared.registrations_per_hour.take(address),
        shared.registrations_per_day.take(address),
    )
    settings = app[SETTINGS]
    signed = await sessions.register(
        app[POOL], name, settings.refresh_token_ttl_seconds, settings.max_sessions
    )
    answer = session_answer(settings, signed)
    return {**answer, "token": answer["access_token"]}


@endpoints.route(
    "GET",
    "/v1/players/me",
    summary="The authenticated player, with the devices that sign it in",
    response=Me,
    errors=(401, 429),
)
async def me(call: Call) -> Me:
    pool, settings = call.request.app[POOL], call.request.app[SETTINGS]
    player = await players.find(pool, call.player)
    if player is None:
        raise unauthorized("token names no known player")
    ratings = await game_ratings.of_player(pool, call.player)
    return {
        **player,
        **devices_answer(await sessions.devices(pool, call.player, settings.max_devices)),
        "ratings": ratings,
    }


@endpoints.route(
    "PATCH",
    "/v1/players/me",
    summary=(
        "Rename yourself; your tag stays. Naturally idempotent: the same name again gives the"
        " same answer"
    ),
    body=Rename,
    response=Me,
    errors=(400, 401, 413, 415, 422, 429),
)
async def rename(call: Call) -> Me:
    body: Rename = call.body
    pool, settings = call.request.app[POOL], call.request.app[SETTINGS]
    player = await players.rename(pool, call.player, body.name)
    if player is None:
        raise unauthorized("token names no known player")
    ratings = await game_ratings.of_player(pool, call.player)
    return {
        **player,
        **devices_answer(await sessions.devices(pool, call.player, settings.max_devices)),
        "ratings": ratings,
    }
