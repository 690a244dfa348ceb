"""The card list of Medianokte (ours), in the package's TOML files: loaded once and validated.

characters.toml holds the characters and their five cards; astralis.toml, objects.toml and
events.toml the cards a Nave is built from. A malformed file stops the import.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from service.games.kernel.content import ContentError as ContentError  # re-exported
from service.games.kernel.content import entry, integer, read_toml, table, tables, text
from service.games.kernel.rng import SplitMix64

Position = Literal["upright", "turned", "exhausted"]

STATS = ("fuerza", "destreza", "voluntad")
RANGES = ("melee", "ranged", "area")
ATTACK_TYPES = ("basic", "magic", "special")
COSTS = ("turn", "exhaust")
POSITIONS: tuple[Position, ...] = ("upright", "turned", "exhausted")
SIGNS = ("positive", "negative", "neutral")
NAVE_KINDS = ("astrali", "permanent", "discardable", "weapon", "event")
OBJECT_KINDS = ("permanent", "discardable", "weapon")
CHARACTER_KINDS = ("character_weapon", "assistance", "final")
FAMILIES = ("event", "astrali", "object")  # a Nave's three thirds

# What a card's effects may be aimed at (one target per card, chosen by its player):
TARGETS = (
    "self",  # your own character, nothing to choose
    "ally",  # your character or one of your astralis
    "ally_astrali",
    "enemy",  # an enemy character or an enemy astrali
    "enemy_character",  # the "Jefe Final"
    "enemy_astrali",
    "vacio_astrali",  # an enemy's astrali in a Vacío
    "enemy_vacio",  # an enemy player, for his whole Vacío
)
# Effect kinds, and the targets each may meet ("self" counts as your character).
_EFFECT_TARGETS: Mapping[str, frozenset[str]] = {
    "damage": frozenset({"enemy", "enemy_character", "enemy_astrali"}),
    "poison": frozenset({"enemy", "enemy_character", "enemy_astrali"}),
    "bleed": frozenset({"enemy", "enemy_character", "enemy_astrali"}),
    "tire": frozenset({"enemy", "enemy_character", "enemy_astrali"}),
    "heal": frozenset({"self", "ally", "ally_astrali"}),
    "cleanse": frozenset({"self", "ally", "ally_astrali"}),
    "euphoria": frozenset({"self", "ally", "ally_astrali"}),
    "ready": frozenset({"self", "ally", "ally_astrali"}),
    "draw": frozenset({"self"}),
    "energy": frozenset({"self"}),
    "raise": frozenset({"vacio_astrali"}),
    "raise_all": frozenset({"enemy_vacio"}),
}
_COUNTED = frozenset({"damage", "poison", "heal", "draw", "energy", "tire"})
# The positions a tiring effect may leave a card in.
_TIRED: Mapping[str, Position] = {"turned": "turned", "exhausted": "exhausted"}

NAVE_SIZE = 30
PER_KIND = 10  # events, astralis and objects each
MAX_COPIES = 2  # (ours) the seed sets no limit


@dataclass(frozen=True)
class Effect:
    do: str
    n: int = 1
    position: Position = "turned"  # for "tire": the position the card is tired to


@dataclass(frozen=True)
class Attack:
    range: str
    type: str
    dice: int = 0  # basic attacks
    stat: str = ""  # special attacks: the characteristic tested
    damage: int = 0  # special attacks: the damage on a success
    effects: tuple[Effect, ...] = ()  # on a hit (basic, magic) or a success (special)


@dataclass(frozen=True)
class Card:
    id: str
    name: str
    kind: str  # NAVE_KINDS or CHARACTER_KINDS
    text: str
    icon: str = ""
    sign: str = ""  # events
    cost: str = ""  # weapons and assistances: "turn" or "exhaust"
    life: int = 0  # astralis
    armour: int = 0
    attack: Attack | None = None
    target: str = "self"
    effects: tuple[Effect, ...] = ()
    armour_bonus: int = 0  # permanent objects
    life_bonus: int = 0

    @property
    def family(self) -> str:
        """The Nave's three thirds: "event", "astrali" or "object"."""
        return "object" if self.kind in OBJECT_KINDS else self.kind


@dataclass(frozen=True)
class Character:
    id: str
    name: str
    icon: str
    life: int
    armour: int
    stats: Mapping[str, int]
    weapons: tuple[str, str]
    assistance: str
    final: str

    @property
    def cards(self) -> tuple[str, str, str, str]:
        """The four action cards beside the character card: two weapons, assistance, final."""
        return (*self.weapons, self.assistance, self.final)


def _effects(items: list[Mapping[str, Any]], where: str, target: str | None) -> tuple[Effect, ...]:
    effects = []
    for index, item in enumerate(items):
        at = f"{where}.effects[{index}]"
        unknown = set(item) - {"do", "n", "position"}
        if unknown:
            raise ContentError(f"{at}: expected only do, n and position, got {sorted(unknown)}")
        do = text(item, "do", at, _EFFECT_TARGETS)
        # An attack's effects fall on what it hit; a card's on the target it names.
        if target is not None and target not in _EFFECT_TARGETS[do]:
            raise ContentError(f"{at}: {do} cannot be aimed at {target}")
        if target is None and not _EFFECT_TARGETS[do] & {"enemy"}:
            raise ContentError(f"{at}: an attack cannot {do} what it hits")
        n = integer(item, "n", at, low=1) if "n" in item else 1
        if "n" in item and do not in _COUNTED:
            raise ContentError(f"{at}.n: {do} takes no n")
        position: Position = "turned"
        if do == "tire":
            position = _TIRED[text(item, "position", at, _TIRED)]
        elif "position" in item:
            raise ContentError(f"{at}.position: only tire takes a position")
        effects.append(Effect(do, n, position))
    return tuple(effects)


def _attack(raw: Mapping[str, Any], where: str, astrali: bool) -> Attack:
    kind = text(raw, "type", where, ("basic", "special") if astrali else ATTACK_TYPES)
    if astrali:
        if "range" in raw:
            raise ContentError(f"{where}.range: an astrali's range follows from its attack type")
        # The seed: every astrali attacks in melee, except special attacks, at range.
        reach = "ranged" if kind == "special" else "melee"
    else:
        reach = text(raw, "range", where, RANGES)
    effects = _effects(tables(raw, "effects", where) if "effects" in raw else [], where, None)
    if kind == "basic":
        return Attack(reach, kind, dice=integer(raw, "dice", where, low=1), effects=effects)
    if kind == "special":
        stat = text(raw, "stat", where, STATS)
        damage = integer(raw, "damage", where, low=1)
        return Attack(reach, kind, stat=stat, damage=damage, effects=effects)
    return Attack(reach, kind, effects=effects)


def parse_card(raw: Mapping[str, Any]) -> Card:
    """One validated card, or `ContentError`."""
    where = f"card {raw.get('id')!r}"
    card_id = text(raw, "id", where)
    kind = text(raw, "kind", where, ("astrali", *OBJECT_KINDS, "event", "assistance", "final"))
    fields: dict[str, Any] = {
        "id": card_id,
        "name": text(raw, "name", where),
        "kind": kind,
        "text": text(raw, "text", where),
    }
    has_icon = "icon" in raw
    if has_icon:
        fields["icon"] = text(raw, "icon", where)
    if kind == "astrali":
        fields["life"] = integer(raw, "life", where, low=1)
        fields["armour"] = integer(raw, "armour", where, low=1)
        fields["attack"] = _attack(table(raw, "attack", where), f"{where}.attack", astrali=True)
    elif kind == "weapon":
        fields["cost"] = text(raw, "cost", where, COSTS)
        fields["attack"] = _attack(table(raw, "attack", where), f"{where}.attack", astrali=False)
        if has_icon:
            fields["kind"] = "character_weapon"
    elif kind == "permanent":
        bonus = table(raw, "bonus", where)
        if not bonus or set(bonus) - {"armour", "life"}:
            raise ContentError(f"{where}.bonus: expected armour and/or life, got {dict(bonus)!r}")
        at = f"{where}.bonus"
        fields["armour_bonus"] = integer(bonus, "armour", at, low=1) if "armour" in bonus else 0
        fields["life_bonus"] = integer(bonus, "life", at, low=1) if "life" in bonus else 0
    else:
        if kind == "event":
            fields["sign"] = text(raw, "sign", where, SIGNS)
        if kind == "assistance":
            fields["cost"] = text(raw, "cost", where, COSTS)
        if kind == "final" and "attack" in raw:
            fields["attack"] = _attack(table(raw, "attack", where), f"{where}.attack", False)
        else:
            fields["target"] = text(raw, "target", where, TARGETS)
            fields["effects"] = _effects(tables(raw, "effects", where), where, fields["target"])
    if (kind in ("assistance", "final")) != has_icon and kind != "weapon":
        raise ContentError(f"{where}.icon: only a character's cards carry its icon")
    return Card(**fields)


def parse_character(raw: Mapping[str, Any], cards: Mapping[str, Card]) -> Character:
    """One validated character, whose four cards exist and share its icon; or `ContentError`."""
    where = f"character {raw.get('id')!r}"
    weapons = entry(raw, "weapons", where)
    if not isinstance(weapons, list) or len(weapons) != 2:
        raise ContentError(f"{where}.weapons: expected two card ids, got {weapons!r}")
    character = Character(
        id=text(raw, "id", where),
        name=text(raw, "name", where),
        icon=text(raw, "icon", where),
        life=integer(raw, "life", where, low=1),
        armour=integer(raw, "armour", where, low=1),
        stats={stat: integer(raw, stat, where, low=1) for stat in STATS},
        weapons=(str(weapons[0]), str(weapons[1])),
        assistance=text(raw, "assistance", where),
        final=text(raw, "final", where),
    )
    expected = ("character_weapon", "character_weapon", "assistance", "final")
    for card_id, kind in zip(character.cards, expected, strict=True):
        card = cards.get(card_id)
        if card is None or card.kind != kind:
            raise ContentError(f"{where}: {card_id!r} is not a {kind} card")
        if card.icon != character.icon:
            raise ContentError(f"{where}: {card_id!r} does not share the icon {character.icon!r}")
    return character


@dataclass(frozen=True)
class Content:
    cards: Mapping[str, Card]
    characters: Mapping[str, Character]

    def nave_cards(self, family: str, *, legal: bool = True) -> list[str]:
        """The card ids of one third of a Nave ("event", "astrali", "object"), in file order."""
        return [
            c.id
            for c in self.cards.values()
            if c.kind in NAVE_KINDS and c.family == family and (not legal or not banned_rule(c))
        ]


def banned_rule(card: Card) -> str | None:
    """The duel-mode ban a card falls under, or None: the seed bans every neutral event, the
    event "Ritual de afinidad" and the object "Pergamino de konfusión"."""
    if card.kind == "event" and card.sign == "neutral":
        return "neutral_event_banned"
    if card.id in ("ritual_de_afinidad", "pergamino_de_konfusion"):
        return "banned_in_duel"
    return None


def parse_content(files: Mapping[str, Mapping[str, Any]]) -> Content:
    """The whole card list from the parsed files, or `ContentError`."""
    cards: dict[str, Card] = {}
    for name, data in files.items():
        for raw in data.get("card", []):
            if not isinstance(raw, Mapping):
                raise ContentError(f"{name}: each card must be a table")
            card = parse_card(raw)
            if card.id in cards:
                raise ContentError(f"card {card.id!r} appears twice")
            cards[card.id] = card
    characters: dict[str, Character] = {}
    for data in files.values():
        for raw in data.get("character", []):
            character = parse_character(raw, cards)
            if character.id in characters or character.id in cards:
                raise ContentError(f"character {character.id!r} appears twice")
            characters[character.id] = character
    content = Content(cards, characters)
    for family in FAMILIES:
        if len(content.nave_cards(family)) < PER_KIND:
            raise ContentError(f"fewer than {PER_KIND} legal {family} cards to build a Nave")
    return content


FILES = ("characters.toml", "astralis.toml", "objects.toml", "events.toml")


def load_content() -> Content:
    """The shipped card list."""
    return parse_content({name: read_toml(__package__, name) for name in FILES})


CONTENT = load_content()


def random_nave(seed: int) -> list[str]:
    """A legal Nave drawn from `seed` (the seed's "preparado al azar"): 10 different legal
    cards of each third, each third shuffled and cut to ten, listed events, astralis, objects."""
    rng = SplitMix64(seed)
    nave: list[str] = []
    for family in FAMILIES:
        pool = CONTENT.nave_cards(family)
        rng.shuffle(pool)
        nave += sorted(pool[:PER_KIND])
    return nave
