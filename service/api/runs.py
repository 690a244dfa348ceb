"""Runs of the autobattler: the shop between rounds and the end of each turn."""

from typing import Annotated, Literal
from uuid import UUID

from pydantic import Field

from service.api.endpoints import Body, Call, Endpoints, Query
from service.api.keys import POOL, SETTINGS
from service.games.cryptids import shop
from service.games.cryptids.content import Ruleset
from service.games.cryptids.rating import RatedGhosts
from service.games.cryptids.shop import Shop
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
        None,
        description=(
            "the run's version you saw; 409 stale_version when it moved, version_ahead when"
            " the run has not reached it"
        ),
    )


# A shop move is a body of its own endpoint and, tagged by `move`, a step of an end-turn.
class BuyStep(Body):
    move: Literal["buy"] = "buy"
    slot: Index
    position: Index | None = None

    def apply(self, rules: Ruleset, before: Shop) -> Shop:
        return shop.buy(rules, before, self.slot, self.position)


class SellStep(Body):
    move: Literal["sell"] = "sell"
    position: Index

    def apply(self, rules: Ruleset, before: Shop) -> Shop:
        return shop.sell(rules, before, self.position)


class RerollStep(Body):
    move: Literal["reroll"] = "reroll"

    def apply(self, rules: Ruleset, before: Shop) -> Shop:
        return shop.reroll(rules, before)


class FreezeStep(Body):
    move: Literal["freeze"] = "freeze"
    slot: Index
    frozen: bool = True

    def apply(self, rules: Ruleset, before: Shop) -> Shop:
        return shop.freeze(before, self.slot, self.frozen)


ShopStep = Annotated[BuyStep | SellStep | RerollStep | FreezeStep, Field(discriminator="move")]


class Buy(BuyStep, Move):
    pass


class Sell(SellStep, Move):
    pass


class Freeze(FreezeStep, Move):
    pass


class Reroll(RerollStep, Move):
    pass


class Arrange(Move):
    order: list[Index] | None = Field(None, max_length=64)
    abilities: list[Annotated[int, Field(ge=0, le=1)]] | None = Field(None, max_length=64)

    def apply(self, rules: Ruleset, before: Shop) -> Shop:
        return shop.arrange(before, self.order, self.abilities)


class EndTurn(Arrange):
    round: Annotated[int, Field(ge=1, le=10_000)] | None = None
    moves: list[ShopStep] = Field(
        default_factory=list,
        max_length=64,
        description="shop moves made first, in order: all of them or, if one is refused, none",
    )


def run_id(call: Call) -> UUID:
    return call.uuid_param("run_id", "run")


@endpoints.route(
    "POST",
    "/v1/runs",
    summary=(
        "Start a run (accepts Idempotency-Key). A player holds at most MAX_OPEN_RUNS runs open:"
        " 409 too_many_open_runs names them in `details.open_runs`"
    ),
    response=runs.Run,
    status=201,
    errors=(400, 401, 409, 429),
    idempotent=True,
)
async def start_run(call: Call) -> runs.Run:
    return await runs.start(
        call.request.app[POOL],
        call.player,
        idempotency_key=call.idempotency_key,
        max_open=call.request.app[SETTINGS].max_open_runs,
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


async def _move(call: Call, name: str) -> runs.Run:
    body: Buy | Sell | Reroll | Freeze | Arrange = call.body
    # The tag names the endpoint already; a key is matched on the rest of the request.
    retry = runs.Retry(body.version, call.idempotency_key, body.model_dump(exclude={"move"}))
    return await runs.shop_move(
        call.request.app[POOL], call.player, run_id(call), name, body.apply, retry
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
    return await _move(call, "buy")


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
    return await _move(call, "sell")


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
    return await _move(call, "reroll")


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
    return await _move(call, "freeze")


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
    return await _move(call, "arrange")


@endpoints.route(
    "POST",
    "/v1/runs/{run_id}/end-turn",
    summary=(
        "End the shop phase: make the `moves` given, snapshot, pair against a ghost, fight;"
        " the answer's `run` is the next round's shop. Say which turn it ends: `round`,"
        " `version` or an Idempotency-Key (422 without any), so that a retry returns the same"
        " battle and never plays the next round."
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
        moves=[step.apply for step in body.moves],
        order=body.order,
        abilities=body.abilities,
        policy=runs.PairingPolicy(
            settings.snapshot_ttl_seconds,
            RatedGhosts(
                settings.rated_ghost_min_age_seconds,
                settings.rated_ghost_min_runs,
                settings.rated_ghost_repeat_seconds,
            ),
        ),
        retry=runs.Retry(body.version, call.idempotency_key, body.model_dump()),
    )


@endpoints.route(
    "POST",
    "/v1/runs/{run_id}/abandon",
    summary=(
        "Give the run up now: it ends `abandoned` and settles its pending rating change with one"
        " forfeited loss, as a run left idle does; its place among your open runs is free."
        + RETRY_NOTE
    ),
    body=Move,
    response=runs.Run,
    errors=(400, 401, 404, 409, 422, 429),
    idempotent=True,
)
async def abandon(call: Call) -> runs.Run:
    body: Move = call.body
    retry = runs.Retry(body.version, call.idempotency_key, body.model_dump())
    return await runs.abandon(call.request.app[POOL], call.player, run_id(call), retry)
