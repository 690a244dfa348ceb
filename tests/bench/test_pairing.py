from bench.pairing import measure


async def test_pairing_benchmark_smoke_fills_the_pool_and_measures(fresh_database_url: str) -> None:
    rows = await measure(fresh_database_url, snapshots=2_000, queries=20, players=3, turns=2)
    assert [row["figure"] for row in rows] == [
        "COPY 2,000 snapshots",
        "pairing query (20 runs)",
        "end-turn, 3 players at once",
    ]
    assert rows[2]["value"].endswith("turns/s")
