"""Answering a prompt as a client written from the docs would: from the prompt alone."""

import random
from collections.abc import Mapping
from typing import Any


def param_value(schema: Mapping[str, Any], rng: random.Random) -> Any:
    """A value a prompt's parameter schema allows, as a client would pick one."""
    if "enum" in schema:
        return rng.choice(schema["enum"])
    if schema.get("type") == "integer":
        return rng.randint(schema.get("minimum", 0), schema.get("maximum", 0))
    if schema.get("type") == "array":
        items = list(schema["items"]["enum"])
        return rng.sample(items, rng.randint(0, len(items)))
    if schema.get("type") == "boolean":
        return rng.random() < 0.5
    raise AssertionError(f"a parameter schema no client can fill: {schema}")


def choose(prompt: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """An answer to `prompt`: one of its actions, or a parameterised one filled in."""
    options = [dict(a) for a in prompt["actions"] if not a.get("loses")] or prompt["actions"]
    if prompt["params"] and (not options or rng.random() < 0.2):
        kind = rng.choice(sorted(prompt["params"]))
        fields = prompt["params"][kind]
        return {"type": kind, **{n: param_value(s, rng) for n, s in fields.items()}}
    return dict(rng.choice(options))
