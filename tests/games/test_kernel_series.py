"""Best of N: legs seeded one-way from the match seed, score, majority, who starts, replays."""

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from service.games.kernel.catalogue import catalogue
from service.games.kernel.prompts import Action, Prompt
from service.games.kernel.protocol import Event, IllegalAction, Outcome, rebuild
from service.games.kernel.rng import SplitMix64, one_way_seed
from service.games.kernel.series import Series, SeriesState, leg_seed
from service.games.kernel.state import GameState
from service.games.kernel.table import TableGame
from service.games.kernel.views import nullable, obj
from tests.games.cardgame import CARD_SERIES
from tests.games.helpers import loadouts, start


class DecideState(GameState, kw_only=True):
    result: Outcome | None


class Decide(TableGame[DecideState]):
    """A leg that seat 0 ends at once by naming its result: a win for a seat, or a draw."""

    id = "decide"
    name = "Decide"
    ruleset = "decide-1"
    min_seats = 2
    max_seats = 2
    state_type = DecideState

    def setup(
        self, seed: int, seats: int, options: Mapping[str, Any], loadouts: Sequence[Any]
    ) -> DecideState:
        self.prepare(seed, seats, options, loadouts)
        return DecideState(seed=seed, rng=seed, result=None)

    def setup_events(self, state: DecideState) -> list[Event]:
        return []

    def seat_count(self, state: DecideState) -> int:
        return 2

    def prompt(self, state: DecideState, seat: int) -> Prompt | None:
        if state.result is not None or seat != 0:
            return None
        return Prompt("decide", [{"type": r} for r in ("win0", "win1", "draw")])

    def play(
        self, state: DecideState, seat: int, asked: Prompt, action: Action, events: list[Event]
    ) -> None:
        kind = action["type"]
        result: Outcome = (
            {"winners": [0, 1], "ranking": [[0, 1]]}
            if kind == "draw"
            else {"winners": [int(kind[-1])], "ranking": [[int(kind[-1])], [1 - int(kind[-1])]]}
        )
        state.result = result
        events.append(Event("game_over", dict(result)))

    def outcome(self, state: DecideState) -> Outcome | None:
        return state.result

    def view_schema(self) -> dict[str, Any]:
        return obj(result=nullable({"type": "object"}))

    def catalogue(self) -> dict[str, Any]:
        return catalogue([], {})

    def observe(self, state: DecideState) -> dict[str, Any]:
        return {"result": state.result}

    def bot_action(self, view: Mapping[str, Any], prompt: Prompt, rng_seed: int) -> Action:
        return prompt.actions[0]


BO3 = Series(Decide(), 3)


def series_of(*results: str, seed: int = 99) -> tuple[SeriesState, list[list[str]]]:
    state = BO3.setup(seed, 2, {}, [None, None])
    kinds = []
    for result in results:
        state, events = BO3.apply(state, 0, {"type": result})
        kinds.append([e.kind for e in events])
    return state, kinds


def test_legs_are_seeded_one_way_from_the_match_seed_and_the_leg_number() -> None:
    assert leg_seed(99, 2) == one_way_seed(99, b"series-leg:2")
    state, _ = series_of()
    assert state.inner.seed == leg_seed(99, 1)
    state, _ = series_of("win0")
    assert state.inner.seed == leg_seed(99, 2) != leg_seed(99, 1)
    assert series_of("win0", seed=100)[0].inner.seed != state.inner.seed


def test_the_score_leg_and_best_of_are_in_the_view() -> None:
    state, kinds = series_of("win1")
    assert kinds == [["game_over", "leg_over", "leg_started"]]
    view = BO3.view(state, 0)
    assert (view["score"], view["leg"], view["best_of"]) == ([0, 1], 2, 3)
    assert view["inner"] == {"result": None}
    assert view["legs"] == [{"leg": 1, "outcome": {"winners": [1], "ranking": [[1], [0]]}}]


def test_the_match_ends_when_a_seat_has_won_a_majority() -> None:
    state, kinds = series_of("win1", "win1")
    assert kinds[-1] == ["game_over", "leg_over", "series_over"]
    assert BO3.outcome(state) == {"winners": [1], "ranking": [[1], [0]]}
    assert BO3.to_act(state) == []
    with pytest.raises(IllegalAction, match="over"):
        BO3.apply(state, 0, {"type": "win0"})


def test_a_drawn_leg_counts_for_nobody() -> None:
    state, _ = series_of("draw", "win0")
    assert state.score == [1, 0]
    assert BO3.outcome(state) is None
    state, _ = series_of("draw", "win0", "win0")
    assert BO3.outcome(state) == {"winners": [0], "ranking": [[0], [1]]}


def test_when_the_legs_run_out_the_points_rank_the_seats() -> None:
    state, _ = series_of("draw", "win1", "draw")
    assert BO3.outcome(state) == {"winners": [1], "ranking": [[1], [0]]}
    state, _ = series_of("draw", "draw", "draw")
    assert BO3.outcome(state) == {"winners": [0, 1], "ranking": [[0, 1]]}


def test_resigning_ends_the_whole_series() -> None:
    state, _ = series_of("win1")
    state, events = BO3.resign(state, 1)
    assert [e.kind for e in events] == ["resigned", "series_over"]
    assert BO3.outcome(state) == {"winners": [0], "ranking": [[0], [1]]}
    assert [leg["leg"] for leg in BO3.replay_view(state)["legs"]] == [1, 2]


def test_replay_view_shows_every_leg_revealed() -> None:
    state, _ = series_of("win0", "draw", "win1")
    replay = BO3.replay_view(state)
    assert replay["seed"] == 99
    assert [leg["seed"] for leg in replay["legs"]] == [leg_seed(99, n) for n in (1, 2, 3)]
    assert [leg["outcome"]["winners"] for leg in replay["legs"]] == [[0], [0, 1], [1]]


def play_card_series(seed: int) -> tuple[SeriesState, list[tuple[int, Action]], list[Event]]:
    state = start(CARD_SERIES, seed, 2)
    log: list[tuple[int, Action]] = []
    events = CARD_SERIES.setup_events(state)
    chooser = SplitMix64(seed)
    while CARD_SERIES.outcome(state) is None:
        seat = chooser.pick(CARD_SERIES.to_act(state))
        action = CARD_SERIES.bot_move(state, seat, chooser.next())
        state, more = CARD_SERIES.apply(state, seat, action)
        log.append((seat, action))
        events += more
    return state, log, events


@pytest.mark.parametrize("seed", range(12))
def test_card_series_the_loser_of_a_leg_starts_the_next(seed: int) -> None:
    state, _, _ = play_card_series(seed)
    legs = state.legs
    assert 2 <= len(legs) <= 3
    for before, after in itertools.pairwise(legs):
        winners = before["outcome"]["winners"]
        expected = 1 - winners[0] if len(winners) == 1 else before["final"]["first"]
        assert after["final"]["first"] == expected
    assert max(state.score) >= 2 or len(legs) == 3


@pytest.mark.parametrize("seed", [3, 4])
def test_card_series_rebuilds_from_its_log_and_reproduces_from_its_seed(seed: int) -> None:
    state, log, events = play_card_series(seed)
    rebuilt = rebuild(CARD_SERIES, seed, 2, {}, loadouts(CARD_SERIES, 2), log)
    assert CARD_SERIES.dump_state(rebuilt) == CARD_SERIES.dump_state(state)
    again, _, events_again = play_card_series(seed)
    assert CARD_SERIES.dump_state(again) == CARD_SERIES.dump_state(state)
    assert [e.to_json() for e in events_again] == [e.to_json() for e in events]
    assert [e.kind for e in events].count("leg_started") == len(state.legs)
