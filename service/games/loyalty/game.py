"""The loyalty card game behind the match protocol: one game (`LoyaltyGameLeg`), and the
match, best of 3 (`LoyaltyGame`), which is what the registry offers as `loyalty`.

Here: who is asked what, an answer played, and what everyone sees. The moves themselves are in
the other modules; the rules, and every decision where the seed is silent, in
docs/rules/loyalty.md.
"""

import copy
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from service.games.kernel.hidden import Hidden
from service.games.kernel.loadouts import LoadoutError
from service.games.kernel.prompts import Prompt
from service.games.kernel.protocol import Action, Event, GameError, OptionSpec, Outcome
from service.games.kernel.rng import SplitMix64
from service.games.kernel.series import Series
from service.games.kernel.table import TableGame
from service.games.loyalty import bot, opening, winning
from service.games.loyalty.actions import answer, arrange, boost
from service.games.loyalty.cards import unit_view
from service.games.loyalty.content import CONTENT, MODES, Content, describe
from service.games.loyalty.prompts import phase_prompt, response_prompt
from service.games.loyalty.state import State

# Set by the series between games, never by a client: the loser of the last game, who chooses
# who starts this one.
CHOOSER = "chooser"


class LoyaltyGameLeg(TableGame[State]):
    id = "loyalty-game"
    min_seats = 2
    max_seats = 2
    state_type = State

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
            # A string first: the alignments are looked up by a hashable key.
            ready = loadout["ready"]
            if not isinstance(ready, str) or ready not in self.content.alignments:
                raise LoadoutError("unknown_alignment", f"no alignment {ready!r}")
            deck = self.content.ready_deck(mode, ready)
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
        events = []
        for seat, side in enumerate(state.sides):
            cards = side.deck + side.hand
            events.append(Event("shuffled", {"seat": seat, "deck": Hidden((), cards, len(cards))}))
            events += [Event("drew", {"seat": seat, "card": Hidden((seat,), c)}) for c in side.hand]
        if state.chooser is None:
            events.append(Event("starts", {"seat": state.first, "by": "draw"}))
            events.append(Event("turn_started", {"seat": state.first, "turn": 1}))
        else:
            events.append(Event("choose_first", {"seat": state.chooser}))
        return events

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
        """Who starts, a character to return, the response window, or the active player's
        phase, asked of one seat at a time, in that order of precedence."""
        if state.phase == "over" or seat not in (0, 1):
            return None
        if state.phase == "choose_first":
            if seat != state.chooser:
                return None
            return Prompt("choose_first", [{"type": "first", "seat": s} for s in (0, 1)])
        if state.returning is not None:
            if seat != state.returning:
                return None
            units = state.sides[seat].units
            return Prompt("return", [{"type": "return", "card": u.card} for u in units])
        if state.responder is not None:
            return response_prompt(self.content, state, seat) if seat == state.responder else None
        return phase_prompt(self.content, state, seat) if seat == state.active else None

    def play(
        self, state: State, seat: int, asked: Prompt, action: Action, events: list[Event]
    ) -> None:
        if action["type"] not in asked.params:
            answer(self.content, state, seat, asked.kind, action, events)
        elif action["type"] == "boost":
            boost(self.content, state, seat, action, asked.params["boost"], events)
        else:
            arrange(self.content, state, seat, action, events)
        winning.check_end(state, events)

    def end(self, state: State, outcome: Outcome) -> None:
        winning.end(state, outcome)

    def outcome(self, state: State) -> Outcome | None:
        return state.result

    def observe(self, state: State) -> dict[str, Any]:
        sides = []
        for seat, side in enumerate(state.sides):
            units = [unit_view(self.content, side, u) for u in side.units]
            sides.append(
                {
                    "life": side.life,
                    "loyalty": side.loyalty,
                    "damage_taken": side.lost,
                    "hand": Hidden((seat,), list(side.hand), shown=len(side.hand)),
                    "known_in_hand": list(side.known),
                    "deck": Hidden((), list(side.deck), shown=len(side.deck)),
                    "attack_zone": [u for u in units if u["zone"] == "attack"],
                    "defence_zone": [u for u in units if u["zone"] == "defence"],
                    "posesiones": list(side.posesiones),
                    "graveyard": list(side.graveyard),
                }
            )
        return {
            "mode": state.mode,
            "first": state.first,
            "chooser": state.chooser,
            "active": state.active,
            "turn": state.turn,
            "phase": state.phase,
            "sides": sides,
            "stack": [dict(entry) for entry in state.stack],
            "responder": state.responder,
            "attack": None if state.attack is None else msgspec.structs.asdict(state.attack),
            "returning": state.returning,
            "outcome": copy.deepcopy(state.result),
        }

    def secrets(self, state: State, seat: int | None) -> list[Any]:
        orders = [list(side.deck) for side in state.sides if len(side.deck) > 1]
        in_decks = [c for side in state.sides for c in side.deck]
        in_hands = [
            c
            for s, side in enumerate(state.sides)
            if s != seat
            for c in side.hand
            if c not in side.known
        ]
        return [*super().secrets(state, seat), *orders, *in_decks, *in_hands]

    def bot_action(self, view: Mapping[str, Any], prompt: Prompt, rng_seed: int) -> Action:
        return bot.choose(self.content, view, prompt, rng_seed)


class LoyaltyGame(Series):
    """The match: best of 3 games (docs/rules/loyalty.md#10-quien-gana), the score in the view."""

    def __init__(self, content: Content | None = None) -> None:
        super().__init__(LoyaltyGameLeg(content), 3)
        self.id = "loyalty"
