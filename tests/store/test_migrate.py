"""Versioned migrations (service/store/migrate.py): applied in order, once, by one process, on
any database an earlier release made; refused when edited after the fact or asked to go back."""

import asyncio
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import asyncpg
import pytest

from bench.database import as_release_0_1_0, as_release_before_0_1_0
from service.store import migrate
from service.store.migrate import Migration, MigrationError
from service.version import VERSION

REPO = Path(__file__).resolve().parents[2]
NEWEST = len(migrate.known())


async def _ledger(url: str) -> list[asyncpg.Record]:
    conn = await asyncpg.connect(url)
    try:
        return await conn.fetch("SELECT * FROM schema_migrations ORDER BY version")
    finally:
        await conn.close()


def test_the_migrations_are_numbered_from_one_without_a_gap() -> None:
    assert [m.version for m in migrate.known()] == list(range(1, NEWEST + 1))
    assert migrate.known()[0].name == "baseline"


def test_the_ledger_migration_records_the_baseline_as_release_0_1_0_recorded_its_schema() -> None:
    """0.1.0 skips its schema.sql where schema_applied holds its digest: migration 2 writes
    exactly migration 1's, so a 0.1.0 instance starts on a database this release made."""
    baseline, ledger = migrate.known()[:2]
    assert baseline.checksum in ledger.sql
    assert hashlib.sha256(baseline.sql.encode()).hexdigest() == baseline.checksum


def test_a_migration_outside_a_transaction_runs_statement_by_statement() -> None:
    migration = Migration(
        3,
        "index",
        "-- transaction: none\n"
        "DROP INDEX CONCURRENTLY IF EXISTS a_idx;\n"
        "-- why\n"
        "CREATE INDEX CONCURRENTLY a_idx\n    ON a (b);\n",
        transactional=False,
        writers_from=0,
    )
    assert migration.statements() == [
        "-- transaction: none\nDROP INDEX CONCURRENTLY IF EXISTS a_idx",
        "-- why\nCREATE INDEX CONCURRENTLY a_idx\n    ON a (b)",
    ]


async def test_an_empty_database_gets_every_migration_once_each_recorded(
    fresh_database_url: str,
) -> None:
    applied = await migrate.migrate(fresh_database_url)
    assert [a.migration.version for a in applied] == list(range(1, NEWEST + 1))
    ledger = await _ledger(fresh_database_url)
    assert [(r["version"], r["checksum"], r["release"]) for r in ledger] == [
        (m.version, m.checksum, VERSION) for m in migrate.known()
    ]
    assert await migrate.migrate(fresh_database_url) == []
    assert len(await _ledger(fresh_database_url)) == NEWEST


async def test_migrations_go_up_to_a_target_and_never_back(fresh_database_url: str) -> None:
    await migrate.migrate(fresh_database_url, target=1)
    assert [r["version"] for r in await _ledger(fresh_database_url)] == [1]
    plan = await migrate.plan(fresh_database_url)
    assert [m.version for m in plan.pending] == list(range(2, NEWEST + 1))
    await migrate.migrate(fresh_database_url)
    with pytest.raises(MigrationError, match="only go forward"):
        await migrate.migrate(fresh_database_url, target=1)
    with pytest.raises(MigrationError, match=f"knows 1 to {NEWEST}"):
        await migrate.migrate(fresh_database_url, target=NEWEST + 1)


async def test_a_database_of_release_0_1_0_is_adopted_without_replaying_its_schema(
    fresh_database_url: str,
) -> None:
    await as_release_0_1_0(fresh_database_url)
    serving = await asyncpg.connect(fresh_database_url)
    try:
        async with serving.transaction():
            # Whatever a serving 0.1.0 instance holds, the upgrade does not wait for it: the
            # baseline's statements, which take these tables' locks, are not run again.
            await serving.execute("LOCK TABLE snapshots, runs, players IN ACCESS EXCLUSIVE MODE")
            await asyncio.wait_for(migrate.migrate(fresh_database_url), timeout=10)
    finally:
        await serving.close()
    ledger = await _ledger(fresh_database_url)
    assert [r["version"] for r in ledger] == list(range(1, NEWEST + 1))
    assert ledger[0]["seconds"] == 0.0


async def test_instances_starting_together_apply_each_migration_once(
    fresh_database_url: str,
) -> None:
    results = await asyncio.gather(*(migrate.migrate(fresh_database_url) for _ in range(5)))
    applied = sorted(a.migration.version for result in results for a in result)
    assert applied == list(range(1, NEWEST + 1))
    assert len(await _ledger(fresh_database_url)) == NEWEST


async def test_a_migration_that_meets_a_held_lock_gives_way_and_is_applied_after(
    fresh_database_url: str,
) -> None:
    """A serving transaction holds a table the baseline alters: the migration gives up its
    place in that lock's queue within the lock timeout (so requests queued behind it go on)
    and is applied once the transaction ends, not deadlocked or failed."""
    await migrate.migrate(fresh_database_url)
    conn = await asyncpg.connect(fresh_database_url)
    serving = await asyncpg.connect(fresh_database_url)
    try:
        # The baseline runs again, altering its tables.
        await as_release_before_0_1_0(conn)
        async with serving.transaction():
            await serving.execute("LOCK TABLE runs IN ROW EXCLUSIVE MODE")
            applying = asyncio.create_task(migrate.migrate(fresh_database_url))
            await asyncio.sleep(3)
            assert not applying.done()
            # A request reading runs is not stuck behind the waiting migration for long.
            await asyncio.wait_for(conn.fetchval("SELECT count(*) FROM runs"), timeout=3)
        applied = await asyncio.wait_for(applying, timeout=30)
    finally:
        await serving.close()
        await conn.close()
    assert [a.migration.version for a in applied] == list(range(1, NEWEST + 1))


async def test_a_migration_edited_after_it_was_applied_stops_the_upgrade(
    fresh_database_url: str,
) -> None:
    await migrate.migrate(fresh_database_url)
    conn = await asyncpg.connect(fresh_database_url)
    try:
        await conn.execute("UPDATE schema_migrations SET checksum = 'edited' WHERE version = 2")
    finally:
        await conn.close()
    with pytest.raises(MigrationError, match="0002_ledger differs"):
        await migrate.migrate(fresh_database_url)


async def test_the_level_tells_a_database_ahead_and_one_older_code_cannot_write(
    fresh_database_url: str,
) -> None:
    await migrate.migrate(fresh_database_url)
    conn = await asyncpg.connect(fresh_database_url)
    try:
        assert await migrate.level(conn) == migrate.Level(NEWEST, 0, NEWEST)
        await conn.execute(
            "INSERT INTO schema_migrations (version, name, checksum, release, seconds)"
            " VALUES ($1, 'expand', '-', '9.0.0', 0)",
            NEWEST + 1,
        )
        expanded = await migrate.level(conn)
        assert expanded.ahead and expanded.writable
        await conn.execute(
            "INSERT INTO schema_migrations"
            " (version, name, checksum, writers_from, release, seconds)"
            " VALUES ($1, 'contract', '-', $1 - 1, '9.0.0', 0)",
            NEWEST + 2,
        )
        contracted = await migrate.level(conn)
        assert contracted.ahead and not contracted.writable
    finally:
        await conn.close()


def _cli(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "LISTEN_DATABASE_URL"}
    return subprocess.run(
        [sys.executable, "-m", "service", "migrate", *args],
        cwd=REPO,
        env={**env, "DATABASE_URL": url},
        capture_output=True,
        text=True,
        timeout=60,
    )


async def test_the_command_shows_then_applies_the_migrations(fresh_database_url: str) -> None:
    shown = await asyncio.to_thread(_cli, fresh_database_url, "--dry-run")
    assert shown.returncode == 0, shown.stderr
    assert f"database at migration 0, this release ({VERSION}) knows {NEWEST}" in shown.stdout
    assert "-- would apply 0002_ledger (in a transaction)" in shown.stdout
    assert migrate.known()[1].sql.strip() in shown.stdout
    assert not await _ledger_exists(fresh_database_url)

    first = await asyncio.to_thread(_cli, fresh_database_url, "--to", "1")
    assert first.returncode == 0, first.stderr
    assert "applied 0001_baseline (in a transaction)" in first.stdout
    rest = await asyncio.to_thread(_cli, fresh_database_url)
    assert "applied 0002_ledger" in rest.stdout and "0001" not in rest.stdout.split("\n", 1)[1]
    back = await asyncio.to_thread(_cli, fresh_database_url, "--to", "1")
    assert back.returncode == 1
    assert "migrations only go forward" in back.stderr


async def _ledger_exists(url: str) -> bool:
    conn = await asyncpg.connect(url)
    try:
        found: bool = await conn.fetchval("SELECT to_regclass('schema_migrations') IS NOT NULL")
        return found
    finally:
        await conn.close()


def test_the_built_package_carries_the_migrations(built_package: Path, tmp_path: Path) -> None:
    read = subprocess.run(
        [
            sys.executable,
            "-P",
            "-c",
            "from service.store import migrate; print(migrate.__file__);"
            " print(*(m.checksum for m in migrate.known()))",
        ],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(built_package)},
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    location, checksums = read.stdout.splitlines()
    assert Path(location).is_relative_to(built_package)
    assert checksums.split() == [m.checksum for m in migrate.known()]
