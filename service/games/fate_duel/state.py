"""The state of a fate-duel match.

A card in play is an instance id "s{seat}.{pass}:{face}", e.g. "s0.0:4c": the seat whose deck
it belongs to, how many times that deck's discard pile has been reshuffled into it when the
card entered the deck, and its face. Ids are unique in a match, so a card seen face up once
never names a card that is now face down.
"""

from typing import Literal

import msgspec

from service.games.kernel.protocol import Outcome
from service.games.kernel.state import GameState

Phase = Literal["pulse", "attack", "over"]


def face(card: str) -> str:
    """The face of a card instance: "s0.0:4c" -> "4c"."""
    return card.rsplit(":", 1)[-1]


class Crew(msgspec.Struct):
    crew: str
    soulstones: int
    wounds: list[int]

    def alive(self) -> list[int]:
        return [i for i, w in enumerate(self.wounds) if w > 0]


class Side(msgspec.Struct):
    """One model's half of a duel: the simple duel's only side, or an opposed duel's attacker
    (side 0) or defender (side 1)."""

    seat: int
    model: int
    attribute: str
    value: int
    # The duel's own fate modifier (+1 a + flip, -1 a - flip) before soulstones.
    modifier: int
    may_use_stones: bool
    stones: list[str] | None = None
    flipped: list[str] = []
    active: str | None = None
    cheated: bool = False
    replaced: str | None = None
    trigger: str | None = None
    bonus: int = 0


class Duel(msgspec.Struct):
    kind: Literal["simple", "opposed"]
    sides: list[Side]
    # The step (1..4) being played and whose turn in it (an index into `sides`).
    step: int
    turn: int
    tn: int | None = None
    suit: str | None = None
    hazard: str | None = None
    wounds: int = 0


class State(GameState, kw_only=True):
    """A match. Its generator starts at the public deal when there is one, else at the seed
    (docs/rules/fate-duel.md#the-fate-deck); every shuffle and pulse continues from it."""

    ruleset: str
    rounds: int
    crews: list[Crew]
    decks: list[list[str]]  # top card first
    hands: list[list[str]]
    discards: list[list[str]]
    passes: list[int]  # per deck: how many times its discard pile was reshuffled into it
    round: int
    first: int
    phase: Phase
    hazard: str
    # Seats still to resolve their part of this phase, the one acting first.
    queue: list[int]
    # Per seat, the models that have taken this round's pulse.
    tested: list[list[int]]
    duel: Duel | None
    # Seats in groups, in the order they fell (a group fell in the same duel).
    eliminated: list[list[int]]
    result: Outcome | None

    def standing(self) -> list[int]:
        """Seats with a living model, in seat order."""
        return [seat for seat, crew in enumerate(self.crews) if crew.alive()]
