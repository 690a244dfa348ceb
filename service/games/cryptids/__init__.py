"""Críptidos: the pure battle engine, its content and replays (docs/rules/cryptids.md#inputs).

The rules this package implements are written down in docs/rules/cryptids.md. ENGINE_BUILD says
whether the compiled build of the engine runs or the pure-Python one (see `build`).
"""

# First: it decides where the other modules are loaded from.
from service.games.cryptids import build
from service.games.cryptids import engine as _engine
from service.games.cryptids.content import (
    DEFAULT_RULESET,
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
from service.games.kernel.content import ContentError

ENGINE_BUILD: build.Build = build.build_of(_engine)

__all__ = [
    "DEFAULT_RULESET",
    "ENGINE_BUILD",
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
