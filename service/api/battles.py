"""Stored battles and their replays."""

from functools import cache
from typing import Annotated
from urllib.parse import quote_plus

from pydantic import Field

from service.api.endpoints import Body, Call, Endpoints, Query
from service.api.errors import not_found
from service.api.keys import POOL
from service.games.cryptids.content import available_rulesets, load_ruleset
from service.games.cryptids.outcome import BattleOutcome
from service.games.cryptids.replay import ReplayWire
from service.usecases import battles

endpoints = Endpoints("battles")


MAX_SEED = 2**64 - 1
# The document names what the shipped rulesets accept; the rules check a warband against the
# ruleset it is fought under, and name the field they refuse.
SPECIES = sorted({s for r in available_rulesets() for s in load_ruleset(r).species})
MAX_LEVEL = max(load_ruleset(r).run.max_level for r in available_rulesets())


class Cryptid(Body):
    species: Annotated[str, Field(max_length=64, json_schema_extra={"enum": SPECIES})]
    ability: Annotated[int, Field(ge=0, le=1)]
    level: Annotated[int, Field(ge=1, le=MAX_LEVEL)]


class Warband(Body):
    # The board holds 5; a little slack lets the rules name the offending count.
    cryptids: Annotated[list[Cryptid], Field(min_length=1, max_length=16)]


class SimulateRequest(Body):
    seed: Annotated[int, Field(ge=0, le=MAX_SEED)]
    a: Warband
    b: Warband
    ruleset: (
        Annotated[str, Field(max_length=64, json_schema_extra={"enum": available_rulesets()})]
        | None
    ) = None


class SimulateQuery(Query):
    replay: bool = True


class SimulateAnswer(BattleOutcome):
    watch: str
    """the replay viewer's address for this battle, which simulates it again there"""


def _picks(warband: Warband) -> list[tuple[str, int, int]]:
    return [(c.species, c.ability, c.level) for c in warband.cryptids]


@cache
def _quoted(name: str) -> str:
    """A content id as a query value; ids are few, so each is quoted once per process."""
    return quote_plus(name, safe=",")


def watch_link(
    ruleset: str, seed: int, a: list[tuple[str, int, int]], b: list[tuple[str, int, int]]
) -> str:
    """`/watch?ruleset=…&seed=…&a=species.ability.level,…&b=…`, as the viewer's page reads it."""

    def side(picks: list[tuple[str, int, int]]) -> str:
        return ",".join(
            f"{_quoted(species)}.{ability}.{level}" for species, ability, level in picks
        )

    return f"/watch?ruleset={_quoted(ruleset)}&seed={seed}&a={side(a)}&b={side(b)}"


@endpoints.route(
    "POST",
    "/v1/battles/simulate",
    summary="Resolve a battle between two warbands from a seed (nothing is stored)",
    body=SimulateRequest,
    query=SimulateQuery,
    response=SimulateAnswer,
    errors=(400, 401, 413, 415, 422, 429),
    database=False,
)
async def simulate_battle(call: Call) -> SimulateAnswer:
    body: SimulateRequest = call.body
    query: SimulateQuery = call.query
    a, b = _picks(body.a), _picks(body.b)
    outcome = battles.simulate_battle(body.ruleset, body.seed, a, b, query.replay)
    return {**outcome, "watch": watch_link(outcome["ruleset"], body.seed, a, b)}


def battle_id(call: Call) -> int:
    raw = call.path_param("battle_id")
    # ASCII digits only: str.isdigit() also accepts "²", which int() refuses.
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 18:
        raise not_found(f"no battle {raw}")
    return int(raw)


@endpoints.route(
    "GET",
    "/v1/battles/{battle_id}",
    summary="A battle you fought or whose ghost is yours: result, both snapshots, seed, pairing",
    response=battles.Battle,
    errors=(401, 404, 429),
)
async def get_battle(call: Call) -> battles.Battle:
    return await battles.get(call.request.app[POOL], call.player, battle_id(call))


@endpoints.route(
    "GET",
    "/v1/battles/{battle_id}/replay",
    summary="The battle's replay, re-simulated from its stored inputs (byte-identical)",
    response=ReplayWire,
    errors=(401, 404, 429),
)
async def get_replay(call: Call) -> ReplayWire:
    return await battles.replay(call.request.app[POOL], call.player, battle_id(call))
