"""A battle's result on the wire, with its replay when it was recorded."""

from typing import NotRequired

from typing_extensions import TypedDict

from service.games.cryptids.engine import BattleResult
from service.games.cryptids.replay import ReplayWire


class Health(TypedDict):
    a: int
    b: int


class BattleOutcome(TypedDict):
    ruleset: str
    seed: int
    winner: str
    """a, b or draw"""
    reason: str
    """wipe, roll_limit or stalemate"""
    rolls: int
    health: Health
    replay: NotRequired[ReplayWire]


def result_to_wire(result: BattleResult, include_replay: bool) -> BattleOutcome:
    """{"ruleset", "seed", "winner", "reason", "rolls", "health": {"a", "b"}, "replay"?}.

    The replay needs a result simulated with record=True.
    """
    wire: BattleOutcome = {
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
