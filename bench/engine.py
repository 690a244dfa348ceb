"""Battles per second of the engine on one core, both builds: `python -m bench.engine`.

A fixed, seeded corpus of mixed-tier 5-v-5 battles, simulated with and without replay
recording; several repeats, reporting the median and the spread. The installed build (compiled
where it could be built) runs in this process, the pure one in a subprocess with
CRYPTIDS_ENGINE=pure; their repeats alternate, so that noise on the machine falls on both, and
the ratio of the two is the figure that holds from one machine to another.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from service.games.cryptids import ENGINE_BUILD
from service.games.cryptids.build import SWITCH
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


class _PureWorker:
    """The pure build in a subprocess: it times one pass over the same corpus on request."""

    def __init__(self, size: int) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-m", "bench.engine", "--worker", str(size)],
            cwd=Path(__file__).resolve().parents[1],
            env=os.environ | {SWITCH: "pure"},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        build = self._line()
        if build != "pure":
            raise RuntimeError(f"the pure worker runs the {build} build")

    def _line(self) -> str:
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        if not line:
            raise RuntimeError(f"the pure worker exited with {self._process.wait()}")
        return line.strip()

    def time(self, record: bool) -> float:
        assert self._process.stdin is not None
        self._process.stdin.write(f"{int(record)}\n")
        self._process.stdin.flush()
        return float(self._line())

    def close(self) -> None:
        assert self._process.stdin is not None
        self._process.stdin.close()
        self._process.wait(timeout=60)


def _worker(size: int) -> int:
    ruleset = load_ruleset(DEFAULT_RULESET)
    battles = corpus(ruleset, size)
    print(ENGINE_BUILD, flush=True)
    for line in sys.stdin:
        print(_time(ruleset, battles, line.strip() == "1"), flush=True)
    return 0


def run(smoke: bool = False) -> list[dict[str, object]]:
    """One row per mode and build: battles, repeats, median, min and max battles/s, the
    compiled build's ratio to the pure one, mean rolls. Only the pure rows where the compiled
    build is not installed."""
    ruleset = load_ruleset(DEFAULT_RULESET)
    battles = corpus(ruleset, 10 if smoke else 1000)
    repeats = 1 if smoke else 7
    rolls = statistics.mean(simulate(ruleset, s, a, b, False).rolls for s, a, b in battles)
    builds = [ENGINE_BUILD] if ENGINE_BUILD == "pure" else [ENGINE_BUILD, "pure"]
    modes = (True, False)
    rates: dict[tuple[bool, str], list[float]] = {(m, b): [] for m in modes for b in builds}
    pure = None if ENGINE_BUILD == "pure" else _PureWorker(len(battles))
    try:
        for _ in range(repeats):
            for record in modes:
                rates[record, ENGINE_BUILD].append(len(battles) / _time(ruleset, battles, record))
                if pure is not None:
                    rates[record, "pure"].append(len(battles) / pure.time(record))
    finally:
        if pure is not None:
            pure.close()
    rows: list[dict[str, object]] = []
    for record in modes:
        pure_median = statistics.median(rates[record, "pure"])
        for build in builds:
            median = statistics.median(rates[record, build])
            rows.append(
                {
                    "mode": "with replay" if record else "no replay",
                    "build": build,
                    "battles": len(battles),
                    "repeats": repeats,
                    "median/s": round(median),
                    "min/s": round(min(rates[record, build])),
                    "max/s": round(max(rates[record, build])),
                    "vs pure": f"{median / pure_median:.2f}x",
                    "mean rolls": round(rolls, 1),
                }
            )
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.engine", description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="tiny corpus, one repeat")
    parser.add_argument("--worker", type=int, metavar="N", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker is not None:
        return _worker(args.worker)
    rows = run(args.smoke)
    headers = list(rows[0])
    widths = [max(len(h), *(len(str(r[h])) for r in rows)) for h in headers]
    print("  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True)))
    for row in rows:
        print("  ".join(str(row[h]).rjust(w) for h, w in zip(headers, widths, strict=True)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
