from bench.migrations import measure
from service.store import migrate


async def test_migrations_benchmark_smoke_upgrades_a_filled_database_beside_a_bystander(
    fresh_database_url: str,
) -> None:
    rows = await measure(fresh_database_url, players=2_000, runs=100)
    newest = len(migrate.known())
    assert [row["figure"] for row in rows] == [
        "load 2,000 players, 100 runs, 1,000 battles and snapshots",
        f"0.1.0's database to migration {newest}",
        f"an older release's database to migration {newest}",
    ]
    assert all(int(row["bystander reads"]) > 0 for row in rows[1:])
    assert all(float(row["seconds"]) > 0 for row in rows)
