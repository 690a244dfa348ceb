"""`python -m service partitions list | detach --older-than AGE`, as an operator runs it."""

import argparse
import asyncio
import os
import sys
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import asyncpg
import pytest

from service.cli.partitions import parse_age
from service.store.database import create_pool
from tests.conftest import migrated


@pytest.fixture
async def database(fresh_database_url: str) -> AsyncIterator[str]:
    """A database with the schema and weekly partitions from 8 weeks back."""
    pool = await create_pool(fresh_database_url, 1, 2, 10.0)
    await migrated(pool)
    await pool.fetchval("SELECT ensure_partitions(2, 8)")
    await pool.close()
    yield fresh_database_url


async def _command(url: str, data_dir: Path, *args: str) -> tuple[int, str, str]:
    env = {**os.environ, "DATABASE_URL": url, "DATA_DIR": str(data_dir)}
    env.pop("SNAPSHOT_TTL_SECONDS", None)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "service",
        "partitions",
        *args,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def _partitions(url: str) -> set[str]:
    conn = await asyncpg.connect(url)
    try:
        rows = await conn.fetch(
            "SELECT inhrelid::regclass::text AS name FROM pg_inherits"
            " WHERE inhparent IN ('snapshots'::regclass, 'battles'::regclass)"
        )
    finally:
        await conn.close()
    return {row["name"] for row in rows}


async def test_detach_refuses_an_age_under_the_pool_time_to_live(
    database: str, tmp_path: Path
) -> None:
    before = await _partitions(database)
    code, out, err = await _command(database, tmp_path, "detach", "--older-than", "6d")
    assert code == 2
    assert "SNAPSHOT_TTL_SECONDS" in err
    assert out == ""
    assert await _partitions(database) == before


async def test_detach_lists_what_it_took_and_list_shows_what_is_left(
    database: str, tmp_path: Path
) -> None:
    code, out, err = await _command(database, tmp_path, "detach", "--older-than", "30d")
    assert code == 0, err
    lines = [line.split() for line in out.splitlines()]
    # The weeks ending 30 days ago or more (three or four of each table, by the weekday), battles
    # first, each detached (no battle names their snapshots).
    weeks = len(lines) // 2
    assert weeks in (3, 4)
    assert [line[0] for line in lines] == ["battles"] * weeks + ["snapshots"] * weeks
    assert {line[2] for line in lines} == {"detached"}
    left = await _partitions(database)
    assert not {line[1] for line in lines} & left
    code, out, _ = await _command(database, tmp_path, "list")
    assert code == 0
    listed = {line.split()[1] for line in out.splitlines()}
    assert listed == left
    assert {"snapshots_default", "battles_default"} <= listed


def test_ages_are_days_or_hours() -> None:
    assert parse_age("30d") == timedelta(days=30)
    assert parse_age("12h") == timedelta(hours=12)
    for wrong in ("30", "d", "1w", "-3d"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_age(wrong)
