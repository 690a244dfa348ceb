"""The state of a necromancers' duel."""

from typing import Literal

import msgspec

from service.games.kernel.state import GameState
from service.games.necromancers.content import NECROMANCER

Phase = Literal["target", "defend", "resolve", "over"]
DieStatus = Literal["pending", "cancelled", "resolved", "lost"]


class Necromancer(msgspec.Struct):
    seat: int
    lives: int
    skeletons: int
    zombies: int

    @property
    def alive(self) -> bool:
        return self.lives > 0

    def amount(self, what: str) -> int:
        """Lives for "necromancer", else the number of that troop type."""
        if what == NECROMANCER:
            return self.lives
        return self.skeletons if what == "skeletons" else self.zombies

    def set_amount(self, what: str, value: int) -> None:
        if what == NECROMANCER:
            self.lives = value
        elif what == "skeletons":
            self.skeletons = value
        else:
            self.zombies = value


class Die(msgspec.Struct):
    face: int
    status: DieStatus = "pending"


class State(GameState, kw_only=True):
    ruleset: str
    # Turn-order rolls, one list of [seat, roll] pairs per round of (re-)rolling.
    order_rolls: list[list[list[int]]]
    order: list[int]
    necromancers: list[Necromancer]
    turn: int
    current: int
    phase: Phase
    target: int | None
    dice: list[Die]
    defence: int | None
    # Seats in the order they fell; the ranking reads it backwards.
    eliminated: list[int]

    def alive_seats(self) -> list[int]:
        """Living seats, in turn order."""
        return [s for s in self.order if self.necromancers[s].alive]
