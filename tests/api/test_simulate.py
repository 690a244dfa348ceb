import uuid
from typing import Any

import msgpack
import pytest

from service.api.auth import issue_token
from service.games.cryptids import ENGINE_BUILD, load_ruleset, simulate
from tests.conftest import TEST_SECRET
from tests.http import Api

A = {
    "cryptids": [
        {"species": "mothman", "ability": 0, "level": 2},
        {"species": "trauco", "ability": 1, "level": 1},
    ]
}
B = {"cryptids": [{"species": "nahual", "ability": 0, "level": 1}]}


def _request(**changes: Any) -> dict[str, Any]:
    return {"seed": 42, "a": A, "b": B, **changes}


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
async def test_simulate_answers_the_engines_result_and_replay(api: Api, fmt: str) -> None:
    _, token = await api.new_player()
    answer = await api.post("/v1/battles/simulate", _request(), token=token, fmt=fmt)
    assert answer.status == 200
    expected = simulate(
        load_ruleset(), 42, [("mothman", 0, 2), ("trauco", 1, 1)], [("nahual", 0, 1)]
    )
    body = answer.body
    assert body["ruleset"] == "cryptids-2027.01"  # the default
    assert (body["seed"], body["winner"], body["rolls"]) == (42, expected.winner, expected.rolls)
    assert body["health"] == {"a": expected.health_a, "b": expected.health_b}
    assert expected.replay is not None
    assert body["replay"] == msgpack.unpackb(msgpack.packb(expected.replay.to_wire()))


async def test_simulate_without_replay_and_the_largest_seed(api: Api) -> None:
    _, token = await api.new_player()
    answer = await api.post(
        "/v1/battles/simulate?replay=false", _request(seed=2**64 - 1), token=token, fmt="msgpack"
    )
    assert answer.status == 200
    assert "replay" not in answer.body
    assert answer.body["seed"] == 2**64 - 1


async def test_simulate_refuses_a_well_signed_token_of_a_player_who_is_gone(api: Api) -> None:
    """A token signed with the service's key but naming no player (a restored database), or
    naming a player who deleted its account, is a 401 here as on every other route."""
    nobody = issue_token(TEST_SECRET, uuid.uuid4(), 3600)
    refused = await api.post("/v1/battles/simulate", _request(), token=nobody)
    assert (refused.status, refused.error_code) == (401, "unauthorized")
    assert refused.body["error"]["message"] == "the token names no known player"
    _, token = await api.new_player("leaving")
    assert (await api.post("/v1/battles/simulate", _request(), token=token)).status == 200
    deleted = await api.call("DELETE", "/v1/players/me", {}, token=token)
    assert deleted.status == 200, deleted.body
    gone = await api.post("/v1/battles/simulate", _request(), token=token)
    assert (gone.status, gone.error_code) == (401, "unauthorized")


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"seed": -1}, "seed"),
        ({"seed": 2**64}, "seed"),
        ({"seed": "7"}, "seed"),
        ({"ruleset": "cryptids-1999.01"}, "ruleset"),
        ({"a": {"cryptids": []}}, "a.cryptids"),
        ({"b": {"cryptids": [B["cryptids"][0]] * 6}}, "b.cryptids"),
        (
            {"a": {"cryptids": [{"species": "dragon", "ability": 0, "level": 1}]}},
            "a.cryptids[0].species",
        ),
        (
            {"a": {"cryptids": [{"species": "mothman", "ability": 2, "level": 1}]}},
            "a.cryptids[0].ability",
        ),
        (
            {"b": {"cryptids": [{"species": "mothman", "ability": 0, "level": 4}]}},
            "b.cryptids[0].level",
        ),
        (
            {"b": {"cryptids": [{"species": "tentacle", "ability": 0, "level": 1}]}},
            "b.cryptids[0].species",
        ),
        ({"a": {"cryptids": [{"species": "mothman", "level": 1}]}}, "a.cryptids[0].ability"),
        ({"a": None}, "a"),
    ],
)
async def test_invalid_simulate_requests_are_422_naming_the_field(
    api: Api, changes: dict[str, Any], field: str
) -> None:
    _, token = await api.new_player()
    # msgpack has no integer beyond 2^64 - 1, so that case exists only in JSON.
    formats = ("json",) if changes.get("seed") == 2**64 else ("json", "msgpack")
    for fmt in formats:
        answer = await api.post("/v1/battles/simulate", _request(**changes), token=token, fmt=fmt)
        assert answer.status == 422, answer.body
        assert answer.body["error"]["details"]["fields"][0]["field"] == field
        assert answer.body["error"]["message"].startswith(f"{field}:")


async def test_simulate_needs_a_player(api: Api) -> None:
    assert (await api.post("/v1/battles/simulate", _request())).status == 401


async def test_content_is_public_and_names_the_ruleset(api: Api) -> None:
    content = (await api.get("/v1/content/cryptids", fmt="msgpack")).body
    assert content["ruleset"] == "cryptids-2027.01"
    assert content["engine"] == ENGINE_BUILD
    assert {"cryptids-2026.12", "cryptids-2027.01"} <= set(content["rulesets"])
    assert len(content["species"]) >= 30
    assert {s["tier"] for s in content["species"]} == {1, 2, 3, 4, 5, 6}
    mothman = next(s for s in content["species"] if s["id"] == "mothman")
    assert len(mothman["abilities"]) == 2
    assert len(mothman["abilities"][0]["magnitude"]) == 3
    assert content["battle"]["board_size"] == 5
    unknown = await api.get("/v1/content/cryptids?ruleset=nope")
    assert unknown.status == 422
    assert unknown.body["error"]["details"]["fields"][0]["field"] == "query.ruleset"
