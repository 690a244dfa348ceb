"""Battles per second of the pure engine on one core: `python -m bench.engine`.

A fixed, seeded corpus of mixed-tier 5-v-5 battles, simulated with and without replay
recording; several repeats, reporting the median and the spread.
"""

import argparse
import statistics
import time
from collections.abc import Sequence

from service.games.cryptids.content import DEFAULT_RULESET, Ruleset, load_ruleset
from service.games.cryptids.engine import simulate
from service.games.cryptids.warband import Pick
from service.games.kernel.rng import SplitMix64

CORPUS_SEED = 0xC0FFEE
Battle = tuple[int, list[Pick], list[Pick]]


def corpus(ruleset: Ruleset, size: int, seed: int = CORPUS_SEED) -> list[Battle]:
    """`size` battles: each side five cryptids of any tier, ability and level, and a seed."""
    rng = SplitMix64(seed)
    species = sorted(ruleset.species)
    levels = ruleset.run.max_level

    def warband() -> list[Pick]:
        return [
            Pick(rng.pick(species), rng.below(2), 1 + rng.below(levels))
            for _ in range(ruleset.battle.board_size)
        ]

    return [(rng.next(), warband(), warband()) for _ in range(size)]


def _time(ruleset: Ruleset, battles: Sequence[Battle], record: bool) -> float:
    start = time.perf_counter()
    for seed, a, b in battles:
        simulate(ruleset, seed, a, b, record)
    return time.perf_counter() - start


def run(smoke: bool = False) -> list[dict[str, object]]:
    """One row per mode: battles, repeats, median battles/s, min and max battles/s, mean rolls."""
    ruleset = load_ruleset(DEFAULT_RULESET)
    battles = corpus(ruleset, 10 if smoke else 1000)
    repeats = 1 if smoke else 7
    rolls = statistics.mean(simulate(ruleset, s, a, b, False).rolls for s, a, b in battles)
    rows: list[dict[str, object]] = []
    for record in (True, False):
        rates = [len(battles) / _time(ruleset, battles, record) for _ in range(repeats)]
        rows.append(
            {
                "mode": "with replay" if record else "no replay",
                "battles": len(battles),
                "repeats": repeats,
                "median/s": round(statistics.median(rates)),
                "min/s": round(min(rates)),
                "max/s": round(max(rates)),
                "mean rolls": round(rolls, 1),
            }
        )
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.engine", description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="tiny corpus, one repeat")
    args = parser.parse_args(argv)
    rows = run(args.smoke)
    headers = list(rows[0])
    widths = [max(len(h), *(len(str(r[h])) for r in rows)) for h in headers]
    print("  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True)))
    for row in rows:
        print("  ".join(str(row[h]).rjust(w) for h, w in zip(headers, widths, strict=True)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
