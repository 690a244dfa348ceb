"""A client written from the API alone plays each game to its end
(docs/api.md#drawing-a-table).

The client here imports nothing of the server: it reads `GET /v1/games`, the game's catalogue
and the match's views and prompts over HTTP, answers prompts with actions it builds from them
(choosing at random, with a seeded generator), sends some refusals on purpose and reads their
reasons, and draws the table before and after with the game's renderer, which names every card
from the catalogue. Every answer is checked against the OpenAPI document, every view against
its game's `View_<game>` schema (tests/http.py).
"""

import importlib
import random
from collections.abc import Mapping
from typing import Any

import pytest

from tests.clients.names import Names
from tests.clients.prompts import choose
from tests.http import Answer, Api

GAMES = ["necromancers", "fate-duel", "loyalty", "medianokte"]
MAX_TURNS = 3000


def _renderer(game: str) -> Any:
    return importlib.import_module(f"tests.clients.{game.replace('-', '_')}_table")


async def _refusals_explain_themselves(
    api: Api, token: str, match_id: str, state: Mapping[str, Any]
) -> list[str]:
    """Send what the prompt does not offer: each refusal names its reason and changes nothing."""
    prompt = state["prompt"]
    offered = sorted({a["type"] for a in prompt["actions"]} | set(prompt["params"]))
    wrong: list[Any] = [{"type": "no_such_action"}, {"kind": "pass"}]
    if prompt["actions"]:
        first = prompt["actions"][0]
        wrong.append({**first, "unexpected": 1})
    reasons = []
    for action in wrong:
        body = {"version": state["version"], "action": action}
        refused = await api.post(f"/v1/matches/{match_id}/actions", body, token=token)
        assert (refused.status, refused.error_code) == (422, "illegal_action"), refused.body
        error = refused.body["error"]
        assert error["message"] and isinstance(error["details"]["reason"], str)
        if error["details"]["reason"] == "type_not_offered":
            assert error["details"]["offered"] == offered
        reasons.append(error["details"]["reason"])
    after = await api.get(f"/v1/matches/{match_id}", token=token)
    assert after.body["version"] == state["version"]
    return reasons


async def _play(api: Api, game: str, seed: int) -> tuple[str, str, list[str]]:
    rng = random.Random(seed)
    _, token = await api.new_player("client")
    _, watcher = await api.new_player("watcher")
    games = (await api.get("/v1/games", token=token)).body["games"]
    info = next(g for g in games if g["id"] == game)
    names = Names((await api.get(f"/v1/content/{game}")).body)
    body = {"game": game, "seats": 2, "bots": [1], "loadout": info["sample_loadout"]}
    created = await api.post("/v1/matches", body, token=token)
    assert created.status == 201, created.body
    match_id = created.body["match_id"]
    render = _renderer(game).render
    state = (await api.get(f"/v1/matches/{match_id}", token=token)).body
    before = render(state["view"], names)
    spectator = (await api.get(f"/v1/matches/{match_id}", token=watcher)).body
    render(spectator["view"], names)
    reasons: list[str] = []
    for turn in range(MAX_TURNS):
        if state["status"] == "finished":
            break
        if state["prompt"] is None:
            state = (await api.get(f"/v1/matches/{match_id}", token=token)).body
            continue
        if turn == 0:
            reasons = await _refusals_explain_themselves(api, token, match_id, state)
        answer = await _act(api, token, match_id, state, rng)
        if answer.status == 200:
            state = (await api.get(f"/v1/matches/{match_id}", token=token)).body
    assert state["status"] == "finished", f"{game} did not end in {MAX_TURNS} answers"
    spectator = (await api.get(f"/v1/matches/{match_id}", token=watcher)).body
    assert spectator["seat"] is None
    render(spectator["view"], names)
    return before, render(state["view"], names), reasons


async def _act(
    api: Api, token: str, match_id: str, state: Mapping[str, Any], rng: random.Random
) -> Answer:
    action = choose(state["prompt"], rng)
    body = {"version": state["version"], "action": action}
    answer = await api.post(f"/v1/matches/{match_id}/actions", body, token=token)
    if answer.status != 200:
        # A parameterised answer may break a rule the schema cannot say: it is explained.
        assert (answer.status, answer.error_code) == (422, "illegal_action"), answer.body
        assert answer.body["error"]["details"]["reason"] not in ("not_offered", "")
    return answer


@pytest.mark.parametrize("game", GAMES)
async def test_a_client_from_the_api_alone_plays_a_whole_match_and_draws_the_table(
    api: Api, game: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before, after, reasons = await _play(api, game, seed=len(game))
    assert before != after
    assert {"type_not_offered", "not_an_action"} <= set(reasons)
    with capsys.disabled():
        print(f"\n--- {game}: before ---\n{before}\n--- {game}: after ---\n{after}")
