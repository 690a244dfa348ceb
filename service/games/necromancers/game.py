"""Duelo de Nigromantes behind the match protocol."""

from collections.abc import Mapping
from typing import Any

from service.games.kernel.protocol import (
    Action,
    Event,
    Game,
    GameError,
    OptionSpec,
    Outcome,
    resolve_options,
)
from service.games.kernel.rng import MASK64
from service.games.necromancers import bot, rules
from service.games.necromancers.content import Ruleset, load_ruleset
from service.games.necromancers.state import State, dump_state, load_state


class NecromancersGame(Game[State]):
    id = "necromancers"
    min_seats = 2
    max_seats = 4

    def __init__(self, ruleset: Ruleset | None = None) -> None:
        self.rules = ruleset if ruleset is not None else load_ruleset()
        self.ruleset = self.rules.id

    def options_schema(self) -> dict[str, OptionSpec]:
        return {}

    def setup(self, seed: int, seats: int, options: Mapping[str, Any]) -> State:
        if type(seed) is not int or not 0 <= seed <= MASK64:
            raise GameError("seed must be an integer in 0..2^64-1")
        if type(seats) is not int or not self.min_seats <= seats <= self.max_seats:
            raise GameError(f"necromancers needs {self.min_seats} to {self.max_seats} seats")
        resolve_options(self.options_schema(), options)
        return rules.setup(self.rules, seed, seats)

    def setup_events(self, state: State) -> list[Event]:
        return rules.setup_events(state)

    def to_act(self, state: State) -> list[int]:
        return rules.to_act(state)

    def legal_actions(self, state: State, seat: int) -> list[Action]:
        return rules.legal_actions(self.rules, state, seat)

    def apply(self, state: State, seat: int, action: Action) -> tuple[State, list[Event]]:
        return rules.apply(self.rules, state, seat, action)

    def view(self, state: State, seat: int | None) -> dict[str, Any]:
        return {**rules.public_view(state), "seat": seat}

    def replay_view(self, state: State) -> dict[str, Any]:
        return {**rules.public_view(state), "seed": state.seed, "rng": state.rng}

    def outcome(self, state: State) -> Outcome | None:
        return rules.outcome(state)

    def timeout_action(self, state: State, seat: int) -> Action:
        # The first legal action: the next enemy in turn order, the first die, all at skeletons.
        legal = self.legal_actions(state, seat)
        if not legal:
            raise GameError(f"seat {seat} has no timer running")
        return legal[0]

    def bot_action(self, state: State, seat: int, rng_seed: int) -> Action:
        return bot.choose(self.rules, state, seat, rng_seed)

    def dump_state(self, state: State) -> dict[str, Any]:
        return dump_state(state)

    def load_state(self, data: Mapping[str, Any]) -> State:
        return load_state(data)
