"""The engine benchmark runs (tiny, untimed): its corpus and table stay working."""

from bench.engine import corpus, run
from service.games.cryptids import load_ruleset


def test_bench_engine_smoke_runs_both_modes() -> None:
    rows = run(smoke=True)
    assert [row["mode"] for row in rows] == ["with replay", "no replay"]
    assert all(row["battles"] == 10 for row in rows)


def test_the_bench_corpus_is_fixed_by_its_seed() -> None:
    ruleset = load_ruleset()
    first = corpus(ruleset, 5)
    assert first == corpus(ruleset, 5)
    assert all(len(a) == len(b) == 5 for _, a, b in first)
