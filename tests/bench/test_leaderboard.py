from bench.leaderboard import measure


async def test_leaderboard_benchmark_smoke_times_each_read_of_both_boards_against_a_read_by_id(
    fresh_database_url: str,
) -> None:
    rows = await measure(fresh_database_url, count=2_000, calls=5)
    assert [row["figure"] for row in rows] == [
        "INSERT 2,000 players",
        "INSERT 2,000 necromancers ratings",
        "delete 20 players",
        "player by id (baseline) (5 reads)",
        "leaderboard, best 100 (5 reads)",
        "leaderboard around=me, top (5 reads)",
        "leaderboard around=me, middle (5 reads)",
        "leaderboard around=me, bottom (5 reads)",
        "necromancers board, best 100 (5 reads)",
        "necromancers board around=me, top (5 reads)",
        "necromancers board around=me, middle (5 reads)",
        "necromancers board around=me, tied (5 reads)",
        "necromancers board around=me, bottom (5 reads)",
    ]
    assert rows[3]["vs by id"] == "1.0x"
    assert all(float(row["vs by id"].rstrip("x")) > 0 for row in rows[3:])
