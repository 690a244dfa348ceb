"""Fate duels behind the match protocol."""

from collections.abc import Mapping, Sequence
from typing import Any

from service.games.fate_duel import bot, rules
from service.games.fate_duel.content import RULESET, Ruleset
from service.games.fate_duel.state import State, dump_state, load_state
from service.games.kernel.hidden import reveal
from service.games.kernel.loadouts import LoadoutError
from service.games.kernel.prompts import Prompt
from service.games.kernel.protocol import Action, Event, Game, OptionSpec, Outcome
from service.games.kernel.rng import SplitMix64

MAX_DEAL = 2**53 - 1


class FateDuelGame(Game[State]):
    id = "fate-duel"
    min_seats = 2
    max_seats = 4

    def __init__(self, ruleset: Ruleset | None = None) -> None:
        self.rules = ruleset if ruleset is not None else RULESET
        self.ruleset = self.rules.id

    def options_schema(self) -> dict[str, OptionSpec]:
        return {
            "rounds": {
                "type": "int",
                "default": 4,
                "min": 1,
                "max": 20,
                "description": "After this many rounds the crew with most Wounds left wins.",
            },
            "deal": {
                "type": "int",
                "default": 0,
                "min": 0,
                "max": MAX_DEAL,
                "description": (
                    "0: shuffles and pulses come from the secret match seed. Any other number "
                    "is a public deal: they come from it, so a known deal can be played again "
                    "(a lesson, a duplicate tournament); anyone may then compute the decks."
                ),
            },
        }

    def loadout_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {"crew": {"enum": sorted(self.rules.crews)}},
            "required": ["crew"],
            "additionalProperties": False,
        }

    def validate_loadout(self, loadout: Any, options: Mapping[str, Any]) -> Any:
        if not isinstance(loadout, Mapping) or set(loadout) != {"crew"}:
            raise LoadoutError("malformed", 'a loadout is {"crew": crew id}')
        crew = loadout["crew"]
        if not isinstance(crew, str) or crew not in self.rules.crews:
            raise LoadoutError(
                "unknown_crew",
                f"no crew {crew!r}",
                {"card": crew, "known": sorted(self.rules.crews)},
            )
        return {"crew": crew}

    def sample_loadout(self, seed: int, options: Mapping[str, Any]) -> Any:
        return {"crew": SplitMix64(seed).pick(sorted(self.rules.crews))}

    def setup(
        self, seed: int, seats: int, options: Mapping[str, Any], loadouts: Sequence[Any]
    ) -> State:
        resolved, checked = self.prepare(seed, seats, options, loadouts)
        root = resolved["deal"] or seed
        crews = [loadout["crew"] for loadout in checked]
        return rules.setup(self.rules, seed, root, resolved["rounds"], crews)

    def setup_events(self, state: State) -> list[Event]:
        return rules.setup_events(self.rules, state)

    def seat_count(self, state: State) -> int:
        return len(state.crews)

    def prompt(self, state: State, seat: int) -> Prompt | None:
        return rules.prompt(self.rules, state, seat)

    def apply(self, state: State, seat: int, action: Action) -> tuple[State, list[Event]]:
        return rules.apply(self.rules, state, seat, action)

    def resign(self, state: State, seat: int) -> tuple[State, list[Event]]:
        return rules.resign(self.rules, state, seat)

    def outcome(self, state: State) -> Outcome | None:
        return rules.outcome(state)

    def observe(self, state: State) -> dict[str, Any]:
        return rules.observe(self.rules, state)

    def secrets(self, state: State, seat: int | None) -> list[Any]:
        orders = [list(d) for d in state.decks if len(d) > 1]
        others = [c for s, h in enumerate(state.hands) if s != seat for c in h]
        return [state.seed, state.rng, *orders, *others]

    def replay_view(self, state: State) -> dict[str, Any]:
        return {**reveal(self.observe(state)), "seed": state.seed, "rng": state.rng}

    def bot_action(self, view: Mapping[str, Any], prompt: Prompt, rng_seed: int) -> Action:
        return bot.choose(self.rules, view, prompt, rng_seed)

    def dump_state(self, state: State) -> dict[str, Any]:
        return dump_state(state)

    def load_state(self, data: Mapping[str, Any]) -> State:
        return load_state(data)
