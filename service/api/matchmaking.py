"""Play now over HTTP: queue a ticket, follow it until matched, cancel it."""

from typing import Annotated, Any
from uuid import UUID

from pydantic import Field, StringConstraints

from service.api.endpoints import Body, Call, Endpoints, Query
from service.api.keys import MATCH_HUB, POOL, SETTINGS
from service.api.matches import LOADOUT, MAX_WAIT_SECONDS, GameId, caps
from service.config import Settings
from service.usecases import matchmaking

endpoints = Endpoints("matchmaking")


class NewTicket(Body):
    game: GameId
    ruleset: Annotated[str, StringConstraints(min_length=1, max_length=64)] | None = Field(
        default=None, description="default: the game's current ruleset"
    )
    seats: int = Field(ge=1, le=64)
    options: dict[str, Any] = Field(default_factory=dict)
    loadout: Any = LOADOUT


class TicketQuery(Query):
    wait: float = Field(
        default=0.0,
        ge=0.0,
        le=MAX_WAIT_SECONDS,
        description="seconds to wait while the ticket is still searching",
    )


def tuning(settings: Settings) -> matchmaking.Tuning:
    return matchmaking.Tuning(
        band=settings.matchmaking_band,
        band_growth_per_second=settings.matchmaking_band_growth_per_second,
        bot_after_seconds=settings.matchmaking_bot_after_seconds,
        turn_seconds=settings.matchmaking_turn_seconds,
        match_wait_seconds=settings.match_wait_seconds,
    )


def _ticket_id(call: Call) -> UUID:
    return call.uuid_param("ticket_id", "ticket")


@endpoints.route(
    "POST",
    "/v1/matchmaking/tickets",
    summary=(
        "Queue for a game: you are seated in a match with players of a rating near yours, or"
        " with bots after a while (accepts Idempotency-Key)"
    ),
    body=NewTicket,
    response=matchmaking.TicketState,
    status=201,
    errors=(400, 401, 409, 413, 415, 422, 429),
    idempotent=True,
)
async def queue(call: Call) -> matchmaking.TicketState:
    body: NewTicket = call.body
    settings = call.request.app[SETTINGS]
    request = matchmaking.TicketRequest(
        body.game, body.ruleset, body.seats, body.options, body.loadout
    )
    return await matchmaking.queue(
        call.request.app[POOL],
        call.player,
        request,
        caps=caps(settings),
        tuning=tuning(settings),
        idempotency_key=call.idempotency_key,
    )


@endpoints.route(
    "GET",
    "/v1/matchmaking/tickets/{ticket_id}",
    summary=(
        "Your ticket, with its match and seat once matched; waits up to `wait` seconds while"
        " it is searching"
    ),
    query=TicketQuery,
    response=matchmaking.TicketState,
    errors=(401, 404, 422, 429),
)
async def read(call: Call) -> matchmaking.TicketState:
    query: TicketQuery = call.query
    app = call.request.app
    return await matchmaking.wait(
        app[POOL], app[MATCH_HUB], call.player, _ticket_id(call), query.wait
    )


@endpoints.route(
    "DELETE",
    "/v1/matchmaking/tickets/{ticket_id}",
    summary="Leave the queue: cancel a ticket still searching (accepts Idempotency-Key)",
    response=matchmaking.TicketState,
    errors=(400, 401, 404, 409, 429),
    idempotent=True,
)
async def cancel(call: Call) -> matchmaking.TicketState:
    return await matchmaking.cancel(
        call.request.app[POOL], call.player, _ticket_id(call), call.idempotency_key
    )
