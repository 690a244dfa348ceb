"""Replays and results on the wire: plain dicts of ints, strings and lists, for JSON and msgpack.

The shapes are documented in docs/rules/cryptids.md ("Replay"); keep the two in step.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from service.games.cryptids.warband import Pick

if TYPE_CHECKING:
    from service.games.cryptids.engine import BattleResult

REPLAY_FORMAT = 1

# An event is a flat tuple: its kind, then ints (uids, amounts) or short strings.
Event = tuple[str | int, ...]


@dataclass(slots=True)
class Replay:
    ruleset: str
    seed: int
    a: Sequence[Pick]
    b: Sequence[Pick]
    events: list[Event]
    hashes: list[str]  # board hash after each roll, roll 1 first

    def to_wire(self) -> dict[str, Any]:
        return {
            "format": REPLAY_FORMAT,
            "ruleset": self.ruleset,
            "seed": self.seed,
            "a": [[p.species, p.ability, p.level] for p in self.a],
            "b": [[p.species, p.ability, p.level] for p in self.b],
            # Tuples: msgpack and JSON write them as arrays, and copying each would cost a
            # tenth of the battle endpoint's time.
            "events": list(self.events),
            "hashes": list(self.hashes),
        }


def result_to_wire(result: "BattleResult", include_replay: bool) -> dict[str, Any]:
    """{"ruleset", "seed", "winner", "reason", "rolls", "health": {"a", "b"}, "replay"?}.

    The replay needs a result simulated with record=True.
    """
    wire: dict[str, Any] = {
        "ruleset": result.ruleset,
        "seed": result.seed,
        "winner": result.winner,
        "reason": result.reason,
        "rolls": result.rolls,
        "health": {"a": result.health_a, "b": result.health_b},
    }
    if include_replay:
        if result.replay is None:
            raise ValueError("a replay needs a result simulated with record=True")
        wire["replay"] = result.replay.to_wire()
    return wire
