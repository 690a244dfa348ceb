"""Duelo de Nigromantes behind the match protocol."""

from collections.abc import Mapping, Sequence
from typing import Any

from service.games.kernel.prompts import Prompt
from service.games.kernel.protocol import Action, Event, Game, OptionSpec, Outcome
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

    def setup(
        self, seed: int, seats: int, options: Mapping[str, Any], loadouts: Sequence[Any]
    ) -> State:
        self.prepare(seed, seats, options, loadouts)
        return rules.setup(self.rules, seed, seats)

    def setup_events(self, state: State) -> list[Event]:
        return rules.setup_events(state)

    def seat_count(self, state: State) -> int:
        return len(state.necromancers)

    def prompt(self, state: State, seat: int) -> Prompt | None:
        return rules.prompt(self.rules, state, seat)

    def apply(self, state: State, seat: int, action: Action) -> tuple[State, list[Event]]:
        return rules.apply(self.rules, state, seat, action)

    def resign(self, state: State, seat: int) -> tuple[State, list[Event]]:
        return rules.resign(self.rules, state, seat)

    def observe(self, state: State) -> dict[str, Any]:
        # Everything on this table is public: nothing to mark, only the generator to leave out.
        return rules.public_view(state)

    def secrets(self, state: State, seat: int | None) -> list[Any]:
        return [state.seed, state.rng]

    def replay_view(self, state: State) -> dict[str, Any]:
        return {**rules.public_view(state), "seed": state.seed, "rng": state.rng}

    def outcome(self, state: State) -> Outcome | None:
        return rules.outcome(state)

    def bot_action(self, view: Mapping[str, Any], prompt: Prompt, rng_seed: int) -> Action:
        return bot.choose(self.rules, view, prompt, rng_seed)

    def dump_state(self, state: State) -> dict[str, Any]:
        return dump_state(state)

    def load_state(self, data: Mapping[str, Any]) -> State:
        return load_state(data)
