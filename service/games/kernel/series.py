"""Best of N: a series of legs of one game, itself a game (docs/architecture.md#series).

Each leg is a fresh inner match seeded with a one-way sub-seed of the match seed and the leg
number, so a leg's seed (revealed in its replay) gives away neither the match seed nor any
other leg. Every leg uses the seats' loadouts from the start. Who starts a leg is the inner
game's rule (`Game.next_leg_options`).

Rules of the series (ours: the source texts only ask for best of 3):
- A leg won by one seat is a point for it; a drawn leg (no single winner) counts for nobody.
- The match ends as soon as a seat has won a majority of `best_of` legs. If the legs run out
  first (drawn legs), the seats are ranked by points and equal points share the place.
- When a leg ends, the next begins inside the same `apply` ("leg_over", "leg_started"); the
  inner game's own "game_over" closes a leg, "series_over" closes the match.
- Resigning gives up the whole match: the others are ranked by points, the resigning seat last.
- A seat's preferences hold for the rest of the match: each new leg starts with them.
"""

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from service.games.kernel.prompts import Action, Prompt
from service.games.kernel.protocol import Event, Game, IllegalAction, OptionSpec, Outcome
from service.games.kernel.rng import one_way_seed
from service.games.kernel.state import dump_state, load_state
from service.games.kernel.views import INT, array, nullable, obj


def leg_seed(seed: int, leg: int) -> int:
    """The seed of leg `leg` (from 1) of a series with match seed `seed`."""
    return one_way_seed(seed, b"series-leg:" + str(leg).encode())


class SeriesState(msgspec.Struct):
    seed: int
    seats: int
    # The current leg's options, and every seat's loadout (the same each leg).
    options: dict[str, Any]
    loadouts: list[Any]
    leg: int
    score: list[int]
    # One entry per finished leg: its number, outcome and final state, all revealed.
    legs: list[dict[str, Any]]
    inner: Any
    result: Outcome | None = msgspec.field(default=None, name="outcome")
    # Each seat's preferences as last set (an empty dict: none), given to every new leg.
    preferences: list[dict[str, Any]] = msgspec.field(default_factory=list)


def _ranking(score: Sequence[int], seats: Sequence[int]) -> list[list[int]]:
    points = sorted({score[s] for s in seats}, reverse=True)
    return [[s for s in seats if score[s] == p] for p in points]


class Series(Game[SeriesState]):
    def __init__(self, inner: Game[Any], best_of: int) -> None:
        if best_of < 1 or best_of % 2 == 0:
            raise ValueError("best_of is an odd number of legs")
        self.inner = inner
        self.best_of = best_of
        self.id = f"{inner.id}-bo{best_of}"
        self.name = inner.name
        self.ruleset = inner.ruleset
        self.min_seats = inner.min_seats
        self.max_seats = inner.max_seats

    # A series is created like its inner game: same options, same loadouts.

    def options_schema(self) -> dict[str, OptionSpec]:
        return self.inner.options_schema()

    def check_options(self, seats: int, options: Mapping[str, Any]) -> dict[str, Any]:
        return self.inner.check_options(seats, options)

    def loadout_schema(self) -> dict[str, Any] | None:
        return self.inner.loadout_schema()

    def validate_loadout(self, loadout: Any, options: Mapping[str, Any]) -> Any:
        return self.inner.validate_loadout(loadout, options)

    def sample_loadout(self, seed: int, options: Mapping[str, Any]) -> Any:
        return self.inner.sample_loadout(seed, options)

    def setup(
        self, seed: int, seats: int, options: Mapping[str, Any], loadouts: Sequence[Any]
    ) -> SeriesState:
        resolved, checked = self.prepare(seed, seats, options, loadouts)
        inner = self.inner.setup(leg_seed(seed, 1), seats, resolved, checked)
        return SeriesState(seed, seats, resolved, checked, 1, [0] * seats, [], inner, None)

    def setup_events(self, state: SeriesState) -> list[Event]:
        return [
            Event("leg_started", {"leg": state.leg, "best_of": self.best_of}),
            *self.inner.setup_events(state.inner),
        ]

    def seat_count(self, state: SeriesState) -> int:
        return state.seats

    def prompt(self, state: SeriesState, seat: int) -> Prompt | None:
        return None if state.result is not None else self.inner.prompt(state.inner, seat)

    def timeout_action(self, state: SeriesState, seat: int) -> Action:
        return self.inner.timeout_action(state.inner, seat)

    def apply(
        self, state: SeriesState, seat: int, action: Action
    ) -> tuple[SeriesState, list[Event]]:
        if state.result is not None:
            raise IllegalAction("match_over", "the match is over")
        inner, events = self.inner.apply(state.inner, seat, action)
        new = msgspec.structs.replace(
            state, inner=inner, score=list(state.score), legs=list(state.legs)
        )
        self._after_leg(new, events)
        return new, events

    def _after_leg(self, state: SeriesState, events: list[Event]) -> None:
        outcome = self.inner.outcome(state.inner)
        if outcome is None:
            return
        if len(outcome["winners"]) == 1:
            state.score[outcome["winners"][0]] += 1
        final = self.inner.replay_view(state.inner)
        state.legs.append({"leg": state.leg, "outcome": outcome, "final": final})
        score = list(state.score)
        events.append(
            Event("leg_over", {"leg": state.leg, "outcome": dict(outcome), "score": score})
        )
        if max(state.score) > self.best_of // 2 or state.leg == self.best_of:
            ranking = _ranking(state.score, range(state.seats))
            self._finish(state, {"winners": ranking[0], "ranking": ranking}, events)
            return
        state.leg += 1
        finished = [leg["outcome"] for leg in state.legs]
        state.options = self.inner.next_leg_options(state.options, finished)
        state.inner = self.inner.setup(
            leg_seed(state.seed, state.leg), state.seats, state.options, state.loadouts
        )
        for seat, preferences in enumerate(state.preferences):
            if preferences:
                state.inner, _ = self.inner.prefer(state.inner, seat, preferences)
        events.extend(self.setup_events(state))

    def _finish(self, state: SeriesState, outcome: Outcome, events: list[Event]) -> None:
        state.result = outcome
        events.append(Event("series_over", {**outcome, "score": list(state.score)}))

    def resign(self, state: SeriesState, seat: int) -> tuple[SeriesState, list[Event]]:
        if state.result is not None:
            raise IllegalAction("match_over", "the match is over")
        if seat not in range(state.seats):
            raise IllegalAction("not_seated", f"seat {seat} is not in the match")
        others = _ranking(state.score, [s for s in range(state.seats) if s != seat])
        new = msgspec.structs.replace(state)
        events = [Event("resigned", {"seat": seat})]
        self._finish(new, {"winners": others[0], "ranking": [*others, [seat]]}, events)
        return new, events

    def preferences_schema(self) -> dict[str, OptionSpec]:
        return self.inner.preferences_schema()

    def prefer(
        self, state: SeriesState, seat: int, preferences: Mapping[str, Any]
    ) -> tuple[SeriesState, list[Event]]:
        if state.result is not None:
            raise IllegalAction("match_over", "the match is over")
        inner, events = self.inner.prefer(state.inner, seat, preferences)
        kept = [dict(p) for p in state.preferences] + [{}] * (state.seats - len(state.preferences))
        kept[seat] = dict(preferences)
        new = msgspec.structs.replace(
            state, inner=inner, score=list(state.score), legs=list(state.legs), preferences=kept
        )
        self._after_leg(new, events)
        return new, events

    def outcome(self, state: SeriesState) -> Outcome | None:
        return state.result

    def observe(self, state: SeriesState) -> dict[str, Any]:
        return {
            "best_of": self.best_of,
            "leg": state.leg,
            "score": list(state.score),
            "legs": [{"leg": leg["leg"], "outcome": leg["outcome"]} for leg in state.legs],
            "inner": self.inner.observe(state.inner),
            "outcome": state.result,
        }

    def view_schema(self) -> dict[str, Any]:
        outcome = nullable({"type": "object"})
        return obj(
            best_of=INT,
            leg=INT,
            score=array(INT),
            legs=array(obj(leg=INT, outcome={"type": "object"})),
            inner=self.inner.view_schema(),
            outcome=outcome,
        )

    def catalogue(self) -> dict[str, Any]:
        return self.inner.catalogue()

    def secrets(self, state: SeriesState, seat: int | None) -> list[Any]:
        seeds = [leg_seed(state.seed, leg) for leg in range(1, state.leg + 1)]
        return [state.seed, *seeds, *self.inner.secrets(state.inner, seat)]

    def replay_view(self, state: SeriesState) -> dict[str, Any]:
        legs = [
            {"leg": leg["leg"], "outcome": leg["outcome"], **leg["final"]} for leg in state.legs
        ]
        # A leg cut short by a resignation is shown as it stood.
        if not state.legs or state.legs[-1]["leg"] != state.leg:
            current = self.inner.replay_view(state.inner)
            legs.append({"leg": state.leg, "outcome": None, **current})
        return {
            "seed": state.seed,
            "best_of": self.best_of,
            "score": list(state.score),
            "outcome": state.result,
            "legs": legs,
        }

    def bot_action(self, view: Mapping[str, Any], prompt: Prompt, rng_seed: int) -> Action:
        return self.inner.bot_action({**view["inner"], "seat": view["seat"]}, prompt, rng_seed)

    def dump_state(self, state: SeriesState) -> dict[str, Any]:
        data = dump_state(msgspec.structs.replace(state, inner=None))
        data["inner"] = self.inner.dump_state(state.inner)
        return data

    def load_state(self, data: Mapping[str, Any]) -> SeriesState:
        state = load_state({**data, "inner": None}, SeriesState)
        state.inner = self.inner.load_state(data["inner"])
        return state
