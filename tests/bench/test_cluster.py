from bench.cluster import SMOKE, run


def test_cluster_benchmark_smoke_measures_every_figure_at_each_instance_count() -> None:
    rows = run(SMOKE)
    figures = [(row["figure"], row["instances"]) for row in rows]
    assert figures == [
        (figure, str(count))
        for count in SMOKE.instances
        for figure in ("simulate msgpack", "end-turn (HTTP)", "match actions")
    ]
    # Every figure answered without a failure: a failing path cannot pass for a fast one.
    assert all(float(row["median/s"]) > 0 and "errors" not in row["note"] for row in rows)
    assert [row["note"] for row in rows[:3]] == ["1.00x 1 instance"] * 3
    assert all(row["note"].endswith("x 1 instance") for row in rows)
