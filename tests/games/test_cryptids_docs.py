"""The worked example and the generator's listing in docs/rules/cryptids.md must be what the
engine and the generator do."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from service.games.cryptids import load_ruleset, simulate
from service.games.kernel.rng import SplitMix64

DOC = Path(__file__).parents[2] / "docs" / "rules" / "cryptids.md"
# Runs the doc's JavaScript SplitMix64 over the listing's lines (as JSON on stdin).
NODE_DRIVER = """
const lines = JSON.parse(require("fs").readFileSync(0, "utf8"));
let rng = null;
const out = [];
for (const line of lines) {
  const [what, x] = line.split(" ");
  if (what === "seed") rng = new SplitMix64(x);
  else if (what === "next") out.push(String(rng.next()));
  else out.push(String(what === "die" ? rng.die(Number(x)) : rng.below(Number(x))));
}
console.log(JSON.stringify(out));
"""


def _block(kind: str) -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    match = re.search(rf"```{kind}\n(.*?)```", text, re.DOTALL)
    assert match, f"the {kind} block is missing from the rules doc"
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
    lines = _block("cryptids-example")
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


def test_the_generator_listing_gives_the_outputs_the_doc_shows() -> None:
    lines = _block("splitmix64-example")
    checked = 0
    rng = SplitMix64(0)
    for line in lines:
        match line.split():
            case ["seed", seed]:
                rng = SplitMix64(int(seed))
            case ["next", value]:
                assert rng.next() == int(value), line
            case ["die", faces, value]:
                assert rng.die(int(faces)) == int(value), line
            case ["below", n, value]:
                assert rng.below(int(n)) == int(value), line
            case _:
                raise AssertionError(f"unknown line {line!r}")
        checked += not line.startswith("seed")
    assert checked >= 10


def test_the_docs_javascript_generator_gives_the_same_outputs_in_node_when_present() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("no Node here; the Python generator is checked against the listing above")
    match = re.search(r"```js\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)
    assert match, "the JavaScript listing is missing from the rules doc"
    script = match.group(1) + NODE_DRIVER
    lines = _block("splitmix64-example")
    done = subprocess.run(
        [node, "-e", script], input=json.dumps(lines), capture_output=True, text=True, check=True
    )
    expected = [line.split()[-1] for line in lines if not line.startswith("seed")]
    assert json.loads(done.stdout) == expected
