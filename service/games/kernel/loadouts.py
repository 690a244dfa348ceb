"""What a seat brings to a match (a deck list, a character, a crew), checked by the rules.

A refusal names the rule it breaks (`code`) and, in `details`, the card: the server answers
it as a 422 with those details, so a client can point at the offending card.
"""

from collections import Counter
from collections.abc import Collection
from typing import Any


class LoadoutError(ValueError):
    """A seat's loadout breaks a rule: `code` names the rule, `details` the card and the rule."""

    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = {"rule": code, **(details or {})}


def check_deck(
    cards: Any,
    *,
    known: Collection[str],
    size: int,
    max_copies: int,
    banned: Collection[str] = (),
) -> list[str]:
    """The deck list as a list of card ids, or `LoadoutError` for the first rule it breaks.

    Rules are checked card by card in list order (unknown, then banned), then copies, then the
    size, so the error names the first offending card a player would spot reading the list.
    """
    if not isinstance(cards, list) or not all(isinstance(card, str) for card in cards):
        raise LoadoutError("malformed", "a deck is a list of card ids")
    for card in cards:
        if card not in known:
            raise LoadoutError("unknown_card", f"no card {card!r}", {"card": card})
        if card in banned:
            raise LoadoutError("banned_card", f"{card!r} is banned", {"card": card})
    check_copies(cards, max_copies)
    check_size(cards, size)
    return list(cards)


def check_copies(cards: list[str], max_copies: int) -> None:
    """`too_many_copies`, naming the first card listed more than `max_copies` times."""
    for card, count in Counter(cards).items():
        if count > max_copies:
            raise LoadoutError(
                "too_many_copies",
                f"{count} copies of {card!r}; at most {max_copies}",
                {"card": card, "copies": count, "max": max_copies},
            )


def check_size(cards: list[str], size: int, rule: str = "deck_size", noun: str = "deck") -> None:
    """`rule` (by default `deck_size`) unless the list has exactly `size` cards."""
    if len(cards) != size:
        raise LoadoutError(
            rule,
            f"a {noun} has exactly {size} cards, not {len(cards)}",
            {"size": len(cards), "expected": size},
        )
