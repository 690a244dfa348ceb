"""The loyalty card game behind the match protocol: one game (`LoyaltyGameLeg`), and the
match, best of 3 (`LoyaltyGame`), which is what the registry offers as `loyalty`.

Here: who is asked what, an answer played, and what everyone sees. The moves themselves are in
the other modules; the rules, and every decision where the seed is silent, in
docs/rules/loyalty.md.
"""

import copy
import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from service.games.kernel.hidden import Hidden
from service.games.kernel.loadouts import LoadoutError
from service.games.kernel.prompts import Prompt
from service.games.kernel.protocol import (
    Action,
    Event,
    GameError,
    IllegalAction,
    OptionSpec,
    Outcome,
)
from service.games.kernel.rng import SplitMix64
from service.games.kernel.series import Series
from service.games.kernel.state import copy_state
from service.games.kernel.table import TableGame
from service.games.kernel.views import (
    BOOL,
    INT,
    SEAT,
    STR,
    array,
    card,
    enum,
    nullable,
    obj,
    zone,
    zone_schema,
)
from service.games.loyalty import bot, catalogue, opening, refusals, winning
from service.games.loyalty.actions import answer, arrange, boost
from service.games.loyalty.cards import ref, unit_view
from service.games.loyalty.content import CONTENT, MODES, Content
from service.games.loyalty.prompts import phase_prompt, response_prompt
from service.games.loyalty.stack import auto_pass, auto_passes, stack_entry
from service.games.loyalty.state import PHASES, State
from service.games.loyalty.turn import phase_event

# Set by the series between games, never by a client: the loser of the last game, who chooses
# who starts this one.
CHOOSER = "chooser"
BEST_OF = 3

# A character in play as the view shows it: its values now and as printed.
CHARACTER = card(
    attack=INT, defence=INT, printed=obj(attack=INT, defence=INT), attacked=BOOL, used=BOOL
)


class LoyaltyGameLeg(TableGame[State]):
    id = "loyalty-game"
    name = "The loyalty card game"
    min_seats = 2
    max_seats = 2
    state_type = State

    def __init__(self, content: Content | None = None) -> None:
        self.content = content if content is not None else CONTENT
        self.ruleset = self.content.ruleset
        self._catalogue = catalogue.build(self.content, BEST_OF)

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
                    "description": f"card ids; every card's numbers and effects are in the "
                    f"catalogue, GET /v1/content/loyalty?ruleset={self.ruleset}",
                    # Each card id legal in this ruleset, with its name, kind and family.
                    "items": {
                        "oneOf": [
                            {
                                "const": c.id,
                                "title": c.name,
                                "description": ", ".join(
                                    filter(None, (c.type, catalogue.family(c)))
                                ),
                            }
                            for c in content.cards.values()
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
            events += [
                Event("drew", {"seat": seat, "card": Hidden((seat,), ref(c))}) for c in side.hand
            ]
        if state.chooser is None:
            events.append(Event("starts", {"seat": state.first, "by": "draw"}))
            events.append(Event("turn_started", {"seat": state.first, "turn": 1}))
            events.append(phase_event(state))
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
            if seat != state.responder:
                return None
            return self._flag_losses(state, seat, response_prompt(self.content, state, seat))
        if seat != state.active:
            return None
        return self._flag_losses(state, seat, phase_prompt(self.content, state, seat))

    def _flag_losses(self, state: State, seat: int, prompt: Prompt) -> Prompt:
        """Flag the answers that lose the game at once: playing the last card of a seat whose
        deck is empty (docs/rules/loyalty.md#10-quien-gana), unless what it does first wins.
        Each is played out on a copy; the outcome then rests on public facts only."""
        side = state.sides[seat]
        if side.deck or len(side.hand) != 1:
            return prompt
        losing = []
        for index, action in enumerate(prompt.actions):
            if action.get("card") not in side.hand:
                continue
            trial = copy_state(state)
            answer(self.content, trial, seat, prompt.kind, action, [])
            winning.check_end(trial, [])
            if trial.result is not None and seat not in trial.result["winners"]:
                losing.append(index)
        return dataclasses.replace(prompt, loses=tuple(losing))

    def play(
        self, state: State, seat: int, asked: Prompt, action: Action, events: list[Event]
    ) -> None:
        if action["type"] not in asked.params:
            answer(self.content, state, seat, asked.kind, action, events)
        elif action["type"] == "boost":
            boost(self.content, state, seat, action, events)
        else:
            arrange(self.content, state, seat, action, events)
        winning.check_end(state, events)

    def refusal(
        self, state: State, seat: int, asked: Prompt, action: Action
    ) -> IllegalAction | None:
        return refusals.refusal(self.content, state, seat, action)

    def preferences_schema(self) -> dict[str, OptionSpec]:
        return {
            "auto_pass": {
                "type": "bool",
                "default": False,
                "description": "pass every response window in which you cannot pay for any "
                "adventure",
            }
        }

    def keep_preferences(
        self, state: State, seat: int, preferences: Mapping[str, Any], events: list[Event]
    ) -> None:
        state.auto_pass[seat] = preferences["auto_pass"]
        if state.responder == seat and auto_passes(self.content, state, seat):
            auto_pass(self.content, state, seat, events)
            winning.check_end(state, events)

    def end(self, state: State, outcome: Outcome) -> None:
        winning.end(state, outcome)

    def outcome(self, state: State) -> Outcome | None:
        return state.result

    def view_schema(self) -> dict[str, Any]:
        plain = zone_schema(card())
        side = obj(
            life=INT,
            loyalty=INT,
            damage_taken=INT,
            hand=plain,
            known_in_hand=array(card()),
            deck=plain,
            attack_zone=zone_schema(CHARACTER),
            defence_zone=zone_schema(CHARACTER),
            posesiones=plain,
            graveyard=plain,
            auto_pass=nullable(BOOL),
        )
        return obj(
            mode=enum(*MODES),
            first=nullable(SEAT),
            chooser=nullable(SEAT),
            active=nullable(SEAT),
            turn=INT,
            phase=enum("choose_first", *PHASES, "over"),
            sides=array(side),
            stack=array(obj(seat=SEAT, id=STR, card=STR, target=nullable(STR))),
            responder=nullable(SEAT),
            attack=nullable(obj(attacker=STR, target=STR)),
            returning=nullable(SEAT),
            outcome=nullable({"type": "object"}),
        )

    def catalogue(self) -> dict[str, Any]:
        return self._catalogue

    def observe(self, state: State) -> dict[str, Any]:
        sides = []
        for seat, side in enumerate(state.sides):
            units = [unit_view(self.content, side, u) for u in side.units]
            sides.append(
                {
                    "life": side.life,
                    "loyalty": side.loyalty,
                    "damage_taken": side.lost,
                    "hand": zone([ref(c) for c in side.hand], (seat,)),
                    "known_in_hand": [ref(c) for c in side.known],
                    "deck": zone([ref(c) for c in side.deck], ()),
                    "attack_zone": zone(
                        [
                            u
                            for u, raw in zip(units, side.units, strict=True)
                            if raw.zone == "attack"
                        ]
                    ),
                    "defence_zone": zone(
                        [
                            u
                            for u, raw in zip(units, side.units, strict=True)
                            if raw.zone == "defence"
                        ]
                    ),
                    "posesiones": zone([ref(c) for c in side.posesiones]),
                    "graveyard": zone([ref(c) for c in side.graveyard]),
                    "auto_pass": Hidden((seat,), state.auto_pass[seat]),
                }
            )
        # Who starts is not decided while its chooser is asked: nobody is first or active yet.
        choosing = state.phase == "choose_first"
        return {
            "mode": state.mode,
            "first": None if choosing else state.first,
            "chooser": state.chooser,
            "active": None if choosing else state.active,
            "turn": state.turn,
            "phase": state.phase,
            "sides": sides,
            "stack": [stack_entry(entry) for entry in state.stack],
            "responder": state.responder,
            "attack": None if state.attack is None else msgspec.structs.asdict(state.attack),
            "returning": state.returning,
            "outcome": copy.deepcopy(state.result),
        }

    def secrets(self, state: State, seat: int | None) -> list[Any]:
        # A deck's order as its zone lists it, card by card.
        orders = [[ref(c) for c in side.deck] for side in state.sides if len(side.deck) > 1]
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
        super().__init__(LoyaltyGameLeg(content), BEST_OF)
        self.id = "loyalty"
