"""The match kernel through real HTTP, on the small card game of tests/games/cardgame.py:
loadouts, prompts to several seats at once, per-seat versions, parameterised actions, hidden
cards on every path, bots, a best-of-3 series, and the lifecycle calls.
"""

import asyncio
import json
import random
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import pytest

from service.config import Settings
from service.games import registry
from service.games.kernel.protocol import RESIGN, rebuild
from service.games.registry import get_game
from service.usecases.matches.progress import bot_loadout_seed
from tests.api.matches_helpers import (
    act,
    all_events,
    cache_agrees_with_log,
    finished_matches_rebuild,  # noqa: F401 (autouse)
    new_players,
    play_out,
    read,
    start_match,
)
from tests.conftest import running_service
from tests.games import cardgame
from tests.games.helpers import contains
from tests.games.test_kernel_registry import second_ruleset
from tests.http import Api

cardgame.register_test_games()
GAME = cardgame.CARD_GAME.id
SERIES = cardgame.CARD_SERIES.id
DECK = ["c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"]


async def card_match(api: Api, tokens: list[str], game: str = GAME, **fields: Any) -> str:
    """A started match of the card game, each player bringing DECK."""
    body = {"game": game, "seats": 2, "loadout": {"deck": DECK}, **fields}
    created = await api.post("/v1/matches", body, token=tokens[0])
    assert created.status == 201, created.body
    match_id = str(created.body["match_id"])
    for token in tokens[1:]:
        joined = await api.post(
            f"/v1/matches/{match_id}/join", {"loadout": {"deck": DECK}}, token=token
        )
        assert joined.status == 200, joined.body
    return match_id


async def cut_both(api: Api, tokens: list[str], match_id: str) -> None:
    for token in tokens:
        mine = await read(api, token, match_id)
        answer = await act(api, token, match_id, mine["version"], {"type": "cut", "at": 3})
        assert answer.status == 200, answer.body


def answer_to(prompt: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """Any legal answer: an enumerated action, or a parameterised one within its domain."""
    if prompt["actions"]:
        action: dict[str, Any] = rng.choice(prompt["actions"])
        return action
    kind, params = next(iter(prompt["params"].items()))
    at = params["at"]
    return {"type": kind, "at": rng.randint(at["minimum"], at["maximum"])}


async def test_games_document_the_loadout_and_offer_a_ready_made_one(api: Api) -> None:
    (token,) = await new_players(api, 1)
    games = {g["id"]: g for g in (await api.get("/v1/games", token=token)).body["games"]}
    card = games[GAME]
    assert card["loadout"]["properties"]["deck"]["minItems"] == 8
    assert card["rulesets"] == [cardgame.CARD_GAME.ruleset]
    assert games["necromancers"]["loadout"] is None
    body = {"game": GAME, "seats": 2, "loadout": card["sample_loadout"]}
    assert (await api.post("/v1/matches", body, token=token)).status == 201


async def test_the_openapi_document_shows_each_games_loadout(settings: Settings) -> None:
    async with running_service(settings) as fresh:
        document = (await fresh.get("/v1/openapi.json")).body
    schema = document["components"]["schemas"][f"Loadout_{GAME}"]
    assert schema == cardgame.CARD_GAME.loadout_schema()
    create = document["components"]["schemas"]["NewMatch"]["properties"]["loadout"]
    assert "GET /v1/games" in create["description"]


@pytest.mark.parametrize(
    ("deck", "code", "card"),
    [
        (DECK[:7], "deck_size", None),
        (["c0", *DECK[1:]], "banned_card", "c0"),
        (["c5", "c5", "c5", *DECK[3:]], "too_many_copies", "c5"),
        (["c12", *DECK[1:]], "unknown_card", "c12"),
    ],
)
async def test_a_bad_deck_is_a_422_naming_the_rule_and_the_card(
    api: Api, deck: list[str], code: str, card: str | None
) -> None:
    a, b = await new_players(api, 2)
    bad = await api.post(
        "/v1/matches", {"game": GAME, "seats": 2, "loadout": {"deck": deck}}, token=a
    )
    assert (bad.status, bad.error_code) == (422, code)
    assert bad.body["error"]["details"]["rule"] == code
    if card is not None:
        assert bad.body["error"]["details"]["card"] == card
    good = await api.post(
        "/v1/matches", {"game": GAME, "seats": 2, "loadout": {"deck": DECK}}, token=a
    )
    match_id = good.body["match_id"]
    refused = await api.post(f"/v1/matches/{match_id}/join", {"loadout": {"deck": deck}}, token=b)
    assert (refused.status, refused.error_code) == (422, code)
    # The refused join took no seat: the match still waits for one.
    assert (await read(api, a, match_id))["seats"][1]["player_id"] is None


async def test_a_game_with_loadouts_needs_one_from_each_player(api: Api) -> None:
    (a,) = await new_players(api, 1)
    missing = await api.post("/v1/matches", {"game": GAME, "seats": 2}, token=a)
    assert (missing.status, missing.error_code) == (422, "missing_loadout")
    extra = await api.post(
        "/v1/matches", {"game": "necromancers", "seats": 2, "loadout": {"deck": DECK}}, token=a
    )
    assert (extra.status, extra.error_code) == (422, "no_loadout")


async def test_both_seats_are_asked_to_cut_at_once_and_one_answer_never_stales_the_other(
    api: Api,
) -> None:
    a, b = await new_players(api, 2)
    match_id = await card_match(api, [a, b])
    seen_a, seen_b = await read(api, a, match_id), await read(api, b, match_id)
    assert seen_a["to_act"] == [0, 1]
    assert seen_a["prompt"]["kind"] == seen_b["prompt"]["kind"] == "cut"
    assert seen_a["prompt"]["params"]["cut"]["at"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 7,
    }
    assert seen_a["legal_actions"] == []
    first = await act(api, a, match_id, seen_a["version"], {"type": "cut", "at": 2})
    assert first.status == 200, first.body
    # B answers at the version it saw, older than the match now: its own prompt is unchanged.
    second = await act(api, b, match_id, seen_b["version"], {"type": "cut", "at": 5})
    assert second.status == 200, second.body
    # A's prompt changed when both had cut: A acting on its cut-time view is stale.
    stale = await act(api, a, match_id, first.body["version"], {"type": "draw"})
    assert (stale.status, stale.error_code) == (409, "stale_version")
    assert stale.body["error"]["details"]["guard"] == second.body["version"]


async def test_a_parameter_out_of_its_domain_is_refused_with_a_reason_and_changes_nothing(
    api: Api,
) -> None:
    a, b = await new_players(api, 2)
    match_id = await card_match(api, [a, b])
    before = await read(api, a, match_id)
    for bad in ({"type": "cut", "at": 0}, {"type": "cut", "at": 8}, {"type": "cut", "at": "3"}):
        refused = await act(api, a, match_id, before["version"], bad)
        assert (refused.status, refused.error_code) == (422, "illegal_action")
        details = refused.body["error"]["details"]
        assert (details["reason"], details["field"]) == ("bad_param", "at")
        assert "'at'" in refused.body["error"]["message"]
    assert await read(api, a, match_id) == before


async def test_a_drawn_card_reaches_its_drawer_only_on_every_path(api: Api) -> None:
    a, b, watcher = await new_players(api, 3)
    match_id = await card_match(api, [a, b])
    await cut_both(api, [a], match_id)
    last = await act(
        api, b, match_id, (await read(api, b, match_id))["version"], {"type": "cut", "at": 1}
    )
    seen_b = (await read(api, b, match_id))["view"]["hands"][1]
    hand_b = [card["id"] for card in seen_b["cards"]]
    assert seen_b["count"] == 3 and all(isinstance(card, str) for card in hand_b)
    drawn_by_b = [e for e in last.body["events"] if e["kind"] == "drew" and e["data"]["seat"] == 1]
    assert [e["data"]["card"] for e in drawn_by_b] == hand_b
    drawn_by_a = [e for e in last.body["events"] if e["kind"] == "drew" and e["data"]["seat"] == 0]
    assert len(drawn_by_a) == 3 and all(e["data"]["card"] is None for e in drawn_by_a)
    view_a = (await read(api, a, match_id))["view"]
    assert view_a["hands"][1] == {"count": 3, "cards": None}
    assert view_a["decks"] == [{"count": 5, "cards": None}] * 2
    for token, seat in ((a, 0), (b, 1), (watcher, None)):
        events = await all_events(api, token, match_id)
        polled = await api.get(f"/v1/matches/{match_id}/events?after=0&wait=1", token=token)
        pushed = await _pushed(api, token, match_id)
        for received in (events, polled.body["events"], pushed):
            for card in hand_b:
                assert contains(received, card) == (seat == 1)
    watched = (await read(api, watcher, match_id))["view"]
    assert watched["hands"] == [{"count": 3, "cards": None}] * 2 and watched["seat"] is None


async def _pushed(api: Api, token: str, match_id: str) -> list[dict[str, Any]]:
    """The events the WebSocket pushes at once to `token`."""
    url = api.base_url.replace("http", "ws") + f"/v1/matches/{match_id}/ws?after=0&token={token}"
    async with api.session.ws_connect(url) as socket:
        frame = await socket.receive(timeout=5)
        assert frame.type == aiohttp.WSMsgType.TEXT
        events: list[dict[str, Any]] = json.loads(frame.data)["events"]
        return events


async def test_nothing_a_seat_receives_over_http_holds_a_secret_of_the_full_state(
    api: Api,
) -> None:
    """Random legal games; every answer is checked against the secrets of the state it saw.

    The states are rebuilt from the replay's log, so the check compares against the full
    state at each version, not against names of keys.
    """
    rng = random.Random(5)
    for _ in range(3):
        a, b, watcher = await new_players(api, 3)
        tokens = [a, b]
        match_id = await card_match(api, tokens)
        received: list[tuple[int, int | None, Any]] = []
        for _ in range(200):
            seat = rng.choice([0, 1])
            mine = await read(api, tokens[seat], match_id)
            received.append((mine["version"], seat, mine))
            if mine["status"] == "finished":
                break
            if mine["prompt"] is None:
                continue
            done = await act(
                api, tokens[seat], match_id, mine["version"], answer_to(mine["prompt"], rng)
            )
            assert done.status == 200, done.body
            received.append((done.body["version"], seat, done.body))
        watched = await read(api, watcher, match_id)
        received.append((watched["version"], None, watched))
        replay = (await api.get(f"/v1/matches/{match_id}/replay", token=watcher)).body
        states = _states_by_version(replay)
        for version, seat, payload in received:
            for secret in GAME_RULES.secrets(states[version], seat):
                assert not contains(payload, secret), (version, seat, secret)


GAME_RULES = cardgame.CARD_GAME


def _states_by_version(replay: dict[str, Any]) -> dict[int, Any]:
    state = GAME_RULES.setup(replay["seed"], 2, replay["options"], replay["loadouts"])
    states = {0: state}
    for step in replay["actions"]:
        state, _ = GAME_RULES.apply(state, step["seat"], step["action"])
        states[step["version"]] = state
    return states


async def test_a_bot_seat_plays_from_its_own_view_until_the_match_ends(api: Api) -> None:
    (a,) = await new_players(api, 1)
    body = {"game": GAME, "seats": 2, "bots": [1], "loadout": {"deck": DECK}}
    match_id = (await api.post("/v1/matches", body, token=a)).body["match_id"]
    rng = random.Random(2)
    for _ in range(100):
        mine = await read(api, a, match_id)
        if mine["status"] == "finished":
            break
        if mine["prompt"] is not None:
            answer = await act(api, a, match_id, mine["version"], answer_to(mine["prompt"], rng))
            assert answer.status == 200, answer.body
        else:
            await api.get(f"/v1/matches/{match_id}/events?after=0&wait=1", token=a)
    replay = (await api.get(f"/v1/matches/{match_id}/replay", token=a)).body
    assert replay["outcome"] is not None
    assert {a["source"] for a in replay["actions"] if a["seat"] == 1} == {"bot"}
    assert replay["loadouts"][1] == cardgame.CARD_GAME.sample_loadout(
        _bot_seed(replay["seed"]), replay["options"]
    )


def _bot_seed(match_seed: int) -> int:
    return bot_loadout_seed(match_seed, 1)


async def test_a_best_of_three_shows_the_score_and_replays_every_leg(api: Api) -> None:
    a, b = await new_players(api, 2)
    tokens = [a, b]
    match_id = await card_match(api, tokens, game=SERIES)
    view = (await read(api, a, match_id))["view"]
    assert (view["best_of"], view["leg"], view["score"]) == (3, 1, [0, 0])
    rng = random.Random(11)
    legs_seen = set()
    for _ in range(600):
        match = await read(api, a, match_id)
        if match["status"] == "finished":
            break
        legs_seen.add(match["view"]["leg"])
        seat = match["to_act"][0]
        mine = await read(api, tokens[seat], match_id)
        answer = await act(
            api, tokens[seat], match_id, mine["version"], answer_to(mine["prompt"], rng)
        )
        assert answer.status == 200, answer.body
    final = await read(api, a, match_id)
    assert final["status"] == "finished"
    winner = final["outcome"]["winners"][0]
    assert final["view"]["score"][winner] == 2 and legs_seen >= {1, 2}
    replay = (await api.get(f"/v1/matches/{match_id}/replay", token=a)).body
    kinds = [e["kind"] for e in replay["events"]]
    legs = replay["final"]["legs"]
    assert kinds.count("leg_started") == len(legs) == len({leg["rng"] for leg in legs})
    assert kinds[-1] == "series_over"


async def test_my_matches_newest_first_say_whether_i_am_asked(api: Api) -> None:
    a, b = await new_players(api, 2)
    older = await card_match(api, [a, b])
    await cut_both(api, [a], older)
    newer = await card_match(api, [a, b])
    listed = (await api.get("/v1/matches?mine=true", token=a)).body["matches"]
    assert [m["match_id"] for m in listed] == [newer, older]
    assert [m["asked"] for m in listed] == [True, False]
    assert listed[0]["seat"] == 0 and listed[0]["status"] == "active"
    (c,) = await new_players(api, 1)
    waiting = (
        await api.post(
            "/v1/matches", {"game": GAME, "seats": 2, "loadout": {"deck": DECK}}, token=c
        )
    ).body["match_id"]
    lobby = (await api.get("/v1/matches?limit=100", token=a)).body["matches"]
    assert waiting in [m["match_id"] for m in lobby]
    assert all(m["status"] == "waiting" for m in lobby)
    listed = next(m for m in lobby if m["match_id"] == waiting)
    # A joiner sees what it would play under (a loyalty mode, a public deal) before joining.
    assert listed["free_seats"] == 1 and listed["options"] == {"first_seat": 0}
    assert (await read(api, a, waiting))["options"] == {"first_seat": 0}


async def test_resigning_loses_the_match_and_every_later_action_is_409(api: Api) -> None:
    a, b = await new_players(api, 2)
    match_id = await card_match(api, [a, b])
    version = (await read(api, b, match_id))["version"]
    resigned = await api.post(f"/v1/matches/{match_id}/resign", token=a)
    assert resigned.status == 200, resigned.body
    assert resigned.body["status"] == "finished"
    assert resigned.body["outcome"]["winners"] == [1]
    late = await act(api, b, match_id, version, {"type": "cut", "at": 1})
    assert (late.status, late.error_code) == (409, "match_not_active")
    again = await api.post(f"/v1/matches/{match_id}/resign", token=a)
    assert (again.status, again.error_code) == (409, "match_not_active")
    replay = (await api.get(f"/v1/matches/{match_id}/replay", token=b)).body
    assert replay["actions"][-1] == {
        "version": resigned.body["version"],
        "seat": 0,
        "action": RESIGN,
        "source": "resign",
    }


async def test_leaving_a_waiting_match_frees_the_seat(api: Api) -> None:
    a, b = await new_players(api, 2)
    body = {"game": GAME, "seats": 2, "loadout": {"deck": DECK}}
    match_id = (await api.post("/v1/matches", body, token=a)).body["match_id"]
    left = await api.post(f"/v1/matches/{match_id}/resign", token=a)
    assert left.status == 200 and left.body["status"] == "expired"
    gone = await api.post(f"/v1/matches/{match_id}/join", {"loadout": {"deck": DECK}}, token=b)
    assert (gone.status, gone.error_code) == (409, "match_not_open")


@pytest.fixture
async def quick_expiry(make_settings: Any, fresh_database_url: str) -> AsyncIterator[Api]:
    fresh = make_settings(
        database_url=fresh_database_url, match_wait_seconds=0.3, sweep_interval_seconds=0.05
    )
    async with running_service(fresh) as client:
        yield client


async def test_a_waiting_match_that_never_fills_expires(quick_expiry: Api) -> None:
    api = quick_expiry
    a, b = await new_players(api, 2)
    body = {"game": "necromancers", "seats": 2}
    match_id = (await api.post("/v1/matches", body, token=a)).body["match_id"]
    for _ in range(100):
        if (await read(api, a, match_id))["status"] == "expired":
            break
        await asyncio.sleep(0.05)
    match = await read(api, a, match_id)
    assert match["status"] == "expired" and match["to_act"] == []
    late = await api.post(f"/v1/matches/{match_id}/join", token=b)
    assert (late.status, late.error_code) == (409, "match_not_open")
    events = await all_events(api, a, match_id)
    assert events[-1]["kind"] == "match_expired"


async def test_a_match_plays_and_replays_under_its_ruleset_after_a_new_default(
    api: Api, settings: Settings, tmp_path: Path
) -> None:
    a, b = await new_players(api, 2)
    match_id = await start_match(api, [a, b])
    first = get_game("necromancers")
    before = await read(api, a, match_id)
    second = second_ruleset(tmp_path)
    registry.REGISTRY.register(second, default=True)
    try:
        assert await read(api, a, match_id) == before
        await play_out(api, match_id, [a, b], random.Random(4))
        replay = (await api.get(f"/v1/matches/{match_id}/replay", token=a)).body
        assert replay["ruleset"] == first.ruleset
        conn = await asyncpg.connect(settings.database_url)
        try:
            assert await cache_agrees_with_log(conn, uuid.UUID(match_id))
        finally:
            await conn.close()
        # The log replayed under the first ruleset gives the stored final state, byte for byte.
        log = [(step["seat"], step["action"]) for step in replay["actions"]]
        rebuilt = rebuild(first, replay["seed"], 2, replay["options"], replay["loadouts"], log)
        assert json.dumps(first.replay_view(rebuilt)) == json.dumps(replay["final"])
        newer = await api.post("/v1/matches", {"game": "necromancers", "seats": 2}, token=a)
        assert (await read(api, a, newer.body["match_id"]))["ruleset"] == second.ruleset
        pinned = await api.post(
            "/v1/matches",
            {"game": "necromancers", "seats": 2, "ruleset": first.ruleset},
            token=a,
        )
        assert (await read(api, a, pinned.body["match_id"]))["ruleset"] == first.ruleset
        unknown = await api.post(
            "/v1/matches", {"game": "necromancers", "seats": 2, "ruleset": "nope"}, token=a
        )
        assert (unknown.status, unknown.error_code) == (422, "unknown_game")
    finally:
        registry.REGISTRY.register(first, default=True)


async def test_a_join_retried_with_its_idempotency_key_takes_one_seat(api: Api) -> None:
    a, b = await new_players(api, 2)
    body = {"game": GAME, "seats": 2, "loadout": {"deck": DECK}}
    match_id = (await api.post("/v1/matches", body, token=a)).body["match_id"]
    key = {"Idempotency-Key": "join-once"}
    first = await api.post(
        f"/v1/matches/{match_id}/join", {"loadout": {"deck": DECK}}, token=b, headers=key
    )
    again = await api.post(
        f"/v1/matches/{match_id}/join", {"loadout": {"deck": DECK}}, token=b, headers=key
    )
    assert first.status == again.status == 200 and again.body == first.body
    other = {"loadout": {"deck": list(reversed(DECK))}}
    clash = await api.post(f"/v1/matches/{match_id}/join", other, token=b, headers=key)
    assert (clash.status, clash.error_code) == (409, "idempotency_conflict")
    assert [e["kind"] for e in await all_events(api, a, match_id)].count("seat_taken") == 2


async def test_a_seats_preferences_are_kept_in_the_match_and_replayed(api: Api) -> None:
    a, b, stranger = await new_players(api, 3)
    match_id = await card_match(api, [a, b])
    url = f"/v1/matches/{match_id}/preferences"
    games = (await api.get("/v1/games", token=a)).body["games"]
    assert next(g for g in games if g["id"] == GAME)["preferences"]["auto_pass"]["type"] == "bool"
    bad = await api.call("PUT", url, {"preferences": {"auto_pass": "yes"}}, token=b)
    assert (bad.status, bad.body["error"]["details"]["reason"]) == (422, "bad_param")
    outsider = await api.call("PUT", url, {"preferences": {"auto_pass": True}}, token=stranger)
    assert (outsider.status, outsider.error_code) == (403, "not_seated")
    key = {"Idempotency-Key": "prefer-once"}
    kept = await api.call("PUT", url, {"preferences": {"auto_pass": True}}, token=b, headers=key)
    assert kept.status == 200, kept.body
    again = await api.call("PUT", url, {"preferences": {"auto_pass": True}}, token=b, headers=key)
    assert again.body == kept.body
    assert [e["kind"] for e in kept.body["events"]] == ["preferences"]
    seen_by_a = [e["kind"] for e in await all_events(api, a, match_id)]
    assert "preferences" not in seen_by_a
    resigned = await api.post(f"/v1/matches/{match_id}/resign", token=a)
    assert resigned.status == 200
    replay = (await api.get(f"/v1/matches/{match_id}/replay", token=b)).body
    logged = [step for step in replay["actions"] if step["source"] == "preference"]
    assert logged == [
        {
            "version": kept.body["version"],
            "seat": 1,
            "action": {"type": "$prefer", "auto_pass": True},
            "source": "preference",
        }
    ]
    state = rebuild(
        GAME_RULES,
        replay["seed"],
        2,
        replay["options"],
        replay["loadouts"],
        [(step["seat"], step["action"]) for step in replay["actions"]],
    )
    assert state.auto_pass == [False, True]


async def test_a_game_without_preferences_refuses_them_with_its_reason(api: Api) -> None:
    a, b = await new_players(api, 2)
    created = await api.post("/v1/matches", {"game": "necromancers", "seats": 2}, token=a)
    match_id = created.body["match_id"]
    await api.post(f"/v1/matches/{match_id}/join", token=b)
    url = f"/v1/matches/{match_id}/preferences"
    refused = await api.call("PUT", url, {"preferences": {}}, token=a)
    assert (refused.status, refused.error_code) == (422, "illegal_action")
    assert refused.body["error"]["details"]["reason"] == "no_preferences"
