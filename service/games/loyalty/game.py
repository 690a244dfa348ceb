"""The loyalty card game behind the match protocol: one game (`LoyaltyGameLeg`), and the
match, best of 3 (`LoyaltyGame`), which is what the registry offers as `loyalty`."""

from collections.abc import Mapping, Sequence
from typing import Any

from service.games.kernel.hidden import reveal
from service.games.kernel.loadouts import LoadoutError
from service.games.kernel.prompts import Prompt
from service.games.kernel.protocol import Action, Event, Game, GameError, OptionSpec, Outcome
from service.games.kernel.rng import SplitMix64
from service.games.kernel.series import Series
from service.games.loyalty import bot, opening, prompts, rules, views, winning
from service.games.loyalty.content import CONTENT, MODES, Content, describe
from service.games.loyalty.state import State, dump_state, load_state

# Set by the series between games, never by a client: the loser of the last game, who chooses
# who starts this one.
CHOOSER = "chooser"


class LoyaltyGameLeg(Game[State]):
    id = "loyalty-game"
    min_seats = 2
    max_seats = 2

    def __init__(self, content: Content | None = None) -> None:
        self.content = content if content is not None else CONTENT
        self.ruleset = self.content.ruleset

    def options_schema(self) -> dict[str, OptionSpec]:
        return {
            "mode": {
                "type": "str",
                "default": "legion",
                "choices": list(MODES),
                "description": "escaramuza (25 life, one alignment), conquista (20, one "
                "faction) or legion (30, anything); every loadout plays this mode",
            }
        }

    def loadout_schema(self) -> dict[str, Any]:
        content = self.content
        return {
            "type": "object",
            "properties": {
                "mode": {"enum": list(MODES)},
                "deck": {
                    "type": "array",
                    # Each card id with its name and what it does, for a client to show.
                    "items": {
                        "oneOf": [
                            {"const": card.id, "title": card.name, "description": describe(card)}
                            for card in content.cards.values()
                        ]
                    },
                    "minItems": content.deck_size,
                    "maxItems": content.deck_size,
                },
                "ready": {"enum": list(content.alignments)},
            },
            "oneOf": [{"required": ["deck"]}, {"required": ["ready"]}],
            "additionalProperties": False,
        }

    def validate_loadout(self, loadout: Any, options: Mapping[str, Any]) -> Any:
        if (
            not isinstance(loadout, Mapping)
            or not set(loadout) <= {"mode", "deck", "ready"}
            or ("deck" in loadout) == ("ready" in loadout)
        ):
            raise LoadoutError(
                "malformed", 'a loadout is {"mode"?, "deck": [card ids]} or {"mode"?, "ready": a}'
            )
        mode = loadout.get("mode", options["mode"])
        if mode not in MODES:
            raise LoadoutError("unknown_mode", f"no mode {mode!r}", {"mode": mode})
        if mode != options["mode"]:
            raise LoadoutError(
                "mode_mismatch",
                f"this match is played in {options['mode']}, not {mode}",
                {"mode": mode, "expected": options["mode"]},
            )
        if "ready" in loadout:
            if loadout["ready"] not in self.content.alignments:
                raise LoadoutError("unknown_alignment", f"no alignment {loadout['ready']!r}")
            deck = self.content.ready_deck(mode, loadout["ready"])
        else:
            deck = self.content.check_deck(mode, loadout["deck"])
        return {"mode": mode, "deck": deck}

    def sample_loadout(self, seed: int, options: Mapping[str, Any]) -> Any:
        alignments = list(self.content.alignments)
        alignment = alignments[SplitMix64(seed).below(len(alignments))]
        return {
            "mode": options["mode"],
            "deck": self.content.ready_deck(options["mode"], alignment),
        }

    def setup(
        self, seed: int, seats: int, options: Mapping[str, Any], loadouts: Sequence[Any]
    ) -> State:
        chooser = options.get(CHOOSER)
        public = {k: v for k, v in options.items() if k != CHOOSER}
        resolved, checked = self.prepare(seed, seats, public, loadouts)
        if chooser is not None and (type(chooser) is not int or chooser not in (0, 1)):
            raise GameError("the chooser of who starts is seat 0 or 1")
        decks = [loadout["deck"] for loadout in checked]
        return opening.setup(self.content, seed, resolved["mode"], decks, chooser)

    def setup_events(self, state: State) -> list[Event]:
        return opening.setup_events(state)

    def next_leg_options(
        self, options: Mapping[str, Any], finished: Sequence[Outcome]
    ) -> dict[str, Any]:
        # The loser of a game chooses who starts the next; after a drawn game, a draw again.
        base = {k: v for k, v in options.items() if k != CHOOSER}
        winners = finished[-1]["winners"]
        return {**base, CHOOSER: 1 - winners[0]} if len(winners) == 1 else base

    def seat_count(self, state: State) -> int:
        return 2

    def prompt(self, state: State, seat: int) -> Prompt | None:
        return prompts.prompt(self.content, state, seat)

    def apply(self, state: State, seat: int, action: Action) -> tuple[State, list[Event]]:
        return rules.apply(self.content, state, seat, action)

    def end_match(self, state: State, outcome: Outcome) -> State:
        return winning.end(state, outcome)

    def outcome(self, state: State) -> Outcome | None:
        return state.result

    def observe(self, state: State) -> dict[str, Any]:
        return views.observe(self.content, state)

    def secrets(self, state: State, seat: int | None) -> list[Any]:
        return views.secrets(state, seat)

    def replay_view(self, state: State) -> dict[str, Any]:
        return {**reveal(self.observe(state)), "seed": state.seed, "rng": state.rng}

    def bot_action(self, view: Mapping[str, Any], prompt: Prompt, rng_seed: int) -> Action:
        return bot.choose(self.content, view, prompt, rng_seed)

    def dump_state(self, state: State) -> dict[str, Any]:
        return dump_state(state)

    def load_state(self, data: Mapping[str, Any]) -> State:
        return load_state(data)


class LoyaltyGame(Series):
    """The match: best of 3 games (seed §10), the score in the view."""

    def __init__(self, content: Content | None = None) -> None:
        super().__init__(LoyaltyGameLeg(content), 3)
        self.id = "loyalty"
