"""Fate duels behind the match protocol: who is asked what, an answer played, a crew that
leaves, and what everyone sees.

The moves themselves are in `duel` (the five steps) and `rules` (the crew game around them);
the rules as written, and every decision where the seed is silent, in docs/rules/fate-duel.md.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from service.games.fate_duel import bot, catalogue, duel, refusals, rules, views
from service.games.fate_duel.cards import shown_all
from service.games.fate_duel.content import ATTACKS, RULESET, Ruleset
from service.games.fate_duel.state import Crew, State
from service.games.kernel.hidden import Hidden
from service.games.kernel.loadouts import LoadoutError
from service.games.kernel.prompts import Prompt
from service.games.kernel.protocol import Action, Event, IllegalAction, OptionSpec, Outcome
from service.games.kernel.rng import SplitMix64
from service.games.kernel.table import TableGame

MAX_DEAL = 2**53 - 1


class FateDuelGame(TableGame[State]):
    id = "fate-duel"
    name = "Duelos Simples"
    min_seats = 2
    max_seats = 4
    state_type = State

    def __init__(self, ruleset: Ruleset | None = None) -> None:
        self.rules = ruleset if ruleset is not None else RULESET
        self.ruleset = self.rules.id
        rounds = self.options_schema()["rounds"]
        table = {
            "seats": [self.min_seats, self.max_seats],
            "rounds": {"default": rounds["default"], "min": rounds["min"], "max": rounds["max"]},
        }
        # Built once, so a content file the catalogue cannot describe fails at start-up.
        self._catalogue = catalogue.build(self.rules, table)
        self._view_schema = views.schema(self.rules)

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
                    "(a lesson, a duplicate tournament). A public deal reveals every hand and "
                    "draw to anyone who knows it, so only an operator's match may have one."
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
        crews = [self.rules.crews[loadout["crew"]] for loadout in checked]
        state = State(
            ruleset=self.rules.id,
            seed=seed,
            # A public deal replaces the seed as the root of every shuffle and pulse.
            rng=resolved["deal"] or seed,
            rounds=resolved["rounds"],
            crews=[Crew(c.id, c.soulstones, [m.wounds for m in c.models]) for c in crews],
            decks=[],
            hands=[[] for _ in crews],
            discards=[[] for _ in crews],
            passes=[0] * seats,
            round=1,
            first=0,
            phase="pulse",
            hazard="",
            queue=[],
            tested=[[] for _ in crews],
            duel=None,
            eliminated=[],
            result=None,
        )
        rules.deal(self.rules, state)
        return state

    def setup_events(self, state: State) -> list[Event]:
        """What setting up did, rebuilt from the state it gave (nothing has been played yet)."""
        events = [
            # The order before the hand was drawn from its top: the hand, then the deck.
            Event(
                "shuffled",
                {"seat": s, "deck": Hidden((), shown_all([*h, *d]), shown=len(h) + len(d))},
            )
            for s, (d, h) in enumerate(zip(state.decks, state.hands, strict=True))
        ]
        events += [
            Event("drew", {"seat": s, "cards": Hidden((s,), shown_all(h), shown=len(h))})
            for s, h in enumerate(state.hands)
        ]
        crews = [rules.crew_sheet(self.rules, s, crew.crew) for s, crew in enumerate(state.crews)]
        events.append(Event("crews", {"crews": crews}))
        events.append(Event("first_player", {"seat": state.first}))
        events.append(rules.round_started(self.rules, state))
        return events

    def seat_count(self, state: State) -> int:
        return len(state.crews)

    def prompt(self, state: State, seat: int) -> Prompt | None:
        """The acting side's step of a duel; else the seat first in the queue chooses which of
        its models takes the pulse next, or whom to attack."""
        if state.phase == "over":
            return None
        if state.duel is not None:
            return duel.prompt(self.rules, state, seat)
        if not state.queue or state.queue[0] != seat:
            return None
        data = {"round": state.round, "pulse": rules.pulse_view(self.rules, state)}
        if state.phase == "pulse":
            order: list[Action] = [{"type": "duel", "model": m} for m in rules.pending(state, seat)]
            return Prompt("order", order, data=data)
        attacks: list[Action] = [
            {"type": "attack", "model": m, "attack": a, "target_seat": ts, "target": tm}
            for m in state.crews[seat].alive()
            for a in ATTACKS
            for ts, tm in rules.targets(state, seat, m)
        ]
        return Prompt("attack", attacks, data=data)

    def play(
        self, state: State, seat: int, asked: Prompt, action: Action, events: list[Event]
    ) -> None:
        if state.duel is not None:
            duel.act(self.rules, state, action, events)
        elif action["type"] == "duel":
            rules.start_pulse_duel(self.rules, state, seat, action["model"], events)
        else:
            state.queue.pop(0)
            attacker, target = (seat, action["model"]), (action["target_seat"], action["target"])
            duel.start_opposed(self.rules, state, attacker, action["attack"], target, events)
        rules.play_on(self.rules, state, events)

    def refusal(
        self, state: State, seat: int, asked: Prompt, action: Action
    ) -> IllegalAction | None:
        return refusals.refusal(self.rules, state, seat, asked, action)

    def forfeit(self, state: State, seat: int, events: list[Event]) -> None:
        """The seat's crew leaves the table at once and the others play on (ours); a duel it
        takes part in is abandoned."""
        if seat not in state.standing():
            raise IllegalAction("not_seated", f"seat {seat} is not in the match")
        state.crews[seat].wounds = [0] * len(state.crews[seat].wounds)
        duel.abandon(state, seat, events)
        rules.check_fallen(state, events)
        rules.play_on(self.rules, state, events)

    def outcome(self, state: State) -> Outcome | None:
        return state.result

    def view_schema(self) -> dict[str, Any]:
        return self._view_schema

    def catalogue(self) -> dict[str, Any]:
        return self._catalogue

    def observe(self, state: State) -> dict[str, Any]:
        """The table: own hand to its seat, every other hand and every deck only as a count."""
        return views.observe(self.rules, state)

    def secrets(self, state: State, seat: int | None) -> list[Any]:
        # A deck's order as the card objects views and events show, card by card.
        orders = [shown_all(d) for d in state.decks if len(d) > 1]
        others = [c for s, h in enumerate(state.hands) if s != seat for c in h]
        return [*super().secrets(state, seat), *orders, *others]

    def bot_action(self, view: Mapping[str, Any], prompt: Prompt, rng_seed: int) -> Action:
        return bot.choose(self.rules, view, prompt, rng_seed)
