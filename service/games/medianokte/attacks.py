"""Attacks: one roll of the attack's dice (basic d10s, the magic die, or a characteristic
test's d10), compared with each target separately; a hit damages and carries the effects."""

from typing import Any

from service.games.kernel.prompts import Action
from service.games.kernel.protocol import Event
from service.games.medianokte.content import Attack
from service.games.medianokte.damage import hurt
from service.games.medianokte.effects import apply_effect
from service.games.medianokte.state import (
    DIE,
    Bearer,
    Hero,
    State,
    armour,
    hero_card,
    locate,
    present,
)
from service.games.medianokte.targets import area_targets

MAGIC_DIE = (0, 0, 1, 1, 2, 3)  # docs/rules/medianokte.md#the-magic-die


def make_attack(
    state: State,
    seat: int,
    source: str,
    attack: Attack,
    holder: Bearer,
    action: Action,
    events: list[Event],
) -> None:
    """One attack: a single roll, compared with each target separately."""
    target, picks = action.get("target"), action.get("picks")
    targets = area_targets(state, seat) if target is None else [target]
    roll: dict[str, Any] = {}
    if attack.type == "basic":
        # Euphoria on the attacker adds one die to a basic attack.
        dice = attack.dice + (1 if holder.euphoria else 0)
        roll["dice"] = [state.die(DIE) for _ in range(dice)]
    elif attack.type == "magic":
        roll["magic"] = state.pick(MAGIC_DIE)
    else:
        roll["die"] = state.die(DIE)
    results: list[dict[str, Any]] = []
    for aimed in targets:
        damage, hit = _resolve(state, attack, roll, aimed)
        results.append({"target": aimed, "damage": damage, "hit": hit})
    events.append(Event("attack", {"seat": seat, "with": source, **roll, "results": results}))
    for result in results:
        if result["hit"]:
            hurt(state, result["target"], result["damage"], seat, events)
            if present(state, result["target"]):
                for effect in attack.effects:
                    apply_effect(state, seat, effect, result["target"], picks, events)


def _resolve(state: State, attack: Attack, roll: dict[str, Any], target: str) -> tuple[int, bool]:
    """(damage, whether it hit) of one roll against one target."""
    if attack.type == "basic":
        # Each die separately against the armour: 1 damage per die that meets or beats it.
        damage = sum(1 for die in roll["dice"] if die >= armour(state, target))
        return damage, damage > 0
    if attack.type == "magic":
        return int(roll["magic"]), roll["magic"] > 0
    # A characteristic test: success only when the die is strictly higher.
    success = bool(roll["die"] > characteristic(state, target, attack.stat))
    return (attack.damage if success else 0), success


def characteristic(state: State, target: str, stat: str) -> int:
    """A character's fuerza, destreza or voluntad; an astrali has none, so a special attack
    tests its armour (ours)."""
    seat, record = locate(state, target)
    if isinstance(record, Hero):
        return hero_card(state, seat).stats[stat]
    return armour(state, target)
