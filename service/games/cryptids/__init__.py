"""Críptidos: the pure battle engine, its content and replays (DESIGN §4).

The rules this package implements are written down in docs/rules/cryptids.md.
"""

from service.games.cryptids.content import (
    DEFAULT_RULESET,
    ContentError,
    Ruleset,
    UnknownRulesetError,
    available_rulesets,
    load_ruleset,
)
from service.games.cryptids.engine import BattleResult, simulate
from service.games.cryptids.outcome import result_to_wire
from service.games.cryptids.replay import Replay
from service.games.cryptids.warband import (
    Pick,
    Warband,
    WarbandError,
    parse_warband,
    validate_warband,
    warband_to_wire,
)

__all__ = [
    "DEFAULT_RULESET",
    "BattleResult",
    "ContentError",
    "Pick",
    "Replay",
    "Ruleset",
    "UnknownRulesetError",
    "Warband",
    "WarbandError",
    "available_rulesets",
    "load_ruleset",
    "parse_warband",
    "result_to_wire",
    "simulate",
    "validate_warband",
    "warband_to_wire",
]
