"""Who may do what: every route with an id, for every kind of caller.

Each answer is also checked against the OpenAPI document by the tests' client, so a status the
document does not list fails here too. Another player never sees the owner's private fields.
"""

import uuid
from typing import Any

import pytest

from service.api.auth import issue_token
from tests.api.runs_helpers import spend_gold
from tests.conftest import TEST_OPS_TOKEN, TEST_SECRET
from tests.games import cardgame
from tests.http import Api

cardgame.register_test_games()
DECK = {"deck": ["c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"]}

# Each route with an id, a body the owner may send, and the status the owner gets.
ROUTES: list[tuple[str, str, Any]] = [
    ("GET", "/v1/runs/{run}", None),
    ("POST", "/v1/runs/{run}/buy", {"slot": 0}),
    ("POST", "/v1/runs/{run}/sell", {"position": 0}),
    ("POST", "/v1/runs/{run}/reroll", {}),
    ("POST", "/v1/runs/{run}/freeze", {"slot": 1}),
    ("POST", "/v1/runs/{run}/arrange", {"order": [0]}),
    ("POST", "/v1/runs/{run}/end-turn", {"round": 2}),
    ("GET", "/v1/battles/{battle}", None),
    ("GET", "/v1/battles/{battle}/replay", None),
    ("GET", "/v1/matches/{match}", None),
    ("POST", "/v1/matches/{match}/actions", {"version": 0, "action": {"type": "cut", "at": 1}}),
    ("GET", "/v1/matches/{match}/events", None),
    ("POST", "/v1/matches/{match}/join", {"loadout": DECK}),
    ("GET", "/v1/matches/{match}/replay", None),
    ("POST", "/v1/matches/{match}/resign", {}),
    ("PUT", "/v1/matches/{match}/preferences", {"preferences": {"auto_pass": True}}),
    ("DELETE", "/v1/auth/devices/{device}", None),
]
CALLERS = ["none", "expired", "forged", "revoked", "deleted", "other", "ops"]
# Tokens no route accepts, whoever they were issued to.
DEAD = ("none", "expired", "forged", "revoked", "deleted", "ops")


@pytest.fixture(scope="module")
async def owned(api: Api) -> dict[str, Any]:
    """A run with a battle and a card match, all owned by one player."""
    owner_id, owner = await api.new_player("owner")
    _, opponent = await api.new_player("opponent")
    _, other = await api.new_player("other")
    # A second session of the owner's, signed out: its token is refused, the first is not.
    device = {"device_id": f"owner-device-{uuid.uuid4().hex}"}
    linked = await api.post("/v1/auth/device/link", device, token=owner)
    fingerprint = linked.body["devices"][0]["fingerprint"]
    second = (await api.post("/v1/auth/device", device)).body["access_token"]
    await api.post("/v1/auth/logout", {}, token=second)
    # A player who deleted its account: its token names no one.
    _, gone = await api.new_player("gone")
    deleted = await api.call("DELETE", "/v1/players/me", {}, token=gone)
    assert deleted.status == 200, deleted.body
    run = (await api.post("/v1/runs", {}, token=owner)).body
    run = await spend_gold(api, owner, run)
    turn = (await api.post(f"/v1/runs/{run['run_id']}/end-turn", {"round": 1}, token=owner)).body
    body = {"game": cardgame.CARD_GAME.id, "seats": 2, "loadout": DECK}
    match = (await api.post("/v1/matches", body, token=owner)).body
    await api.post(f"/v1/matches/{match['match_id']}/join", {"loadout": DECK}, token=opponent)
    return {
        "ids": {
            "run": run["run_id"],
            "battle": turn["battle_id"],
            "match": match["match_id"],
            "device": fingerprint,
        },
        "tokens": {
            "owner": owner,
            "revoked": second,
            "deleted": gone,
            "other": other,
            "expired": issue_token(TEST_SECRET, uuid.UUID(owner_id), -10),
            "forged": issue_token("another-secret-of-thirty-two-bytes!!", uuid.UUID(owner_id), 60),
            "ops": TEST_OPS_TOKEN,
        },
    }


def _token(owned: dict[str, Any], caller: str) -> str | None:
    return None if caller == "none" else owned["tokens"][caller]


@pytest.mark.parametrize(("method", "path", "body"), ROUTES)
@pytest.mark.parametrize("caller", CALLERS)
async def test_only_the_owner_or_a_seated_player_may_act_and_strangers_see_nothing_private(
    api: Api, owned: dict[str, Any], method: str, path: str, body: Any, caller: str
) -> None:
    url = path.format(**owned["ids"])
    answer = await api.call(method, url, body, token=_token(owned, caller))
    if caller in DEAD:
        # The ops token is no player's token: it opens /v1/ops only.
        assert (answer.status, answer.error_code) == (401, "unauthorized"), answer.body
        return
    if "/runs/" in path or "/battles/" in path or "/devices/" in path:
        assert (answer.status, answer.error_code) == (404, "not_found")
    elif path.endswith(("/actions", "/resign", "/preferences")):
        assert (answer.status, answer.error_code) == (403, "not_seated")
    elif path.endswith("/join"):
        assert (answer.status, answer.error_code) == (409, "match_full")
    elif path.endswith("/replay"):
        assert (answer.status, answer.error_code) == (409, "match_not_finished")
    else:
        assert answer.status == 200
        # A spectator: public facts only, never a hand.
        watched = answer.body.get("view") or {"events": answer.body["events"]}
        assert answer.body.get("seat") is None
        assert all(hand["cards"] is None for hand in watched.get("hands", []))
        assert all(e["data"].get("card") is None for e in watched.get("events", []))


@pytest.mark.parametrize(("method", "path", "body"), ROUTES)
async def test_the_owner_gets_an_answer_the_document_lists(
    api: Api, owned: dict[str, Any], method: str, path: str, body: Any
) -> None:
    answer = await api.call(
        method, path.format(**owned["ids"]), body, token=owned["tokens"]["owner"]
    )
    assert answer.status < 500, answer.body


async def test_every_route_for_players_refuses_every_dead_token(
    api: Api, owned: dict[str, Any]
) -> None:
    """Every route the document says takes a player's token, the new ones included, with
    every kind of token that must not open it: a 401, before anything else is looked at."""
    document = (await api.get("/v1/openapi.json")).body
    routes = [
        (method, path)
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
        if operation.get("security") == [{"bearer": []}]
    ]
    assert ("post", "/v1/auth/logout") in routes and ("patch", "/v1/players/me") in routes
    ids = {**owned["ids"], "run_id": owned["ids"]["run"], "match_id": owned["ids"]["match"]}
    # No ticket is needed: a dead token is refused before the path is read.
    ids["ticket_id"] = owned["ids"]["match"]
    for method, path in routes:
        url = path.replace("{battle_id}", str(ids["battle"])).replace(
            "{fingerprint}", ids["device"]
        )
        url = url.format(**ids)
        for caller in DEAD:
            answer = await api.call(method.upper(), url, {}, token=_token(owned, caller))
            assert (answer.status, answer.error_code) == (401, "unauthorized"), (
                method,
                url,
                caller,
                answer.body,
            )


async def test_ops_endpoints_refuse_player_tokens_and_need_the_ops_token(
    api: Api, owned: dict[str, Any]
) -> None:
    for path in ("/v1/ops/matchmaking", "/v1/ops/database"):
        player = await api.get(path, token=owned["tokens"]["owner"])
        assert (player.status, player.error_code) == (401, "unauthorized")
        wrong = await api.get(path, headers={"X-Ops-Token": "nope"})
        assert (wrong.status, wrong.error_code) == (403, "forbidden")
        right = await api.get(path, headers={"X-Ops-Token": TEST_OPS_TOKEN})
        assert right.status == 200
