"""Abilities compiled to small integer codes, so the engine's hot loop compares ints.

The codes are `Final` so that the compiled build (setup.py) inlines them as C constants.
"""

from dataclasses import dataclass
from typing import Final

from service.games.cryptids.content import ENEMY_TARGETS, Ability, Ruleset
from service.games.cryptids.hashing import COUNT_STRUCT

# Trigger codes. Roll triggers are below T_ON_DAMAGED; reactions and deaths above.
T_EVERY: Final = 0
T_FACE: Final = 1
T_SUM: Final = 2
T_SUM_GE: Final = 3
T_SUM_LE: Final = 4
T_DOUBLES: Final = 5
T_ODD: Final = 6
T_EVEN: Final = 7
T_ON_DAMAGED: Final = 8
T_ON_ALLY_DAMAGED: Final = 9
T_ON_ENEMY_DAMAGED: Final = 10
T_ON_HEALED: Final = 11
T_ON_ALLY_HEALED: Final = 12
T_ON_DEATH: Final = 13
T_ON_ALLY_DEATH: Final = 14
T_ON_ENEMY_DEATH: Final = 15
TRIGGER_CODES: Final = {
    "every_roll": T_EVERY,
    "face": T_FACE,
    "sum": T_SUM,
    "sum_at_least": T_SUM_GE,
    "sum_at_most": T_SUM_LE,
    "doubles": T_DOUBLES,
    "odd": T_ODD,
    "even": T_EVEN,
    "on_damaged": T_ON_DAMAGED,
    "on_ally_damaged": T_ON_ALLY_DAMAGED,
    "on_enemy_damaged": T_ON_ENEMY_DAMAGED,
    "on_healed": T_ON_HEALED,
    "on_ally_healed": T_ON_ALLY_HEALED,
    "on_death": T_ON_DEATH,
    "on_ally_death": T_ON_ALLY_DEATH,
    "on_enemy_death": T_ON_ENEMY_DEATH,
}

E_DAMAGE: Final = 0
E_HEAL: Final = 1
E_SHIELD: Final = 2
E_POISON: Final = 3
E_STUN: Final = 4
E_THREAT: Final = 5
E_MAX_HEALTH: Final = 6
E_ADD_TO_SUM: Final = 7
E_REROLL: Final = 8
E_SUMMON: Final = 9
EFFECT_CODES: Final = {
    "damage": E_DAMAGE,
    "heal": E_HEAL,
    "shield": E_SHIELD,
    "poison": E_POISON,
    "stun": E_STUN,
    "threat": E_THREAT,
    "max_health": E_MAX_HEALTH,
    "add_to_sum": E_ADD_TO_SUM,
    "reroll": E_REROLL,
    "summon": E_SUMMON,
}

# Target codes. Enemy rules are below G_SELF; the ally rules from G_SELF on.
G_HIGHEST_THREAT: Final = 0
G_LOWEST_HEALTH: Final = 1
G_HIGHEST_HEALTH: Final = 2
G_LEFTMOST: Final = 3
G_RIGHTMOST: Final = 4
G_ALL_ENEMIES: Final = 5
G_RANDOM_ENEMY: Final = 6
G_SELF: Final = 7
G_ALL_ALLIES: Final = 8
G_LOWEST_HEALTH_ALLY: Final = 9
G_ADJACENT_ALLIES: Final = 10
TARGET_CODES: Final = {
    "highest_threat": G_HIGHEST_THREAT,
    "lowest_health": G_LOWEST_HEALTH,
    "highest_health": G_HIGHEST_HEALTH,
    "leftmost": G_LEFTMOST,
    "rightmost": G_RIGHTMOST,
    "all_enemies": G_ALL_ENEMIES,
    "random_enemy": G_RANDOM_ENEMY,
    "self": G_SELF,
    "all_allies": G_ALL_ALLIES,
    "lowest_health_ally": G_LOWEST_HEALTH_ALLY,
    "adjacent_allies": G_ADJACENT_ALLIES,
}


@dataclass(frozen=True, slots=True)
class UnitSpec:
    """Everything a cryptid brings into battle for one (species or token, ability, level)."""

    kind: str  # species or token id
    health: int
    threat: int
    trigger: int
    trigger_value: int
    effect: int
    target: int
    magnitude: int
    token: str | None
    harmful: bool  # can this ability, or a token it summons, damage the other side?
    # For a roll trigger: how often it fires on dice (d1, d2) with their plain sum, at index
    # (d1 - 1) * faces + (d2 - 1); empty for reactions and death triggers.
    fires: tuple[int, ...]


def fire_count(trigger: int, value: int, d1: int, d2: int, total: int) -> int:
    """How many times a roll trigger fires on this roll (face:N fires once per die showing N)."""
    if trigger == T_EVERY:
        return 1
    if trigger == T_FACE:
        return (d1 == value) + (d2 == value)
    if trigger == T_SUM:
        return 1 if total == value else 0
    if trigger == T_SUM_GE:
        return 1 if total >= value else 0
    if trigger == T_SUM_LE:
        return 1 if total <= value else 0
    if trigger == T_DOUBLES:
        return 1 if d1 == d2 else 0
    if trigger == T_ODD:
        return total & 1
    if trigger == T_EVEN:
        return 1 - (total & 1)
    return 0


def _harmful(ruleset: Ruleset, ability: Ability, seen: frozenset[str]) -> bool:
    if ability.effect in ("damage", "poison"):
        return ability.target in ENEMY_TARGETS
    token = ability.token
    if ability.effect != "summon" or token is None or token in seen:
        return False
    return _harmful(ruleset, ruleset.tokens[token].ability, seen | {token})


def _spec(
    ruleset: Ruleset, kind: str, health: int, threat: int, ability: Ability, level: int
) -> UnitSpec:
    trigger = TRIGGER_CODES[ability.trigger_kind]
    value = ability.trigger_value
    faces = range(1, ruleset.battle.die_faces + 1)
    fires = (
        tuple(fire_count(trigger, value, d1, d2, d1 + d2) for d1 in faces for d2 in faces)
        if trigger < T_ON_DAMAGED
        else ()
    )
    return UnitSpec(
        kind=kind,
        health=health,
        threat=threat,
        trigger=trigger,
        trigger_value=value,
        effect=EFFECT_CODES[ability.effect],
        target=TARGET_CODES[ability.target],
        magnitude=ability.magnitude[level - 1],
        token=ability.token,
        harmful=_harmful(ruleset, ability, frozenset()),
        fires=fires,
    )


class CompiledRuleset:
    """Unit specs for every (species, ability, level) and every token, built once per ruleset."""

    __slots__ = ("count_bytes", "ruleset", "species", "tokens")

    def __init__(self, ruleset: Ruleset) -> None:
        self.ruleset = ruleset
        # The board hash's per-side cryptid counts, encoded once.
        self.count_bytes = tuple(COUNT_STRUCT.pack(n) for n in range(ruleset.battle.board_size + 1))
        self.species: dict[tuple[str, int, int], UnitSpec] = {}
        for s in ruleset.species.values():
            for index, ability in enumerate(s.abilities):
                for level in range(1, ruleset.run.max_level + 1):
                    self.species[(s.id, index, level)] = _spec(
                        ruleset, s.id, s.health, s.threat, ability, level
                    )
        self.tokens: dict[str, UnitSpec] = {
            t.id: _spec(ruleset, t.id, t.health, t.threat, t.ability, 1)
            for t in ruleset.tokens.values()
        }


_COMPILED: dict[int, CompiledRuleset] = {}


def compiled(ruleset: Ruleset) -> CompiledRuleset:
    """The compiled form of `ruleset`, cached by identity (rulesets are immutable)."""
    entry = _COMPILED.get(id(ruleset))
    if entry is None or entry.ruleset is not ruleset:
        entry = CompiledRuleset(ruleset)
        _COMPILED[id(ruleset)] = entry
    return entry
