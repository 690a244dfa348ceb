"""Runs of the autobattler: the shop between rounds and the end of each turn."""

from typing import Annotated
from uuid import UUID

from pydantic import Field

from service.api.endpoints import Body, Call, Endpoints, Query
from service.api.keys import POOL, SETTINGS
from service.games.cryptids import shop
from service.usecases import runs

endpoints = Endpoints("runs")

SHOP_ERRORS = (401, 404, 409, 422, 429)
Index = Annotated[int, Field(ge=0, le=64)]


class RunListQuery(Query):
    limit: int = Field(20, ge=1, le=100)


class Buy(Body):
    slot: Index
    position: Index | None = None


class Sell(Body):
    position: Index


class Freeze(Body):
    slot: Index
    frozen: bool = True


class Arrange(Body):
    order: list[Index] | None = Field(None, max_length=64)
    abilities: list[Annotated[int, Field(ge=0, le=1)]] | None = Field(None, max_length=64)


class EndTurn(Arrange):
    round: Annotated[int, Field(ge=1, le=10_000)] | None = None


class NoBody(Body):
    pass


def run_id(call: Call) -> UUID:
    return call.uuid_param("run_id", "run")


@endpoints.route(
    "POST", "/v1/runs", summary="Start a run", response=runs.Run, status=201, errors=(401, 429)
)
async def start_run(call: Call) -> runs.Run:
    return await runs.start(call.request.app[POOL], call.player)


@endpoints.route(
    "GET", "/v1/runs", summary="Your runs, newest first", query=RunListQuery, response=runs.RunList
)
async def list_runs(call: Call) -> runs.RunList:
    query: RunListQuery = call.query
    return await runs.list_own(call.request.app[POOL], call.player, query.limit)


@endpoints.route(
    "GET",
    "/v1/runs/{run_id}",
    summary="One of your runs",
    response=runs.Run,
    errors=(401, 404, 429),
)
async def get_run(call: Call) -> runs.Run:
    return await runs.get(call.request.app[POOL], call.player, run_id(call))


async def _move(call: Call, move: runs.ShopMove) -> runs.Run:
    return await runs.shop_move(call.request.app[POOL], call.player, run_id(call), move)


@endpoints.route(
    "POST",
    "/v1/runs/{run_id}/buy",
    summary="Buy the offer in a shop slot, placed at a board position (default: right end)",
    body=Buy,
    response=runs.Run,
    errors=SHOP_ERRORS,
)
async def buy(call: Call) -> runs.Run:
    body: Buy = call.body
    return await _move(call, lambda rules, s: shop.buy(rules, s, body.slot, body.position))


@endpoints.route(
    "POST",
    "/v1/runs/{run_id}/sell",
    summary="Sell the cryptid at a board position",
    body=Sell,
    response=runs.Run,
    errors=SHOP_ERRORS,
)
async def sell(call: Call) -> runs.Run:
    body: Sell = call.body
    return await _move(call, lambda rules, s: shop.sell(rules, s, body.position))


@endpoints.route(
    "POST",
    "/v1/runs/{run_id}/reroll",
    summary="New offers in the slots that are not frozen",
    body=NoBody,
    response=runs.Run,
    errors=SHOP_ERRORS,
)
async def reroll(call: Call) -> runs.Run:
    return await _move(call, shop.reroll)


@endpoints.route(
    "POST",
    "/v1/runs/{run_id}/freeze",
    summary="Freeze (or with frozen=false thaw) a shop slot: it stays through rerolls and rounds",
    body=Freeze,
    response=runs.Run,
    errors=SHOP_ERRORS,
)
async def freeze(call: Call) -> runs.Run:
    body: Freeze = call.body
    return await _move(call, lambda _, s: shop.freeze(s, body.slot, body.frozen))


@endpoints.route(
    "POST",
    "/v1/runs/{run_id}/arrange",
    summary="Reorder the board (order[i] = old position now at i) and choose abilities",
    body=Arrange,
    response=runs.Run,
    errors=SHOP_ERRORS,
)
async def arrange(call: Call) -> runs.Run:
    body: Arrange = call.body
    return await _move(call, lambda _, s: shop.arrange(s, body.order, body.abilities))


@endpoints.route(
    "POST",
    "/v1/runs/{run_id}/end-turn",
    summary=(
        "End the shop phase: snapshot, pair against a ghost, fight. Send `round` (or an"
        " Idempotency-Key) so that a retry returns the same battle."
    ),
    body=EndTurn,
    response=runs.TurnResult,
    errors=(400, *SHOP_ERRORS),
)
async def end_turn(call: Call) -> runs.TurnResult:
    body: EndTurn = call.body
    settings = call.request.app[SETTINGS]
    return await runs.end_turn(
        call.request.app[POOL],
        call.player,
        run_id(call),
        round_=body.round,
        order=body.order,
        abilities=body.abilities,
        policy=runs.PairingPolicy(settings.snapshot_ttl_seconds),
        idempotency_key=call.request.headers.get("Idempotency-Key"),
        request=body.model_dump(),
    )
