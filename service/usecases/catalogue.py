"""Content as clients see it; every ruleset is loaded (and so validated) at start-up."""

import dataclasses
from functools import cache
from typing import Any, Literal

from typing_extensions import TypedDict

from service.games.cryptids import ENGINE_BUILD
from service.games.cryptids.content import (
    DEFAULT_RULESET,
    Ability,
    available_rulesets,
    load_ruleset,
)


class CryptidCatalogue(TypedDict):
    ruleset: str
    engine: Literal["compiled", "pure"]
    """the build of the battle engine this server runs; both give the same battles"""
    rulesets: list[str]
    battle: dict[str, int]
    shop: dict[str, Any]
    run: dict[str, int]
    species: list[dict[str, Any]]
    tokens: list[dict[str, Any]]


def load_all() -> None:
    """Load every shipped ruleset, so bad content stops the service at start-up."""
    for ruleset_id in available_rulesets():
        cryptid_catalogue(ruleset_id)


def _ability(ability: Ability) -> dict[str, Any]:
    wire: dict[str, Any] = {
        "trigger": ability.trigger,
        "effect": ability.effect,
        "target": ability.target,
        "magnitude": list(ability.magnitude),
    }
    if ability.token is not None:
        wire["token"] = ability.token
    return wire


@cache
def _catalogue(ruleset_id: str) -> CryptidCatalogue:
    ruleset = load_ruleset(ruleset_id)
    return {
        "ruleset": ruleset.id,
        "engine": ENGINE_BUILD,
        "rulesets": available_rulesets(),
        "battle": dataclasses.asdict(ruleset.battle),
        "shop": dataclasses.asdict(ruleset.shop),
        "run": dataclasses.asdict(ruleset.run),
        "species": [
            {
                "id": s.id,
                "name": s.name,
                "tier": s.tier,
                "cost": s.cost,
                "health": s.health,
                "threat": s.threat,
                "abilities": [_ability(a) for a in s.abilities],
            }
            for s in sorted(ruleset.species.values(), key=lambda s: (s.tier, s.id))
        ],
        "tokens": [
            {
                "id": t.id,
                "name": t.name,
                "health": t.health,
                "threat": t.threat,
                "ability": _ability(t.ability),
            }
            for t in sorted(ruleset.tokens.values(), key=lambda t: t.id)
        ],
    }


def cryptid_catalogue(ruleset_id: str | None) -> CryptidCatalogue:
    """The catalogue of a ruleset (default: the current one); `UnknownRulesetError` if none."""
    return _catalogue(ruleset_id or DEFAULT_RULESET)
