from bench.__main__ import SMOKE, run
from service.games.cryptids import ENGINE_BUILD


def test_benchmark_smoke_measures_every_figure_without_errors() -> None:
    rows, checked = run(SMOKE)
    figures = [(row["figure"], row["workers"], row["clients"]) for row in rows]
    engines = [row["figure"] for row in rows if row["figure"].startswith("engine")]
    builds = ["compiled", "pure"] if ENGINE_BUILD == "compiled" else ["pure"]
    assert engines == [f"engine {b}, {m}" for m in ("with replay", "no replay") for b in builds]
    for fmt in ("msgpack", "json"):
        for clients in ("1", "4"):
            assert (f"simulate {fmt}", "1", clients) in figures
            assert (f"floor {fmt}", "1", clients) in figures
        assert (f"simulate {fmt}", "2", "4") in figures
        assert (f"simulate-sessionless {fmt}", "1", "4") in figures
    assert ("end-turn (HTTP)", "1", "4") in figures
    assert ("end-turn, fitting buys", "1", "4") in figures
    assert ("end-turn, one request", "1", "4") in figures
    assert ("end-turn, one request", "2", "4") in figures
    for via in ("HTTP", "socket"):
        assert [(w, c) for f, w, c in figures if f == f"match actions ({via})"] == [
            ("1", "1"),
            ("1", "4"),
            ("2", "4"),
        ]
    (queue,) = [row for row in rows if row["figure"] == "play now (tickets matched)"]
    assert (queue["workers"], queue["clients"]) == ("1", "4")
    assert float(queue["p50 ms"]) > 0 and "time to match" in queue["note"]
    assert [row["workers"] for row in rows if row["figure"] == "peak RSS"] == ["1", "2", "2"]
    around = [row for row in rows if row["figure"].startswith("leaderboard around=me")]
    assert len(around) == 3 and all(row["note"].endswith("a player read by id") for row in around)
    measured = [row for row in rows if row["clients"]]
    # Every request answered with a success: a failing endpoint cannot pass for a fast one.
    assert all(row["note"].find("errors") < 0 and float(row["median/s"]) > 0 for row in measured)
    simulate = [row for row in measured if row["figure"].startswith("simulate")]
    assert all(row["vs engine"] and row["vs floor"] for row in simulate)
    # The engine's time inside the server, from its own histogram: a battle takes some.
    in_server = [float(row["note"].split()[1]) for row in simulate]
    assert all(row["note"].startswith("engine ") for row in simulate) and min(in_server) > 0
    assert all(row["note"].endswith("x 1 worker") for row in simulate if row["workers"] == "2")
    sessionless = [row for row in simulate if row["figure"].startswith("simulate-sessionless")]
    assert all("a session's access token costs" in row["note"] for row in sessionless)
    # Each target is checked against this run's own figures.
    assert [line[""] in ("met", "missed") for line in checked] == [True] * len(checked)
    assert sum("end-turn" in line["target"] for line in checked) == 4
    assert sum("match actions at 4 matches" in line["target"] for line in checked) == 4
    assert sum("engine + floor + 60 us" in line["target"] for line in checked) == 2
    assert sum("2 workers >= 1.8x" in line["target"] for line in checked) == 2
