from bench.leaderboard import measure


async def test_leaderboard_benchmark_smoke_times_each_read_against_a_read_by_id(
    fresh_database_url: str,
) -> None:
    rows = await measure(fresh_database_url, count=2_000, calls=5)
    assert [row["figure"] for row in rows] == [
        "INSERT 2,000 players",
        "player by id (baseline) (5 reads)",
        "leaderboard, best 100 (5 reads)",
        "leaderboard around=me, top (5 reads)",
        "leaderboard around=me, middle (5 reads)",
        "leaderboard around=me, bottom (5 reads)",
    ]
    assert rows[1]["vs by id"] == "1.0x"
    assert all(float(row["vs by id"].rstrip("x")) > 0 for row in rows[1:])
