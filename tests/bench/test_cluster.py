from bench.cluster import SMOKE, run


def test_cluster_benchmark_smoke_measures_every_figure_at_each_instance_count() -> None:
    rows = run(SMOKE)
    figures = [(row["figure"], row["instances"]) for row in rows]
    assert figures == [
        ("simulate msgpack", "1"),
        ("simulate msgpack, no nginx", "1"),
        ("end-turn, fitting buys", "1"),
        ("match actions", "1"),
        ("simulate msgpack", "2"),
        ("end-turn, fitting buys", "2"),
        ("match actions", "2"),
    ]
    # Every figure answered without a failure: a failing path cannot pass for a fast one.
    assert all(float(row["median/s"]) > 0 and "errors" not in row["note"] for row in rows)
    notes = [row["note"] for row in rows]
    assert notes[0] == notes[2] == notes[3] == "1.00x 1 instance"
    assert notes[1].startswith("with nginx: ")
    assert all(note.endswith("x 1 instance") for note in notes[4:])
