"""The loyalty card game through real HTTP: decks refused by rule and card, a response window
answered by both seats, and whole best-of-3 matches between two players and against a bot.
"""

from typing import Any

from service.games.kernel.prompts import Prompt
from service.games.loyalty import LoyaltyGame
from tests.api.matches_helpers import (
    act,
    finished_matches_rebuild,  # noqa: F401 (autouse)
    new_players,
    read,
    wait_until,
)
from tests.games.helpers import contains
from tests.http import Api

GAME = LoyaltyGame()
MAX_ACTIONS = 3000
# A Legión deck heavy in cheap adventures, so that response windows have answers.
ANSWERS = (
    ["rayo"] * 4 + ["furia"] * 4 + ["buhonero"] * 4 + ["soldado_ceniza"] * 4 + ["novicia_alba"] * 4
)


async def loyalty_match(
    api: Api, tokens: list[str], loadouts: list[Any], mode: str = "legion", **fields: Any
) -> str:
    body = {
        "game": "loyalty",
        "seats": 2,
        "options": {"mode": mode},
        "loadout": loadouts[0],
        **fields,
    }
    created = await api.post("/v1/matches", body, token=tokens[0])
    assert created.status == 201, created.body
    match_id = str(created.body["match_id"])
    for token, loadout in zip(tokens[1:], loadouts[1:], strict=True):
        joined = await api.post(f"/v1/matches/{match_id}/join", {"loadout": loadout}, token=token)
        assert joined.status == 200, joined.body
    return match_id


def client_choice(seen: dict[str, Any], seed: int) -> dict[str, Any]:
    """What a client playing the bot's strategy sends, from what its seat received only."""
    prompt = Prompt(**seen["prompt"])
    return GAME.bot_action(seen["view"], prompt, seed)


async def test_the_game_is_offered_with_its_modes_and_a_ready_loadout(api: Api) -> None:
    (token,) = await new_players(api, 1)
    games = {g["id"]: g for g in (await api.get("/v1/games", token=token)).body["games"]}
    loyalty = games["loyalty"]
    assert loyalty["options"]["mode"]["choices"] == ["escaramuza", "conquista", "legion"]
    assert loyalty["sample_loadout"]["mode"] == "legion"
    assert len(loyalty["sample_loadout"]["deck"]) == 20
    items = loyalty["loadout"]["properties"]["deck"]["items"]["oneOf"]
    reednor = next(i for i in items if i["const"] == "reednor")
    assert (reednor["title"], reednor["description"]) == ("Reednor", "character, guardia_velmar")


async def test_a_bad_deck_or_another_mode_is_a_422_naming_the_card_and_the_rule(api: Api) -> None:
    a, b = await new_players(api, 2)
    body = {"game": "loyalty", "seats": 2, "options": {"mode": "escaramuza"}}
    too_many = {"deck": ["reednor"] * 5 + ANSWERS[5:]}
    refused = await api.post("/v1/matches", {**body, "loadout": too_many}, token=a)
    assert (refused.status, refused.error_code) == (422, "too_many_copies")
    assert refused.body["error"]["details"] == {
        "rule": "too_many_copies", "card": "reednor", "copies": 5, "max": 4,
    }  # fmt: skip
    mixed = await api.post("/v1/matches", {**body, "loadout": {"deck": ANSWERS}}, token=a)
    assert (mixed.status, mixed.error_code) == (422, "one_alignment")
    assert mixed.body["error"]["details"]["card"] == "soldado_ceniza"
    created = await api.post("/v1/matches", {**body, "loadout": {"ready": "alianza"}}, token=a)
    match_id = created.body["match_id"]
    # A joiner bringing another mode is refused when it takes the seat, not at setup.
    other = {"mode": "legion", "ready": "neutral"}
    late = await api.post(f"/v1/matches/{match_id}/join", {"loadout": other}, token=b)
    assert (late.status, late.error_code) == (422, "mode_mismatch")
    assert (await read(api, a, match_id))["status"] == "waiting"


async def test_a_response_window_is_answered_by_both_seats_over_http(api: Api) -> None:
    """After an action of the active player the opponent answers with an adventure, the active
    player answers back, and the adventures resolve last in, first out."""
    tokens = await new_players(api, 2)
    match_id = await loyalty_match(api, tokens, [{"deck": ANSWERS}, {"deck": ANSWERS}])
    answered_back = False
    for _ in range(MAX_ACTIONS):
        match = await read(api, tokens[0], match_id)
        assert match["status"] == "active"
        (seat,) = match["to_act"]
        mine = await read(api, tokens[seat], match_id)
        other = await read(api, tokens[1 - seat], match_id)
        assert other["prompt"] is None and other["legal_actions"] == []
        prompt, view = mine["prompt"], mine["view"]["inner"]
        # What a seat sees: its hand, the other hand's size.
        assert isinstance(view["sides"][seat]["hand"]["cards"], list)
        assert view["sides"][1 - seat]["hand"]["cards"] is None
        adventures = [a for a in prompt["actions"] if a["type"] == "adventure"]
        stack = view["stack"]
        if prompt["kind"] == "response":
            assert seat == view["responder"]
            # The opponent answers the action; the active player answers that adventure back.
            first_answer = not stack and seat != view["active"]
            back = len(stack) == 1 and seat == view["active"]
            answered_back = back and bool(adventures)
            action = adventures[0] if adventures and (first_answer or back) else {"type": "pass"}
        else:
            plays = [a for a in prompt["actions"] if a["type"] == "play"]
            action = plays[0] if plays else prompt["actions"][0]
        done = await act(api, tokens[seat], match_id, mine["version"], action)
        assert done.status == 200, done.body
        if answered_back:
            break
    assert answered_back
    stacked = [stack[0]["id"], action["card"]]
    events = done.body["events"]
    # The window goes back to the first answerer if it has a counter left; its pass closes it.
    seen = await read(api, tokens[1 - seat], match_id)
    if seen["prompt"] is not None:
        assert seen["prompt"]["kind"] == "response"
        assert [e["id"] for e in seen["view"]["inner"]["stack"]] == stacked
        passed = await act(api, tokens[1 - seat], match_id, seen["version"], {"type": "pass"})
        assert passed.status == 200, passed.body
        events = passed.body["events"]
    done_with = [e["data"]["id"] for e in events if e["kind"] in ("resolved", "fizzled")]
    assert done_with == stacked[::-1]
    after = await read(api, tokens[seat], match_id)
    assert after["view"]["inner"]["stack"] == [] and after["view"]["inner"]["responder"] is None


async def play_to_the_end(api: Api, tokens: list[str | None], match_id: str) -> dict[str, Any]:
    """Each human seat plays the bot's strategy from its own answers; bot seats play server-side."""
    seen: dict[int, dict[str, Any]] = {}
    humans = [s for s, t in enumerate(tokens) if t is not None]
    for step in range(MAX_ACTIONS):
        anyone = seen.get(humans[0]) or await read(api, tokens[humans[0]] or "", match_id)
        if anyone["status"] == "finished":
            return anyone
        asked = [s for s in anyone["to_act"] if s in humans]
        if not asked:
            await wait_until(api, tokens[humans[0]] or "", match_id, lambda m: bool(
                m["status"] == "finished" or set(m["to_act"]) & set(humans)
            ))  # fmt: skip
            seen.clear()
            continue
        seat = asked[0]
        mine = seen.get(seat) if seat in seen and seen[seat]["prompt"] else None
        if mine is None:
            mine = await read(api, tokens[seat] or "", match_id)
        action = client_choice(mine, step)
        done = await act(api, tokens[seat] or "", match_id, mine["version"], action)
        assert done.status == 200, done.body
        # The acting seat's answer holds its next prompt; the other seat must read afresh.
        seen = {seat: {**done.body, "status": done.body["status"]}}
    raise AssertionError("match did not finish")


async def test_two_players_play_a_best_of_three_over_http(api: Api) -> None:
    tokens = await new_players(api, 2)
    match_id = await loyalty_match(
        api, tokens, [{"ready": "alianza"}, {"ready": "themoria"}], mode="conquista"
    )
    start = await read(api, tokens[0], match_id)
    assert (start["view"]["best_of"], start["view"]["leg"], start["view"]["score"]) == (
        3,
        1,
        [0, 0],
    )
    assert [s["life"] for s in start["view"]["inner"]["sides"]] == [20, 20]
    final = await play_to_the_end(api, list(tokens), match_id)
    winner = final["outcome"]["winners"][0]
    view = (await read(api, tokens[0], match_id))["view"]
    assert view["score"][winner] == 2 or view["leg"] == 3
    replay = (await api.get(f"/v1/matches/{match_id}/replay", token=tokens[0])).body
    kinds = [e["kind"] for e in replay["events"]]
    assert kinds.count("leg_started") == len(replay["final"]["legs"]) >= 2
    # From the second game on, the loser of the last one chose who starts.
    assert "choose_first" in kinds and kinds[-1] == "series_over"


async def test_a_player_plays_a_best_of_three_against_a_bot_over_http(api: Api) -> None:
    (token,) = await new_players(api, 1)
    match_id = await loyalty_match(
        api, [token], [{"ready": "neutral"}], mode="escaramuza", bots=[1]
    )
    final = await play_to_the_end(api, [token, None], match_id)
    assert final["status"] == "finished" and final["outcome"] is not None
    replay = (await api.get(f"/v1/matches/{match_id}/replay", token=token)).body
    assert {a["source"] for a in replay["actions"] if a["seat"] == 1} == {"bot"}
    assert replay["loadouts"][1]["mode"] == "escaramuza"
    # During the match the bot's hand never reached the player: the replay shows it now.
    bot_hands = [leg["sides"][1]["hand"]["cards"] for leg in replay["final"]["legs"]]
    mine = await read(api, token, match_id)
    assert not any(contains(mine, card["id"]) for hand in bot_hands for card in hand)


async def test_a_seat_that_asked_to_auto_pass_is_never_asked_a_window_it_cannot_answer(
    api: Api,
) -> None:
    """Seat 1 brings no adventure and sets `auto_pass`: every window of its opponent's turn is
    passed for it (an event says so), and it is only asked in its own turns."""
    tokens = await new_players(api, 2)
    plain = ["buhonero", "soldado_ceniza", "novicia_alba", "acolito", "rastreador"] * 4
    match_id = await loyalty_match(api, tokens, [{"deck": ANSWERS}, {"deck": plain}])
    path = f"/v1/matches/{match_id}/preferences"
    body = {"preferences": {"auto_pass": True}}
    kept = await api.call("PUT", path, body, token=tokens[1])
    assert kept.status == 200, kept.body
    auto_passed = 0
    for _ in range(MAX_ACTIONS):
        match = await read(api, tokens[0], match_id)
        if match["status"] != "active" or auto_passed >= 3:
            break
        (seat,) = match["to_act"]
        mine = await read(api, tokens[seat], match_id)
        assert not (seat == 1 and mine["prompt"]["kind"] == "response")
        plays = [a for a in mine["prompt"]["actions"] if a["type"] == "play"]
        action = plays[0] if plays else mine["prompt"]["actions"][0]
        done = await act(api, tokens[seat], match_id, mine["version"], action)
        assert done.status == 200, done.body
        windows = [e["data"] for e in done.body["events"] if e["kind"] == "window"]
        auto_passed += sum(1 for w in windows if w["auto_passed"] and w["seat"] == 1)
    assert auto_passed >= 3


async def test_a_refused_action_names_its_rule_over_http(api: Api) -> None:
    tokens = await new_players(api, 2)
    match_id = await loyalty_match(api, tokens, [{"ready": "alianza"}, {"ready": "neutral"}])
    match = await read(api, tokens[0], match_id)
    (seat,) = match["to_act"]
    mine = await read(api, tokens[seat], match_id)
    draw = mine["prompt"]["actions"][0]
    assert draw == {"type": "draw", "cards": 1}
    refused = await act(api, tokens[seat], match_id, mine["version"], {**draw, "cards": 2})
    assert (refused.status, refused.error_code) == (422, "illegal_action")
    assert refused.body["error"]["details"] == {"reason": "bad_param", "field": "cards"}
