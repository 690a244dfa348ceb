"""Refusals that say why, set-valued and losing answers, and seat preferences, as the kernel
gives them to every game (docs/architecture.md#refusals), on the card game of cardgame.py."""

from typing import Any

import pytest

from service.games.kernel.params import check_params
from service.games.kernel.prompts import Prompt
from service.games.kernel.protocol import PREFER, IllegalAction, rebuild
from service.games.registry import get_game
from tests.games.cardgame import CARD_GAME, CARD_SERIES, CardState, value
from tests.games.helpers import loadouts, start


def _refused(state: Any, seat: int, action: Any) -> IllegalAction:
    with pytest.raises(IllegalAction) as refused:
        CARD_GAME.apply(state, seat, action)
    return refused.value


def _dealt(seed: int = 5) -> CardState:
    state = start(CARD_GAME, seed, 2)
    state, _ = CARD_GAME.apply(state, 0, {"type": "cut", "at": 3})
    state, _ = CARD_GAME.apply(state, 1, {"type": "cut", "at": 5})
    return state


@pytest.mark.parametrize(
    ("action", "code"),
    [
        ("cut", "not_an_action"),
        ({"at": 3}, "not_an_action"),
        ({"type": 3}, "not_an_action"),
        ({"type": "draw"}, "type_not_offered"),
    ],
)
def test_what_is_not_an_offered_action_is_refused_with_the_kernels_code(
    action: Any, code: str
) -> None:
    state = start(CARD_GAME, 5, 2)
    refused = _refused(state, 0, action)
    assert refused.code == code
    if code == "type_not_offered":
        assert refused.details == {"offered": ["cut"]}


@pytest.mark.parametrize(
    ("action", "field"),
    [
        ({"type": "cut"}, "at"),
        ({"type": "cut", "at": 0}, "at"),
        ({"type": "cut", "at": 99}, "at"),
        ({"type": "cut", "at": True}, "at"),
        ({"type": "cut", "at": 2.0}, "at"),
        ({"type": "cut", "at": 2, "also": 1}, "also"),
    ],
)
def test_a_parameter_out_of_its_schema_names_the_field(action: Any, field: str) -> None:
    refused = _refused(start(CARD_GAME, 5, 2), 0, action)
    assert (refused.code, refused.details) == ("bad_param", {"field": field})
    assert repr(field) in str(refused)


def test_the_parameter_check_reads_enums_arrays_and_repeats() -> None:
    schema = {"pick": {"type": "array", "items": {"enum": ["a", "b"]}, "uniqueItems": True}}
    check_params("choose", schema, {"type": "choose", "pick": ["b", "a"]})
    for bad, words in (
        (["a", "c"], "item 1 must be one of"),
        (["a", "a"], "item 1 repeats"),
        ("ab", "must be of type array"),
    ):
        with pytest.raises(IllegalAction, match=words):
            check_params("choose", schema, {"type": "choose", "pick": bad})


def test_the_game_explains_an_enumerated_action_it_does_not_offer() -> None:
    for seed in range(200):
        state = _dealt(seed)
        turn, lead = state.turn, min(state.hands[state.turn], key=value)
        answers = {value(c) > value(lead) for c in state.hands[1 - turn]}
        if answers == {True, False}:
            break
    stranger = state.hands[1 - turn][0]
    assert _refused(state, turn, {"type": "play", "card": stranger}).code == "not_in_hand"
    played, _ = CARD_GAME.apply(state, turn, {"type": "play", "card": lead})
    low = next(c for c in played.hands[1 - turn] if value(c) <= value(lead))
    refused = _refused(played, 1 - turn, {"type": "respond", "card": low})
    assert (refused.code, str(refused)) == ("too_low", f"a response must beat {lead[-2:]}")


def test_an_answer_that_loses_is_flagged_on_the_wire_and_matches_with_or_without_the_flag() -> None:
    prompt = Prompt("play", [{"type": "play", "card": "x"}, {"type": "pass"}], loses=(0,))
    assert prompt.as_dict()["actions"] == [
        {"type": "play", "card": "x", "loses": True},
        {"type": "pass"},
    ]
    state = _dealt()
    action = {"type": "play", "card": state.hands[state.turn][0]}
    plain, _ = CARD_GAME.apply(state, state.turn, action)
    flagged, _ = CARD_GAME.apply(state, state.turn, {**action, "loses": True})
    assert CARD_GAME.dump_state(plain) == CARD_GAME.dump_state(flagged)


def _no_response_possible() -> tuple[int, CardState, str]:
    """A seed, its dealt state, and the card the turn player leads that cannot be beaten."""
    for seed in range(200):
        state = _dealt(seed)
        top = max(state.hands[state.turn], key=value)
        if all(value(c) <= value(top) for c in state.hands[1 - state.turn]):
            return seed, state, top
    raise AssertionError("no deal without an answer")


def test_a_seat_that_prefers_to_pass_what_it_cannot_win_is_not_asked() -> None:
    _, state, top = _no_response_possible()
    turn = state.turn
    asked, _ = CARD_GAME.apply(state, turn, {"type": "play", "card": top})
    assert CARD_GAME.to_act(asked) == [1 - turn]
    preferring, events = CARD_GAME.prefer(state, 1 - turn, {"auto_pass": True})
    assert [e.kind for e in events] == ["preferences"] and events[0].visible_to == (1 - turn,)
    played, events = CARD_GAME.apply(preferring, turn, {"type": "play", "card": top})
    assert "auto_passed" in [e.kind for e in events]
    assert CARD_GAME.to_act(played) == [1 - turn] and played.phase == "activation"


def test_preferences_are_checked_and_replayed_from_the_action_log() -> None:
    seed, state, top = _no_response_possible()
    with pytest.raises(IllegalAction) as refused:
        CARD_GAME.prefer(state, 0, {"auto_pass": 1})
    assert refused.value.code == "bad_param"
    with pytest.raises(IllegalAction) as unknown:
        CARD_GAME.prefer(state, 0, {"fast": True})
    assert unknown.value.code == "bad_param"
    turn = state.turn
    log = [
        (0, {"type": "cut", "at": 3}),
        (1, {"type": "cut", "at": 5}),
        (1 - turn, {"type": PREFER, "auto_pass": True}),
        (turn, {"type": "play", "card": top}),
    ]
    options = CARD_GAME.check_options(2, {})
    rebuilt = rebuild(CARD_GAME, seed, 2, options, loadouts(CARD_GAME, 2), log)
    assert rebuilt.auto_pass[1 - turn] and rebuilt.phase == "activation"


def test_a_series_keeps_a_seats_preferences_for_every_leg() -> None:
    state = start(CARD_SERIES, 3, 2)
    state, _ = CARD_SERIES.prefer(state, 1, {"auto_pass": True})
    assert state.preferences == [{}, {"auto_pass": True}]
    for step in range(500):
        if state.leg > 1 or CARD_SERIES.outcome(state) is not None:
            break
        seat = CARD_SERIES.to_act(state)[0]
        state, _ = CARD_SERIES.apply(state, seat, CARD_SERIES.bot_move(state, seat, step))
    assert state.leg == 2
    assert state.inner.auto_pass == [False, True]


def test_a_game_without_preferences_refuses_them() -> None:
    game = get_game("necromancers")
    state = game.setup(1, 2, game.check_options(2, {}), [None, None])
    with pytest.raises(IllegalAction) as refused:
        game.prefer(state, 0, {})
    assert refused.value.code == "no_preferences"
