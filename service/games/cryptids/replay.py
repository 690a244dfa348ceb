"""Replays on the wire: plain dicts of ints, strings and lists, for JSON and msgpack.

The shapes are documented in docs/rules/cryptids.md#replay-and-result-on-the-wire; keep the
two in step. The event types below are that table as types, so that the OpenAPI document
describes each event.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, cast

from typing_extensions import TypedDict

from service.games.cryptids.warband import Pick

REPLAY_FORMAT = 1

# An event is a flat tuple: its kind, then ints (uids, amounts) or short strings.
Event = tuple[str | int, ...]

Roll = tuple[Literal["roll"], int, int, int]
"""roll number, die 1, die 2"""
SuddenDeath = tuple[Literal["sudden_death"], int]
"""the bonus to every damage from now on"""
Tick = tuple[Literal["tick"], int, int]
"""uid, poison stacks (a damage event follows)"""
Activation = tuple[Literal["trigger", "skip", "reroll", "death", "chain_limit"], int]
"""uid (chain_limit -1: the death waves were cut)"""
SumChange = tuple[Literal["sum"], int, int, int]
"""uid, added, new sum"""
Damage = tuple[Literal["damage"], int, int, int, int, int]
"""source uid (-1: poison), target uid, amount, absorbed by shield, health after"""
Heal = tuple[Literal["heal"], int, int, int, int]
"""source uid, target uid, gained, health after"""
Status = tuple[Literal["shield", "poison", "stun", "threat", "max_health"], int, int, int, int]
"""source uid, target uid, added, value after"""
Summon = tuple[Literal["summon"], int, int, str, int]
"""source uid, new uid, token id, slot"""
SummonFailed = tuple[Literal["summon_failed"], int, str]
"""source uid, token id (the board was full)"""
End = tuple[Literal["end"], Literal["a", "b", "draw"], str, int, int]
"""winner, reason (wipe, roll_limit, stalemate), health of side A, health of side B"""

WireEvent = (
    Roll
    | SuddenDeath
    | Tick
    | Activation
    | SumChange
    | Damage
    | Heal
    | Status
    | Summon
    | SummonFailed
    | End
)


class ReplayWire(TypedDict):
    format: int
    ruleset: str
    seed: int
    a: list[list[str | int]]
    """side A's warband: [species, ability, level] per slot"""
    b: list[list[str | int]]
    events: list[WireEvent]
    hashes: list[str]
    """the board hash after each roll, roll 1 first"""


@dataclass(slots=True)
class Replay:
    ruleset: str
    seed: int
    a: Sequence[Pick]
    b: Sequence[Pick]
    events: list[Event]
    hashes: list[str]  # board hash after each roll, roll 1 first

    def to_wire(self) -> ReplayWire:
        return {
            "format": REPLAY_FORMAT,
            "ruleset": self.ruleset,
            "seed": self.seed,
            "a": [[p.species, p.ability, p.level] for p in self.a],
            "b": [[p.species, p.ability, p.level] for p in self.b],
            # Tuples: msgpack and JSON write them as arrays, and copying each would cost a
            # tenth of the battle endpoint's time.
            "events": cast(list[WireEvent], list(self.events)),
            "hashes": list(self.hashes),
        }
