"""Runs of the autobattler: the shop between rounds and the end of each turn."""

from typing import Annotated, Any
from uuid import UUID

from pydantic import BaseModel, Field

from service.api.endpoints import Body, Call, Endpoints, Query, Reply
from service.api.keys import POOL, SETTINGS
from service.games.cryptids import shop
from service.usecases import runs

endpoints = Endpoints("runs")

SHOP_ERRORS = (401, 404, 409, 422, 429)
Index = Annotated[int, Field(ge=0, le=64)]


class Offer(BaseModel):
    slot: int
    species: str
    tier: int
    cost: int
    frozen: bool


class Member(BaseModel):
    position: int
    species: str
    ability: int
    level: int


class Run(BaseModel):
    run_id: str
    ruleset: str
    round: int
    lives: int
    wins: int
    gold: int
    status: str
    shop: list[Offer | None]
    warband: list[Member]
    rating_change_pending: float
    created_at: str


class RunList(BaseModel):
    runs: list[Run]


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


class Opponent(BaseModel):
    snapshot_id: int
    rating: int
    is_bot: bool
    round: int


class TurnResult(BaseModel):
    battle_id: int
    round: int
    opponent: Opponent
    pairing: str
    winner: str
    lives: int
    wins: int
    status: str
    rating_change_pending: float


class NoBody(Body):
    pass


def run_id(call: Call) -> UUID:
    return call.uuid_param("run_id", "run")


@endpoints.route(
    "POST", "/v1/runs", summary="Start a run", response=Run, status=201, errors=(401, 429)
)
async def start_run(call: Call) -> dict[str, Any]:
    return await runs.start(call.request.app[POOL], call.player)


@endpoints.route(
    "GET", "/v1/runs", summary="Your runs, newest first", query=RunListQuery, response=RunList
)
async def list_runs(call: Call) -> dict[str, Any]:
    query: RunListQuery = call.query
    return {"runs": await runs.list_own(call.request.app[POOL], call.player, query.limit)}


@endpoints.route(
    "GET", "/v1/runs/{run_id}", summary="One of your runs", response=Run, errors=(401, 404, 429)
)
async def get_run(call: Call) -> dict[str, Any]:
    return await runs.get(call.request.app[POOL], call.player, run_id(call))


async def _move(call: Call, move: runs.ShopMove) -> dict[str, Any]:
    return await runs.shop_move(call.request.app[POOL], call.player, run_id(call), move)


@endpoints.route(
    "POST",
    "/v1/runs/{run_id}/buy",
    summary="Buy the offer in a shop slot, placed at a board position (default: right end)",
    body=Buy,
    response=Run,
    errors=SHOP_ERRORS,
)
async def buy(call: Call) -> dict[str, Any]:
    body: Buy = call.body
    return await _move(call, lambda rules, s: shop.buy(rules, s, body.slot, body.position))


@endpoints.route(
    "POST",
    "/v1/runs/{run_id}/sell",
    summary="Sell the cryptid at a board position",
    body=Sell,
    response=Run,
    errors=SHOP_ERRORS,
)
async def sell(call: Call) -> dict[str, Any]:
    body: Sell = call.body
    return await _move(call, lambda rules, s: shop.sell(rules, s, body.position))


@endpoints.route(
    "POST",
    "/v1/runs/{run_id}/reroll",
    summary="New offers in the slots that are not frozen",
    body=NoBody,
    response=Run,
    errors=SHOP_ERRORS,
)
async def reroll(call: Call) -> dict[str, Any]:
    return await _move(call, shop.reroll)


@endpoints.route(
    "POST",
    "/v1/runs/{run_id}/freeze",
    summary="Freeze (or with frozen=false thaw) a shop slot: it stays through rerolls and rounds",
    body=Freeze,
    response=Run,
    errors=SHOP_ERRORS,
)
async def freeze(call: Call) -> dict[str, Any]:
    body: Freeze = call.body
    return await _move(call, lambda _, s: shop.freeze(s, body.slot, body.frozen))


@endpoints.route(
    "POST",
    "/v1/runs/{run_id}/arrange",
    summary="Reorder the board (order[i] = old position now at i) and choose abilities",
    body=Arrange,
    response=Run,
    errors=SHOP_ERRORS,
)
async def arrange(call: Call) -> dict[str, Any]:
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
    response=TurnResult,
    errors=(400, *SHOP_ERRORS),
)
async def end_turn(call: Call) -> Reply:
    body: EndTurn = call.body
    settings = call.request.app[SETTINGS]
    answer = await runs.end_turn(
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
    return Reply(answer, 200)
