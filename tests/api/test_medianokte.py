"""Medianokte through real HTTP: loadouts refused with the card and the rule, the cut and the
roll-off choice as prompts, hidden hands, and whole matches of 2 to 4 seats (players and bots)
played to the end, then replayed."""

import random
from typing import Any

import pytest

from service.games.kernel.prompts import Prompt
from service.games.medianokte import MedianokteGame
from service.games.medianokte.content import random_nave
from tests.api.matches_helpers import (
    act,
    all_events,
    finished_matches_rebuild,  # noqa: F401 (autouse)
    new_players,
    read,
    wait_until,
)
from tests.games.helpers import contains
from tests.http import Api

GAME = MedianokteGame()
CHARACTERS = ("nigromante", "guerrera", "cazador", "hechicera")


def loadout(seat: int) -> dict[str, Any]:
    return {"character": CHARACTERS[seat], "nave": random_nave(seat)}


async def medianokte(api: Api, tokens: list[str], bots: list[int] | None = None) -> str:
    seats = len(tokens) + len(bots or [])
    body: dict[str, Any] = {"game": "medianokte", "seats": seats, "loadout": loadout(0)}
    if bots:
        body["bots"] = bots
    created = await api.post("/v1/matches", body, token=tokens[0])
    assert created.status == 201, created.body
    match_id = str(created.body["match_id"])
    for seat, token in enumerate(tokens[1:], start=1):
        joining = {"loadout": {"character": CHARACTERS[seat], "random_nave": seat}}
        joined = await api.post(f"/v1/matches/{match_id}/join", joining, token=token)
        assert joined.status == 200, joined.body
    return match_id


def answer(match: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A client's answer from what it was sent: the bot's policy on its own view and prompt,
    or now and then any legal activation."""
    raw = match["prompt"]
    prompt = Prompt(raw["kind"], raw["actions"], raw["params"], raw["data"])
    if raw["kind"] == "activation" and rng.random() < 0.2:
        action: dict[str, Any] = rng.choice(match["legal_actions"])
        return action
    return GAME.bot_action(match["view"], prompt, rng.getrandbits(64))


async def play_to_the_end(api: Api, tokens: list[str], match_id: str, rng: random.Random) -> None:
    for _ in range(3000):
        first = await read(api, tokens[0], match_id)
        if first["status"] == "finished":
            return
        humans = [s for s in first["to_act"] if s < len(tokens)]
        if not humans:
            await api.get(f"/v1/matches/{match_id}/events?after=0&wait=1", token=tokens[0])
            continue
        seat = rng.choice(humans)
        mine = await read(api, tokens[seat], match_id)
        if mine["prompt"] is None:
            continue
        done = await act(api, tokens[seat], match_id, mine["version"], answer(mine, rng))
        assert done.status == 200 or done.error_code == "stale_version", done.body
    raise AssertionError("match did not finish")


async def test_two_players_cut_choose_who_starts_and_play_to_the_end(api: Api) -> None:
    a, b = await new_players(api, 2)
    match_id = await medianokte(api, [a, b])
    seen = await read(api, a, match_id)
    assert seen["to_act"] == [0, 1]
    assert seen["prompt"]["kind"] == "cut"
    assert seen["prompt"]["params"]["cut"]["at"] == {"type": "integer", "minimum": 1, "maximum": 29}
    for token in (a, b):
        mine = await read(api, token, match_id)
        cut = await act(api, token, match_id, mine["version"], {"type": "cut", "at": 4})
        assert cut.status == 200, cut.body
    after = await read(api, a, match_id)
    chooser = after["view"]["chooser"]
    assert after["to_act"] == [chooser] and len(after["view"]["rolls"]) >= 1
    token = (a, b)[chooser]
    mine = await read(api, token, match_id)
    assert mine["prompt"]["kind"] == "choose_first"
    chose = await act(api, token, match_id, mine["version"], {"type": "first", "seat": 1})
    assert chose.status == 200, chose.body
    turn = await read(api, b, match_id)
    assert turn["to_act"] == [1] and turn["prompt"]["kind"] == "activation"
    assert turn["prompt"]["data"] == {"activations_left": 3}
    hand_b = turn["view"]["players"][1]["hand"]
    assert hand_b["count"] == 5 and len(hand_b["cards"]) == 5
    assert (await read(api, a, match_id))["view"]["players"][1]["hand"] == {
        "count": 5,
        "cards": None,
    }
    assert not contains(await all_events(api, a, match_id), hand_b["cards"][0]["id"])
    not_held = {"type": "play", "card": "s0.0:" + hand_b["cards"][0]["card"]}
    refused = await act(api, b, match_id, turn["version"], not_held)
    assert (refused.status, refused.error_code) == (422, "illegal_action")
    assert refused.body["error"]["details"]["reason"] == "not_in_hand"
    await play_to_the_end(api, [a, b], match_id, random.Random(7))
    final = await read(api, a, match_id)
    assert final["outcome"]["winners"] in ([0], [1])
    replay = (await api.get(f"/v1/matches/{match_id}/replay", token=b)).body
    assert replay["loadouts"][0] == loadout(0)
    assert replay["loadouts"][1] == {"character": "guerrera", "nave": random_nave(1)}


@pytest.mark.parametrize("seats", [3, 4])
async def test_a_player_and_bots_play_a_multiplayer_match_to_the_end(api: Api, seats: int) -> None:
    (a,) = await new_players(api, 1)
    match_id = await medianokte(api, [a], bots=list(range(1, seats)))
    await play_to_the_end(api, [a], match_id, random.Random(seats))
    final = await read(api, a, match_id)
    assert final["status"] == "finished"
    ranked = sorted(s for group in final["outcome"]["ranking"] for s in group)
    assert ranked == list(range(seats))
    replay = (await api.get(f"/v1/matches/{match_id}/replay", token=a)).body
    assert {x["source"] for x in replay["actions"] if x["seat"] == 1} == {"bot"}


@pytest.mark.parametrize(
    ("card", "rule"),
    [
        ("eclipse", "neutral_event_banned"),
        ("ritual_de_afinidad", "banned_in_duel"),
        ("pergamino_de_konfusion", "banned_in_duel"),
    ],
)
async def test_a_banned_card_is_a_422_naming_the_card_and_the_rule(
    api: Api, card: str, rule: str
) -> None:
    (a,) = await new_players(api, 1)
    nave = random_nave(2)
    family = "object" if card == "pergamino_de_konfusion" else "event"
    index = 0 if family == "event" else 20
    nave[index] = card
    body = {"game": "medianokte", "seats": 2, "loadout": {"character": "cazador", "nave": nave}}
    refused = await api.post("/v1/matches", body, token=a)
    assert (refused.status, refused.error_code) == (422, rule)
    assert refused.body["error"]["details"] == {"rule": rule, "card": card}


async def test_the_games_list_offers_medianokte_with_its_loadout(api: Api) -> None:
    (a,) = await new_players(api, 1)
    listed = {g["id"]: g for g in (await api.get("/v1/games", token=a)).body["games"]}
    game = listed["medianokte"]
    assert (game["min_seats"], game["max_seats"]) == (2, 4)
    assert set(game["loadout"]["properties"]) == {"character", "nave", "random_nave"}
    families = game["loadout"]["properties"]["nave"]["x-family"]
    assert families["lobo_de_niebla"] == "astrali" and "tregua" not in families
    assert GAME.validate_loadout(game["sample_loadout"], {}) == game["sample_loadout"]


async def test_after_a_player_resigns_the_bots_play_on_to_the_end(api: Api) -> None:
    (a,) = await new_players(api, 1)
    match_id = await medianokte(api, [a], bots=[1, 2])
    resigned = await api.post(f"/v1/matches/{match_id}/resign", token=a)
    assert resigned.status == 200, resigned.body
    final = await wait_until(api, a, match_id, lambda m: m["status"] == "finished", 60.0)
    assert final["outcome"]["ranking"][-1] == [0]
    assert final["outcome"]["winners"] in ([1], [2])
