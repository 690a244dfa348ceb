"""The fate-duel ruleset data (content.toml): suits, jokers, hazards and crews, validated once.

A card is a face string: the value and the suit symbol ("4c", "13t"), or a joker's id ("RJ",
"BJ"). The Red Joker is worth 14 and has every suit, the Black Joker 0 and none.
"""

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from service.games.kernel.content import (
    ContentError,
    entry,
    flag,
    integer,
    parse_toml,
    read_toml,
    require,
    table,
    tables,
    text,
)

ATTRIBUTES = ("wp", "df", "sh", "ml")
ATTACKS = ("ml", "sh")
RANKS = ("maestro", "compinche", "esbirro")
STONE_RANKS = frozenset(("maestro", "compinche"))
TIMINGS = ("inmediato", "tras_tener_exito", "tras_fallar", "tras_resolver")
EFFECTS = ("total", "damage", "heal")
SUIT_VALUES = range(1, 14)


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
    id: str
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


def _suits(data: Mapping[str, Any]) -> tuple[Suit, ...]:
    raw = tables(data, "suits", "ruleset")
    if len(raw) != 4:
        raise ContentError(f"ruleset.suits: expected the four suits of a Fate deck, got {len(raw)}")
    suits = []
    for suit in raw:
        symbol = text(suit, "symbol", "suit")
        if len(symbol) != 1 or not symbol.isalpha() or not symbol.islower():
            raise ContentError(f"suit.symbol: expected one lower-case letter, got {symbol!r}")
        require(suit, ["from_seed"], f"suit {symbol!r}")
        suits.append(
            Suit(
                symbol,
                text(suit, "name", f"suit {symbol!r}"),
                text(suit, "english", f"suit {symbol!r}"),
                flag(suit, "from_seed", f"suit {symbol!r}"),
            )
        )
    symbols = [s.symbol for s in suits]
    if len(set(symbols)) != 4:
        raise ContentError(f"ruleset.suits: expected symbols that differ, got {symbols}")
    return tuple(suits)


def _joker(data: Mapping[str, Any], key: str, value: int) -> Joker:
    raw = table(table(data, "jokers", "ruleset"), key, "jokers")
    where = f"jokers.{key}"
    joker = Joker(text(raw, "id", where), text(raw, "name", where), integer(raw, "value", where))
    if joker.value != value:
        raise ContentError(f"{where}.value: expected {value}, got {joker.value}")
    return joker


def _hazard(raw: Mapping[str, Any], symbols: frozenset[str]) -> Hazard:
    hazard_id = text(raw, "id", "hazard")
    where = f"hazard {hazard_id!r}"
    suit = entry(raw, "suit", where)
    if suit != "" and suit not in symbols:
        raise ContentError(f"{where}.suit: expected '' or one of {sorted(symbols)}, got {suit!r}")
    return Hazard(
        id=hazard_id,
        name=text(raw, "name", where),
        attribute=text(raw, "attribute", where, choices=ATTRIBUTES),
        tn=integer(raw, "tn", where, 1, 30),
        suit=suit or None,
        flip=integer(raw, "flip", where, -2, 2),
        wounds=integer(raw, "wounds", where, 1, 10),
    )


def _trigger(raw: Mapping[str, Any], symbols: frozenset[str], model: str) -> Trigger:
    name = text(raw, "name", f"{model}.triggers")
    where = f"{model} trigger {name!r}"
    trigger = Trigger(
        name=name,
        attribute=text(raw, "attribute", where, choices=ATTRIBUTES),
        suit=text(raw, "suit", where, choices=symbols),
        timing=text(raw, "timing", where, choices=TIMINGS),
        effect=text(raw, "effect", where, choices=EFFECTS),
        amount=integer(raw, "amount", where, 1, 10),
    )
    # "+N to the total" only makes sense before step 5; wounds only after it.
    if (trigger.effect == "total") != (trigger.timing == "inmediato"):
        raise ContentError(
            f"{where}.timing: expected 'inmediato' with the effect 'total' and only with it, "
            f"got {trigger.timing!r} with {trigger.effect!r}"
        )
    return trigger


def model_id(name: str) -> str:
    """A model's catalogue id, from its name: "Cadáver Andante" -> "cadaver-andante"."""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", plain.lower()).strip("-")


def _model(raw: Mapping[str, Any], symbols: frozenset[str], crew: str) -> ModelSpec:
    name = text(raw, "name", f"crew {crew!r}.models")
    where = f"crew {crew!r} model {name!r}"
    damage = entry(raw, "damage", where)
    if (
        not isinstance(damage, list)
        or len(damage) != 3
        or not all(type(d) is int and d >= 1 for d in damage)
        or damage != sorted(damage)
    ):
        raise ContentError(
            f"{where}.damage: expected three rising positive integers, got {damage!r}"
        )
    triggers = tables(raw, "triggers", where)
    if len(triggers) > 2:
        raise ContentError(f"{where}.triggers: expected one or two, got {len(triggers)}")
    parsed = tuple(_trigger(t, symbols, where) for t in triggers)
    if len({t.name for t in parsed}) != len(parsed):
        raise ContentError(f"{where}.triggers: expected names that differ, got {triggers!r}")
    return ModelSpec(
        id=model_id(name),
        name=name,
        rank=text(raw, "rank", where, choices=RANKS),
        attributes={a: integer(raw, a, where, 0, 10) for a in ATTRIBUTES},
        wounds=integer(raw, "wounds", where, 1, 20),
        damage=(damage[0], damage[1], damage[2]),
        triggers=parsed,
    )


def _crew(raw: Mapping[str, Any], symbols: frozenset[str]) -> CrewSpec:
    crew_id = text(raw, "id", "crew")
    where = f"crew {crew_id!r}"
    models = tables(raw, "models", where)
    if not 3 <= len(models) <= 4:
        raise ContentError(f"{where}.models: expected three or four, got {len(models)}")
    parsed = tuple(_model(m, symbols, crew_id) for m in models)
    ranks = [m.rank for m in parsed]
    if ranks.count("maestro") != 1:
        raise ContentError(f"{where}.models: expected exactly one maestro rank, got {ranks}")
    return CrewSpec(
        crew_id, text(raw, "name", where), integer(raw, "soulstones", where, 0, 10), parsed
    )


def _unique(items: list[Any], what: str) -> dict[str, Any]:
    by_id = {item.id: item for item in items}
    if len(by_id) != len(items):
        ids = [item.id for item in items]
        raise ContentError(f"ruleset.{what}: expected ids that differ, got {ids}")
    return by_id


def parse_ruleset(data: Mapping[str, Any]) -> Ruleset:
    """A validated ruleset from the parsed TOML, or `ContentError`."""
    suits = _suits(data)
    symbols = frozenset(s.symbol for s in suits)
    crews = tables(data, "crews", "ruleset")
    if len(crews) < 3:
        raise ContentError(f"ruleset.crews: expected three or more, got {len(crews)}")
    ruleset = Ruleset(
        id=text(data, "ruleset", "ruleset"),
        hand_size=integer(data, "hand_size", "ruleset", 1, 10),
        stones_per_duel=integer(data, "stones_per_duel", "ruleset", 1, 3),
        moderate_margin=integer(data, "moderate_margin", "ruleset", 1, 30),
        severe_margin=integer(data, "severe_margin", "ruleset", 1, 30),
        suits=suits,
        red=_joker(data, "red", 14),
        black=_joker(data, "black", 0),
        hazards=_unique(
            [_hazard(h, symbols) for h in tables(data, "hazards", "ruleset")], "hazards"
        ),
        crews=_unique([_crew(c, symbols) for c in crews], "crews"),
    )
    models = [m.id for c in ruleset.crews.values() for m in c.models]
    if len(set(models)) != len(models) or "" in models:
        raise ContentError(f"ruleset.crews: expected model names that differ, got ids {models}")
    if ruleset.moderate_margin >= ruleset.severe_margin:
        raise ContentError(
            f"ruleset.moderate_margin: expected below severe_margin ({ruleset.severe_margin}), "
            f"got {ruleset.moderate_margin}"
        )
    if len(set(ruleset.faces)) != 54:
        raise ContentError("ruleset: expected 54 different cards in a Fate deck, got fewer")
    return ruleset


def load_ruleset(source: Path | str | None = None) -> Ruleset:
    """A ruleset from a TOML file (`Path`) or TOML text (`str`); by default the shipped one."""
    if isinstance(source, Path):
        return parse_ruleset(parse_toml(source.read_text(encoding="utf-8"), source.name))
    if isinstance(source, str):
        return parse_ruleset(parse_toml(source, "ruleset"))
    return parse_ruleset(read_toml(__package__, "content.toml"))


RULESET = load_ruleset()
"""The shipped ruleset, validated at import."""
