"""The match protocol, checked against every registered game."""

import dataclasses
import json
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.games.kernel.loadouts import LoadoutError
from service.games.kernel.prompts import Prompt, prompt_fingerprint
from service.games.kernel.protocol import (
    RESIGN,
    Action,
    Event,
    Game,
    GameError,
    IllegalAction,
    events_for,
    match_legal,
    rebuild,
    resolve_options,
)
from service.games.kernel.rng import MASK64, SplitMix64
from service.games.registry import REGISTRY, get_game
from tests.games import cardgame
from tests.games.helpers import contains, loadouts, start

cardgame.register_test_games()
GAME_LIST = REGISTRY.games()
MAX_ACTIONS = 2000


def play(
    game: Game[Any], seed: int, seats: int, bot_seed: int
) -> tuple[Any, list[tuple[int, Action]]]:
    """A bot-only match to the end: the final state and the action log."""
    state = start(game, seed, seats)
    chooser = SplitMix64(bot_seed)
    log: list[tuple[int, Action]] = []
    while game.outcome(state) is None:
        assert len(log) < MAX_ACTIONS, "bot-only match did not finish"
        seat = chooser.pick(game.to_act(state))
        action = game.bot_move(state, seat, chooser.next())
        state, _ = game.apply(state, seat, action)
        log.append((seat, action))
    return state, log


seeds = st.integers(min_value=0, max_value=MASK64)


@pytest.mark.parametrize("game", GAME_LIST, ids=lambda g: f"{g.id}:{g.ruleset}")
@given(data=st.data(), seed=seeds, bot_seed=seeds)
@settings(max_examples=40, deadline=None)
def test_rebuild_from_the_log_equals_the_live_state(
    game: Game[Any], data: st.DataObject, seed: int, bot_seed: int
) -> None:
    seats = data.draw(st.integers(game.min_seats, game.max_seats))
    live, log = play(game, seed, seats, bot_seed)
    rebuilt = rebuild(game, seed, seats, {}, loadouts(game, seats), log)
    assert game.dump_state(rebuilt) == game.dump_state(live)


@pytest.mark.parametrize("game", GAME_LIST, ids=lambda g: f"{g.id}:{g.ruleset}")
def test_rebuild_replays_a_resignation_from_the_log(game: Game[Any]) -> None:
    state = start(game, 3, game.min_seats)
    seat = game.to_act(state)[0]
    first = game.timeout_action(state, seat)
    state, _ = game.apply(state, seat, first)
    resigned, _ = game.resign(state, seat)
    log = [(seat, first), (seat, RESIGN)]
    rebuilt = rebuild(game, 3, game.min_seats, {}, loadouts(game, game.min_seats), log)
    assert game.dump_state(rebuilt) == game.dump_state(resigned)
    assert game.outcome(rebuilt) is not None


@pytest.mark.parametrize("game", GAME_LIST, ids=lambda g: f"{g.id}:{g.ruleset}")
@given(data=st.data(), seed=seeds)
@settings(max_examples=25, deadline=None)
def test_every_step_keeps_the_protocol_promises(
    game: Game[Any], data: st.DataObject, seed: int
) -> None:
    """Round-trips, hidden generator, legal timeouts and bots, at every step of a match."""
    seats = data.draw(st.integers(game.min_seats, game.max_seats))
    state = start(game, seed, seats)
    for step in range(MAX_ACTIONS):
        dumped = game.dump_state(state)
        assert json.loads(json.dumps(dumped)) == dumped
        assert msgpack.unpackb(msgpack.packb(dumped)) == dumped
        assert game.dump_state(game.load_state(dumped)) == dumped
        # What a seat may not receive is checked in test_kernel_hidden, for every game.
        for seat in [None, *range(seats)]:
            json.dumps(game.view(state, seat))
        if game.outcome(state) is not None:
            assert game.to_act(state) == []
            return
        to_act = game.to_act(state)
        assert to_act
        for seat in to_act:
            # Timeouts and bots answer with actions `apply` accepts (enumerated or not).
            for action in (game.timeout_action(state, seat), game.bot_move(state, seat, step)):
                game.apply(state, seat, action)
        seat = to_act[step % len(to_act)]
        state, events = game.apply(state, seat, game.timeout_action(state, seat))
        assert game.dump_state(game.load_state(game.dump_state(state))) == game.dump_state(state)
        for event in events:
            json.dumps(event.to_json())
    pytest.fail("match did not finish")


@pytest.mark.parametrize("game", GAME_LIST, ids=lambda g: f"{g.id}:{g.ruleset}")
def test_illegal_actions_are_rejected_with_a_reason_and_change_nothing(game: Game[Any]) -> None:
    state = start(game, 7, game.min_seats)
    before = game.dump_state(state)
    seat = game.to_act(state)[0]
    legal = game.timeout_action(state, seat)
    # An int field sent as a float must not pass for the int.
    floated = {k: float(v) if type(v) is int else v for k, v in legal.items()}
    attempts: list[tuple[int, Any]] = [
        (game.min_seats, legal),
        (seat, {"type": "no-such-action"}),
        (seat, {"seat": 1}),
        (seat, "target"),
        (seat, {"type": legal["type"], "extra": {1, 2}}),
        (seat, floated),
    ]
    for who, action in attempts:
        with pytest.raises(IllegalAction) as caught:
            game.apply(state, who, action)
        assert caught.value.reason
        assert game.dump_state(state) == before


@pytest.mark.parametrize("game", GAME_LIST, ids=lambda g: f"{g.id}:{g.ruleset}")
def test_apply_never_mutates_its_input(game: Game[Any]) -> None:
    state = start(game, 11, game.max_seats)
    for step in range(30):
        if game.outcome(state) is not None:
            break
        before = game.dump_state(state)
        seat = game.to_act(state)[0]
        state_after, _ = game.apply(state, seat, game.bot_move(state, seat, step))
        assert game.dump_state(state) == before
        state = state_after


def _containers(value: Any) -> set[int]:
    """The ids of every list, dict and set reachable from `value`, dataclasses included."""
    found: set[int] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, dict, set)):
            if id(item) in found:
                continue
            found.add(id(item))
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set)):
            stack.extend(item)
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            stack.extend(getattr(item, f.name) for f in dataclasses.fields(item))
    return found


@pytest.mark.parametrize("game", GAME_LIST, ids=lambda g: f"{g.id}:{g.ruleset}")
def test_a_loaded_state_shares_nothing_mutable_with_its_data(game: Game[Any]) -> None:
    """The service keeps a match's data between actions and loads it again for each one."""
    state = start(game, 13, game.max_seats)
    for step in range(12):
        data = json.loads(json.dumps(game.dump_state(state)))
        assert not _containers(game.load_state(data)) & _containers(data)
        if game.outcome(state) is not None:
            break
        seat = game.to_act(state)[0]
        state, _ = game.apply(state, seat, game.bot_move(state, seat, step))


@pytest.mark.parametrize("game", GAME_LIST, ids=lambda g: f"{g.id}:{g.ruleset}")
def test_bad_seat_counts_are_a_game_error(game: Game[Any]) -> None:
    for seats in (game.min_seats - 1, game.max_seats + 1):
        with pytest.raises(GameError):
            game.check_options(seats, {})
        with pytest.raises(GameError):
            game.setup(1, seats, {}, [None] * seats)
    with pytest.raises(GameError):
        start(game, -1, game.min_seats)
    with pytest.raises(GameError, match="one loadout per seat"):
        game.setup(1, game.min_seats, {}, loadouts(game, game.min_seats)[1:])


@pytest.mark.parametrize("game", GAME_LIST, ids=lambda g: f"{g.id}:{g.ruleset}")
def test_same_seed_same_match(game: Game[Any]) -> None:
    first, log = play(game, 5, game.max_seats, 6)
    second, again = play(game, 5, game.max_seats, 6)
    assert log == again
    assert game.dump_state(first) == game.dump_state(second)
    # The replay reveals everything, every secret of the full state included.
    revealed = game.replay_view(first)
    for secret in game.secrets(first, None):
        assert contains(revealed, secret)


def test_events_for_filters_by_visibility() -> None:
    public = Event("roll", {"die": 3})
    private = Event("draw", {"card": "x"}, visible_to=(1,))
    assert events_for([public, private], None) == [public]
    assert events_for([public, private], 0) == [public]
    assert events_for([public, private], 1) == [public, private]
    assert private.as_dict() == {"kind": "draw", "data": {"card": "x"}}
    assert private.to_json() == {"kind": "draw", "data": {"card": "x"}, "visible_to": [1]}


def test_match_legal_returns_the_canonical_action() -> None:
    legal: list[Action] = [{"type": "target", "seat": 1}, {"type": "target", "seat": 2}]
    assert match_legal(legal, {"seat": 2, "type": "target"}) is legal[1]
    wrongs = (
        {"type": "target", "seat": True},
        {"type": "target", "seat": 2.0},
        {"type": "target", "seat": "2"},
        {"type": "target", "seat": 2, "extra": None},
        {"type": "target"},
    )
    for wrong in wrongs:
        with pytest.raises(IllegalAction, match="not offered now"):
            match_legal(legal, wrong)


def test_match_legal_compares_nested_values_as_strictly_as_json_text() -> None:
    legal: list[Action] = [{"type": "discard", "cards": [1, 2], "pay": {"gold": 1}}]
    assert match_legal(legal, {"type": "discard", "cards": (1, 2), "pay": {"gold": 1}})
    for wrong in (
        {"type": "discard", "cards": [1, True], "pay": {"gold": 1}},
        {"type": "discard", "cards": [1, 2, 3], "pay": {"gold": 1}},
        {"type": "discard", "cards": [1, 2], "pay": {"gold": 1.0}},
        {"type": "discard", "cards": [1, 2], "pay": [["gold", 1]]},
    ):
        with pytest.raises(IllegalAction, match="not offered now"):
            match_legal(legal, wrong)


def test_an_action_that_is_not_json_is_refused_as_such() -> None:
    legal: list[Action] = [{"type": "target", "seat": 1}]
    with pytest.raises(IllegalAction, match="not JSON"):
        match_legal(legal, {"type": "target", "seat": b"\x01"})


def test_resolve_options_fills_defaults_and_rejects_bad_values() -> None:
    schema: dict[str, Any] = {
        "mode": {"type": "str", "default": "duel", "choices": ["duel", "team"]},
        "games": {"type": "int", "default": 3, "min": 1, "max": 5},
    }
    assert resolve_options(schema, {}) == {"mode": "duel", "games": 3}
    assert resolve_options(schema, {"games": 1}) == {"mode": "duel", "games": 1}
    for bad in ({"games": 0}, {"games": 9}, {"games": True}, {"mode": "ffa"}, {"x": 1}):
        with pytest.raises(GameError):
            resolve_options(schema, bad)


# --- prompts, parameters, loadouts and resigning, on the card game ----------------------

CARDS = cardgame.CARD_GAME


def test_both_seats_are_asked_to_cut_the_opponents_deck_at_once() -> None:
    state = start(CARDS, 5, 2)
    assert CARDS.to_act(state) == [0, 1]
    prompt = CARDS.prompt(state, 0)
    assert prompt is not None
    assert prompt.as_dict() == {
        "kind": "cut",
        "actions": [],
        "params": {"cut": {"at": {"type": "integer", "minimum": 1, "maximum": 7}}},
        "data": {"deck": 1},
    }
    assert CARDS.legal_actions(state, 0) == []


def test_answering_one_prompt_leaves_the_other_seats_fingerprint_unchanged() -> None:
    state = start(CARDS, 5, 2)
    before = [prompt_fingerprint(CARDS.prompt(state, seat)) for seat in (0, 1)]
    after, _ = CARDS.apply(state, 0, {"type": "cut", "at": 4})
    assert CARDS.to_act(after) == [1]
    assert prompt_fingerprint(CARDS.prompt(after, 1)) == before[1]
    assert prompt_fingerprint(CARDS.prompt(after, 0)) != before[0]
    assert prompt_fingerprint(CARDS.prompt(after, 0)) == prompt_fingerprint(None)


def test_a_prompt_fingerprint_is_its_wire_form_hashed() -> None:
    a = Prompt("response", [{"type": "pass"}], data={"card": "c3"})
    b = Prompt("response", [{"type": "pass"}], data={"card": "c3"})
    assert prompt_fingerprint(a) == prompt_fingerprint(b)
    assert prompt_fingerprint(a) != prompt_fingerprint(Prompt("response", [{"type": "pass"}]))


@pytest.mark.parametrize(
    "action",
    [
        {"type": "cut", "at": 0},
        {"type": "cut", "at": 8},
        {"type": "cut", "at": 3.0},
        {"type": "cut", "at": True},
        {"type": "cut"},
        {"type": "cut", "at": 3, "also": 1},
        {"type": "pass"},
    ],
)
def test_a_bad_cut_position_is_refused_with_a_reason_and_changes_nothing(action: Any) -> None:
    state = start(CARDS, 5, 2)
    before = CARDS.dump_state(state)
    with pytest.raises(IllegalAction) as caught:
        CARDS.apply(state, 0, action)
    assert "cut" in caught.value.reason
    assert CARDS.dump_state(state) == before


def test_after_both_cuts_each_seat_draws_three_and_the_first_seat_plays() -> None:
    state = start(CARDS, 5, 2)
    deck = list(state.decks[1])
    state, events = CARDS.apply(state, 0, {"type": "cut", "at": 3})
    assert state.decks[1] == deck[3:] + deck[:3]
    assert events == [Event("cut", {"seat": 0, "deck": 1, "at": 3})]
    state, events = CARDS.apply(state, 1, {"type": "cut", "at": 5})
    assert [e.kind for e in events] == ["cut", *["drew"] * 6, "turn_start"]
    assert [len(h) for h in state.hands] == [3, 3]
    assert CARDS.to_act(state) == [0]
    assert state.hands[1] == (deck[3:] + deck[:3])[:3]


@pytest.mark.parametrize(
    ("deck", "rule", "card"),
    [
        (["c1", "c2", "c3", "c4", "c5", "c6", "c7", "c0"], "banned_card", "c0"),
        (["c1", "c2", "c3", "c4", "c5", "c6", "c7", "x9"], "unknown_card", "x9"),
        (["c1", "c2", "c3", "c4", "c5", "c5", "c5", "c8"], "too_many_copies", "c5"),
        (["c1", "c2", "c3", "c4", "c5", "c6", "c7"], "deck_size", None),
    ],
)
def test_loadout_refusals_name_the_card_and_the_rule(
    deck: list[str], rule: str, card: str | None
) -> None:
    with pytest.raises(LoadoutError) as caught:
        CARDS.validate_loadout({"deck": deck}, CARDS.check_options(2, {}))
    assert caught.value.code == rule
    assert caught.value.details["rule"] == rule
    assert caught.value.details.get("card") == card


def test_a_bad_loadout_stops_setup() -> None:
    with pytest.raises(LoadoutError, match="banned"):
        CARDS.setup(1, 2, {}, [{"deck": ["c0"] * 8}, CARDS.sample_loadout(0, {})])
    with pytest.raises(LoadoutError, match="takes no loadout"):
        get_game("necromancers").setup(1, 2, {}, [None, {"deck": []}])


@given(seed=seeds)
@settings(max_examples=200)
def test_sample_loadouts_are_legal_for_every_seed(seed: int) -> None:
    options = CARDS.check_options(2, {})
    loadout = CARDS.sample_loadout(seed, options)
    assert CARDS.validate_loadout(loadout, options) == loadout


def test_in_the_card_game_the_resigning_seat_loses() -> None:
    state = start(CARDS, 5, 2)
    state, events = CARDS.resign(state, 1)
    assert [e.kind for e in events] == ["resigned", "game_over"]
    assert CARDS.outcome(state) == {"winners": [0], "ranking": [[0], [1]]}
    assert CARDS.to_act(state) == []
    with pytest.raises(IllegalAction, match="over"):
        CARDS.resign(state, 0)
