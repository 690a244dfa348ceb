"""The loyalty game's catalogue (docs/rules/loyalty.md#the-catalogue): every card of
cards.toml with its printed numbers and its effect as data, the English text written from
that data, and the game-wide numbers.

An effect's `target` and `timing` follow from its kind and its card's type, by the rules that
`effects.legal_targets`, the prompts and the turn apply; they are named here once, per kind.
"""

from typing import Any

from service.games.kernel.catalogue import Effect, Entry, catalogue, entry
from service.games.loyalty.content import MODES, STARTING_LOYALTY, Card, Content

# What each effect kind affects (the rule choosing it), as `effects.legal_targets` applies it.
TARGETS = {
    "return_both": "own_character_then_theirs",
    "draw": "you",
    "loyalty": "you",
    "damage": "opponent",
    "boost_self": "this_character",
    "boost_all": "own_characters",
    "boost_one": "own_character",
    "destroy": "opposing_character_of_defence_at_most",
    "destroy_posesion": "opposing_posesion",
    "aura": "own_characters",
    "income": "you",
}

TEMPLATES = {
    "return_both": "{target}",
    "draw": "{target} draw {amount} card(s)",
    "loyalty": "{target} gain {amount} loyalty counter(s)",
    "damage": "{target} loses {amount} life",
    "boost_self": "{target} gets +{amount} {stat} until the end of the turn",
    "boost_all": "{target} get +{amount} {stat} until the end of the turn",
    "boost_one": "{target} gets +{amount} {stat} until the end of the turn",
    "destroy": "destroy {target} {amount} or less",
    "destroy_posesion": "destroy {target}",
    "aura": "{target} get +{amount} {stat}",
    "income": "{target} gain {amount} loyalty counter(s)",
}

WORDS = {
    "own_character_then_theirs": "you return one of your characters in play to your hand, "
    "then your opponent returns one of theirs",
    "you": "you",
    "opponent": "your opponent",
    "this_character": "this character",
    "own_characters": "your characters in play",
    "own_character": "one of your characters in play",
    "opposing_character_of_defence_at_most": "an opposing character of defence",
    "opposing_posesion": "an opposing POSESIÓN",
    "loyalty": "loyalty counter(s)",
    "own_turn": "Once per turn, in your own turn",
    "on_play": "When played",
    "any_turn": "In either player's turn",
    "while_in_play": "While this POSESIÓN stays in play",
    "turn_start": "At the start of each of your turns",
}


def _timing(card: Card) -> str:
    if card.type == "character":
        return "own_turn"
    if card.type == "mission":
        return "on_play"
    if not card.posesion:
        return "any_turn"
    return "turn_start" if card.effect.kind == "income" else "while_in_play"


def family(card: Card) -> str | None:
    """A character's faction; "posesion" for an adventure that stays in play; else none."""
    if card.type == "character":
        return card.faction
    return "posesion" if card.posesion else None


def _effect(card: Card) -> Effect:
    effect = card.effect
    data: Effect = {
        "kind": effect.kind,
        "amount": effect.amount,
        "target": TARGETS[effect.kind],
        "timing": _timing(card),
    }
    if effect.stat is not None:
        data["stat"] = effect.stat
    if effect.cost:
        data["cost"] = {"loyalty": effect.cost}
    return data


def _entry(card: Card) -> Entry:
    numbers = {"cost": card.cost}
    if card.type == "character":
        numbers |= {"attack": card.attack, "defence": card.defence}
    return entry(
        card.id,
        card.name,
        card.type,
        family(card),
        numbers,
        [_effect(card)],
        templates=TEMPLATES,
        words=WORDS,
    )


def build(content: Content, best_of: int) -> dict[str, Any]:
    """The catalogue of `content`: its cards and the numbers every game of it plays by."""
    rules = {
        "deck_size": content.deck_size,
        "max_copies": content.max_copies,
        "hand_size": content.hand_size,
        "starting_loyalty": STARTING_LOYALTY,
        "die": {"count": 1, "faces": content.die_faces},
        "best_of": best_of,
        "modes": [
            {"id": mode, "life": content.modes[mode].life, "rule": content.modes[mode].rule}
            for mode in MODES
        ],
        "alignments": [
            {"id": alignment, "factions": list(factions)}
            for alignment, factions in content.alignments.items()
        ],
    }
    return catalogue((_entry(card) for card in content.cards.values()), rules)
