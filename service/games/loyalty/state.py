"""The state of one game (a leg) of the loyalty card game."""

from typing import Any

import msgspec

from service.games.kernel.protocol import Outcome
from service.games.kernel.state import GameState

# The phases a player is asked in, in turn order: b) to h); a), g), i) and j) ask nothing
# (docs/rules/loyalty.md#6-fases-de-un-turno-the-phases).
PHASES = ("draw", "roll", "play", "arrange", "attack", "play_again")


class Unit(msgspec.Struct):
    """A character in play, in the "attack" or "defence" zone."""

    card: str
    zone: str
    # Bought with loyalty or given by effects; both last until the end of the turn.
    attack_boost: int = 0
    defence_boost: int = 0
    attacked: bool = False
    used: bool = False  # its effect, once per turn


class Side(msgspec.Struct):
    life: int
    loyalty: int
    deck: list[str]  # top card first
    hand: list[str]
    units: list[Unit] = []
    posesiones: list[str] = []
    graveyard: list[str] = []
    # Life this side has lost: the damage its opponent has done (the decks-out rule).
    lost: int = 0
    # Cards in hand everyone saw go there (a character returned from play): no secret.
    known: list[str] = []


class Attack(msgspec.Struct):
    """A declared attack, waiting for its damage until the response window closes."""

    attacker: str
    target: str  # a card instance, or "life"


class State(GameState, kw_only=True):
    ruleset: str
    mode: str
    # Who chooses who starts (the loser of the last game), None when a draw decided it.
    chooser: int | None
    first: int
    active: int
    turn: int  # turns begun in this game; the starting player's first turn is 1
    phase: str  # "choose_first", one of PHASES, or "over"
    sides: list[Side]
    # Adventures played and not yet resolved, last on top: {"seat", "card", "target"}.
    stack: list[dict[str, Any]] = msgspec.field(default_factory=list)
    responder: int | None = None  # who holds the response window
    attack: Attack | None = None
    returning: int | None = None  # the seat asked to return a character (Reednor's effect)
    result: Outcome | None = None
    # Each seat's `auto_pass` preference (docs/rules/loyalty.md#seat-preferences); a default,
    # so that states stored before preferences existed still load.
    auto_pass: list[bool] = msgspec.field(default_factory=lambda: [False, False])
