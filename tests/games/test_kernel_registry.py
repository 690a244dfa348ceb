"""The registry: games by (id, ruleset), a default per id, matches pinned to their ruleset."""

from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from service.games.kernel.protocol import Action, Event, Game, GameError, IllegalAction
from service.games.kernel.rng import SplitMix64
from service.games.necromancers import NecromancersGame
from service.games.necromancers.content import load_ruleset
from service.games.registry import Registry, describe, get_game
from tests.games import cardgame

FIRST = "necromancers-2026.12"
SECOND = "necromancers-2027.01"


def shipped_faces() -> str:
    return resources.files("service.games.necromancers").joinpath("faces.toml").read_text()


def second_ruleset(tmp_path: Path) -> NecromancersGame:
    """The shipped table under a new id, face 1 dealing 2 points instead of 1."""
    text = shipped_faces().replace(f'ruleset = "{FIRST}"', f'ruleset = "{SECOND}"')
    one = 'options = [{ effect = "damage", points = 1, at = ["skeletons", "zombies"] }]'
    assert one in text
    path = tmp_path / "faces.toml"
    path.write_text(text.replace(one, one.replace("points = 1", "points = 2")))
    return NecromancersGame(load_ruleset(path))


def play(game: Game[Any], seed: int) -> tuple[Any, list[tuple[int, Action]], list[Event]]:
    state = game.setup(seed, 3, {}, [None] * 3)
    chooser = SplitMix64(seed)
    log: list[tuple[int, Action]] = []
    events = game.setup_events(state)
    while game.outcome(state) is None:
        seat = game.to_act(state)[0]
        action = game.bot_move(state, seat, chooser.next())
        state, more = game.apply(state, seat, action)
        log.append((seat, action))
        events += more
    return state, log, events


def replay(game: Game[Any], seed: int, log: list[tuple[int, Action]]) -> tuple[Any, list[Event]]:
    state = game.setup(seed, 3, {}, [None] * 3)
    events = game.setup_events(state)
    for seat, action in log:
        state, more = game.apply(state, seat, action)
        events += more
    return state, events


def test_the_ruleset_loader_takes_a_path_or_toml_text(tmp_path: Path) -> None:
    assert load_ruleset(shipped_faces()) == load_ruleset()
    second = second_ruleset(tmp_path).rules
    assert second.id == SECOND
    assert second.faces[1][0].points == 2
    assert {f: second.faces[f] for f in range(2, 7)} == {
        f: load_ruleset().faces[f] for f in range(2, 7)
    }


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_match_replays_identically_under_its_ruleset_after_a_new_default(
    tmp_path: Path, seed: int
) -> None:
    registry = Registry()
    registry.register(NecromancersGame(), default=True)
    created = registry.get("necromancers")
    state, log, events = play(created, seed)
    registry.register(second_ruleset(tmp_path), default=True)
    assert registry.get("necromancers").ruleset == SECOND
    pinned = registry.get("necromancers", created.ruleset)
    assert pinned.ruleset == FIRST
    rebuilt, replayed = replay(pinned, seed, log)
    assert pinned.dump_state(rebuilt) == created.dump_state(state)
    assert [e.to_json() for e in replayed] == [e.to_json() for e in events]
    # The same log under the new default is another match (or not even legal).
    try:
        other, _ = replay(registry.get("necromancers"), seed, log)
    except IllegalAction:
        return
    assert registry.get("necromancers").dump_state(other) != created.dump_state(state)


def test_unknown_games_and_rulesets_are_game_errors() -> None:
    with pytest.raises(GameError, match="unknown game"):
        get_game("chess")
    with pytest.raises(GameError, match="unknown ruleset"):
        get_game("necromancers", "necromancers-1999.01")
    assert get_game("necromancers", FIRST) is get_game("necromancers")


def test_registering_the_same_key_again_replaces_it_and_the_first_is_the_default() -> None:
    registry = Registry()
    first, again = NecromancersGame(), NecromancersGame()
    registry.register(first)
    assert registry.get("necromancers") is first
    registry.register(again)
    assert registry.get("necromancers") is again
    assert registry.games() == [again]


def test_describe_names_every_ruleset_the_loadout_schema_and_a_legal_sample(
    tmp_path: Path,
) -> None:
    registry = Registry()
    registry.register(NecromancersGame())
    registry.register(second_ruleset(tmp_path))
    registry.register(cardgame.CARD_GAME)
    necromancers, cards = registry.describe()
    assert necromancers == {
        "id": "necromancers",
        "name": "Duelo de Nigromantes",
        "ruleset": FIRST,
        "rulesets": [FIRST, SECOND],
        "min_seats": 2,
        "max_seats": 4,
        "options": {},
        "preferences": {},
        "loadout": None,
        "sample_loadout": None,
    }
    assert cards["preferences"] == {"auto_pass": {"type": "bool", "default": False}}
    assert cards["loadout"]["properties"]["deck"]["minItems"] == 8
    game = cardgame.CARD_GAME
    options = game.check_options(2, {})
    assert game.validate_loadout(cards["sample_loadout"], options) == cards["sample_loadout"]


def test_the_service_registry_offers_necromancers_by_default() -> None:
    assert "necromancers" in {d["id"] for d in describe()}
