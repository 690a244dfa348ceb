"""The state of a necromancers' duel, and its JSON-able form."""

import copy
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

from service.games.necromancers.content import NECROMANCER

Phase = Literal["target", "defend", "resolve", "over"]
DieStatus = Literal["pending", "cancelled", "resolved", "lost"]


@dataclass
class Necromancer:
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


@dataclass
class Die:
    face: int
    status: DieStatus = "pending"


@dataclass
class State:
    ruleset: str
    seed: int
    # The SplitMix64 state: every roll continues from here, so replays are exact.
    rng: int
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


def dump_state(state: State) -> dict[str, Any]:
    return asdict(state)


def load_state(data: Mapping[str, Any]) -> State:
    # A deep copy, so the loaded state shares no lists with the caller's data.
    fields = copy.deepcopy(dict(data))
    fields["necromancers"] = [Necromancer(**n) for n in fields["necromancers"]]
    fields["dice"] = [Die(**d) for d in fields["dice"]]
    return State(**fields)
