"""What the kernel gives every tabletop game, so that a game writes its rules and nothing else.

A `TableGame` keeps its state as a `GameState` record (`state.py`). The kernel then provides:

- `apply`: the match is not over, the seat holds a prompt, the action is one of the prompt's
  (an enumerated action matched JSON-exactly, but for the lists its prompt declares
  `unordered`, which may come in any order; a parameterised one passed to the game to check),
  then the game `play`s it on a copy of the state, so a refusal changes nothing;
- `resign`: the same on a copy, then the game's `forfeit` (by default, with two seats, the
  other seat wins and the game `end`s);
- `replay_view`: the observation with everything revealed, plus the seed and the generator;
- `secrets`: the seed and the generator state, to which a game adds its hidden cards;
- `dump_state` and `load_state`, by the state's declared type.

See docs/adding-a-game.md for a game written on it.
"""

from abc import abstractmethod
from collections.abc import Mapping
from typing import Any, TypeVar

from service.games.kernel.hidden import reveal
from service.games.kernel.prompts import Action, Prompt
from service.games.kernel.protocol import (
    Event,
    Game,
    GameError,
    IllegalAction,
    Outcome,
    match_legal,
)
from service.games.kernel.state import GameState, copy_state, dump_state, load_state

S = TypeVar("S", bound=GameState)


class TableGame(Game[S]):
    """A game on the kernel: it declares `state_type` and implements its rules."""

    state_type: type[S]

    def options_schema(self) -> dict[str, Any]:
        return {}

    # --- what the kernel does around an action -------------------------------------------

    def apply(self, state: S, seat: int, action: Action) -> tuple[S, list[Event]]:
        if self.outcome(state) is not None:
            raise IllegalAction("the match is over")
        seated = type(seat) is int and 0 <= seat < self.seat_count(state)
        asked = self.prompt(state, seat) if seated else None
        if asked is None:
            raise IllegalAction(f"seat {seat} may not act now; waiting for {self.to_act(state)}")
        chosen = self._chosen(asked, action)
        new = copy_state(state)
        events: list[Event] = []
        self.play(new, seat, asked, chosen, events)
        return new, events

    @staticmethod
    def _chosen(asked: Prompt, action: Any) -> Action:
        """The prompt's enumerated action equal to `action`, or `action` itself when its type
        is one of the prompt's parameterised actions (its parameters are the game's to check)."""
        kind = action.get("type") if isinstance(action, Mapping) else None
        if isinstance(kind, str) and kind in asked.params:
            return dict(action)
        if not asked.actions:
            takes = " or ".join(repr(name) for name in asked.params)
            raise IllegalAction(f"the {asked.kind!r} prompt takes {takes} with its parameters")
        return match_legal(asked.actions, action, asked.unordered)

    @abstractmethod
    def play(self, state: S, seat: int, asked: Prompt, action: Action, events: list[Event]) -> None:
        """Carry out `seat`'s answer to `asked` on `state` (a copy), appending what happened.

        An enumerated action arrives as the legal one it equals; a parameterised one as sent,
        for the game to check (`IllegalAction` with the reason).
        """

    def resign(self, state: S, seat: int) -> tuple[S, list[Event]]:
        if self.outcome(state) is not None:
            raise IllegalAction("the match is over")
        new = copy_state(state)
        events = [Event("resigned", {"seat": seat})]
        self.forfeit(new, seat, events)
        return new, events

    def forfeit(self, state: S, seat: int, events: list[Event]) -> None:
        """`seat` gives up (`state` is a copy). The default rule, for two seats: the other wins.

        A game where the others play on after one leaves overrides this.
        """
        seats = self.seat_count(state)
        others = [s for s in range(seats) if s != seat]
        if len(others) != 1 or seat not in range(seats):
            raise GameError(f"{self.id} has no resign rule for seat {seat} of this match")
        outcome: Outcome = {"winners": others, "ranking": [list(others), [seat]]}
        self.end(state, outcome)
        events.append(Event("game_over", dict(outcome)))

    def end(self, state: S, outcome: Outcome) -> None:
        """End the match at once with `outcome`, for the default `forfeit`."""
        raise GameError(f"{self.id} cannot end a match early")

    # --- what the kernel shows and keeps -------------------------------------------------

    def secrets(self, state: S, seat: int | None) -> list[Any]:
        return [state.seed, state.rng]

    def replay_view(self, state: S) -> dict[str, Any]:
        return {**reveal(self.observe(state)), "seed": state.seed, "rng": state.rng}

    def dump_state(self, state: S) -> dict[str, Any]:
        return dump_state(state)

    def load_state(self, data: Mapping[str, Any]) -> S:
        return load_state(data, self.state_type)
