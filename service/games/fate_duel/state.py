"""The state of a fate-duel match, and its JSON-able form.

A card in play is an instance id "s{seat}.{pass}:{face}", e.g. "s0.0:4c": the seat whose deck
it belongs to, how many times that deck's discard pile has been reshuffled into it when the
card entered the deck, and its face. Ids are unique in a match, so a card seen face up once
never names a card that is now face down.
"""

import copy
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from service.games.kernel.protocol import Outcome

Phase = Literal["pulse", "attack", "over"]


def face(card: str) -> str:
    """The face of a card instance: "s0.0:4c" -> "4c"."""
    return card.rsplit(":", 1)[-1]


@dataclass
class Crew:
    crew: str
    soulstones: int
    wounds: list[int]

    def alive(self) -> list[int]:
        return [i for i, w in enumerate(self.wounds) if w > 0]


@dataclass
class Side:
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
    flipped: list[str] = field(default_factory=list)
    active: str | None = None
    cheated: bool = False
    replaced: str | None = None
    trigger: str | None = None
    bonus: int = 0


@dataclass
class Duel:
    kind: Literal["simple", "opposed"]
    sides: list[Side]
    # The step (1..4) being played and whose turn in it (an index into `sides`).
    step: int
    turn: int
    tn: int | None = None
    suit: str | None = None
    hazard: str | None = None
    wounds: int = 0


@dataclass
class State:
    ruleset: str
    seed: int
    # The SplitMix64 state: every shuffle and pulse continues from here.
    rng: int
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


def dump_state(state: State) -> dict[str, Any]:
    return asdict(state)


def load_state(data: Mapping[str, Any]) -> State:
    # A deep copy, so the loaded state shares no lists with the caller's data.
    fields = copy.deepcopy(dict(data))
    fields["crews"] = [Crew(**c) for c in fields["crews"]]
    if fields["duel"] is not None:
        duel = fields["duel"]
        duel["sides"] = [Side(**s) for s in duel["sides"]]
        fields["duel"] = Duel(**duel)
    return State(**fields)
