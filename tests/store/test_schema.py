"""schema.sql at the top of the tree is the one schema: the package applies that file, byte for
byte, whether it runs from the source tree or as built (where setup.py copies it in)."""

import asyncio
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import asyncpg

from service.store import database

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "schema.sql"
# Run in the built package's place: the schema the loading code reads, as raw bytes.
READ_SCHEMA = (
    "import sys; from service.store import database;"
    " sys.stdout.write(database.__file__ + '\\n'); sys.stdout.flush();"
    " sys.stdout.buffer.write(database.schema().encode())"
)


def test_the_source_tree_applies_the_top_level_schema() -> None:
    assert database.schema().encode() == SCHEMA.read_bytes()


def test_the_built_package_applies_the_top_level_schema(
    built_package: Path, tmp_path: Path
) -> None:
    built = built_package
    assert (built / "service/store/schema.sql").read_bytes() == SCHEMA.read_bytes()

    read = subprocess.run(
        [sys.executable, "-P", "-c", READ_SCHEMA],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(built)},
        check=True,
        capture_output=True,
        timeout=60,
    )
    location, schema = read.stdout.split(b"\n", 1)
    assert Path(location.decode()).is_relative_to(built)
    assert schema == SCHEMA.read_bytes()


async def _waiting_for(admin: asyncpg.Connection, table: str) -> None:
    """Until some backend waits for a lock on `table`."""
    for _ in range(500):
        if await admin.fetchval(
            "SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = $1::regclass", table
        ):
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"nobody waited for {table}")


async def test_a_schema_aborted_by_a_deadlock_with_a_serving_process_is_applied_again(
    fresh_database_url: str,
) -> None:
    pool = await database.create_pool(fresh_database_url, 1, 2, 60.0)
    serving = await asyncpg.connect(fresh_database_url)
    try:
        await database.apply_schema(pool)
        # As a release with a new schema: the text applied is not the one recorded.
        await pool.execute("DELETE FROM schema_applied")
        # A serving process writes snapshots, then reads runs; the schema locks runs early (its
        # ALTER) and snapshots late (its trigger): each waits for the other, and PostgreSQL
        # aborts the one that waited first, the schema's transaction.
        async with serving.transaction():
            await serving.execute("LOCK TABLE snapshots IN ROW EXCLUSIVE MODE")
            applied = asyncio.create_task(database.apply_schema(pool))
            await _waiting_for(serving, "snapshots")
            await serving.fetchval("SELECT count(*) FROM runs")
        await asyncio.wait_for(applied, timeout=30)
    finally:
        await serving.close()
        await pool.close()


async def test_a_database_with_this_schema_already_is_started_on_without_a_lock(
    fresh_database_url: str,
) -> None:
    """A restart or a second worker skips the statements, and the table locks they take."""
    pool = await database.create_pool(fresh_database_url, 1, 2, 60.0)
    serving = await asyncpg.connect(fresh_database_url)
    try:
        await database.apply_schema(pool)
        digests = await pool.fetch("SELECT digest FROM schema_applied")
        assert [r["digest"] for r in digests] == [hashlib.sha256(SCHEMA.read_bytes()).hexdigest()]
        async with serving.transaction():
            # Whatever a serving process holds, the next start does not wait for it.
            await serving.execute("LOCK TABLE snapshots, runs, players IN ACCESS EXCLUSIVE MODE")
            await asyncio.wait_for(database.apply_schema(pool), timeout=5)
    finally:
        await serving.close()
        await pool.close()
