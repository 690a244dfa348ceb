"""Warbands as the engine takes them, and their validation against a ruleset."""

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from service.games.cryptids.content import Ruleset


class Pick(NamedTuple):
    """One cryptid of a warband: which species, which of its two abilities, at which level."""

    species: str
    ability: int
    level: int


Warband = tuple[Pick, ...]


class WarbandError(ValueError):
    """A warband that the ruleset does not allow; `field` is the path of the offending value."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def validate_warband(ruleset: Ruleset, picks: Sequence[object], side: str = "a") -> Warband:
    """Check (species, ability, level) triples against the ruleset and return them as Picks.

    `side` prefixes the field path of an error, e.g. "a.cryptids[2].species".
    """
    # A list or a tuple first: the abstract Sequence check costs more than a battle's setup.
    if (
        type(picks) is not list
        and type(picks) is not tuple
        and (isinstance(picks, str | bytes) or not isinstance(picks, Sequence))
    ):
        raise WarbandError(f"{side}.cryptids", "expected a list of cryptids")
    if not picks:
        raise WarbandError(f"{side}.cryptids", "a warband needs at least one cryptid")
    size = ruleset.battle.board_size
    if len(picks) > size:
        raise WarbandError(f"{side}.cryptids", f"at most {size} cryptids, got {len(picks)}")
    species_table = ruleset.species
    max_level = ruleset.run.max_level
    out: list[Pick] = []
    for i, pick in enumerate(picks):
        # The usual case is checked first and cheaply (a Pick is kept, not built again; a stored
        # snapshot's picks are lists); the error path names the field.
        if (isinstance(pick, tuple) or type(pick) is list) and len(pick) == 3:
            species, ability, level = pick
            if (
                type(species) is str
                and type(ability) is int
                and type(level) is int
                and 0 <= ability <= 1
                and 1 <= level <= max_level
                and species in species_table
            ):
                out.append(pick if type(pick) is Pick else Pick(species, ability, level))
                continue
        out.append(_checked_pick(ruleset, pick, f"{side}.cryptids[{i}]"))
    return tuple(out)


def _checked_pick(ruleset: Ruleset, pick: object, where: str) -> Pick:
    if isinstance(pick, str | bytes) or not isinstance(pick, Sequence) or len(pick) != 3:
        raise WarbandError(where, "expected (species, ability, level)")
    species, ability, level = pick
    if not isinstance(species, str) or species not in ruleset.species:
        raise WarbandError(f"{where}.species", f"unknown species {species!r}")
    if not _is_int(ability) or ability not in (0, 1):
        raise WarbandError(f"{where}.ability", f"expected 0 or 1, got {ability!r}")
    max_level = ruleset.run.max_level
    if not _is_int(level) or not 1 <= level <= max_level:
        raise WarbandError(f"{where}.level", f"expected 1..{max_level}, got {level!r}")
    return Pick(species, ability, level)


def parse_warband(ruleset: Ruleset, data: object, side: str = "a") -> Warband:
    """A warband from its wire form {"cryptids": [{"species", "ability", "level"}, ...]}."""
    if not isinstance(data, Mapping):
        raise WarbandError(side, "expected an object with 'cryptids'")
    cryptids = data.get("cryptids")
    if not isinstance(cryptids, list):
        raise WarbandError(f"{side}.cryptids", "expected a list of cryptids")
    triples: list[tuple[object, object, object]] = []
    for i, entry in enumerate(cryptids):
        where = f"{side}.cryptids[{i}]"
        if not isinstance(entry, Mapping):
            raise WarbandError(where, "expected an object with species, ability, level")
        for name in ("species", "ability", "level"):
            if name not in entry:
                raise WarbandError(f"{where}.{name}", "missing")
        triples.append((entry["species"], entry["ability"], entry["level"]))
    return validate_warband(ruleset, triples, side)


def warband_to_wire(warband: Sequence[Pick]) -> dict[str, list[dict[str, str | int]]]:
    """The inverse of `parse_warband`."""
    return {
        "cryptids": [
            {"species": p.species, "ability": p.ability, "level": p.level} for p in warband
        ]
    }
