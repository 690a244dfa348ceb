"""The fate-duel ruleset data (content.toml): suits, jokers, hazards and crews, validated once.

A card is a face string: the value and the suit symbol ("4c", "13t"), or a joker's id ("RJ",
"BJ"). The Red Joker is worth 14 and has every suit, the Black Joker 0 and none.
"""

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

ATTRIBUTES = ("wp", "df", "sh", "ml")
ATTACKS = ("ml", "sh")
RANKS = ("maestro", "compinche", "esbirro")
STONE_RANKS = frozenset(("maestro", "compinche"))
TIMINGS = ("inmediato", "tras_tener_exito", "tras_fallar", "tras_resolver")
EFFECTS = ("total", "damage", "heal")
SUIT_VALUES = range(1, 14)


class ContentError(ValueError):
    """The ruleset data is malformed."""


@dataclass(frozen=True)
class Suit:
    symbol: str
    name: str
    english: str
    from_seed: bool


@dataclass(frozen=True)
class Joker:
    id: str
    name: str
    value: int


@dataclass(frozen=True)
class Hazard:
    id: str
    name: str
    attribute: str
    tn: int
    suit: str | None
    flip: int
    wounds: int


@dataclass(frozen=True)
class Trigger:
    name: str
    attribute: str
    suit: str
    timing: str
    effect: str
    amount: int


@dataclass(frozen=True)
class ModelSpec:
    name: str
    rank: str
    attributes: Mapping[str, int]
    wounds: int
    damage: tuple[int, int, int]
    triggers: tuple[Trigger, ...]

    @property
    def uses_soulstones(self) -> bool:
        """Only Masters and Henchmen ("ni Maestro ni Compinche") may use soulstones."""
        return self.rank in STONE_RANKS


@dataclass(frozen=True)
class CrewSpec:
    id: str
    name: str
    soulstones: int
    models: tuple[ModelSpec, ...]


@dataclass(frozen=True)
class Ruleset:
    id: str
    hand_size: int
    stones_per_duel: int
    moderate_margin: int
    severe_margin: int
    suits: tuple[Suit, ...]
    red: Joker
    black: Joker
    hazards: Mapping[str, Hazard]
    crews: Mapping[str, CrewSpec]

    @property
    def faces(self) -> tuple[str, ...]:
        """The 54 faces of one Fate deck, in deck order before any shuffle."""
        numbered = [f"{v}{s.symbol}" for s in self.suits for v in SUIT_VALUES]
        return (*numbered, self.red.id, self.black.id)

    def value(self, face: str) -> int:
        if face == self.red.id:
            return self.red.value
        if face == self.black.id:
            return self.black.value
        return int(face[:-1])

    def suits_of(self, face: str) -> frozenset[str]:
        """The suits a card gives a total: every suit for the Red Joker, none for the Black."""
        if face == self.red.id:
            return frozenset(s.symbol for s in self.suits)
        if face == self.black.id:
            return frozenset()
        return frozenset(face[-1])


def _int(data: Mapping[str, Any], key: str, low: int, high: int, where: str) -> int:
    value = data.get(key)
    if type(value) is not int or not low <= value <= high:
        raise ContentError(f"{where}: {key} must be an integer in {low}..{high}")
    return value


def _str(data: Mapping[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise ContentError(f"{where}: {key} must be a non-empty string")
    return value


def _choice(data: Mapping[str, Any], key: str, choices: tuple[str, ...], where: str) -> str:
    value = _str(data, key, where)
    if value not in choices:
        raise ContentError(f"{where}: {key} must be one of {list(choices)}, not {value!r}")
    return value


def _suits(raw: Any) -> tuple[Suit, ...]:
    if not isinstance(raw, list) or len(raw) != 4:
        raise ContentError("a Fate deck has exactly four suits")
    suits = []
    for entry in raw:
        symbol = _str(entry, "symbol", "suit")
        if len(symbol) != 1 or not symbol.isalpha() or not symbol.islower():
            raise ContentError(f"suit symbol {symbol!r} must be one lower-case letter")
        from_seed = entry.get("from_seed")
        if type(from_seed) is not bool:
            raise ContentError(f"suit {symbol}: from_seed must be true or false")
        suits.append(
            Suit(symbol, _str(entry, "name", symbol), _str(entry, "english", symbol), from_seed)
        )
    if len({s.symbol for s in suits}) != 4:
        raise ContentError("suit symbols must differ")
    return tuple(suits)


def _joker(raw: Any, key: str, value: int) -> Joker:
    if not isinstance(raw, Mapping) or not isinstance(raw.get(key), Mapping):
        raise ContentError(f"jokers.{key} must be a table")
    entry = raw[key]
    joker = Joker(
        _str(entry, "id", key), _str(entry, "name", key), _int(entry, "value", 0, 14, key)
    )
    if joker.value != value:
        raise ContentError(f"the {key} joker is worth {value}")
    return joker


def _hazard(entry: Any, symbols: frozenset[str]) -> Hazard:
    if not isinstance(entry, Mapping):
        raise ContentError("each hazard must be a table")
    hazard_id = _str(entry, "id", "hazard")
    suit = entry.get("suit")
    if suit != "" and suit not in symbols:
        raise ContentError(f"hazard {hazard_id}: suit must be '' or one of {sorted(symbols)}")
    return Hazard(
        id=hazard_id,
        name=_str(entry, "name", hazard_id),
        attribute=_choice(entry, "attribute", ATTRIBUTES, hazard_id),
        tn=_int(entry, "tn", 1, 30, hazard_id),
        suit=suit or None,
        flip=_int(entry, "flip", -2, 2, hazard_id),
        wounds=_int(entry, "wounds", 1, 10, hazard_id),
    )


def _trigger(entry: Any, symbols: frozenset[str], where: str) -> Trigger:
    if not isinstance(entry, Mapping):
        raise ContentError(f"{where}: each trigger must be a table")
    name = _str(entry, "name", where)
    suit = _str(entry, "suit", name)
    if suit not in symbols:
        raise ContentError(f"{where}: trigger {name}: suit must be one of {sorted(symbols)}")
    trigger = Trigger(
        name=name,
        attribute=_choice(entry, "attribute", ATTRIBUTES, name),
        suit=suit,
        timing=_choice(entry, "timing", TIMINGS, name),
        effect=_choice(entry, "effect", EFFECTS, name),
        amount=_int(entry, "amount", 1, 10, name),
    )
    # "+N to the total" only makes sense before step 5; wounds only after it.
    if (trigger.effect == "total") != (trigger.timing == "inmediato"):
        raise ContentError(f"{where}: trigger {name}: 'total' goes with 'inmediato' only")
    return trigger


def _model(entry: Any, symbols: frozenset[str], crew: str) -> ModelSpec:
    if not isinstance(entry, Mapping):
        raise ContentError(f"crew {crew}: each model must be a table")
    name = _str(entry, "name", crew)
    where = f"{crew}/{name}"
    damage = entry.get("damage")
    if (
        not isinstance(damage, list)
        or len(damage) != 3
        or not all(type(d) is int and d >= 1 for d in damage)
        or damage != sorted(damage)
    ):
        raise ContentError(f"{where}: damage must be three rising positive integers")
    triggers = entry.get("triggers")
    if not isinstance(triggers, list) or not 1 <= len(triggers) <= 2:
        raise ContentError(f"{where}: a model has one or two triggers")
    parsed = tuple(_trigger(t, symbols, where) for t in triggers)
    if len({t.name for t in parsed}) != len(parsed):
        raise ContentError(f"{where}: trigger names must differ")
    return ModelSpec(
        name=name,
        rank=_choice(entry, "rank", RANKS, where),
        attributes={a: _int(entry, a, 0, 10, where) for a in ATTRIBUTES},
        wounds=_int(entry, "wounds", 1, 20, where),
        damage=(damage[0], damage[1], damage[2]),
        triggers=parsed,
    )


def _crew(entry: Any, symbols: frozenset[str]) -> CrewSpec:
    if not isinstance(entry, Mapping):
        raise ContentError("each crew must be a table")
    crew_id = _str(entry, "id", "crew")
    models = entry.get("models")
    if not isinstance(models, list) or not 3 <= len(models) <= 4:
        raise ContentError(f"crew {crew_id}: a crew has three or four models")
    parsed = tuple(_model(m, symbols, crew_id) for m in models)
    if [m.rank for m in parsed].count("maestro") != 1:
        raise ContentError(f"crew {crew_id}: a crew has exactly one maestro")
    return CrewSpec(
        crew_id, _str(entry, "name", crew_id), _int(entry, "soulstones", 0, 10, crew_id), parsed
    )


def _unique(items: list[Any], what: str) -> dict[str, Any]:
    by_id = {item.id: item for item in items}
    if len(by_id) != len(items):
        raise ContentError(f"{what} ids must differ")
    return by_id


def parse_ruleset(data: Mapping[str, Any]) -> Ruleset:
    """A validated ruleset from the parsed TOML, or `ContentError`."""
    suits = _suits(data.get("suits"))
    symbols = frozenset(s.symbol for s in suits)
    hazards = data.get("hazards")
    crews = data.get("crews")
    if not isinstance(hazards, list) or not hazards:
        raise ContentError("there must be at least one hazard")
    if not isinstance(crews, list) or len(crews) < 3:
        raise ContentError("there must be at least three crews")
    ruleset = Ruleset(
        id=_str(data, "ruleset", "ruleset"),
        hand_size=_int(data, "hand_size", 1, 10, "ruleset"),
        stones_per_duel=_int(data, "stones_per_duel", 1, 3, "ruleset"),
        moderate_margin=_int(data, "moderate_margin", 1, 30, "ruleset"),
        severe_margin=_int(data, "severe_margin", 1, 30, "ruleset"),
        suits=suits,
        red=_joker(data.get("jokers"), "red", 14),
        black=_joker(data.get("jokers"), "black", 0),
        hazards=_unique([_hazard(h, symbols) for h in hazards], "hazard"),
        crews=_unique([_crew(c, symbols) for c in crews], "crew"),
    )
    if ruleset.moderate_margin >= ruleset.severe_margin:
        raise ContentError("the moderate margin must be below the severe one")
    if len(set(ruleset.faces)) != 54:
        raise ContentError("a Fate deck has 54 different cards")
    return ruleset


def load_ruleset(source: Path | str | None = None) -> Ruleset:
    """A ruleset from a TOML file (`Path`) or TOML text (`str`); by default the shipped one."""
    if isinstance(source, Path):
        text = source.read_text(encoding="utf-8")
    elif isinstance(source, str):
        text = source
    else:
        text = resources.files(__package__).joinpath("content.toml").read_text(encoding="utf-8")
    return parse_ruleset(tomllib.loads(text))


RULESET = load_ruleset()
"""The shipped ruleset, validated at import."""
