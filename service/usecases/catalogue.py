"""Content as clients see it; every ruleset is loaded (and so validated) at start-up."""

import dataclasses
from functools import cache
from typing import Any, Literal, NotRequired

from typing_extensions import TypedDict

from service.games.cryptids import ENGINE_BUILD
from service.games.cryptids.catalogue import ruleset_catalogue
from service.games.cryptids.content import (
    DEFAULT_RULESET,
    Ability,
    available_rulesets,
    load_ruleset,
)


class CryptidEffect(TypedDict):
    """One ability of a species or token (docs/rules/cryptids.md#the-catalogue)."""

    kind: str
    """the effect: damage, heal, shield, poison, stun, threat, max_health, add_to_sum, reroll,
    summon"""
    ability: int
    """its index among the entry's abilities; a warband's cryptid uses one of them"""
    timing: str
    """the trigger as written in the ruleset, e.g. `sum_at_most:5`"""
    trigger: str
    """the trigger's kind, e.g. `sum_at_most`"""
    trigger_value: NotRequired[int]
    """the N of `face:N`, `sum:N`, `sum_at_least:N`, `sum_at_most:N`"""
    target: str
    amount: NotRequired[int]
    """the magnitude at level 1 (every effect but `reroll`)"""
    magnitude: NotRequired[list[int]]
    """the magnitude per level, level 1 first"""
    levels: NotRequired[str]
    """the magnitudes the text shows, e.g. `2/3/4`"""
    token: NotRequired[str]
    """the token a `summon` brings"""


class CryptidEntry(TypedDict):
    id: str
    name: str
    kind: Literal["species", "token"]
    family: str | None
    """`tier-1` … `tier-6` for a species, null for a token"""
    numbers: dict[str, int]
    """tier, cost, health, threat (a token: health, threat)"""
    effects: list[CryptidEffect]
    text: str


class CryptidRules(TypedDict):
    battle: dict[str, int]
    shop: dict[str, Any]
    run: dict[str, int]


class CryptidCatalogue(TypedDict):
    game: Literal["cryptids"]
    ruleset: str
    engine: Literal["compiled", "pure"]
    """the build of the battle engine this server runs; both give the same battles"""
    rulesets: list[str]
    battle: dict[str, int]
    shop: dict[str, Any]
    run: dict[str, int]
    species: list[dict[str, Any]]
    tokens: list[dict[str, Any]]
    entries: list[CryptidEntry]
    """every species and token, with its abilities as effects and in English"""
    rules: CryptidRules
    """the ruleset's battle, shop and run numbers (the same as `battle`, `shop`, `run`)"""


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
    body = ruleset_catalogue(ruleset)
    return {
        "game": "cryptids",
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
        "entries": body["entries"],
        "rules": body["rules"],
    }


def cryptid_catalogue(ruleset_id: str | None) -> CryptidCatalogue:
    """The catalogue of a ruleset (default: the current one); `UnknownRulesetError` if none."""
    return _catalogue(ruleset_id or DEFAULT_RULESET)
