"""`balance [-n N] [--level L] [--size S] [--tiers T,..] [--species S,..] [--all] [--json]`.

Also `--ruleset ID`, `--seed S` and `--workers W` (default: every core).

Win rates of every build (a species with one of its two abilities) against every other, at
equal cost and level: each warband is `size` copies of one build at level `level`. Every cryptid
is bought at the shop's one price (`buy_cost`) and a level-L cryptid is `merge_copies`^(L-1)
bought copies, so warbands of the same size and level cost the same gold whatever the species.

Each pair of builds fights N battles, half with each build as side A, so that the seat's
tie-break (side A first on odd rolls) does not count for either. A draw counts half a win.
The diagonal is the mirror match: the warband against itself, and the figure is side A's score,
a check that neither seat is favoured. A build's mean is over the other builds (mirror left out).

Seeds come from `--seed` one-way per pair of builds, so the table is the same on any number of
workers, and a cell does not depend on which other builds are in the table.
"""

import argparse
import json
import multiprocessing
import os
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import TextIO

from typing_extensions import TypedDict

from service.games.cryptids import (
    DEFAULT_RULESET,
    Ruleset,
    UnknownRulesetError,
    load_ruleset,
    simulate,
)
from service.games.cryptids.compiled import compiled
from service.games.kernel.rng import SplitMix64, one_way_seed

DEFAULT_BATTLES = 200
DEFAULT_SEED = 2026


@dataclass(frozen=True, slots=True)
class Build:
    species: str
    ability: int

    @property
    def label(self) -> str:
        return f"{self.species}:{self.ability}"


@dataclass(frozen=True, slots=True)
class Plan:
    ruleset: str
    level: int
    size: int
    battles: int  # per pair of builds
    seed: int


@dataclass(frozen=True, slots=True)
class Score:
    """What one pair's battles gave the first build: half-points (win 2, draw 1) and draws."""

    half_points: int
    draws: int


class Entry(TypedDict):
    build: str
    mean: float
    """mean win rate against the other builds"""


class Table(TypedDict):
    ruleset: str
    level: int
    size: int
    battles_per_pair: int
    seed: int
    builds: list[Entry]
    win_rate: list[list[float]]
    """[i][j]: build i's score against build j (win 1, draw 1/2); [i][i]: side A's in the mirror"""
    draw_rate: list[list[float]]


def builds(ruleset: Ruleset, everything: bool = False) -> list[Build]:
    """Every (species, ability) in (tier, id) order; without `everything`, only those that can
    damage the other side (the others cannot win alone, and only draw among themselves)."""
    specs = compiled(ruleset).species
    return [
        Build(s.id, ability)
        for s in sorted(ruleset.species.values(), key=lambda s: (s.tier, s.id))
        for ability in (0, 1)
        if everything or specs[(s.id, ability, 1)].harmful
    ]


def pair_seeds(plan: Plan, x: Build, y: Build) -> list[int]:
    """The battle seeds of a pair, from the plan's seed one-way and the pair's labels in order."""
    first, second = sorted((x.label, y.label))
    rng = SplitMix64(one_way_seed(plan.seed, f"balance:{first}:{second}".encode()))
    return [rng.next() for _ in range(plan.battles)]


def play_pair(plan: Plan, x: Build, y: Build) -> Score:
    """N battles of x against y; x is side A in the even-numbered ones (all of them if x is y)."""
    ruleset = load_ruleset(plan.ruleset)
    wx = [(x.species, x.ability, plan.level)] * plan.size
    wy = [(y.species, y.ability, plan.level)] * plan.size
    half_points = draws = 0
    for i, seed in enumerate(pair_seeds(plan, x, y)):
        x_is_a = i % 2 == 0 or x == y
        result = simulate(ruleset, seed, wx if x_is_a else wy, wy if x_is_a else wx, record=False)
        if result.winner == "draw":
            half_points += 1
            draws += 1
        elif (result.winner == "a") == x_is_a:
            half_points += 2
    return Score(half_points, draws)


def _play(job: tuple[Plan, Build, Build]) -> Score:
    return play_pair(*job)


def table(plan: Plan, entries: Sequence[Build], workers: int | None = None) -> Table:
    """Every pair of `entries` (each once: the other half of the table is its complement)."""
    pairs = [(i, j) for i in range(len(entries)) for j in range(i, len(entries))]
    jobs = [(plan, entries[i], entries[j]) for i, j in pairs]
    if workers == 1:
        scores = [_play(job) for job in jobs]
    else:
        # Spawned, not forked: a fork would copy the caller's threads' locks (a test runner's,
        # a server's) into the workers; spawning costs one import of the engine per worker.
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            # Pairs differ a lot in length (a stalemate ends at once); small chunks balance them.
            scores = list(pool.map(_play, jobs, chunksize=4))
    n = len(entries)
    win = [[0.0] * n for _ in range(n)]
    drawn = [[0.0] * n for _ in range(n)]
    for (i, j), score in zip(pairs, scores, strict=True):
        rate = score.half_points / (2 * plan.battles)
        win[i][j] = rate
        win[j][i] = 1 - rate if i != j else rate
        drawn[i][j] = drawn[j][i] = score.draws / plan.battles
    return {
        "ruleset": plan.ruleset,
        "level": plan.level,
        "size": plan.size,
        "battles_per_pair": plan.battles,
        "seed": plan.seed,
        "builds": [
            {
                "build": b.label,
                "mean": sum(win[i][j] for j in range(n) if j != i) / (n - 1) if n > 1 else 0.5,
            }
            for i, b in enumerate(entries)
        ],
        "win_rate": win,
        "draw_rate": drawn,
    }


def render(result: Table) -> str:
    """The table as text: one row per build, percentages, columns numbered like the rows."""
    entries = result["builds"]
    width = max(len(e["build"]) for e in entries)
    lines = [
        f"{result['ruleset']}: {len(entries)} builds, {result['size']} cryptids at level "
        f"{result['level']} a side, {result['battles_per_pair']} battles per pair, seed "
        f"{result['seed']}.",
        "Row's win rate (%) against column; a draw counts half; diagonal: side A in the mirror.",
        f"{'':>3} {'build':<{width}} {'mean':>5}  "
        + " ".join(f"{j + 1:>3}" for j in range(len(entries))),
    ]
    for i, (entry, row) in enumerate(zip(entries, result["win_rate"], strict=True)):
        cells = " ".join(f"{round(100 * rate):>3}" for rate in row)
        lines.append(f"{i + 1:>3} {entry['build']:<{width}} {100 * entry['mean']:>5.1f}  {cells}")
    ranked = sorted(entries, key=lambda e: e["mean"])
    lines.append(
        "weakest: "
        + ", ".join(f"{e['build']} {100 * e['mean']:.1f}" for e in ranked[:3])
        + "; strongest: "
        + ", ".join(f"{e['build']} {100 * e['mean']:.1f}" for e in reversed(ranked[-3:]))
    )
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m service balance",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-n", "--battles", type=int, default=DEFAULT_BATTLES, help="per pair")
    parser.add_argument("--level", type=int, default=1, help="level of every cryptid")
    parser.add_argument("--size", type=int, help="cryptids a side (default: the board size)")
    parser.add_argument("--ruleset", default=DEFAULT_RULESET, help="ruleset id")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="0..2^64-1")
    parser.add_argument("--workers", type=int, help="processes (default: every core)")
    parser.add_argument("--species", help="comma-separated species ids (default: all)")
    parser.add_argument("--tiers", help="comma-separated tiers, e.g. 3 or 1,2 (default: all)")
    parser.add_argument(
        "--all", action="store_true", help="also the builds that cannot damage alone"
    )
    parser.add_argument("--json", action="store_true", help="print the table as JSON")
    return parser


def main(argv: list[str], out: TextIO | None = None) -> int:
    """Run the command; argv is what follows `balance`. Returns the exit status."""
    stdout = out if out is not None else sys.stdout
    args = _parser().parse_args(argv)
    try:
        ruleset = load_ruleset(args.ruleset)
    except UnknownRulesetError as exc:
        print(f"balance: {exc}", file=sys.stderr)
        return 2
    size = ruleset.battle.board_size if args.size is None else args.size
    problems = [
        f"{name} must be in {low}..{high}"
        for name, value, low, high in (
            ("--battles", args.battles, 2, 10**9),
            ("--level", args.level, 1, ruleset.run.max_level),
            ("--size", size, 1, ruleset.battle.board_size),
            ("--seed", args.seed, 0, 2**64 - 1),
            ("--workers", 1 if args.workers is None else args.workers, 1, 1024),
        )
        if not low <= value <= high
    ]
    entries = builds(ruleset, args.all)
    if args.species:
        wanted = args.species.split(",")
        problems += [f"unknown species {s!r}" for s in wanted if s not in ruleset.species]
        entries = [b for b in entries if b.species in wanted]
    if args.battles % 2:
        problems.append("--battles must be even (half the battles with each build as side A)")
    if args.tiers:
        try:
            tiers = {int(t) for t in args.tiers.split(",")}
        except ValueError:
            tiers = set()
        if not tiers or not tiers <= set(range(1, 7)):
            problems.append("--tiers must be a comma-separated list of 1..6")
        entries = [b for b in entries if ruleset.species[b.species].tier in tiers]
    if problems:
        print(f"balance: {'; '.join(problems)}", file=sys.stderr)
        return 2
    if not entries:
        print("balance: no build to compare", file=sys.stderr)
        return 2
    plan = Plan(ruleset.id, args.level, size, args.battles, args.seed)
    result = table(plan, entries, args.workers or os.cpu_count())
    if args.json:
        json.dump(result, stdout)
        stdout.write("\n")
    else:
        print(render(result), file=stdout)
    return 0
