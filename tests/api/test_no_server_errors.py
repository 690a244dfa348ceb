"""No input answers 500, for any game: a property test per game, through real HTTP.

Each game's loadout, options and action parameters are schemas of their own, which the
service's OpenAPI document only holds as free JSON: a fuzzer of the document never builds a
deck list or a cut. Here hypothesis builds them from what `GET /v1/games` and each prompt
publish (valid ones, and the same mutated: wrong types at every level, fields dropped or
added), and from arbitrary JSON (lone surrogates, integers past 64 bits, floats, nesting
around the documented depth bound, long strings within the body limit), in JSON and in
msgpack. Every answer must be a documented 2xx or 4xx (`Api` raises on an undocumented
status, a 500 among them), and a refused request must change nothing: the creator's list of
matches, the match joined, or the seat's view, prompt and version for an action.

The budget is bounded (`EXAMPLES` per game and kind) and the draws derandomized; the points
a live match reaches follow its secret seed, so the actions meet other points from run to run.
"""

import asyncio
import json
import random
from collections.abc import Coroutine
from typing import Any, TypeVar

import msgpack
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from service.api.codec import MAX_DEPTH
from service.games.registry import REGISTRY
from tests.api.matches_helpers import (
    finished_matches_rebuild,  # noqa: F401 (autouse)
    new_players,
    read,
)
from tests.http import Answer, Api, UndocumentedAnswer

EXAMPLES = 100
ACTION_EXAMPLES = 100
# Under the 16 KiB body limit with the rest of the request around it.
LONG_STRING = 15_000
T = TypeVar("T")

GAME_IDS = ["necromancers", "fate-duel", "loyalty", "medianokte"]


def budget(examples: int, phases: tuple[Phase, ...] = tuple(Phase)) -> settings:
    return settings(
        max_examples=examples,
        phases=phases,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )


# --- what a hostile client sends ------------------------------------------------------------

ODD_STRINGS = st.sampled_from(
    ["\ud800", "a\udfffb", "\x00", "\u202e", "é" * 40, "$resign", "", " ", "type", "0"]
)
ODD_NUMBERS = st.sampled_from(
    [2**63, 2**64, -(2**63) - 1, 2**70, 10**40, -(10**40), 2**31, -1, 0, 1.0, 0.5, -0.0, 1e300]
)
# Each a value some rule once took for granted the type of: unhashable where a set is built,
# past 64 bits, a float for an integer, text no UTF-8 holds (sent in msgpack as bytes).
CLASSICS = st.sampled_from(
    [[[]], [{}], {"a": []}, [["x"]], 2**64, 2**70, -(2**63) - 1, 1.5, True, "\ud800", [1, 1]]
)
SCALARS = (
    CLASSICS
    | st.none()
    | st.booleans()
    | st.integers(-(2**80), 2**80)
    | ODD_NUMBERS
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | ODD_STRINGS
)
ARBITRARY = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=8) | ODD_STRINGS, inner, max_size=4)
    ),
    max_leaves=16,
)


def nested(depth: int, leaf: Any) -> Any:
    value = leaf
    for level in range(depth):
        value = [value] if level % 2 else {"x": value}
    return value


# Around the documented bound: the body's own levels come on top of these.
DEEP = st.builds(nested, st.integers(MAX_DEPTH - 4, MAX_DEPTH + 2), SCALARS)
# `n` bytes of JSON text, each character as the client writes it (é as \u00e9).
LONG = st.builds(
    lambda n, c: c * (n // (len(json.dumps(c)) - 2)),
    st.integers(1_000, LONG_STRING),
    st.sampled_from("aé€"),
)
HOSTILE = ARBITRARY | DEEP | LONG


@st.composite
def mutated(draw: st.DrawFn, value: Any) -> Any:
    """`value` with one node somewhere replaced, dropped, added to or retyped."""
    if isinstance(value, dict) and value and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(value)))
        return {**value, key: draw(mutated(value[key]))}
    if isinstance(value, list) and value and draw(st.booleans()):
        index = draw(st.integers(0, len(value) - 1))
        return [*value[:index], draw(mutated(value[index])), *value[index + 1 :]]
    how = draw(st.sampled_from(["replace", "drop", "add", "wrap", "hostile"]))
    if how == "drop" and isinstance(value, dict) and value:
        key = draw(st.sampled_from(sorted(value)))
        return {k: v for k, v in value.items() if k != key}
    if how == "drop" and isinstance(value, list) and value:
        return value[1:]
    if how == "add" and isinstance(value, dict):
        return {**value, draw(st.text(max_size=8) | ODD_STRINGS): draw(ARBITRARY)}
    if how == "add" and isinstance(value, list):
        return [*value, draw(ARBITRARY)]
    if how == "wrap":
        return draw(st.sampled_from([[value], {"value": value}, [value, value]]))
    if how == "hostile":
        return draw(HOSTILE)
    return draw(ARBITRARY)


def from_schema(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values valid for the JSON Schema features the games publish."""
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "oneOf" in schema and schema.get("type") != "object" and "properties" not in schema:
        return st.one_of([from_schema(branch) for branch in schema["oneOf"]])
    kind = schema.get("type")
    if kind == "integer":
        return st.integers(schema.get("minimum"), schema.get("maximum"))
    if kind == "array":
        items = from_schema(schema.get("items", {}))
        low = schema.get("minItems", 0)
        return st.lists(
            items,
            min_size=low,
            max_size=schema.get("maxItems", low + 4),
            unique=bool(schema.get("uniqueItems")),
        )
    if kind == "object" or "properties" in schema:
        return _object(schema)
    return ARBITRARY


@st.composite
def _object(draw: st.DrawFn, schema: dict[str, Any]) -> dict[str, Any]:
    properties: dict[str, Any] = schema.get("properties", {})
    branches = [set(b.get("required", [])) for b in schema.get("oneOf", [])]
    required = set(schema.get("required", []))
    if branches:
        required |= draw(st.sampled_from(branches))
    exclusive = set().union(*branches) if branches else set()
    optional = sorted(set(properties) - required - exclusive)
    chosen = sorted(required) + [name for name in optional if draw(st.booleans())]
    return {name: draw(from_schema(properties[name])) for name in chosen}


def options_from(spec: dict[str, dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """Options valid for a game's option spec (type, choices, min, max)."""

    def one(option: dict[str, Any]) -> st.SearchStrategy[Any]:
        if "choices" in option:
            return st.sampled_from(option["choices"])
        if option["type"] == "int":
            return st.integers(option.get("min"), option.get("max"))
        if option["type"] == "bool":
            return st.booleans()
        return st.text(max_size=12)

    return st.fixed_dictionaries({}, optional={name: one(o) for name, o in spec.items()})


def packable(value: Any) -> Any:
    """What msgpack can carry: an integer past 64 bits as its digits, and a string holding a
    lone surrogate as its bytes (bin), which the server decodes as bytes."""
    if isinstance(value, dict):
        return {
            packable(k) if isinstance(k, str) else str(k): packable(v) for k, v in value.items()
        }
    if isinstance(value, list):
        return [packable(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**64:
        return str(value)
    if isinstance(value, str):
        try:
            value.encode()
        except UnicodeEncodeError:
            return value.encode("utf-8", "surrogatepass")
    return value


# The body's format, then the answer's: an echo in the other format is the one it may not hold.
WIRES = st.sampled_from(["json>json", "json>msgpack", "msgpack>msgpack", "msgpack>json"])


async def send(api: Api, path: str, body: Any, token: str, wire: str) -> Answer:
    try:
        return await _send(api, path, body, token, wire)
    except UndocumentedAnswer as exc:
        raise UndocumentedAnswer(f"{exc}, for {wire} {body!r:.2000}") from exc


async def _send(api: Api, path: str, body: Any, token: str, wire: str) -> Answer:
    sent, answered = wire.split(">")
    headers = {"Accept": f"application/{answered}"}
    if sent == "msgpack":
        raw = msgpack.packb(packable(body))
        headers["Content-Type"] = "application/msgpack"
        return await api.post(path, token=token, headers=headers, raw=raw)
    return await api.post(path, body, token=token, headers=headers)


def refused(answer: Answer) -> bool:
    """A documented answer (Api checked it): a 2xx, or a 4xx in the error shape."""
    assert answer.status < 500, (answer.status, answer.body)
    if answer.status < 300:
        return False
    assert set(answer.body) == {"error"}, answer.body
    assert {"code", "message", "details"} <= set(answer.body["error"]), answer.body
    return True


def on_loop(loop: asyncio.AbstractEventLoop, coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run_coroutine_threadsafe(coroutine, loop).result(timeout=60)


@pytest.fixture(scope="module")
async def games(api: Api) -> dict[str, dict[str, Any]]:
    _, token = await api.new_player("reader")
    listed = await api.get("/v1/games", token=token)
    assert listed.status == 200
    # The service's own games: other tests add theirs, named test-…, to the same registry.
    shipped = {game.id for game in REGISTRY.games() if not game.id.startswith("test-")}
    assert sorted(shipped) == sorted(GAME_IDS), "a new game needs its place here"
    return {g["id"]: g for g in listed.body["games"] if g["id"] in shipped}


# --- creating and joining -------------------------------------------------------------------


async def mine(api: Api, token: str) -> list[Any]:
    page = await api.get("/v1/matches?mine=true&limit=100", token=token)
    assert page.status == 200
    return [(m["match_id"], m["status"], m["version"]) for m in page.body["matches"]]


async def _create_once(api: Api, token: str, body: dict[str, Any], wire: str) -> None:
    before = await mine(api, token)
    answer = await send(api, "/v1/matches", body, token, wire)
    if refused(answer):
        assert await mine(api, token) == before, (body, answer.body)
        return
    assert answer.status == 201
    # Give the seat back, so that the player's caps never refuse the next example.
    left = await api.post(f"/v1/matches/{answer.body['match_id']}/resign", token=token)
    assert left.status == 200, left.body


@pytest.mark.parametrize("game_id", GAME_IDS)
async def test_no_create_answers_500_and_a_refused_one_makes_no_match(
    api: Api, games: dict[str, dict[str, Any]], game_id: str
) -> None:
    game = games[game_id]
    _, token = await api.new_player("creator")
    loop = asyncio.get_running_loop()
    schema = game["loadout"]
    valid_loadouts = st.just(game["sample_loadout"])
    if schema is not None:
        valid_loadouts |= from_schema(schema)
    loadouts = st.one_of(
        valid_loadouts,
        valid_loadouts.flatmap(mutated),
        HOSTILE,
        st.none(),
    )
    options = st.one_of(
        options_from(game["options"]),
        options_from(game["options"]).flatmap(mutated),
        HOSTILE,
    )
    seats = st.integers(game["min_seats"], game["max_seats"]) | ARBITRARY

    @budget(EXAMPLES)
    @given(loadout=loadouts, options=options, seats=seats, wire=WIRES, whole=st.booleans())
    def creates(loadout: Any, options: Any, seats: Any, wire: str, whole: bool) -> None:
        body: Any = {"game": game_id, "seats": seats, "options": options, "loadout": loadout}
        if whole:
            body = {**body, "seats": game["min_seats"]}
        on_loop(loop, _create_once(api, token, body, wire))

    await asyncio.to_thread(creates)


async def _join_once(
    api: Api, tokens: list[str], waiting: list[str], body: dict[str, Any], loadout: Any, wire: str
) -> None:
    if not waiting:
        created = await api.post("/v1/matches", body, token=tokens[0])
        assert created.status == 201, created.body
        waiting.append(created.body["match_id"])
    match_id = waiting[0]
    before = await read(api, tokens[0], match_id)
    answer = await send(api, f"/v1/matches/{match_id}/join", {"loadout": loadout}, tokens[1], wire)
    if refused(answer):
        assert await read(api, tokens[0], match_id) == before, (loadout, answer.body)
        return
    # The joiner's seat is given back: the match waits again for the next example.
    left = await api.post(f"/v1/matches/{match_id}/resign", token=tokens[1])
    assert left.status == 200, left.body
    if answer.body["status"] != "waiting":
        waiting.clear()


@pytest.mark.parametrize("game_id", GAME_IDS)
async def test_no_join_answers_500_and_a_refused_one_takes_no_seat(
    api: Api, games: dict[str, dict[str, Any]], game_id: str
) -> None:
    game = games[game_id]
    tokens = await new_players(api, 2)
    loop = asyncio.get_running_loop()
    # Three seats where the game has them, so that a join leaves the match waiting.
    seats = min(3, game["max_seats"])
    body = {"game": game_id, "seats": seats, "loadout": game["sample_loadout"]}
    schema = game["loadout"]
    valid = st.just(game["sample_loadout"])
    if schema is not None:
        valid |= from_schema(schema)
    loadouts = st.one_of(valid, valid.flatmap(mutated), HOSTILE, st.none())
    waiting: list[str] = []

    @budget(EXAMPLES)
    @given(loadout=loadouts, wire=WIRES)
    def joins(loadout: Any, wire: str) -> None:
        on_loop(loop, _join_once(api, tokens, waiting, body, loadout, wire))

    await asyncio.to_thread(joins)


# --- acting ---------------------------------------------------------------------------------


class Table:
    """A live match of one game between two players, moved on by random legal actions."""

    def __init__(self, api: Api, game: dict[str, Any], tokens: list[str]) -> None:
        self.api = api
        self.game = game
        self.tokens = tokens
        self.match_id: str | None = None

    async def start(self) -> str:
        created = await self.api.post(
            "/v1/matches",
            {"game": self.game["id"], "seats": 2, "loadout": self.game["sample_loadout"]},
            token=self.tokens[0],
        )
        assert created.status == 201, created.body
        match_id: str = created.body["match_id"]
        joined = await self.api.post(
            f"/v1/matches/{match_id}/join",
            {"loadout": self.game["sample_loadout"]},
            token=self.tokens[1],
        )
        assert joined.status == 200, joined.body
        self.match_id = match_id
        return match_id

    async def live(self) -> str:
        if self.match_id is None:
            return await self.start()
        match = await read(self.api, self.tokens[0], self.match_id)
        if match["status"] != "active":
            return await self.start()
        return self.match_id

    async def advance(self, rng: random.Random) -> None:
        """One legal answer by a seat asked to act: the next example meets another point."""
        match_id = await self.live()
        match = await read(self.api, self.tokens[0], match_id)
        if not match["to_act"]:
            return
        seat = rng.choice(match["to_act"])
        mine = await read(self.api, self.tokens[seat], match_id)
        prompt = mine["prompt"]
        if prompt["actions"]:
            action = rng.choice(prompt["actions"])
        else:
            # Only parameters (a cut): the lowest of each bound is always legal.
            kind, params = next(iter(prompt["params"].items()))
            action = {"type": kind, **{n: p.get("minimum", 1) for n, p in params.items()}}
        body = {"version": mine["version"], "action": action}
        answer = await self.api.post(
            f"/v1/matches/{match_id}/actions", body, token=self.tokens[seat]
        )
        assert answer.status == 200, answer.body


# A live match is state outside hypothesis: what an example meets there differs from one run to
# the next, so the shape of an answer is chosen by a generator hypothesis seeds, and its odd
# leaves are drawn up front (`pool`), the same draws whatever the match holds.


def shaped(rng: random.Random, schema: dict[str, Any], pool: list[Any]) -> Any:
    """A value valid for the schema features prompts publish (enum, integer bounds, arrays)."""
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return rng.choice(schema["enum"])
    if schema.get("type") == "integer":
        low, high = schema.get("minimum", -(2**31)), schema.get("maximum", 2**31)
        return rng.choice([low, high, rng.randint(low, high)]) if low <= high else low
    if schema.get("type") == "array":
        items = schema.get("items", {})
        count = rng.randint(schema.get("minItems", 0), schema.get("maxItems", 4))
        values = [shaped(rng, items, pool) for _ in range(count)]
        return list(dict.fromkeys(values)) if schema.get("uniqueItems") else values
    return rng.choice(pool)


def twisted(rng: random.Random, value: Any, pool: list[Any]) -> Any:
    """`value` with one node replaced, dropped, added to or wrapped."""
    if isinstance(value, dict) and value and rng.random() < 0.5:
        key = rng.choice(sorted(value))
        return {**value, key: twisted(rng, value[key], pool)}
    if isinstance(value, list) and value and rng.random() < 0.5:
        index = rng.randrange(len(value))
        return [*value[:index], twisted(rng, value[index], pool), *value[index + 1 :]]
    how = rng.choice(["replace", "drop", "add", "wrap"])
    if how == "drop" and isinstance(value, dict) and value:
        key = rng.choice(sorted(value))
        return {k: v for k, v in value.items() if k != key}
    if how == "drop" and isinstance(value, list) and value:
        return value[1:]
    if how == "add" and isinstance(value, dict):
        return {**value, rng.choice(["x", "type", "", "\ud800", "seat"]): rng.choice(pool)}
    if how == "add" and isinstance(value, list):
        return [*value, rng.choice(pool)]
    if how == "wrap":
        return rng.choice([[value], {"value": value}, [value, value]])
    return rng.choice(pool)


def action_for(rng: random.Random, prompt: dict[str, Any] | None, pool: list[Any]) -> Any:
    """An answer to `prompt`, mostly not a legal one: an enumerated action mutated (a list-valued
    `type` among them), a parameterised one with parameters from its schema or outside it, or
    anything at all."""
    enumerated = [] if prompt is None else prompt["actions"]
    params: dict[str, dict[str, Any]] = {} if prompt is None else prompt["params"]
    choices = ["hostile"]
    if enumerated:
        choices += ["legal", "mutated", "list_type"]
    if params:
        choices += ["params", "params_mutated", "params_hostile"]
    # Parameters are the rules' own to check: they are tried most where a prompt has any.
    if params and rng.random() < 0.5:
        choices = [way for way in choices if way.startswith("params")]
    how = rng.choice(choices)
    if how == "legal":
        return rng.choice(enumerated)
    if how == "mutated":
        return twisted(rng, rng.choice(enumerated), pool)
    if how == "list_type":
        action = rng.choice(enumerated)
        return {**action, "type": [action["type"]]}
    if how.startswith("params"):
        kind = rng.choice(sorted(params))
        fields = {name: shaped(rng, schema, pool) for name, schema in params[kind].items()}
        if how == "params_mutated":
            changed = twisted(rng, fields, pool)
            return {"type": kind, **changed} if isinstance(changed, dict) else changed
        if how == "params_hostile":
            # An odd value, or a list holding one where the rules may build a set.
            odd = {
                name: rng.choice(pool) if rng.random() < 0.5 else [rng.choice(pool)]
                for name in params[kind]
            }
            return {"type": kind, **odd}
        return {"type": kind, **fields}
    return rng.choice(pool)


async def _act_once(
    table: Table, rng: random.Random, pool: list[Any], wire: str, advance: random.Random
) -> None:
    api = table.api
    match_id = await table.live()
    match = await read(api, table.tokens[0], match_id)
    seat = rng.choice(match["to_act"] or [0]) if rng.random() < 0.9 else rng.choice([0, 1])
    token = table.tokens[seat]
    before = await read(api, token, match_id)
    action = action_for(rng, before["prompt"], pool)
    version = rng.choice([before["version"]] * 4 + [0, before["version"] + 1, rng.choice(pool)])
    body: Any = {"version": version, "action": action}
    if rng.random() < 0.1:
        body = twisted(rng, body, pool)
    answer = await send(api, f"/v1/matches/{match_id}/actions", body, token, wire)
    if refused(answer):
        after = await read(api, token, match_id)
        seen = ("version", "prompt", "view", "status", "to_act")
        assert {k: after[k] for k in seen} == {k: before[k] for k in seen}, (body, answer.body)
    # One to three legal steps on: the examples meet points deeper in the game.
    for _ in range(advance.randint(1, 3)):
        await table.advance(advance)


@pytest.mark.parametrize("game_id", GAME_IDS)
async def test_no_action_answers_500_and_a_refused_one_changes_nothing(
    api: Api, games: dict[str, dict[str, Any]], game_id: str
) -> None:
    table = Table(api, games[game_id], await new_players(api, 2))
    loop = asyncio.get_running_loop()
    advance = random.Random(game_id)

    # A failure is not shrunk: the match it met has moved on, and the next example meets
    # another point; hypothesis reports the failing draws and the exception.
    @budget(ACTION_EXAMPLES, phases=(Phase.explicit, Phase.generate))
    @given(
        rng=st.integers(0, 2**64 - 1).map(random.Random),
        pool=st.lists(ARBITRARY, min_size=3, max_size=3).map(lambda p: [*p, None])
        | st.lists(HOSTILE, min_size=1, max_size=2),
        wire=WIRES,
    )
    def acts(rng: random.Random, pool: list[Any], wire: str) -> None:
        on_loop(loop, _act_once(table, rng, pool, wire, advance))

    await asyncio.to_thread(acts)
