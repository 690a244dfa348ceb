"""One shape of view for every seat and every game (docs/architecture.md#views).

A zone of cards is `{"count", "cards"}` for everyone: `count` is public, `cards` lists each
card as `{"id", "card", …}` (the instance id and its catalogue id) for those who may see them
and is null for the others, so a client draws its own hand and its opponent's with one code.
A game writes its observation with `zone`, and its view's schema with the builders below,
which the kernel publishes as `View_<game>` and the suite checks every view against.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from service.games.kernel.hidden import Hidden

# --- observations -------------------------------------------------------------------------


def zone(cards: Sequence[Mapping[str, Any]], seats: Sequence[int] | None = None) -> dict[str, Any]:
    """A zone: public when `seats` is None, else its cards only for `seats` (`()`: nobody,
    as a deck's order), its count for everyone."""
    listed = [dict(card) for card in cards]
    if seats is None:
        return {"count": len(listed), "cards": listed}
    return {"count": len(listed), "cards": Hidden(tuple(seats), listed)}


# --- schemas -------------------------------------------------------------------------------

INT: dict[str, Any] = {"type": "integer"}
STR: dict[str, Any] = {"type": "string"}
BOOL: dict[str, Any] = {"type": "boolean"}
SEAT: dict[str, Any] = {"type": "integer", "minimum": 0}


def obj(**properties: Mapping[str, Any]) -> dict[str, Any]:
    """An object with exactly these properties, every one present."""
    return {
        "type": "object",
        "required": sorted(properties),
        "properties": {name: dict(schema) for name, schema in properties.items()},
        "additionalProperties": False,
    }


def nullable(schema: Mapping[str, Any]) -> dict[str, Any]:
    return {"anyOf": [dict(schema), {"type": "null"}]}


def array(items: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": dict(items)}


def enum(*values: Any) -> dict[str, Any]:
    return {"enum": list(values)}


def card(**state: Mapping[str, Any]) -> dict[str, Any]:
    """A card as a zone lists it: its instance `id`, its catalogue id `card`, and `state`."""
    return obj(id=STR, card=STR, **state)


def zone_schema(card_schema: Mapping[str, Any]) -> dict[str, Any]:
    """The schema of a `zone` of such cards, seen or not."""
    return obj(count=INT, cards=nullable(array(card_schema)))


def view_schema(game_id: str, observed: Mapping[str, Any]) -> dict[str, Any]:
    """A game's whole view: its observation's object schema plus what the kernel adds."""
    properties = {
        **observed["properties"],
        "game": {"const": game_id},
        "ruleset": STR,
        "seat": nullable(SEAT),
    }
    return {
        **observed,
        "required": sorted({*observed.get("required", []), "game", "ruleset", "seat"}),
        "properties": properties,
    }
