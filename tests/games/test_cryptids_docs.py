"""The worked example in docs/rules/cryptids.md must be what the engine does."""

import re
from pathlib import Path

from service.games.cryptids import load_ruleset, simulate

DOC = Path(__file__).parents[2] / "docs" / "rules" / "cryptids.md"


def _example() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    match = re.search(r"```cryptids-example\n(.*?)```", text, re.DOTALL)
    assert match, "the worked example block is missing from the rules doc"
    return match.group(1).strip().splitlines()


def _picks(line: str) -> list[tuple[str, int, int]]:
    picks = []
    for part in line.split(" ", 1)[1].split(","):
        species, ability, level = part.split()
        picks.append((species, int(ability), int(level)))
    return picks


def _token(word: str) -> str | int:
    return int(word) if re.fullmatch(r"-?\d+", word) else word


def test_the_worked_example_matches_the_engine_event_by_event() -> None:
    lines = _example()
    assert lines[0].startswith("ruleset ") and lines[1].startswith("seed ")
    ruleset = load_ruleset(lines[0].split()[1])
    seed = int(lines[1].split()[1])
    result = simulate(ruleset, seed, _picks(lines[2]), _picks(lines[3]))
    assert result.replay is not None
    expected: list[tuple[str | int, ...]] = []
    hashes: list[str] = []
    for line in lines[4:]:
        if line.startswith("hash "):
            hashes.append(line.split()[1])
        else:
            expected.append(tuple(_token(w) for w in line.split()))
    assert result.replay.events == expected
    assert result.replay.hashes == hashes
