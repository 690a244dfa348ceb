"""Duelo de Nigromantes behind the match protocol: who is asked what, and what everyone sees.

The moves themselves (an attack, the defence, each die resolved) are in `rules`; the rules as
written, and every decision where the seed is silent, in docs/rules/necromancers.md.
"""

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from service.games.kernel.prompts import Action, Prompt
from service.games.kernel.protocol import Event, IllegalAction, Outcome
from service.games.kernel.table import TableGame
from service.games.necromancers import bot, refusals, rules, views
from service.games.necromancers.catalogue import build_catalogue
from service.games.necromancers.content import Ruleset, load_ruleset
from service.games.necromancers.state import Necromancer, State


class NecromancersGame(TableGame[State]):
    id = "necromancers"
    name = "Duelo de Nigromantes"
    min_seats = 2
    max_seats = 4
    state_type = State

    def __init__(self, ruleset: Ruleset | None = None) -> None:
        self.rules = ruleset if ruleset is not None else load_ruleset()
        self.ruleset = self.rules.id
        self._catalogue = build_catalogue(self.rules)

    def setup(
        self, seed: int, seats: int, options: Mapping[str, Any], loadouts: Sequence[Any]
    ) -> State:
        self.prepare(seed, seats, options, loadouts)
        state = State(
            ruleset=self.rules.id,
            seed=seed,
            rng=seed,
            order_rolls=[],
            order=[],
            necromancers=[
                Necromancer(seat, self.rules.lives, self.rules.skeletons, self.rules.zombies)
                for seat in range(seats)
            ],
            turn=1,
            current=0,
            phase="target",
            target=None,
            dice=[],
            defence=None,
            eliminated=[],
        )
        state.order = rules.roll_order(self.rules, state, list(range(seats)))
        state.current = state.order[0]
        return state

    def setup_events(self, state: State) -> list[Event]:
        return [
            Event("turn_order", {"rolls": views.order_rolls(state), "order": list(state.order)}),
            Event("turn_start", {"seat": state.current, "turn": state.turn}),
        ]

    def seat_count(self, state: State) -> int:
        return len(state.necromancers)

    def prompt(self, state: State, seat: int) -> Prompt | None:
        """The attacker's `target` or `resolve` prompt, or the defender's `defend` prompt."""
        if seat not in rules.to_act(state):
            return None
        if state.phase == "target":
            # Enemies in turn order starting after the attacker, so the first is the next to play.
            alive = state.alive_seats()
            start = alive.index(seat)
            enemies = alive[start + 1 :] + alive[:start]
            return Prompt("target", [{"type": "target", "seat": enemy} for enemy in enemies])
        pending = [i for i, die in enumerate(state.dice) if die.status == "pending"]
        if state.phase == "defend":
            return Prompt("defend", [{"type": "cancel", "die": i} for i in pending])
        actions = [a for i in pending for a in rules.die_actions(self.rules, state, i)]
        return Prompt("resolve", actions)

    def play(
        self, state: State, seat: int, asked: Prompt, action: Action, events: list[Event]
    ) -> None:
        if action["type"] == "target":
            rules.attack(self.rules, state, action["seat"], events)
        elif action["type"] == "cancel":
            rules.cancel(state, action["die"], events)
            rules.go_on(self.rules, state, events)
        else:
            rules.resolve(self.rules, state, action, events)
            if state.phase != "over":
                rules.go_on(self.rules, state, events)

    def forfeit(self, state: State, seat: int, events: list[Event]) -> None:
        """A necromancer who resigns falls at once and the others go on (ours)."""
        if type(seat) is not int or not 0 <= seat < len(state.necromancers):
            raise IllegalAction("not_seated", f"seat {seat} is not in the match")
        if not state.necromancers[seat].alive:
            raise IllegalAction("seat_eliminated", f"the necromancer of seat {seat} is already out")
        state.necromancers[seat].lives = 0
        rules.fall(state, seat, None, events)
        if state.phase == "over":
            return
        if state.current == seat:
            rules.end_turn(state, events)
        elif state.target == seat:
            rules.go_on(self.rules, state, events)

    def outcome(self, state: State) -> Outcome | None:
        return rules.outcome(state)

    def refusal(
        self, state: State, seat: int, asked: Prompt, action: Action
    ) -> IllegalAction | None:
        return refusals.refusal(self.rules, state, action)

    def view_schema(self) -> dict[str, Any]:
        return views.schema(self.rules)

    def catalogue(self) -> dict[str, Any]:
        return copy.deepcopy(self._catalogue)

    def observe(self, state: State) -> dict[str, Any]:
        return views.observe(state, self.rules, rules.to_act(state))

    def bot_action(self, view: Mapping[str, Any], prompt: Prompt, rng_seed: int) -> Action:
        return bot.choose(self, self.rules, view, prompt, rng_seed)
