"""`balance`: win rates of every build against every other, reproducible on any number of cores."""

import io
import json
from typing import Any

import pytest

from service.cli.balance import Build, Plan, builds, main, pair_seeds, play_pair
from service.games.cryptids import DEFAULT_RULESET, load_ruleset


def _table(*args: str) -> dict[str, Any]:
    out = io.StringIO()
    assert main([*args, "--json"], out) == 0
    result: dict[str, Any] = json.loads(out.getvalue())
    return result


@pytest.mark.parametrize("build", [Build("chupacabra", 0), Build("mothman", 0)])
def test_a_mirror_match_favours_neither_seat_over_10000_battles(build: Build) -> None:
    # The same warband on both sides: side A's score (a win 1, a draw 1/2) stays in 50 +- 5 %.
    # The seeds are fixed, so this is a figure, not a coin toss. (A warband with no dice in it,
    # such as every_roll Krakens, is decided by the seat tie-break alone: see the diagonal.)
    plan = Plan(DEFAULT_RULESET, level=1, size=5, battles=10_000, seed=2026)
    score = play_pair(plan, build, build)
    assert 0.45 <= score.half_points / (2 * plan.battles) <= 0.55


def test_a_small_table_has_its_shape_and_is_the_same_on_one_core_or_two() -> None:
    args = ("-n", "4", "--tiers", "1", "--seed", "7")
    one, two = _table(*args, "--workers", "1"), _table(*args, "--workers", "2")
    assert one == two == _table(*args, "--workers", "2")
    ruleset = load_ruleset()
    tier_one = [b.label for b in builds(ruleset) if ruleset.species[b.species].tier == 1]
    assert [e["build"] for e in one["builds"]] == tier_one
    n = len(tier_one)
    win = one["win_rate"]
    assert len(win) == n and all(len(row) == n for row in win)
    for i in range(n):
        # Every pair is played once, half with each build as side A: the halves add up to 1.
        assert all(win[i][j] + win[j][i] == pytest.approx(1) for j in range(n) if j != i)
        mean = sum(win[i][j] for j in range(n) if j != i) / (n - 1)
        assert one["builds"][i]["mean"] == pytest.approx(mean)
    assert {one["ruleset"], one["battles_per_pair"], one["size"]} == {DEFAULT_RULESET, 4, 5}


def test_a_cell_does_not_depend_on_the_other_builds_in_the_table() -> None:
    full = _table("-n", "6", "--tiers", "1", "--workers", "1")
    pair = _table("-n", "6", "--species", "chupacabra,trauco", "--workers", "1")
    labels = [e["build"] for e in full["builds"]]
    i, j = labels.index("chupacabra:0"), labels.index("trauco:0")
    small = [e["build"] for e in pair["builds"]]
    assert (
        pair["win_rate"][small.index("chupacabra:0")][small.index("trauco:0")]
        == (full["win_rate"][i][j])
    )


def test_another_seed_gives_other_battles() -> None:
    plan = Plan(DEFAULT_RULESET, level=1, size=5, battles=8, seed=1)
    x, y = Build("chupacabra", 0), Build("trauco", 0)
    assert pair_seeds(plan, x, y) == pair_seeds(plan, y, x)
    other = Plan(DEFAULT_RULESET, level=1, size=5, battles=8, seed=2)
    assert set(pair_seeds(plan, x, y)).isdisjoint(pair_seeds(other, x, y))


def test_the_text_table_has_a_row_per_build_and_names_the_extremes() -> None:
    out = io.StringIO()
    assert main(["-n", "2", "--tiers", "2", "--workers", "1"], out) == 0
    lines = out.getvalue().splitlines()
    ruleset = load_ruleset()
    tier_two = [b for b in builds(ruleset) if ruleset.species[b.species].tier == 2]
    assert len(lines) == 3 + len(tier_two) + 1
    assert [line.split()[1] for line in lines[3:-1]] == [b.label for b in tier_two]
    assert lines[-1].startswith("weakest: ")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-n", "3"], "--battles must be even"),
        (["--level", "4"], "--level must be in 1..3"),
        (["--tiers", "7"], "--tiers must be"),
        (["--species", "nessie"], "unknown species 'nessie'"),
        (["--ruleset", "cryptids-1999"], "unknown ruleset"),
    ],
)
def test_bad_arguments_exit_2_and_say_why(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args, io.StringIO()) == 2
    assert message in capsys.readouterr().err


def test_the_command_line_knows_balance() -> None:
    from service.__main__ import main as service_main

    assert service_main(["balance", "-n", "2", "--species", "trauco", "--workers", "1"]) == 0
