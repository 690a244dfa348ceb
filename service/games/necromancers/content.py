"""The necromancers' ruleset data (faces.toml): loaded once and validated."""

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from service.games.kernel.content import (
    ContentError,
    integer,
    parse_toml,
    read_toml,
    tables,
    text,
)

TROOPS = ("skeletons", "zombies")
NECROMANCER = "necromancer"

# Fixed by the source, not balancing numbers: they stay out of faces.toml.
ATTACK_DICE_WITH_BOTH_TROOPS = 2
ATTACK_DICE_OTHERWISE = 1
DEFENCE_DICE = 1
WOUNDS_PER_TROOP = 1

# Which of your own (or the enemy's) things each effect may name in `at`.
_ALLOWED_AT: Mapping[str, frozenset[str]] = {
    "damage": frozenset(TROOPS),
    "revive": frozenset(TROOPS),
    "heal": frozenset((*TROOPS, NECROMANCER)),
}


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


def _option(face: int, raw: Mapping[str, Any]) -> FaceOption:
    effect = raw.get("effect")
    if not isinstance(effect, str) or effect not in _ALLOWED_AT:
        raise ContentError(f"face {face}: unknown effect {effect!r}")
    points = integer(raw, "points", f"face {face}", low=1)
    at = raw.get("at")
    if not isinstance(at, list) or not at or len(set(at)) != len(at):
        raise ContentError(f"face {face}: 'at' must be a non-empty list without repeats")
    if not set(at) <= _ALLOWED_AT[effect]:
        raise ContentError(f"face {face}: {effect} may only name {sorted(_ALLOWED_AT[effect])}")
    return FaceOption(effect=effect, points=points, at=tuple(at))


def parse_ruleset(data: Mapping[str, Any]) -> Ruleset:
    """A validated ruleset from the parsed TOML, or `ContentError`."""
    ruleset_id = text(data, "ruleset", "faces.toml")
    die_faces = integer(data, "die_faces", ruleset_id, low=1)
    faces: dict[int, tuple[FaceOption, ...]] = {}
    for entry in tables(data, "faces", ruleset_id):
        face = integer(entry, "face", f"{ruleset_id}.faces", low=1)
        if face in faces:
            raise ContentError(f"{ruleset_id}.faces: face {face} appears twice")
        faces[face] = tuple(_option(face, raw) for raw in tables(entry, "options", f"face {face}"))
        # An action names its effect, so one face may not offer the same effect twice.
        if len({option.effect for option in faces[face]}) != len(faces[face]):
            raise ContentError(f"face {face}: an effect appears twice")
    if sorted(faces) != list(range(1, die_faces + 1)):
        raise ContentError(f"faces must be exactly 1..{die_faces}")
    ruleset = Ruleset(
        id=ruleset_id,
        die_faces=die_faces,
        lives=integer(data, "lives", ruleset_id, low=1),
        skeletons=integer(data, "skeletons", ruleset_id, low=1),
        zombies=integer(data, "zombies", ruleset_id, low=1),
        max_lives=integer(data, "max_lives", ruleset_id, low=1),
        max_troops=integer(data, "max_troops", ruleset_id, low=1),
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
        return parse_ruleset(parse_toml(source.read_text(encoding="utf-8"), source.name))
    if isinstance(source, str):
        return parse_ruleset(parse_toml(source, "ruleset"))
    return parse_ruleset(read_toml(__package__, "faces.toml"))
