"""The state of one game (a leg) of the loyalty card game, and its JSON-able form."""

import copy
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from service.games.kernel.protocol import Outcome

# The phases a player is asked in, in turn order (seed §6 b to h; a, g, i and j ask nothing).
PHASES = ("draw", "roll", "play", "arrange", "attack", "play_again")


@dataclass
class Unit:
    """A character in play, in the "attack" or "defence" zone."""

    card: str
    zone: str
    # Bought with loyalty or given by effects; both last until the end of the turn.
    attack_boost: int = 0
    defence_boost: int = 0
    attacked: bool = False
    used: bool = False  # its effect, once per turn


@dataclass
class Side:
    life: int
    loyalty: int
    deck: list[str]  # top card first
    hand: list[str]
    units: list[Unit] = field(default_factory=list)
    posesiones: list[str] = field(default_factory=list)
    graveyard: list[str] = field(default_factory=list)
    # Life this side has lost: the damage its opponent has done (the decks-out rule).
    lost: int = 0
    # Cards in hand everyone saw go there (a character returned from play): no secret.
    known: list[str] = field(default_factory=list)


@dataclass
class State:
    ruleset: str
    seed: int
    rng: int
    mode: str
    # Who chooses who starts (the loser of the last game), None when a draw decided it.
    chooser: int | None
    first: int
    active: int
    turn: int  # turns begun in this game; the starting player's first turn is 1
    phase: str  # "choose_first", one of PHASES, or "over"
    sides: list[Side]
    # Adventures played and not yet resolved, last on top: {"seat", "card", "target"}.
    stack: list[dict[str, Any]] = field(default_factory=list)
    responder: int | None = None  # who holds the response window
    attack: dict[str, Any] | None = None  # declared, waiting for damage: {"attacker", "target"}
    returning: int | None = None  # the seat asked to return a character (Reednor's effect)
    result: Outcome | None = None


def dump_state(state: State) -> dict[str, Any]:
    return asdict(state)


def load_state(data: Mapping[str, Any]) -> State:
    fields = copy.deepcopy(dict(data))
    fields["sides"] = [
        Side(**{**side, "units": [Unit(**u) for u in side["units"]]}) for side in fields["sides"]
    ]
    return State(**fields)
