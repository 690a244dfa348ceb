"""Winning: the end of a game by life, by running out of cards or of decks, and by the match
ending it from outside, with who wins (docs/rules/loyalty.md#10-quien-gana)."""

from service.games.kernel.protocol import Event, Outcome
from service.games.loyalty.state import State


def by_damage(state: State) -> Outcome:
    """More damage done to the opponent's life wins; equal damage is a drawn game (ours)."""
    done = [state.sides[1].lost, state.sides[0].lost]
    if done[0] == done[1]:
        return {"winners": [0, 1], "ranking": [[0, 1]]}
    winner = 0 if done[0] > done[1] else 1
    return {"winners": [winner], "ranking": [[winner], [1 - winner]]}


def check_end(state: State, events: list[Event]) -> None:
    if state.phase == "over":
        return
    for reason, beaten in (
        ("life", [s for s, side in enumerate(state.sides) if side.life <= 0]),
        ("no_cards", [s for s, side in enumerate(state.sides) if not side.hand and not side.deck]),
    ):
        if len(beaten) == 1:
            winner = 1 - beaten[0]
            finish(state, {"winners": [winner], "ranking": [[winner], beaten]}, reason, events)
            return
        if beaten:
            finish(state, by_damage(state), reason, events)
            return


def finish(state: State, outcome: Outcome, reason: str, events: list[Event]) -> None:
    end(state, outcome)
    events.append(Event("game_over", {**outcome, "reason": reason}))


def end(state: State, outcome: Outcome) -> None:
    """The game is over with `outcome`: nobody is asked anything any more."""
    state.result, state.phase = outcome, "over"
    state.responder = state.returning = None
