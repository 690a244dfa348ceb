"""A game's catalogue: every card, model, hazard or face a view names by id, with its printed
numbers, its effects as data and their text in English (docs/architecture.md#catalogues).

The text is written from the structured effects by the game's templates, never by hand, so
the two cannot disagree. A game builds its entries with `entry` and its catalogue with
`catalogue`, which checks the whole of it when the game is loaded, at start-up.
"""

import string
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from service.games.kernel.content import ContentError

Effect = dict[str, Any]
"""One effect: `kind` (what it does) and, where they apply, `amount`, `target` (the rule
choosing what it affects), `cost` (what is paid, e.g. {"loyalty": 2}) and `timing` (when),
plus any field the game's template for that kind names."""

Entry = dict[str, Any]
"""`{"id", "name", "kind", "family", "numbers", "effects", "text"}`."""

_FORMATTER = string.Formatter()


def effect_text(
    effect: Mapping[str, Any], templates: Mapping[str, str], words: Mapping[str, str]
) -> str:
    """One effect in English: its timing and cost, then its kind's template filled with its
    fields, each string field put in `words` where the game has a phrase for it."""
    kind = effect.get("kind")
    if not isinstance(kind, str) or kind not in templates:
        raise ContentError(f"no text template for effect kind {kind!r}")
    fields = {
        key: words.get(value, value) if isinstance(value, str) else value
        for key, value in effect.items()
    }
    needed = {name for _, name, _, _ in _FORMATTER.parse(templates[kind]) if name}
    missing = sorted(needed - set(fields))
    if missing:
        raise ContentError(f"effect {kind!r} lacks {', '.join(missing)} for its text")
    text = templates[kind].format_map(fields)
    cost = effect.get("cost")
    if cost:
        paid = ", ".join(f"{amount} {words.get(what, what)}" for what, amount in cost.items())
        text = f"Pay {paid}: {text[0].lower()}{text[1:]}"
    timing = effect.get("timing")
    if timing:
        text = f"{words.get(timing, timing)}: {text[0].lower()}{text[1:]}"
    return text


def entry(
    id: str,
    name: str,
    kind: str,
    family: str | None,
    numbers: Mapping[str, Any],
    effects: Sequence[Effect],
    *,
    templates: Mapping[str, str],
    words: Mapping[str, str],
) -> Entry:
    """One catalogue entry, its text written from `effects` ("No effect." when it has none)."""
    texts = [effect_text(effect, templates, words) for effect in effects]
    return {
        "id": id,
        "name": name,
        "kind": kind,
        "family": family,
        "numbers": dict(numbers),
        "effects": [dict(effect) for effect in effects],
        "text": " ".join(_sentence(text) for text in texts) or "No effect.",
    }


def _sentence(text: str) -> str:
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def catalogue(entries: Iterable[Entry], rules: Mapping[str, Any]) -> dict[str, Any]:
    """The catalogue's body: entries sorted by kind then id, and the game-wide `rules` (dice,
    starting life, hand sizes…). Raises `ContentError` on a repeated id or a bare entry."""
    listed = sorted(entries, key=lambda e: (e["kind"], e["id"]))
    seen: set[str] = set()
    for item in listed:
        if item["id"] in seen:
            raise ContentError(f"catalogue id {item['id']!r} appears twice")
        seen.add(item["id"])
        if not item["name"] or not item["text"]:
            raise ContentError(f"catalogue entry {item['id']!r} has no name or no text")
    return {"entries": listed, "rules": dict(rules)}


_JSON_TYPES = {
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    list: "array",
    dict: "object",
    type(None): "null",
}


def catalogue_schema(game_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON Schema of a game's catalogue, as the OpenAPI component `Catalogue_<game>`:
    one entry shape per kind, naming the numbers every entry of that kind prints and the
    effect kinds it may hold."""
    kinds: dict[str, list[Entry]] = {}
    for item in body["entries"]:
        kinds.setdefault(item["kind"], []).append(item)
    shapes = [_kind_schema(kind, items) for kind, items in sorted(kinds.items())]
    return {
        "type": "object",
        "required": ["game", "ruleset", "rulesets", "entries", "rules"],
        "properties": {
            "game": {"const": game_id},
            "ruleset": {"type": "string"},
            "rulesets": {"type": "array", "items": {"type": "string"}},
            "entries": {"type": "array", "items": {"oneOf": shapes}},
            "rules": {"type": "object"},
        },
    }


def _kind_schema(kind: str, items: list[Entry]) -> dict[str, Any]:
    numbers: dict[str, set[str]] = {}
    for item in items:
        for name, value in item["numbers"].items():
            numbers.setdefault(name, set()).add(_JSON_TYPES[type(value)])
    always = sorted(set.intersection(*(set(item["numbers"]) for item in items)))
    effect_kinds = sorted({effect["kind"] for item in items for effect in item["effects"]})
    return {
        "type": "object",
        "required": ["id", "name", "kind", "family", "numbers", "effects", "text"],
        "properties": {
            "id": {"type": "string"},
            "name": {"type": "string"},
            "kind": {"const": kind},
            "family": {"type": ["string", "null"]},
            "numbers": {
                "type": "object",
                "required": always,
                "properties": {
                    name: {"type": sorted(types)} for name, types in sorted(numbers.items())
                },
                "additionalProperties": False,
            },
            "effects": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["kind"],
                    "properties": {"kind": {"enum": effect_kinds}},
                },
            },
            "text": {"type": "string", "minLength": 1},
        },
        "additionalProperties": False,
    }
