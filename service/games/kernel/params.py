"""Checking a parameterised action against its prompt's schemas, before the game sees it
(docs/architecture.md#refusals).

A prompt's `params` give, per action type, a JSON Schema per parameter. Prompts use a small
part of JSON Schema, and this checks exactly that part: `type` (integer, string, boolean,
array), `enum`, `minimum`, `maximum`, `items`, `uniqueItems`, `minItems` and `maxItems`.
It runs on every parameterised action, so it is written for these few words rather than
through a general validator; a refusal names the field (`details.field`) and what it must be.
"""

from collections.abc import Mapping
from typing import Any

from service.games.kernel.protocol import IllegalAction, same_json

_TYPES: Mapping[str, tuple[type, ...]] = {
    "integer": (int,),
    "string": (str,),
    "boolean": (bool,),
    "array": (list, tuple),
}


def check_params(
    kind: str, schemas: Mapping[str, Mapping[str, Any]], action: Mapping[str, Any]
) -> None:
    """Raise `IllegalAction("bad_param", …)` naming the first field of `action` that is
    missing, unknown or outside its schema."""
    unknown = sorted(str(name) for name in action if name != "type" and name not in schemas)
    if unknown:
        expected = ", ".join(repr(name) for name in schemas)
        raise IllegalAction(
            "bad_param",
            f"{kind!r} takes {expected}, not {unknown[0]!r}",
            field=unknown[0],
        )
    for name, schema in schemas.items():
        if name not in action:
            raise IllegalAction("bad_param", f"{kind!r} needs {name!r}", field=name)
        problem = _problem(schema, action[name])
        if problem is not None:
            raise IllegalAction("bad_param", f"{kind!r} {name!r} {problem}", field=name)


def _problem(schema: Mapping[str, Any], value: Any) -> str | None:
    """What is wrong with `value` under `schema`, in words, or None."""
    expected = schema.get("type")
    # Exact types: JSON true is no integer, and 1.0 is no integer either.
    if expected is not None and type(value) not in _TYPES[expected]:
        return f"must be of type {expected}"
    if "enum" in schema and not any(same_json(value, allowed) for allowed in schema["enum"]):
        return "must be one of " + ", ".join(repr(allowed) for allowed in schema["enum"])
    if "minimum" in schema and value < schema["minimum"]:
        return f"must be at least {schema['minimum']}"
    if "maximum" in schema and value > schema["maximum"]:
        return f"must be at most {schema['maximum']}"
    if expected == "array":
        return _items_problem(schema, value)
    return None


def _items_problem(schema: Mapping[str, Any], items: Any) -> str | None:
    if len(items) < schema.get("minItems", 0):
        return f"must hold at least {schema['minItems']} items"
    if "maxItems" in schema and len(items) > schema["maxItems"]:
        return f"must hold at most {schema['maxItems']} items"
    for index, item in enumerate(items):
        problem = _problem(schema.get("items", {}), item)
        if problem is not None:
            return f"item {index} {problem}"
        if schema.get("uniqueItems") and any(same_json(item, other) for other in items[:index]):
            return f"item {index} repeats an earlier one"
    return None
