"""What the kernel gives every tabletop game, so that a game writes its rules and nothing else.

A `TableGame` keeps its state as a `GameState` record (`state.py`). The kernel then provides:

- `apply`: the match is not over, the seat holds a prompt, the action is one of the prompt's
  (an enumerated action matched JSON-exactly, but for the lists its prompt declares
  `unordered`, which may come in any order; a parameterised one checked against its schemas
  and passed to the game), then the game `play`s it on a copy of the state, so a refusal
  changes nothing. An enumerated action that matches none is explained by the game's
  `refusal`, when it has more to say than the kernel's `not_offered`;
- `prefer`: a seat's standing preferences (`preferences_schema`), checked, then kept by the
  game's `keep_preferences` on a copy of the state;
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
from service.games.kernel.params import check_params
from service.games.kernel.prompts import Action, Prompt
from service.games.kernel.protocol import (
    Event,
    Game,
    GameError,
    IllegalAction,
    Outcome,
    match_legal,
    resolve_options,
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
            raise IllegalAction("match_over", "the match is over")
        seated = type(seat) is int and 0 <= seat < self.seat_count(state)
        asked = self.prompt(state, seat) if seated else None
        if asked is None:
            waiting = self.to_act(state)
            raise IllegalAction("not_asked", f"seat {seat} may not act now; waiting for {waiting}")
        chosen = self._chosen(state, seat, asked, action)
        new = copy_state(state)
        events: list[Event] = []
        self.play(new, seat, asked, chosen, events)
        return new, events

    def _chosen(self, state: S, seat: int, asked: Prompt, action: Any) -> Action:
        """The prompt's enumerated action equal to `action`, or `action` itself when its type
        is one of the prompt's parameterised actions and its parameters fit their schemas."""
        kind = action.get("type") if isinstance(action, Mapping) else None
        if not isinstance(kind, str):
            raise IllegalAction("not_an_action", "an action is an object with a 'type'")
        if kind in asked.params:
            check_params(kind, asked.params[kind], action)
            return dict(action)
        offered = sorted({candidate["type"] for candidate in asked.actions} | set(asked.params))
        if kind not in offered:
            raise IllegalAction(
                "type_not_offered",
                f"the {asked.kind!r} prompt offers {', '.join(offered)}, not {kind!r}",
                offered=offered,
            )
        # The flag a prompt puts on an answer that loses is the server's word, not the action's.
        sent = {key: value for key, value in action.items() if key != "loses"}
        try:
            return match_legal(asked.actions, sent, asked.unordered)
        except IllegalAction as refused:
            if refused.code != "not_offered":
                raise
            raise self.refusal(state, seat, asked, sent) or refused from None

    def refusal(self, state: S, seat: int, asked: Prompt, action: Action) -> IllegalAction | None:
        """Why `action`, of a type `asked` offers, is none of its enumerated actions: the rule
        it breaks, with the code the rules doc lists. None leaves the kernel's `not_offered`."""
        return None

    @abstractmethod
    def play(self, state: S, seat: int, asked: Prompt, action: Action, events: list[Event]) -> None:
        """Carry out `seat`'s answer to `asked` on `state` (a copy), appending what happened.

        An enumerated action arrives as the legal one it equals; a parameterised one as sent,
        for the game to check (`IllegalAction` with the reason).
        """

    def resign(self, state: S, seat: int) -> tuple[S, list[Event]]:
        if self.outcome(state) is not None:
            raise IllegalAction("match_over", "the match is over")
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

    def prefer(self, state: S, seat: int, preferences: Mapping[str, Any]) -> tuple[S, list[Event]]:
        schema = self.preferences_schema()
        if not schema:
            raise IllegalAction("no_preferences", f"{self.id} has no seat preferences")
        if self.outcome(state) is not None:
            raise IllegalAction("match_over", "the match is over")
        if type(seat) is not int or not 0 <= seat < self.seat_count(state):
            raise IllegalAction("not_seated", f"seat {seat} is not in the match")
        try:
            chosen = resolve_options(schema, preferences)
        except GameError as exc:
            raise IllegalAction("bad_param", exc.reason) from exc
        new = copy_state(state)
        events = [Event("preferences", {"seat": seat, **chosen}, visible_to=(seat,))]
        self.keep_preferences(new, seat, chosen, events)
        return new, events

    def keep_preferences(
        self, state: S, seat: int, preferences: Mapping[str, Any], events: list[Event]
    ) -> None:
        """Keep `seat`'s preferences (complete, checked) on `state` (a copy), and act on them
        at once where they already apply (a window the seat would now pass)."""
        raise GameError(f"{self.id} declares preferences but does not keep them")

    # --- what the kernel shows and keeps -------------------------------------------------

    def secrets(self, state: S, seat: int | None) -> list[Any]:
        return [state.seed, state.rng]

    def replay_view(self, state: S) -> dict[str, Any]:
        return {**reveal(self.observe(state)), "seed": state.seed, "rng": state.rng}

    def dump_state(self, state: S) -> dict[str, Any]:
        return dump_state(state)

    def load_state(self, data: Mapping[str, Any]) -> S:
        return load_state(data, self.state_type)
