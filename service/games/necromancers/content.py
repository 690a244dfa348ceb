"""The necromancers' ruleset data (faces.toml): loaded once and validated."""

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

TROOPS = ("skeletons", "zombies")
NECROMANCER = "necromancer"

# Which of your own (or the enemy's) things each effect may name in `at`.
_ALLOWED_AT: Mapping[str, frozenset[str]] = {
    "damage": frozenset(TROOPS),
    "revive": frozenset(TROOPS),
    "heal": frozenset((*TROOPS, NECROMANCER)),
}


class ContentError(ValueError):
    """The ruleset data is malformed."""


@dataclass(frozen=True)
class FaceOption:
    effect: str
    points: int
    at: tuple[str, ...]


@dataclass(frozen=True)
class Ruleset:
    id: str
    die_faces: int
    lives: int
    skeletons: int
    zombies: int
    max_lives: int
    max_troops: int
    faces: Mapping[int, tuple[FaceOption, ...]]


def _positive_int(data: Mapping[str, Any], key: str) -> int:
    value = data.get(key)
    if type(value) is not int or value < 1:
        raise ContentError(f"{key} must be a positive integer")
    return value


def _option(face: int, raw: Any) -> FaceOption:
    if not isinstance(raw, Mapping):
        raise ContentError(f"face {face}: an option must be a table")
    effect = raw.get("effect")
    if not isinstance(effect, str) or effect not in _ALLOWED_AT:
        raise ContentError(f"face {face}: unknown effect {effect!r}")
    points = _positive_int(raw, "points")
    at = raw.get("at")
    if not isinstance(at, list) or not at or len(set(at)) != len(at):
        raise ContentError(f"face {face}: 'at' must be a non-empty list without repeats")
    if not set(at) <= _ALLOWED_AT[effect]:
        raise ContentError(f"face {face}: {effect} may only name {sorted(_ALLOWED_AT[effect])}")
    return FaceOption(effect=effect, points=points, at=tuple(at))


def parse_ruleset(data: Mapping[str, Any]) -> Ruleset:
    """A validated ruleset from the parsed TOML, or `ContentError`."""
    ruleset_id = data.get("ruleset")
    if not isinstance(ruleset_id, str) or not ruleset_id:
        raise ContentError("ruleset must be a non-empty string")
    die_faces = _positive_int(data, "die_faces")
    faces: dict[int, tuple[FaceOption, ...]] = {}
    for entry in data.get("faces", []):
        if not isinstance(entry, Mapping):
            raise ContentError("each face must be a table")
        face = entry.get("face")
        if type(face) is not int or face in faces:
            raise ContentError(f"face {face!r} is not an integer or appears twice")
        options = entry.get("options")
        if not isinstance(options, list) or not options:
            raise ContentError(f"face {face}: needs at least one option")
        faces[face] = tuple(_option(face, raw) for raw in options)
        # An action names its effect, so one face may not offer the same effect twice.
        if len({option.effect for option in faces[face]}) != len(faces[face]):
            raise ContentError(f"face {face}: an effect appears twice")
    if sorted(faces) != list(range(1, die_faces + 1)):
        raise ContentError(f"faces must be exactly 1..{die_faces}")
    ruleset = Ruleset(
        id=ruleset_id,
        die_faces=die_faces,
        lives=_positive_int(data, "lives"),
        skeletons=_positive_int(data, "skeletons"),
        zombies=_positive_int(data, "zombies"),
        max_lives=_positive_int(data, "max_lives"),
        max_troops=_positive_int(data, "max_troops"),
        faces=faces,
    )
    if ruleset.lives > ruleset.max_lives or max(ruleset.skeletons, ruleset.zombies) > (
        ruleset.max_troops
    ):
        raise ContentError("starting numbers must not exceed their caps")
    return ruleset


def load_ruleset(source: Path | str | None = None) -> Ruleset:
    """A ruleset from a TOML file (`Path`) or TOML text (`str`); by default the shipped one.

    Each ruleset id is its own pinned ruleset: a new face table ships under a new id.
    """
    if isinstance(source, Path):
        text = source.read_text(encoding="utf-8")
    elif isinstance(source, str):
        text = source
    else:
        text = resources.files(__package__).joinpath("faces.toml").read_text(encoding="utf-8")
    return parse_ruleset(tomllib.loads(text))
