"""The catalogue of Medianokte (docs/rules/medianokte.md#the-catalogue): every character,
card and the magic die, built from the loaded TOML content, with its printed numbers and its
effects as data; the English text is written from those effects by the templates below.
"""

from collections.abc import Mapping
from typing import Any

from service.games.kernel.catalogue import Effect, Entry, catalogue, entry
from service.games.medianokte.attacks import MAGIC_DIE
from service.games.medianokte.content import (
    CONTENT,
    MAX_COPIES,
    NAVE_KINDS,
    NAVE_SIZE,
    PER_KIND,
    POSITIONS,
    STATS,
    Attack,
    Card,
    Character,
    Content,
    banned_rule,
)
from service.games.medianokte.setup import HAND
from service.games.medianokte.state import DIE, MAX_ENERGY
from service.games.medianokte.turn import ACTIVATIONS, EXPLORE_DRAW

TEMPLATES: Mapping[str, str] = {
    "basic_attack": (
        "{range} basic attack on {target}: roll {dice} d10, 1 damage per die at or above its armour"
    ),
    "magic_attack": "{range} attack on {target} with the magic die: damage equal to the face",
    "special_attack": (
        "{range} special attack on {target}: a d10 above its {stat} deals {amount} damage"
    ),
    "damage": "deal {amount} damage to {target}",
    "heal": "remove {amount} damage from {target}",
    "poison": "put {amount} poison token(s) on {target}",
    "bleed": "put a bleeding token on {target}",
    "euphoria": "put a euphoria token on {target}",
    "cleanse": "remove poison and bleeding from {target}",
    "tire": "{position} {target} (on a character: {amount} of its weapons and assistance)",
    "ready": "ready {target} (an astrali stands upright; a character, its two weapons)",
    "draw": "draw {amount} cards from your Nave",
    "energy": "put {amount} energy counters on your final action",
    "raise": "raise {target} into your army, without counters, in its position",
    "raise_all": "raise every astrali of {target} into your army, without counters",
    "armour_bonus": "{target} has +{amount} armour",
    "life_bonus": "{target} has +{amount} life",
    "magic_die": "a roll shows one of its faces; the damage is the face shown",
}

WORDS: Mapping[str, str] = {
    # card targets (docs/rules/medianokte.md#playing-a-card)
    "self": "your character",
    "ally": "your character or one of your astralis",
    "ally_astrali": "one of your astralis",
    "enemy": "an enemy character or astrali",
    "enemy_character": "an enemy character",
    "enemy_astrali": "an enemy astrali",
    "vacio_astrali": "an enemy astrali in a Vacío",
    "enemy_vacio": "an enemy player's Vacío",
    # attack targets (docs/rules/medianokte.md#attacking)
    "melee_target": "an upright enemy astrali (any enemy when none is upright)",
    "every_enemy": "every enemy character and astrali",
    "hit": "each target it hits",
    "melee": "melee",
    "ranged": "ranged",
    "area": "area",
    # timings: what using the card tires it to, and an attack's after-effects
    "turn": "turn this card",
    "exhaust": "exhaust this card",
    "on_hit": "on a hit",
    "energy": "energy counters",
    "turned": "turn",
    "exhausted": "exhaust",
}

# An effect with an amount: the card's `n` is printed.
_COUNTED = frozenset({"damage", "poison", "heal", "draw", "energy", "tire"})
# An attack's targets by its range.
_ATTACK_TARGET = {"melee": "melee_target", "ranged": "enemy", "area": "every_enemy"}


def _effect(do: str, n: int, position: str, target: str, timing: str | None) -> Effect:
    effect: Effect = {"kind": do, "target": target}
    if do in _COUNTED:
        effect["amount"] = n
    if do == "tire":
        effect["position"] = position
    if timing:
        effect["timing"] = timing
    return effect


def _attack_effects(attack: Attack, timing: str | None) -> list[Effect]:
    main: Effect = {
        "kind": f"{attack.type}_attack",
        "range": attack.range,
        "target": _ATTACK_TARGET[attack.range],
    }
    if attack.type == "basic":
        main["dice"] = attack.dice
    if attack.type == "special":
        main["stat"] = attack.stat
        main["amount"] = attack.damage
    if timing:
        main["timing"] = timing
    hits = [_effect(e.do, e.n, e.position, "hit", "on_hit") for e in attack.effects]
    return [main, *hits]


def _card_effects(card: Card) -> list[Effect]:
    """The card's effects; a weapon's or assistance's first one says what using it tires it
    to, the final action's costs its energy counters."""
    timing = card.cost or ("turn" if card.kind == "astrali" else None)
    if card.attack is not None:
        effects = _attack_effects(card.attack, timing)
    elif card.kind == "permanent":
        bonuses = [("armour_bonus", card.armour_bonus), ("life_bonus", card.life_bonus)]
        effects = [
            {"kind": kind, "amount": amount, "target": "self"} for kind, amount in bonuses if amount
        ]
    else:
        effects = [_effect(e.do, e.n, e.position, card.target, None) for e in card.effects]
        if timing and effects:
            effects[0]["timing"] = timing
    if card.kind == "final" and effects:
        effects[0]["cost"] = {"energy": MAX_ENERGY}
    return effects


def _numbers(card: Card) -> dict[str, Any]:
    numbers: dict[str, Any] = {}
    if card.kind == "astrali":
        numbers.update(life=card.life, armour=card.armour)
    if card.kind == "permanent":
        numbers.update(armour_bonus=card.armour_bonus, life_bonus=card.life_bonus)
    if card.kind == "final":
        numbers["energy"] = MAX_ENERGY
    attack = card.attack
    if attack is not None and attack.type == "basic":
        numbers["dice"] = attack.dice
    if attack is not None and attack.type == "special":
        numbers["damage"] = attack.damage
    return numbers


def family(card: Card) -> str:
    """A Nave card's third ("event", "astrali", "object"); "character" for a character's."""
    return card.family if card.kind in NAVE_KINDS else "character"


def _card_entry(card: Card) -> Entry:
    return entry(
        card.id,
        card.name,
        card.kind,
        family(card),
        _numbers(card),
        _card_effects(card),
        templates=TEMPLATES,
        words=WORDS,
    )


def _character_entry(character: Character) -> Entry:
    numbers = {"life": character.life, "armour": character.armour, **character.stats}
    return entry(
        character.id,
        character.name,
        "character",
        "character",
        numbers,
        [],
        templates=TEMPLATES,
        words=WORDS,
    )


def _die_entry() -> Entry:
    numbers = {"sides": len(MAGIC_DIE), "faces": list(MAGIC_DIE)}
    effects = [{"kind": "magic_die"}]
    return entry("magic_die", "Dado mágico", "die", None, numbers, effects,
                 templates=TEMPLATES, words=WORDS)  # fmt: skip


def _rules(content: Content) -> dict[str, Any]:
    return {
        "d10": DIE,
        "magic_die": list(MAGIC_DIE),
        "hand": HAND,
        "activations": ACTIVATIONS,
        "explore_draw": EXPLORE_DRAW,
        "max_energy": MAX_ENERGY,
        "nave_size": NAVE_SIZE,
        "per_family": PER_KIND,
        "max_copies": MAX_COPIES,
        "positions": list(POSITIONS),
        "stats": list(STATS),
        "characters": [
            {
                "character": c.id,
                "weapons": list(c.weapons),
                "assistance": c.assistance,
                "final": c.final,
            }
            for c in content.characters.values()
        ],
        "signs": [
            {"card": card.id, "sign": card.sign}
            for card in content.cards.values()
            if card.kind == "event"
        ],
        "banned": [
            {"card": card.id, "rule": rule}
            for card in content.cards.values()
            if (rule := banned_rule(card)) is not None
        ],
    }


def build(content: Content) -> dict[str, Any]:
    """The catalogue's body for `content`; `ContentError` when an effect has no text."""
    entries = [_card_entry(card) for card in content.cards.values()]
    entries += [_character_entry(c) for c in content.characters.values()]
    entries.append(_die_entry())
    return catalogue(entries, _rules(content))


CATALOGUE = build(CONTENT)
