"""Write the golden corpus: `python -m tests.games.golden.gen [--force]`.

The corpus file is the contract: every battle in it must re-simulate to the same replay bytes
forever, under its ruleset. Do not regenerate it to make a failing test pass; a change of
battle rules or content needs a new ruleset id, and then a new corpus file next to this one.
"""

import argparse
import hashlib
import json
from pathlib import Path
from typing import Any

import msgpack

from service.games.cryptids import load_ruleset, simulate
from service.games.kernel.rng import SplitMix64

HERE = Path(__file__).parent
CORPUS_SEED = 0x601D
BATTLES = 60


def corpus_path(ruleset_id: str) -> Path:
    return HERE / f"{ruleset_id}.json"


def replay_digest(wire: dict[str, Any]) -> str:
    """SHA-256 of the msgpack bytes of a replay's wire form."""
    return hashlib.sha256(msgpack.packb(wire)).hexdigest()


def build(ruleset_id: str) -> list[dict[str, Any]]:
    """BATTLES battles with 1 to 5 cryptids a side of any tier, ability and level."""
    ruleset = load_ruleset(ruleset_id)
    species = sorted(ruleset.species)
    rng = SplitMix64(CORPUS_SEED)

    def warband() -> list[list[Any]]:
        size = 1 + rng.below(ruleset.battle.board_size)
        return [[rng.pick(species), rng.below(2), 1 + rng.below(3)] for _ in range(size)]

    entries = []
    for _ in range(BATTLES):
        seed, a, b = rng.next(), warband(), warband()
        result = simulate(ruleset, seed, a, b)
        assert result.replay is not None
        entries.append(
            {
                "seed": seed,
                "a": a,
                "b": b,
                "winner": result.winner,
                "rolls": result.rolls,
                "replay_sha256": replay_digest(result.replay.to_wire()),
            }
        )
    return entries


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ruleset", default="cryptids-2026.12")
    parser.add_argument("--force", action="store_true", help="overwrite an existing corpus")
    args = parser.parse_args(argv)
    path = corpus_path(args.ruleset)
    if path.exists() and not args.force:
        parser.error(f"{path} exists; it is the contract and is not regenerated casually")
    # One battle per line, so a diff of the contract reads battle by battle.
    battles = ",\n".join(f"  {json.dumps(entry)}" for entry in build(args.ruleset))
    path.write_text(
        f'{{"ruleset": {json.dumps(args.ruleset)}, "battles": [\n{battles}\n]}}\n',
        encoding="utf-8",
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
