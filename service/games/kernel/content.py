"""Content data (cards, crews, face tables, rulesets) read from TOML and checked at start-up.

Every game reads its files with these readers, so a mistake in any of them is told the same
way: `ContentError`, with the entry and the field first ("species 'mothman'.tier: ...").
`where` names the entry being read; a field's path is `where.field`.
"""

import tomllib
from collections.abc import Collection, Mapping
from importlib import resources
from typing import Any


class ContentError(ValueError):
    """Content data that breaks a rule; the message names the entry and the field."""


def parse_toml(text: str, where: str) -> dict[str, Any]:
    """The TOML text parsed, or `ContentError` naming `where` (a file or a ruleset)."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ContentError(f"{where}: invalid TOML: {exc}") from exc


def read_toml(package: str, name: str) -> dict[str, Any]:
    """A TOML file shipped beside a game's code, parsed."""
    text = resources.files(package).joinpath(name).read_text(encoding="utf-8")
    return parse_toml(text, name)


def entry(data: Mapping[str, Any], name: str, where: str) -> Any:
    """The value of field `name`, which must be present."""
    if not isinstance(data, Mapping):
        raise ContentError(f"{where}: expected a table, got {data!r}")
    if name not in data:
        raise ContentError(f"{where}: missing field {name!r}")
    return data[name]


def require(data: Mapping[str, Any], names: Collection[str], where: str) -> None:
    """Every field of `names` present."""
    for name in names:
        entry(data, name, where)


def integer(
    data: Mapping[str, Any], name: str, where: str, low: int = 0, high: int | None = None
) -> int:
    """An integer in low..high (no upper bound when `high` is None); true and false are not."""
    value = entry(data, name, where)
    if type(value) is not int or value < low or (high is not None and value > high):
        if high is not None:
            expected = f"an integer in {low}..{high}"
        elif low == 1:
            expected = "a positive integer"
        else:
            expected = f"an integer >= {low}"
        raise ContentError(f"{where}.{name}: expected {expected}, got {value!r}")
    return value


def text(
    data: Mapping[str, Any], name: str, where: str, choices: Collection[str] | None = None
) -> str:
    """A non-empty string, one of `choices` when they are given."""
    value = entry(data, name, where)
    if not isinstance(value, str) or not value:
        raise ContentError(f"{where}.{name}: expected a non-empty string, got {value!r}")
    if choices is not None and value not in choices:
        raise ContentError(f"{where}.{name}: expected one of {sorted(choices)}, got {value!r}")
    return value


def flag(data: Mapping[str, Any], name: str, where: str, default: bool = False) -> bool:
    """A boolean; `default` when the field is absent."""
    value = data.get(name, default)
    if type(value) is not bool:
        raise ContentError(f"{where}.{name}: expected true or false, got {value!r}")
    return value


def table(data: Mapping[str, Any], name: str, where: str) -> Mapping[str, Any]:
    """A sub-table (`[name]` in TOML)."""
    if name not in data:
        raise ContentError(f"{where}: missing table [{name}]")
    value = data[name]
    if not isinstance(value, Mapping):
        raise ContentError(f"{where}.{name}: expected a table, got {value!r}")
    return value


def tables(data: Mapping[str, Any], name: str, where: str) -> list[Mapping[str, Any]]:
    """A non-empty array of tables."""
    value = entry(data, name, where)
    if not isinstance(value, list) or not value or not all(isinstance(v, Mapping) for v in value):
        raise ContentError(f"{where}.{name}: expected a non-empty array of tables, got {value!r}")
    return value
