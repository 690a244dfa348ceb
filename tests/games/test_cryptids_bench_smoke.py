"""The engine benchmark runs (tiny, untimed): its corpus and table stay working."""

from bench.engine import corpus, run
from service.games.cryptids import ENGINE_BUILD, load_ruleset


def test_bench_engine_smoke_runs_both_modes_on_both_builds() -> None:
    rows = run(smoke=True)
    builds = ["compiled", "pure"] if ENGINE_BUILD == "compiled" else ["pure"]
    modes = [(row["mode"], row["build"]) for row in rows]
    assert modes == [(mode, build) for mode in ("with replay", "no replay") for build in builds]
    assert all(row["battles"] == 10 and int(str(row["median/s"])) > 0 for row in rows)
    # Each build's ratio to the pure one, measured in the same run.
    assert [row["vs pure"] for row in rows if row["build"] == "pure"] == ["1.00x", "1.00x"]


def test_the_bench_corpus_is_fixed_by_its_seed() -> None:
    ruleset = load_ruleset()
    first = corpus(ruleset, 5)
    assert first == corpus(ruleset, 5)
    assert all(len(a) == len(b) == 5 for _, a, b in first)
