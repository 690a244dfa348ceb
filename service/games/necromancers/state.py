"""The state of a necromancers' duel, and its JSON-able form."""

from collections.abc import Mapping
from dataclasses import dataclass, replace
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


# Every action copies the state and every store dumps it: these spell out the nesting rather
# than walk it generically (copy.deepcopy and dataclasses.asdict cost most of an action).


def copy_state(state: State) -> State:
    """A copy that shares nothing mutable with `state`."""
    return replace(
        state,
        order_rolls=[[list(pair) for pair in rolls] for rolls in state.order_rolls],
        order=list(state.order),
        necromancers=[
            Necromancer(n.seat, n.lives, n.skeletons, n.zombies) for n in state.necromancers
        ],
        dice=[Die(d.face, d.status) for d in state.dice],
        eliminated=list(state.eliminated),
    )


def dump_state(state: State) -> dict[str, Any]:
    data = dict(vars(copy_state(state)))
    data["necromancers"] = [vars(n) for n in data["necromancers"]]
    data["dice"] = [vars(d) for d in data["dice"]]
    return data


def load_state(data: Mapping[str, Any]) -> State:
    """The state of `data`, sharing no lists with it."""
    fields = dict(data)
    fields["order_rolls"] = [[list(pair) for pair in rolls] for rolls in fields["order_rolls"]]
    fields["order"] = list(fields["order"])
    fields["necromancers"] = [Necromancer(**n) for n in fields["necromancers"]]
    fields["dice"] = [Die(**d) for d in fields["dice"]]
    fields["eliminated"] = list(fields["eliminated"])
    return State(**fields)
