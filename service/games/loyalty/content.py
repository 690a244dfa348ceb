"""The loyalty game's content (cards.toml): cards, modes and deck rules, validated at import."""

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from service.games.kernel.loadouts import LoadoutError, check_deck

STATS = ("attack", "defence")
MODES = ("escaramuza", "conquista", "legion")
RULES = ("alignment", "faction", "any")

# Effect kinds by who may carry them, and which of them name a target.
CHARACTER_EFFECTS = frozenset(("return_both", "draw", "damage", "boost_self", "boost_all"))
MISSION_EFFECTS = frozenset(("draw", "loyalty", "damage", "boost_all"))
ADVENTURE_EFFECTS = frozenset(("boost_one", "destroy", "damage", "draw", "destroy_posesion"))
POSESION_EFFECTS = frozenset(("aura", "income"))
NEEDS_STAT = frozenset(("boost_self", "boost_all", "boost_one", "aura"))
TARGETED = frozenset(("return_both", "boost_one", "destroy", "destroy_posesion"))


class ContentError(ValueError):
    """The content data is malformed."""


@dataclass(frozen=True)
class Effect:
    kind: str
    amount: int
    stat: str | None = None
    cost: int = 0


@dataclass(frozen=True)
class Card:
    id: str
    name: str
    type: str  # "character", "mission" or "adventure"
    cost: int
    effect: Effect
    attack: int = 0
    defence: int = 0
    alignment: str | None = None
    faction: str | None = None
    posesion: bool = False


@dataclass(frozen=True)
class Mode:
    id: str
    life: int
    rule: str
    ready_copies: int
    ready_extras: tuple[str, ...]


@dataclass(frozen=True)
class Content:
    ruleset: str
    deck_size: int
    max_copies: int
    hand_size: int
    die_faces: int
    modes: Mapping[str, Mode]
    alignments: Mapping[str, tuple[str, ...]]
    cards: Mapping[str, Card]

    def faction_alignment(self, faction: str) -> str:
        return next(a for a, factions in self.alignments.items() if faction in factions)

    def check_deck(self, mode: str, cards: Any) -> list[str]:
        """The deck list, or `LoadoutError` naming the card and the rule it breaks (seed §5, §9)."""
        deck = check_deck(cards, known=self.cards, size=self.deck_size, max_copies=self.max_copies)
        rule = self.modes[mode].rule
        if rule == "any":
            return deck
        characters = [self.cards[c] for c in deck if self.cards[c].type == "character"]
        key = "alignment" if rule == "alignment" else "faction"
        for card in characters:
            expected, found = getattr(characters[0], key), getattr(card, key)
            if found != expected:
                raise LoadoutError(
                    f"one_{key}",
                    f"in {mode} every character is of one {key}: {card.id!r} is {found}, "
                    f"{characters[0].id!r} is {expected}",
                    {"card": card.id, key: found, "expected": expected, "mode": mode},
                )
        return deck

    def ready_deck(self, mode: str, alignment: str) -> list[str]:
        """The ready-made deck of `mode` led by `alignment`."""
        recipe = self.modes[mode]
        first_faction = self.alignments[alignment][0]
        leaders = [
            c.id
            for c in self.cards.values()
            if c.type == "character"
            and (
                c.faction == first_faction if recipe.rule == "faction" else c.alignment == alignment
            )
        ]
        return [c for c in leaders for _ in range(recipe.ready_copies)] + list(recipe.ready_extras)


def describe(card: Card) -> str:
    """A card in one line, as a client shows it."""
    effect = card.effect
    words = f"{effect.kind} {effect.amount}" + (f" {effect.stat}" if effect.stat else "")
    if card.type == "character":
        return (
            f"character, {card.alignment} / {card.faction}: cost {card.cost}, attack "
            f"{card.attack}, defence {card.defence}; effect for {effect.cost} loyalty: {words}"
        )
    kind = "adventure, POSESIÓN" if card.posesion else card.type
    return f"{kind}: cost {card.cost}; {words}"


def _int(data: Mapping[str, Any], key: str, where: str, minimum: int = 1) -> int:
    value = data.get(key)
    if type(value) is not int or value < minimum:
        raise ContentError(f"{where}: {key} must be an integer of at least {minimum}")
    return value


def _str(data: Mapping[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise ContentError(f"{where}: {key} must be a non-empty string")
    return value


def _effect(raw: Any, allowed: frozenset[str], where: str, costed: bool) -> Effect:
    if not isinstance(raw, Mapping):
        raise ContentError(f"{where}: effect must be a table")
    kind = raw.get("kind")
    if kind not in allowed:
        raise ContentError(f"{where}: effect kind {kind!r} is not one of {sorted(allowed)}")
    stat = raw.get("stat")
    if (kind in NEEDS_STAT) != (stat is not None) or (stat is not None and stat not in STATS):
        raise ContentError(f"{where}: {kind} needs a stat of {STATS} (and only it)")
    cost = _int(raw, "cost", where) if costed else 0
    if not costed and "cost" in raw:
        raise ContentError(f"{where}: only a character's effect has its own cost")
    return Effect(kind=kind, amount=_int(raw, "amount", where), stat=stat, cost=cost)


def _card(raw: Any, kind: str, factions: Mapping[str, str]) -> Card:
    if not isinstance(raw, Mapping):
        raise ContentError(f"each {kind} must be a table")
    card_id = _str(raw, "id", kind)
    where = f"{kind} {card_id}"
    base: dict[str, Any] = {
        "id": card_id,
        "name": _str(raw, "name", where),
        "type": kind,
        "cost": _int(raw, "cost", where),
    }
    if kind == "character":
        faction = _str(raw, "faction", where)
        if faction not in factions:
            raise ContentError(f"{where}: unknown faction {faction!r}")
        effect = _effect(raw.get("effect"), CHARACTER_EFFECTS, where, costed=True)
        return Card(
            **base,
            effect=effect,
            attack=_int(raw, "attack", where, 0),
            defence=_int(raw, "defence", where, 0),
            alignment=factions[faction],
            faction=faction,
        )
    posesion = raw.get("posesion", False)
    if type(posesion) is not bool or (posesion and kind != "adventure"):
        raise ContentError(f"{where}: posesion is a boolean, for adventures only")
    if kind == "mission":
        allowed = MISSION_EFFECTS
    else:
        allowed = POSESION_EFFECTS if posesion else ADVENTURE_EFFECTS
    return Card(**base, effect=_effect(raw.get("effect"), allowed, where, False), posesion=posesion)


def parse_content(data: Mapping[str, Any]) -> Content:
    """Validated content from the parsed TOML, or `ContentError`."""
    raw_alignments = data.get("alignments")
    if not isinstance(raw_alignments, Mapping) or not raw_alignments:
        raise ContentError("alignments must be a table of faction lists")
    alignments: dict[str, tuple[str, ...]] = {}
    factions: dict[str, str] = {}
    for alignment, listed in raw_alignments.items():
        if not isinstance(listed, list) or len(listed) < 2:
            raise ContentError(f"alignment {alignment}: needs at least two factions")
        for faction in listed:
            if not isinstance(faction, str) or faction in factions:
                raise ContentError(f"faction {faction!r} is not a string or appears twice")
            factions[faction] = alignment
        alignments[alignment] = tuple(listed)
    cards: dict[str, Card] = {}
    for kind in ("character", "mission", "adventure"):
        for raw in data.get(kind, []):
            card = _card(raw, kind, factions)
            if card.id in cards:
                raise ContentError(f"card id {card.id!r} appears twice")
            cards[card.id] = card
    raw_modes = data.get("modes")
    if not isinstance(raw_modes, Mapping) or sorted(raw_modes) != sorted(MODES):
        raise ContentError(f"modes must be exactly {MODES}")
    modes: dict[str, Mode] = {}
    for mode_id in MODES:
        raw = raw_modes[mode_id]
        rule = raw.get("rule")
        if rule not in RULES:
            raise ContentError(f"mode {mode_id}: rule must be one of {RULES}")
        extras = raw.get("ready_extras")
        if not isinstance(extras, list) or not all(e in cards for e in extras):
            raise ContentError(f"mode {mode_id}: ready_extras must list known cards")
        if any(cards[e].type == "character" for e in extras):
            raise ContentError(f"mode {mode_id}: ready_extras holds no characters")
        modes[mode_id] = Mode(
            mode_id, _int(raw, "life", mode_id), rule, _int(raw, "ready_copies", mode_id),
            tuple(extras),
        )  # fmt: skip
    content = Content(
        ruleset=_str(data, "ruleset", "content"),
        deck_size=_int(data, "deck_size", "content"),
        max_copies=_int(data, "max_copies", "content"),
        hand_size=_int(data, "hand_size", "content"),
        die_faces=_int(data, "die_faces", "content"),
        modes=modes,
        alignments=alignments,
        cards=cards,
    )
    _check_ready_decks(content)
    return content


def _check_ready_decks(content: Content) -> None:
    # Every mode must offer a legal deck per alignment: the content is refused otherwise.
    for mode in MODES:
        for alignment in content.alignments:
            try:
                content.check_deck(mode, content.ready_deck(mode, alignment))
            except LoadoutError as exc:
                raise ContentError(f"ready deck {mode}/{alignment}: {exc.message}") from exc


def load_content(text: str | None = None) -> Content:
    """Content from TOML text; by default the shipped cards.toml."""
    if text is None:
        text = resources.files(__package__).joinpath("cards.toml").read_text(encoding="utf-8")
    return parse_content(tomllib.loads(text))


CONTENT = load_content()


def card_of(instance: str) -> str:
    """The card id of a card instance ("5f3a09c2.0-07:reednor" is "reednor")."""
    return instance.rsplit(":", 1)[-1]
