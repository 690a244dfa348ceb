"""Fate duels through real HTTP: the seed's worked example move by move, whole matches of 2,
3 and 4 seats with random legal play (also against bots), and no hidden card on the way.

The worked example needs known cards: the match is created with the public `deal` option
(docs/rules/fate-duel.md), the rules' own way to replay a known deal; the deal number was found
offline (see tests/games/test_fate_duel.py) and the test checks every card it relies on. Only
an operator makes a match with a public deal, so the worked example's match is the operator's
and both players join it.
"""

import random
from typing import Any

from service.games.fate_duel.content import RULESET
from service.games.registry import get_game
from tests.api.matches_helpers import (
    OPS,
    act,
    finished_matches_rebuild,  # noqa: F401 (autouse)
    new_players,
    read,
    walk_list,
)
from tests.games.helpers import contains
from tests.games.test_fate_duel import GUARDIA, WORKED_EXAMPLE_DEAL
from tests.http import Api

GAME = "fate-duel"
RULES = get_game(GAME)


def face(card: dict[str, str]) -> str:
    """A card's face as views and events show it: its catalogue id."""
    return card["card"]


async def fate_match(api: Api, tokens: list[str], crews: list[str | None], **options: Any) -> str:
    """A started match; a seat whose crew is None is a bot, which brings its own. With a public
    deal the operator makes it and every player joins; otherwise the first player makes it."""
    bots = [seat for seat, crew in enumerate(crews) if crew is None]
    body: dict[str, Any] = {"game": GAME, "seats": len(crews), "options": options}
    if bots:
        body["bots"] = list(bots)
    humans = [s for s in range(len(crews)) if s not in bots]
    if "deal" in options:
        created = await api.post("/v1/ops/matches", body, headers=OPS)
    else:
        body["loadout"] = {"crew": crews[0]}
        created = await api.post("/v1/matches", body, token=tokens[0])
        humans, tokens = humans[1:], tokens[1:]
    assert created.status == 201, created.body
    match_id = str(created.body["match_id"])
    for seat, token in zip(humans, tokens, strict=True):
        joined = await api.post(
            f"/v1/matches/{match_id}/join", {"loadout": {"crew": crews[seat]}}, token=token
        )
        assert joined.status == 200, joined.body
    return match_id


def of_kind(events: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found: dict[str, Any] = next(e["data"] for e in events if e["kind"] == kind)
    return found


async def test_the_seeds_worked_example_move_by_move(api: Api) -> None:
    """Guardia del Gremio, Wp 5 against Terrorífico 13: flips the 4 of Crows (9 of Crows),
    cheats the 9 of Masks from the hand (14 of Masks), no Wp trigger, succeeds."""
    a, b = await new_players(api, 2)
    match_id = await fate_match(
        api, [a, b], ["gremio", "resurreccionistas"], deal=WORKED_EXAMPLE_DEAL
    )
    mine = await read(api, a, match_id)
    assert mine["to_act"] == [0]
    assert mine["prompt"]["kind"] == "order"
    assert mine["prompt"]["data"]["pulse"] == {
        "id": "pulse.1",
        "card": "terrorifico",
        "name": "Terrorífico 13",
        "attribute": "wp",
        "tn": 13,
        "suit": None,
        "flip": 0,
        "wounds": 1,
    }
    guardia = mine["view"]["crews"][0]["models"]["cards"][GUARDIA]
    assert (guardia["card"], guardia["wp"], guardia["printed"]["wp"]) == (
        "guardia-del-gremio",
        5,
        5,
    )
    nine = next(c["id"] for c in mine["view"]["hands"][0]["cards"] if face(c) == "9m")
    # Step 1 passes (an esbirro has no soulstones), step 2 flips at once.
    moved = await act(api, a, match_id, mine["version"], {"type": "duel", "model": GUARDIA})
    assert moved.status == 200, moved.body
    events = moved.body["events"]
    assert of_kind(events, "soulstones")["uses"] == []
    assert [face(c) for c in of_kind(events, "flipped")["cards"]] == ["4c"]
    active = of_kind(events, "active_card")
    assert (face(active["card"]), active["total"], active["suits"]) == ("4c", 9, ["c"])
    # Step 3: the 9 of Masks is one of the answers offered.
    mine = await read(api, a, match_id)
    assert mine["prompt"]["kind"] == "cheat"
    assert {"type": "cheat", "card": nine} in mine["legal_actions"]
    assert mine["view"]["duel"]["sides"][0]["total"] == 9
    moved = await act(api, a, match_id, mine["version"], {"type": "cheat", "card": nine})
    assert moved.status == 200, moved.body
    events = moved.body["events"]
    cheated = of_kind(events, "cheated")
    assert (face(cheated["replaced"]), cheated["total"], cheated["suits"]) == ("4c", 14, ["m"])
    # Step 4: no Wp trigger, so no question (the step passes with its event); step 5: 14 of
    # Masks makes TN 13.
    assert "trigger_declared" not in [e["kind"] for e in events]
    assert of_kind(events, "no_trigger")["reason"] == "none_eligible"
    result = of_kind(events, "duel_result")
    assert (result["totals"], result["won"], result["tn"]) == ([14], [True], 13)
    assert [face(c) for c in of_kind(events, "discarded")["cards"]] in (["4c"], ["9m"])
    view = (await read(api, a, match_id))["view"]
    assert sorted(face(c) for c in view["discards"][0]["cards"]) == ["4c", "9m"]
    assert view["crews"][0]["models"]["cards"][GUARDIA]["wounds"] == 6
    # The other seat saw the flipped and cheated cards, never the hand.
    theirs = await read(api, b, match_id)
    assert theirs["view"]["hands"][0] == {"count": 5, "cards": None}
    assert theirs["prompt"] is None


async def test_a_refusal_names_its_rule(api: Api) -> None:
    """Cheating fate with a card not in the hand is refused as `not_in_hand`, the state kept."""
    a, b = await new_players(api, 2)
    match_id = await fate_match(
        api, [a, b], ["gremio", "resurreccionistas"], deal=WORKED_EXAMPLE_DEAL
    )
    mine = await read(api, a, match_id)
    moved = await act(api, a, match_id, mine["version"], {"type": "duel", "model": GUARDIA})
    assert moved.status == 200, moved.body
    mine = await read(api, a, match_id)
    flipped = mine["view"]["duel"]["sides"][0]["active"]["id"]
    refused = await act(api, a, match_id, mine["version"], {"type": "cheat", "card": flipped})
    assert (refused.status, refused.error_code) == (422, "illegal_action"), refused.body
    assert refused.body["error"]["details"]["reason"] == "not_in_hand"
    assert (await read(api, a, match_id))["version"] == mine["version"]


async def play_to_the_end(
    api: Api, match_id: str, tokens: dict[int, str], rng: random.Random
) -> list[tuple[int, int, Any]]:
    """Random legal answers by the human seats until the match ends; what each seat received."""
    received: list[tuple[int, int, Any]] = []
    for _ in range(2000):
        asked = False
        for seat, token in tokens.items():
            mine = await read(api, token, match_id)
            received.append((mine["version"], seat, mine))
            if mine["status"] == "finished":
                return received
            if mine["prompt"] is not None:
                asked = True
                done = await act(
                    api, token, match_id, mine["version"], rng.choice(mine["legal_actions"])
                )
                assert done.status == 200, done.body
                received.append((done.body["version"], seat, done.body))
        if not asked:
            first = next(iter(tokens.values()))
            await api.get(f"/v1/matches/{match_id}/events?after=0&wait=1", token=first)
    raise AssertionError("match did not finish")


def states_by_version(replay: dict[str, Any]) -> dict[int, Any]:
    seats = len(replay["loadouts"])
    state = RULES.setup(replay["seed"], seats, replay["options"], replay["loadouts"])
    states = {0: state}
    for step in replay["actions"]:
        state, _ = RULES.apply(state, step["seat"], step["action"])
        states[step["version"]] = state
    return states


async def test_two_players_play_a_whole_match_and_never_see_a_hidden_card(api: Api) -> None:
    a, b = await new_players(api, 2)
    match_id = await fate_match(api, [a, b], ["gremio", "arcanistas"], rounds=2)
    received = await play_to_the_end(api, match_id, {0: a, 1: b}, random.Random(3))
    replay = (await api.get(f"/v1/matches/{match_id}/replay", token=a)).body
    assert replay["outcome"]["ranking"]
    states = states_by_version(replay)
    for version, seat, payload in received:
        for secret in RULES.secrets(states[version], seat):
            assert not contains(payload, secret), (version, seat, secret)


async def test_three_seats_against_a_bot_play_to_the_end(api: Api) -> None:
    a, b = await new_players(api, 2)
    match_id = await fate_match(api, [a, b], ["gremio", "vecinos", None], rounds=2)
    await play_to_the_end(api, match_id, {0: a, 1: b}, random.Random(5))
    replay = (await api.get(f"/v1/matches/{match_id}/replay", token=a)).body
    assert replay["outcome"] is not None
    assert {s["source"] for s in replay["actions"] if s["seat"] == 2} == {"bot"}


async def test_one_player_against_three_bots_plays_to_the_end(api: Api) -> None:
    (a,) = await new_players(api, 1)
    match_id = await fate_match(api, [a], ["resurreccionistas", None, None, None], rounds=1)
    await play_to_the_end(api, match_id, {0: a}, random.Random(7))
    final = await read(api, a, match_id)
    assert final["status"] == "finished" and len(final["outcome"]["ranking"]) >= 1


async def test_a_bad_crew_is_a_422_naming_it(api: Api) -> None:
    (a,) = await new_players(api, 1)
    body = {"game": GAME, "seats": 2, "loadout": {"crew": "piratas"}}
    refused = await api.post("/v1/matches", body, token=a)
    assert (refused.status, refused.error_code) == (422, "unknown_crew")
    assert refused.body["error"]["details"]["card"] == "piratas"
    games = {g["id"]: g for g in (await api.get("/v1/games", token=a)).body["games"]}
    assert games[GAME]["loadout"]["properties"]["crew"]["enum"] == sorted(RULESET.crews)


async def test_a_players_public_deal_is_refused_and_the_lobby_says_what_an_operators_reveals(
    api: Api,
) -> None:
    """A creator could search deals offline for one that favours its seat, and a joiner saw only
    the number: a player may not set one, and an operator's says in the lobby what it reveals."""
    a, b = await new_players(api, 2)
    body = {"game": GAME, "seats": 2, "options": {"deal": 511}, "loadout": {"crew": "gremio"}}
    refused = await api.post("/v1/matches", body, token=a)
    assert (refused.status, refused.error_code) == (422, "public_deal")
    assert refused.body["error"]["details"] == {"option": "deal", "value": 511}
    assert "every hand and draw" in refused.body["error"]["message"]
    secret = await api.post("/v1/matches", {**body, "options": {"deal": 0}}, token=a)
    assert secret.status == 201, secret.body
    made = await api.post(
        "/v1/ops/matches", {"game": GAME, "seats": 2, "options": {"deal": 511}}, headers=OPS
    )
    assert made.status == 201 and made.body["seat"] is None, made.body
    lobby = await walk_list(api, b)
    listed = next(m for m in lobby if m["match_id"] == made.body["match_id"])
    assert listed["by_operator"] is True and listed["options"]["deal"] == 511
    (notice,) = listed["notices"]
    assert "public deal 511" in notice and "every hand, deck and draw" in notice
    mine = next(
        m
        for m in (await api.get("/v1/matches?mine=true", token=a)).body["matches"]
        if m["match_id"] == secret.body["match_id"]
    )
    assert mine["by_operator"] is False and mine["notices"] == []
    games = {g["id"]: g for g in (await api.get("/v1/games", token=a)).body["games"]}
    assert "only an operator" in games[GAME]["options"]["deal"]["description"]
