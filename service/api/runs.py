"""Runs of the autobattler: the shop between rounds and the end of each turn."""

from typing import Annotated
from uuid import UUID

from pydantic import Field

from service.api.endpoints import Body, Call, Endpoints, Query
from service.api.keys import POOL, SETTINGS
from service.games.cryptids import shop
from service.usecases import runs

endpoints = Endpoints("runs")

SHOP_ERRORS = (400, 401, 404, 409, 422, 429)
Index = Annotated[int, Field(ge=0, le=64)]
RETRY_NOTE = (
    " Send the run's `version` (409 when it moved) or an Idempotency-Key to make a retry safe."
)


class RunListQuery(Query):
    limit: int = Field(20, ge=1, le=100)


class Move(Body):
    version: Annotated[int, Field(ge=0, le=2**31 - 1)] | None = Field(
        None, description="the run's version you saw; 409 stale_version when it moved"
    )


class Buy(Move):
    slot: Index
    position: Index | None = None


class Sell(Move):
    position: Index


class Freeze(Move):
    slot: Index
    frozen: bool = True


class Arrange(Move):
    order: list[Index] | None = Field(None, max_length=64)
    abilities: list[Annotated[int, Field(ge=0, le=1)]] | None = Field(None, max_length=64)


class EndTurn(Arrange):
    round: Annotated[int, Field(ge=1, le=10_000)] | None = None


class Reroll(Move):
    pass


def run_id(call: Call) -> UUID:
    return call.uuid_param("run_id", "run")


@endpoints.route(
    "POST",
    "/v1/runs",
    summary="Start a run (accepts Idempotency-Key)",
    response=runs.Run,
    status=201,
    errors=(400, 401, 429),
    idempotent=True,
)
async def start_run(call: Call) -> runs.Run:
    return await runs.start(
        call.request.app[POOL], call.player, idempotency_key=call.idempotency_key
    )


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


async def _move(call: Call, name: str, move: runs.ShopMove) -> runs.Run:
    body: Move = call.body
    retry = runs.Retry(body.version, call.idempotency_key, body.model_dump())
    return await runs.shop_move(
        call.request.app[POOL], call.player, run_id(call), name, move, retry
    )


@endpoints.route(
    "POST",
    "/v1/runs/{run_id}/buy",
    summary="Buy the offer in a shop slot, placed at a board position (default: right end)"
    + RETRY_NOTE,
    body=Buy,
    response=runs.Run,
    errors=SHOP_ERRORS,
    idempotent=True,
)
async def buy(call: Call) -> runs.Run:
    body: Buy = call.body
    return await _move(call, "buy", lambda rules, s: shop.buy(rules, s, body.slot, body.position))


@endpoints.route(
    "POST",
    "/v1/runs/{run_id}/sell",
    summary=("Sell the cryptid at a board position." + RETRY_NOTE),
    body=Sell,
    response=runs.Run,
    errors=SHOP_ERRORS,
    idempotent=True,
)
async def sell(call: Call) -> runs.Run:
    body: Sell = call.body
    return await _move(call, "sell", lambda rules, s: shop.sell(rules, s, body.position))


@endpoints.route(
    "POST",
    "/v1/runs/{run_id}/reroll",
    summary=("New offers in the slots that are not frozen." + RETRY_NOTE),
    body=Reroll,
    response=runs.Run,
    errors=SHOP_ERRORS,
    idempotent=True,
)
async def reroll(call: Call) -> runs.Run:
    return await _move(call, "reroll", shop.reroll)


@endpoints.route(
    "POST",
    "/v1/runs/{run_id}/freeze",
    summary="Freeze (or with frozen=false thaw) a shop slot: it stays through rerolls and rounds"
    + RETRY_NOTE,
    body=Freeze,
    response=runs.Run,
    errors=SHOP_ERRORS,
    idempotent=True,
)
async def freeze(call: Call) -> runs.Run:
    body: Freeze = call.body
    return await _move(call, "freeze", lambda _, s: shop.freeze(s, body.slot, body.frozen))


@endpoints.route(
    "POST",
    "/v1/runs/{run_id}/arrange",
    summary="Reorder the board (order[i] = old position now at i) and choose abilities"
    + RETRY_NOTE,
    body=Arrange,
    response=runs.Run,
    errors=SHOP_ERRORS,
    idempotent=True,
)
async def arrange(call: Call) -> runs.Run:
    body: Arrange = call.body
    return await _move(call, "arrange", lambda _, s: shop.arrange(s, body.order, body.abilities))


@endpoints.route(
    "POST",
    "/v1/runs/{run_id}/end-turn",
    summary=(
        "End the shop phase: snapshot, pair against a ghost, fight. Say which turn it ends:"
        " `round`, `version` or an Idempotency-Key (422 without any), so that a retry returns"
        " the same battle and never plays the next round."
    ),
    body=EndTurn,
    response=runs.TurnResult,
    errors=(400, *SHOP_ERRORS),
    idempotent=True,
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
        retry=runs.Retry(body.version, call.idempotency_key, body.model_dump()),
    )
