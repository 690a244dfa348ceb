"""Hidden information: one mechanism redacts every view, prompt and event per seat."""

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.games.kernel.hidden import Hidden, redact, reveal, to_json
from service.games.kernel.protocol import Event, Game, event_for, event_revealed
from service.games.kernel.rng import SplitMix64
from service.games.registry import REGISTRY
from tests.games import cardgame
from tests.games.cardgame import CARD_GAME, CARD_SERIES, CardState
from tests.games.helpers import leaked, random_answer, secret_seeds, start

cardgame.register_test_games()
GAME_LIST = REGISTRY.games()
MAX_STEPS = 400

DREW = Event("drew", {"seat": 1, "card": Hidden((1,), "c17", shown=None)})


def test_the_listed_seats_see_the_value_the_others_and_spectators_what_is_shown() -> None:
    tree = {"hand": Hidden((1,), ["c1", "c2"], shown=2), "deck": Hidden((), ("c3",), shown=1)}
    assert redact(tree, 1) == {"hand": ["c1", "c2"], "deck": 1}
    assert redact(tree, 0) == {"hand": 2, "deck": 1}
    assert redact(tree, None) == {"hand": 2, "deck": 1}
    assert reveal(tree) == {"hand": ["c1", "c2"], "deck": ["c3"]}


def test_marks_nest_and_the_inner_mark_is_redacted_too() -> None:
    tree = Hidden((0, 1), {"secret": Hidden((1,), "x", shown="?")}, shown=None)
    assert redact(tree, 0) == {"secret": "?"}
    assert redact(tree, 1) == {"secret": "x"}
    assert redact(tree, 2) is None
    assert reveal(tree) == {"secret": "x"}


def test_the_json_form_round_trips_and_redacts_like_the_objects() -> None:
    tree = {"a": [Hidden((1,), {"b": Hidden((), [1, 2], shown=2)}, shown="n")], "c": (3,)}
    stored = json.loads(json.dumps(to_json(tree)))
    assert stored["a"][0] == {
        "$hidden": {
            "seats": [1],
            "value": {"b": {"$hidden": {"seats": [], "value": [1, 2], "shown": 2}}},
            "shown": "n",
        }
    }
    for seat in (None, 0, 1):
        assert redact(stored, seat) == redact(tree, seat)
    assert reveal(stored) == reveal(tree) == {"a": [{"b": [1, 2]}], "c": [3]}


def test_the_drawer_sees_the_card_the_others_that_a_card_was_drawn() -> None:
    assert event_for(DREW, 1) == {"kind": "drew", "data": {"seat": 1, "card": "c17"}}
    assert event_for(DREW, 0) == {"kind": "drew", "data": {"seat": 1, "card": None}}
    assert event_for(DREW, None) == {"kind": "drew", "data": {"seat": 1, "card": None}}
    assert event_revealed(DREW)["data"] == {"seat": 1, "card": "c17"}


def test_stored_events_redact_like_events_and_keep_their_other_keys() -> None:
    stored = {**json.loads(json.dumps(DREW.to_json())), "seq": 4}
    assert event_for(stored, 1) == {"kind": "drew", "data": {"seat": 1, "card": "c17"}, "seq": 4}
    assert event_for(stored, 0) == {"kind": "drew", "data": {"seat": 1, "card": None}, "seq": 4}
    private = Event("note", {"text": "x"}, visible_to=(1,)).to_json()
    assert event_for(private, 0) is None
    assert event_for(private, None) is None
    assert event_for(private, 1) == {"kind": "note", "data": {"text": "x"}}


def after_cuts(seed: int = 5) -> tuple[CardState, list[Event]]:
    state = start(CARD_GAME, seed, 2)
    state, _ = CARD_GAME.apply(state, 0, {"type": "cut", "at": 3})
    return CARD_GAME.apply(state, 1, {"type": "cut", "at": 5})


def test_card_game_draws_show_the_card_to_the_drawer_only() -> None:
    state, events = after_cuts()
    drawn = [e for e in events if e.kind == "drew"]
    assert len(drawn) == 6
    for event in drawn:
        drawer = event.data["seat"]
        card = event_for(event, drawer)
        assert card is not None and card["data"]["card"] in state.hands[drawer]
        assert event_for(event, 1 - drawer) == {
            "kind": "drew",
            "data": {"seat": drawer, "card": None},
        }
        assert event_for(event, None) == event_for(event, 1 - drawer)


def test_card_game_views_show_own_hand_other_hands_and_decks_only_as_counts() -> None:
    state, _ = after_cuts()
    mine = CARD_GAME.view(state, 0)
    own = [{"id": c, "card": c.rsplit(":", 1)[-1]} for c in state.hands[0]]
    assert mine["hands"] == [{"count": 3, "cards": own}, {"count": 3, "cards": None}]
    assert mine["decks"] == [{"count": 5, "cards": None}] * 2
    assert CARD_GAME.view(state, None)["hands"] == [{"count": 3, "cards": None}] * 2
    revealed = CARD_GAME.replay_view(state)["decks"]
    assert [[c["id"] for c in deck["cards"]] for deck in revealed] == state.decks


@pytest.mark.parametrize("game", GAME_LIST, ids=lambda g: f"{g.id}:{g.ruleset}")
@given(
    seed=secret_seeds, loadout_seed=st.integers(0, 2**32), chooser_seed=st.integers(0, 2**64 - 1)
)
@settings(max_examples=30, deadline=None)
def test_nothing_a_seat_receives_holds_a_secret_of_the_full_state(
    game: Game[Any], seed: int, loadout_seed: int, chooser_seed: int
) -> None:
    """Random legal play; after every step, search all each seat gets for the state's secrets."""
    seats = game.max_seats
    state = start(game, seed, seats, loadout_seed)
    events = game.setup_events(state)
    chooser = SplitMix64(chooser_seed)
    for _ in range(MAX_STEPS):
        for seat in [None, *range(seats)]:
            received: list[Any] = [game.view(state, seat), *(event_for(e, seat) for e in events)]
            if seat is not None and (prompt := game.prompt(state, seat)) is not None:
                received.append(prompt.as_dict())
            assert leaked(received, game.secrets(state, seat)) == [], seat
        if game.outcome(state) is not None:
            return
        seat = chooser.pick(game.to_act(state))
        prompt = game.prompt(state, seat)
        assert prompt is not None
        state, events = game.apply(state, seat, random_answer(prompt, chooser))


def hidden_twin(state: CardState, seat: int) -> CardState:
    """The same table for `seat`, with the other hand and every deck order changed."""
    twin = copy.deepcopy(state)
    other = 1 - seat
    twin.hands[other][0], twin.decks[other][0] = twin.decks[other][0], twin.hands[other][0]
    for deck in twin.decks:
        deck.reverse()
    twin.rng ^= 0xFFFF
    return twin


@pytest.mark.parametrize("steps", [0, 1, 2])
def test_bots_cannot_peek_at_hidden_cards_or_deck_orders(steps: int) -> None:
    state, _ = after_cuts(seed=21)
    for _ in range(steps):
        seat = CARD_GAME.to_act(state)[0]
        state, _ = CARD_GAME.apply(state, seat, CARD_GAME.timeout_action(state, seat))
    for seat in CARD_GAME.to_act(state):
        twin = hidden_twin(state, seat)
        assert CARD_GAME.dump_state(twin) != CARD_GAME.dump_state(state)
        assert CARD_GAME.view(twin, seat) == CARD_GAME.view(state, seat)
        for rng_seed in range(40):
            assert CARD_GAME.bot_move(twin, seat, rng_seed) == CARD_GAME.bot_move(
                state, seat, rng_seed
            )


def test_a_series_bot_cannot_peek_either() -> None:
    state = start(CARD_SERIES, 8, 2)
    for seat in (0, 1):
        state, _ = CARD_SERIES.apply(state, seat, {"type": "cut", "at": 2})
    seat = CARD_SERIES.to_act(state)[0]
    twin = copy.deepcopy(state)
    twin.inner = hidden_twin(state.inner, seat)
    assert CARD_SERIES.view(twin, seat) == CARD_SERIES.view(state, seat)
    for rng_seed in range(40):
        assert CARD_SERIES.bot_move(twin, seat, rng_seed) == CARD_SERIES.bot_move(
            state, seat, rng_seed
        )
