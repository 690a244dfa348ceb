"""Cryptid content: species, tokens and the ruleset numbers, loaded from data and validated.

A ruleset is one TOML file in `rulesets/`, named after its id. Every number the battle, the shop
and the run use lives there, so a replay can be re-simulated under the ruleset it was played with.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from service.games.kernel.content import ContentError, integer, parse_toml, require, table, text

# New runs, simulations and the catalogue use this one; a stored run or battle keeps its own.
DEFAULT_RULESET = "cryptids-2027.01"

ROLL_TRIGGERS = ("every_roll", "doubles", "odd", "even")
PARAM_TRIGGERS = ("face", "sum", "sum_at_least", "sum_at_most")
REACTION_TRIGGERS = (
    "on_damaged",
    "on_ally_damaged",
    "on_enemy_damaged",
    "on_healed",
    "on_ally_healed",
)
DEATH_TRIGGERS = ("on_death", "on_ally_death", "on_enemy_death")
EFFECTS = (
    "damage",
    "heal",
    "shield",
    "poison",
    "stun",
    "threat",
    "max_health",
    "add_to_sum",
    "reroll",
    "summon",
)
# Effects that act on the dice or the board rather than on a cryptid: their target must be "self".
BOARD_EFFECTS = ("add_to_sum", "reroll", "summon")
DICE_EFFECTS = ("add_to_sum", "reroll")
ENEMY_TARGETS = (
    "highest_threat",
    "lowest_health",
    "highest_health",
    "leftmost",
    "rightmost",
    "all_enemies",
    "random_enemy",
)
ALLY_TARGETS = ("self", "all_allies", "lowest_health_ally", "adjacent_allies")
TARGETS = ENEMY_TARGETS + ALLY_TARGETS

_SPECIES_FIELDS = ("id", "name", "tier", "cost", "health", "threat", "abilities")
_TOKEN_FIELDS = ("id", "name", "health", "threat", "ability")
_ABILITY_FIELDS = ("trigger", "effect", "target", "magnitude")


class UnknownRulesetError(LookupError):
    def __init__(self, ruleset_id: str) -> None:
        super().__init__(f"unknown ruleset {ruleset_id!r}")
        self.ruleset_id = ruleset_id


@dataclass(frozen=True, slots=True)
class Ability:
    trigger: str  # as written in data, e.g. "face:6"
    trigger_kind: str  # e.g. "face"
    trigger_value: int  # the N of face:N / sum:N / sum_at_least:N / sum_at_most:N, else 0
    effect: str
    target: str
    magnitude: tuple[int, ...]  # one value per level, level 1 first
    token: str | None = None  # the token a `summon` brings


@dataclass(frozen=True, slots=True)
class Species:
    id: str
    name: str
    tier: int
    cost: int
    health: int
    threat: int
    abilities: tuple[Ability, Ability]


@dataclass(frozen=True, slots=True)
class Token:
    """A cryptid that only a `summon` brings; it is never sold and always plays at level 1."""

    id: str
    name: str
    health: int
    threat: int
    ability: Ability


@dataclass(frozen=True, slots=True)
class BattleRules:
    board_size: int
    roll_limit: int
    sudden_death_start: int
    chain_depth: int
    reaction_limit: int
    die_faces: int


@dataclass(frozen=True, slots=True)
class ShopRules:
    gold_per_round: int
    buy_cost: int
    sell_refund: int
    reroll_cost: int
    offer_slots: int
    offer_slots_late: int
    offer_slots_late_from_round: int
    tier_unlock_rounds: tuple[int, ...]  # index t-1: first round tier t appears in the shop


@dataclass(frozen=True, slots=True)
class RunRules:
    lives: int
    wins_to_finish: int
    max_level: int
    merge_copies: int
    elo_k: int  # the Elo factor of each battle's rating change


@dataclass(frozen=True, slots=True)
class PairingRules:
    bands: tuple[int, ...]  # rating bands tried in turn before "any", narrowest first
    candidates_per_side: int  # nearest snapshots read above and below the player's rating


@dataclass(frozen=True, slots=True)
class Ruleset:
    id: str
    battle: BattleRules
    shop: ShopRules
    run: RunRules
    pairing: PairingRules
    species: Mapping[str, Species] = field(hash=False)
    tokens: Mapping[str, Token] = field(hash=False)


def _id(table: Mapping[str, Any], where: str) -> str:
    value = text(table, "id", where)
    if not value.replace("_", "").isalnum() or not value.islower() or not value[0].isalpha():
        raise ContentError(f"{where}.id: {value!r} is not snake_case")
    return value


def _parse_trigger(raw: object, where: str) -> tuple[str, int]:
    if not isinstance(raw, str):
        raise ContentError(f"{where}.trigger: expected a string, got {raw!r}")
    kind, sep, value = raw.partition(":")
    if not sep:
        if kind in ROLL_TRIGGERS or kind in REACTION_TRIGGERS or kind in DEATH_TRIGGERS:
            return kind, 0
        raise ContentError(f"{where}.trigger: unknown trigger {raw!r}")
    if kind not in PARAM_TRIGGERS or not (value.isascii() and value.isdigit()):
        raise ContentError(f"{where}.trigger: unknown trigger {raw!r}")
    return kind, int(value)


def _parse_ability(raw: object, max_level: int, where: str) -> Ability:
    if not isinstance(raw, Mapping):
        raise ContentError(f"{where}: expected a table")
    require(raw, _ABILITY_FIELDS, where)
    kind, value = _parse_trigger(raw["trigger"], where)
    effect = raw["effect"]
    if effect not in EFFECTS:
        raise ContentError(f"{where}.effect: unknown effect {effect!r}")
    target = raw["target"]
    if target not in TARGETS:
        raise ContentError(f"{where}.target: unknown target rule {target!r}")
    if effect in BOARD_EFFECTS and target != "self":
        raise ContentError(f"{where}.target: effect {effect!r} needs target 'self'")
    if effect in DICE_EFFECTS and (kind in REACTION_TRIGGERS or kind in DEATH_TRIGGERS):
        raise ContentError(f"{where}.trigger: effect {effect!r} needs a roll trigger")
    magnitude = raw["magnitude"]
    if (
        not isinstance(magnitude, list)
        or len(magnitude) != max_level
        or not all(isinstance(m, int) and not isinstance(m, bool) and m >= 1 for m in magnitude)
    ):
        raise ContentError(
            f"{where}.magnitude: expected {max_level} integers >= 1 (one per level), "
            f"got {magnitude!r}"
        )
    token = raw.get("token")
    if effect == "summon":
        if not isinstance(token, str):
            raise ContentError(f"{where}.token: a summon names its token")
    elif token is not None:
        raise ContentError(f"{where}.token: only a summon names a token")
    return Ability(raw["trigger"], kind, value, effect, target, tuple(magnitude), token)


def _parse_species(raw: object, max_level: int, index: int) -> Species:
    where = f"species[{index}]"
    if not isinstance(raw, Mapping):
        raise ContentError(f"{where}: expected a table")
    if isinstance(raw.get("id"), str):
        where = f"species {raw['id']!r}"
    require(raw, _SPECIES_FIELDS, where)
    abilities = raw["abilities"]
    if not isinstance(abilities, list) or len(abilities) != 2:
        raise ContentError(f"{where}.abilities: expected exactly 2 abilities")
    first = _parse_ability(abilities[0], max_level, f"{where}.abilities[0]")
    second = _parse_ability(abilities[1], max_level, f"{where}.abilities[1]")
    tier = integer(raw, "tier", where, 1)
    if tier > 6:
        raise ContentError(f"{where}.tier: expected 1..6, got {tier}")
    return Species(
        id=_id(raw, where),
        name=text(raw, "name", where),
        tier=tier,
        cost=integer(raw, "cost", where),
        health=integer(raw, "health", where, 1),
        threat=integer(raw, "threat", where),
        abilities=(first, second),
    )


def _parse_token(raw: object, max_level: int, index: int) -> Token:
    where = f"token[{index}]"
    if not isinstance(raw, Mapping):
        raise ContentError(f"{where}: expected a table")
    if isinstance(raw.get("id"), str):
        where = f"token {raw['id']!r}"
    require(raw, _TOKEN_FIELDS, where)
    return Token(
        id=_id(raw, where),
        name=text(raw, "name", where),
        health=integer(raw, "health", where, 1),
        threat=integer(raw, "threat", where),
        ability=_parse_ability(raw["ability"], max_level, f"{where}.ability"),
    )


def _battle(data: Mapping[str, Any]) -> BattleRules:
    t = table(data, "battle", "ruleset")
    return BattleRules(
        board_size=integer(t, "board_size", "battle", 1),
        roll_limit=integer(t, "roll_limit", "battle", 1),
        sudden_death_start=integer(t, "sudden_death_start", "battle", 1),
        chain_depth=integer(t, "chain_depth", "battle", 1),
        reaction_limit=integer(t, "reaction_limit", "battle", 1),
        die_faces=integer(t, "die_faces", "battle", 2),
    )


def _shop(data: Mapping[str, Any]) -> ShopRules:
    t = table(data, "shop", "ruleset")
    unlock = t.get("tier_unlock_rounds")
    if (
        not isinstance(unlock, list)
        or len(unlock) != 6
        or not all(isinstance(r, int) and r >= 1 for r in unlock)
        or unlock != sorted(unlock)
    ):
        raise ContentError("shop.tier_unlock_rounds: expected 6 ascending rounds, one per tier")
    return ShopRules(
        gold_per_round=integer(t, "gold_per_round", "shop"),
        buy_cost=integer(t, "buy_cost", "shop"),
        sell_refund=integer(t, "sell_refund", "shop"),
        reroll_cost=integer(t, "reroll_cost", "shop"),
        offer_slots=integer(t, "offer_slots", "shop", 1),
        offer_slots_late=integer(t, "offer_slots_late", "shop", 1),
        offer_slots_late_from_round=integer(t, "offer_slots_late_from_round", "shop", 1),
        tier_unlock_rounds=tuple(unlock),
    )


def _run(data: Mapping[str, Any]) -> RunRules:
    t = table(data, "run", "ruleset")
    return RunRules(
        lives=integer(t, "lives", "run", 1),
        wins_to_finish=integer(t, "wins_to_finish", "run", 1),
        max_level=integer(t, "max_level", "run", 1),
        merge_copies=integer(t, "merge_copies", "run", 1),
        elo_k=integer(t, "elo_k", "run", 1),
    )


def _pairing(data: Mapping[str, Any]) -> PairingRules:
    t = table(data, "pairing", "ruleset")
    bands = t.get("bands")
    if (
        not isinstance(bands, list)
        or not bands
        or not all(isinstance(b, int) and not isinstance(b, bool) and b >= 1 for b in bands)
        or bands != sorted(set(bands))
    ):
        raise ContentError("pairing.bands: expected ascending rating bands, each at least 1")
    return PairingRules(
        bands=tuple(bands),
        candidates_per_side=integer(t, "candidates_per_side", "pairing", 1),
    )


def _check_tokens(ruleset_species: Sequence[Species], tokens: Mapping[str, Token]) -> None:
    for species in ruleset_species:
        for i, ability in enumerate(species.abilities):
            if ability.token is not None and ability.token not in tokens:
                raise ContentError(
                    f"species {species.id!r}.abilities[{i}].token: unknown token {ability.token!r}"
                )
    for token in tokens.values():
        name = token.ability.token
        if name is not None and name not in tokens:
            raise ContentError(f"token {token.id!r}.ability.token: unknown token {name!r}")


def ruleset_from_dict(data: Mapping[str, Any]) -> Ruleset:
    """Validate parsed content (a TOML document, or a dict built by a test) into a Ruleset."""
    ruleset_id = data.get("ruleset")
    if not isinstance(ruleset_id, str) or not ruleset_id:
        raise ContentError("ruleset: missing field 'ruleset' (the ruleset id)")
    run = _run(data)
    raw_species = data.get("species")
    if not isinstance(raw_species, list) or not raw_species:
        raise ContentError("ruleset: missing [[species]] entries")
    species_list = [_parse_species(raw, run.max_level, i) for i, raw in enumerate(raw_species)]
    raw_tokens = data.get("token", [])
    if not isinstance(raw_tokens, list):
        raise ContentError("ruleset: [[token]] must be an array of tables")
    token_list = [_parse_token(raw, run.max_level, i) for i, raw in enumerate(raw_tokens)]
    species: dict[str, Species] = {}
    tokens: dict[str, Token] = {}
    for s in species_list:
        if s.id in species:
            raise ContentError(f"species {s.id!r}: duplicate id")
        species[s.id] = s
    for t in token_list:
        if t.id in tokens or t.id in species:
            raise ContentError(f"token {t.id!r}: duplicate id")
        tokens[t.id] = t
    _check_tokens(species_list, tokens)
    return Ruleset(ruleset_id, _battle(data), _shop(data), run, _pairing(data), species, tokens)


def ruleset_from_toml(source: str) -> Ruleset:
    return ruleset_from_dict(parse_toml(source, "ruleset"))


_CACHE: dict[str, Ruleset] = {}


def available_rulesets() -> list[str]:
    """Ids of the ruleset files shipped in `rulesets/`, sorted."""
    folder = resources.files(__package__).joinpath("rulesets")
    return sorted(
        entry.name.removesuffix(".toml")
        for entry in folder.iterdir()
        if entry.name.endswith(".toml")
    )


def load_ruleset(ruleset_id: str = DEFAULT_RULESET) -> Ruleset:
    """The ruleset with this id, loaded once per process; UnknownRulesetError if there is none."""
    cached = _CACHE.get(ruleset_id)
    if cached is not None:
        return cached
    if ruleset_id not in available_rulesets():
        raise UnknownRulesetError(ruleset_id)
    path = resources.files(__package__).joinpath("rulesets").joinpath(f"{ruleset_id}.toml")
    ruleset = ruleset_from_toml(path.read_text(encoding="utf-8"))
    if ruleset.id != ruleset_id:
        raise ContentError(f"ruleset file {ruleset_id}.toml declares id {ruleset.id!r}")
    _CACHE[ruleset_id] = ruleset
    return ruleset
