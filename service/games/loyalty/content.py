"""The loyalty game's content (cards.toml): cards, modes and deck rules, validated at import."""

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from service.games.kernel.content import (
    ContentError,
    entry,
    flag,
    integer,
    parse_toml,
    read_toml,
    table,
    tables,
    text,
)
from service.games.kernel.loadouts import LoadoutError, check_deck

STATS = ("attack", "defence")
# Every player starts each game without counters (ours: the seed is silent).
STARTING_LOYALTY = 0
MODES = ("escaramuza", "conquista", "legion")
RULES = ("alignment", "faction", "any")

# Effect kinds by who may carry them, and which of them need a stat.
CHARACTER_EFFECTS = frozenset(("return_both", "draw", "damage", "boost_self", "boost_all"))
MISSION_EFFECTS = frozenset(("draw", "loyalty", "damage", "boost_all"))
ADVENTURE_EFFECTS = frozenset(("boost_one", "destroy", "damage", "draw", "destroy_posesion"))
POSESION_EFFECTS = frozenset(("aura", "income"))
NEEDS_STAT = frozenset(("boost_self", "boost_all", "boost_one", "aura"))


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

    def check_deck(self, mode: str, cards: Any) -> list[str]:
        """The deck list, or `LoadoutError` naming the card and the rule it breaks
        (docs/rules/loyalty.md#5-comenzando-a-jugar-setup, the copies;
        docs/rules/loyalty.md#9-modos-de-juego-the-second-section-9, the mode's rule)."""
        deck = check_deck(cards, known=self.cards, size=self.deck_size, max_copies=self.max_copies)
        rule = self.modes[mode].rule
        if rule == "any":
            return deck
        characters = [self.cards[c] for c in deck if self.cards[c].type == "character"]
        key = "alignment" if rule == "alignment" else "faction"
        # Counted per copy, in list order: the odd card is the one outside the value most of
        # the characters share; on a tie the first listed of the tied values is kept.
        counts = Counter(getattr(card, key) for card in characters)
        if len(counts) < 2:
            return deck
        (expected, most), (_, runner_up) = counts.most_common(2)
        odd = next(card for card in characters if getattr(card, key) != expected)
        found = getattr(odd, key)
        if most > runner_up:
            why = f"{most} of the {len(characters)} characters are {expected}"
        else:
            why = f"no {key} holds most of them, so the first listed, {expected}, is kept"
        raise LoadoutError(
            f"one_{key}",
            f"in {mode} every character is of one {key}: {odd.id!r} is {found}; {why}",
            {
                "card": odd.id,
                key: found,
                "expected": expected,
                "mode": mode,
                "counts": dict(counts),
            },
        )

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


def _effect(raw: Mapping[str, Any], allowed: frozenset[str], where: str, costed: bool) -> Effect:
    kind = text(raw, "kind", where, choices=allowed)
    stat = raw.get("stat")
    if kind in NEEDS_STAT and stat not in STATS:
        raise ContentError(
            f"{where}.stat: expected one of {list(STATS)} ({kind} needs a stat), got {stat!r}"
        )
    if kind not in NEEDS_STAT and stat is not None:
        raise ContentError(f"{where}.stat: expected none ({kind} takes no stat), got {stat!r}")
    if not costed and "cost" in raw:
        raise ContentError(f"{where}.cost: expected none, only a character's effect has a cost")
    cost = integer(raw, "cost", where, low=1) if costed else 0
    return Effect(kind=kind, amount=integer(raw, "amount", where, low=1), stat=stat, cost=cost)


def _card(raw: Mapping[str, Any], kind: str, factions: Mapping[str, str]) -> Card:
    card_id = text(raw, "id", kind)
    where = f"{kind} {card_id!r}"
    base: dict[str, Any] = {
        "id": card_id,
        "name": text(raw, "name", where),
        "type": kind,
        "cost": integer(raw, "cost", where, low=1),
    }
    effect = table(raw, "effect", where)
    if kind == "character":
        faction = text(raw, "faction", where)
        if faction not in factions:
            raise ContentError(
                f"{where}.faction: expected one of {sorted(factions)}, got unknown faction "
                f"{faction!r}"
            )
        return Card(
            **base,
            effect=_effect(effect, CHARACTER_EFFECTS, f"{where}.effect", costed=True),
            attack=integer(raw, "attack", where),
            defence=integer(raw, "defence", where),
            alignment=factions[faction],
            faction=faction,
        )
    posesion = flag(raw, "posesion", where)
    if posesion and kind != "adventure":
        raise ContentError(f"{where}.posesion: expected false, only adventures are POSESIÓN")
    if kind == "mission":
        allowed = MISSION_EFFECTS
    else:
        allowed = POSESION_EFFECTS if posesion else ADVENTURE_EFFECTS
    return Card(
        **base, effect=_effect(effect, allowed, f"{where}.effect", False), posesion=posesion
    )


def _alignments(data: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """Each alignment's factions: at least two per alignment, each faction in one alignment."""
    raw = table(data, "alignments", "cards.toml")
    if not raw:
        raise ContentError("cards.toml.alignments: expected at least one alignment, got none")
    alignments: dict[str, tuple[str, ...]] = {}
    seen: set[str] = set()
    for alignment, listed in raw.items():
        if not isinstance(listed, list) or len(listed) < 2:
            raise ContentError(
                f"alignments.{alignment}: expected a list of two factions or more, got {listed!r}"
            )
        for faction in listed:
            if not isinstance(faction, str) or faction in seen:
                raise ContentError(
                    f"alignments.{alignment}: expected faction names, each in one alignment "
                    f"only, got {faction!r}"
                )
            seen.add(faction)
        alignments[alignment] = tuple(listed)
    return alignments


def _mode(raw: Mapping[str, Any], mode_id: str, cards: Mapping[str, Card]) -> Mode:
    where = f"modes.{mode_id}"
    extras = entry(raw, "ready_extras", where)
    if not isinstance(extras, list) or not all(e in cards for e in extras):
        raise ContentError(f"{where}.ready_extras: expected known card ids, got {extras!r}")
    if any(cards[e].type == "character" for e in extras):
        raise ContentError(f"{where}.ready_extras: expected no characters, got {extras!r}")
    return Mode(
        id=mode_id,
        life=integer(raw, "life", where, low=1),
        rule=text(raw, "rule", where, choices=RULES),
        ready_copies=integer(raw, "ready_copies", where, low=1),
        ready_extras=tuple(extras),
    )


def parse_content(data: Mapping[str, Any]) -> Content:
    """Validated content from the parsed TOML, or `ContentError`."""
    alignments = _alignments(data)
    factions = {f: alignment for alignment, listed in alignments.items() for f in listed}
    cards: dict[str, Card] = {}
    for kind in ("character", "mission", "adventure"):
        for raw in tables(data, kind, "cards.toml"):
            card = _card(raw, kind, factions)
            if card.id in cards:
                raise ContentError(f"{kind}.id: expected ids that differ, got {card.id!r} twice")
            cards[card.id] = card
    raw_modes = table(data, "modes", "cards.toml")
    if sorted(raw_modes) != sorted(MODES):
        raise ContentError(f"cards.toml.modes: expected {list(MODES)}, got {list(raw_modes)}")
    content = Content(
        ruleset=text(data, "ruleset", "cards.toml"),
        deck_size=integer(data, "deck_size", "cards.toml", low=1),
        max_copies=integer(data, "max_copies", "cards.toml", low=1),
        hand_size=integer(data, "hand_size", "cards.toml", low=1),
        die_faces=integer(data, "die_faces", "cards.toml", low=1),
        modes={m: _mode(table(raw_modes, m, "modes"), m, cards) for m in MODES},
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


def load_content(source: str | None = None) -> Content:
    """Content from TOML text; by default the shipped cards.toml."""
    if source is None:
        return parse_content(read_toml(__package__, "cards.toml"))
    return parse_content(parse_toml(source, "cards.toml"))


CONTENT = load_content()


def card_of(instance: str) -> str:
    """The card id of a card instance ("5f3a09c2.0-07:reednor" is "reednor")."""
    return instance.rsplit(":", 1)[-1]
