"""Hidden information, marked where it lives and redacted per seat by one mechanism
(docs/architecture.md#hidden-information).

A game marks every secret in its observation tree and in its events' data with `Hidden`:
the listed seats see `value`, everyone else (and a spectator) sees `shown`. A deck's order is
`Hidden((), order, shown=len(order))`: nobody sees it, everybody sees its size. A card drawn
by seat 1 is `Hidden((1,), card)`: seat 1 sees the card, the others see `None`.

Marked trees have a JSON form (`to_json`), so the server can store them as they are and
redact on read; `redact` and `reveal` accept both forms, mixed, and return plain JSON-able
data (tuples become lists).
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

MARK = "$hidden"


@dataclass(frozen=True)
class Hidden:
    """`value` for `seats`, `shown` for every other seat and for spectators."""

    seats: tuple[int, ...]
    value: Any
    shown: Any = None


def _unmark(node: Any) -> Hidden | None:
    if isinstance(node, Hidden):
        return node
    if isinstance(node, Mapping) and len(node) == 1 and MARK in node:
        body = node[MARK]
        return Hidden(tuple(body["seats"]), body["value"], body.get("shown"))
    return None


def to_json(tree: Any) -> Any:
    """The tree with each `Hidden` as `{"$hidden": {"seats", "value", "shown"}}`."""
    if isinstance(tree, Hidden):
        return {
            MARK: {
                "seats": list(tree.seats),
                "value": to_json(tree.value),
                "shown": to_json(tree.shown),
            }
        }
    if isinstance(tree, Mapping):
        return {key: to_json(value) for key, value in tree.items()}
    if isinstance(tree, list | tuple):
        return [to_json(value) for value in tree]
    return tree


_SCALARS = frozenset({str, int, float, bool, type(None)})


def redact(tree: Any, seat: int | None) -> Any:
    """What `seat` may see of the tree; `None` is a spectator, who sees only what is shown."""
    # Every view and every event goes through here: plain dicts, lists and scalars are told
    # apart by exact type first, and only other kinds pay for the general checks.
    kind = type(tree)
    if kind in _SCALARS:
        return tree
    if kind is dict and not (len(tree) == 1 and MARK in tree):
        return {key: redact(value, seat) for key, value in tree.items()}
    if kind is list or kind is tuple:
        return [redact(value, seat) for value in tree]
    hidden = _unmark(tree)
    if hidden is not None:
        visible = seat is not None and seat in hidden.seats
        return redact(hidden.value if visible else hidden.shown, seat)
    if isinstance(tree, Mapping):
        return {key: redact(value, seat) for key, value in tree.items()}
    if isinstance(tree, list | tuple):
        return [redact(value, seat) for value in tree]
    return tree


def reveal(tree: Any) -> Any:
    """Everything, for replays of a finished match."""
    hidden = _unmark(tree)
    if hidden is not None:
        return reveal(hidden.value)
    if isinstance(tree, Mapping):
        return {key: reveal(value) for key, value in tree.items()}
    if isinstance(tree, list | tuple):
        return [reveal(value) for value in tree]
    return tree
