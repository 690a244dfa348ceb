"""schema.sql is the readable picture of the schema at the newest migration: a database made
from it and one made by the migrations dump the same schema (`pg_dump --schema-only`)."""

import asyncio
import re
import subprocess
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from service.runtime.embedded_db import postgres_bin
from service.store import migrate
from tests.conftest import make_url

SCHEMA = Path(__file__).resolve().parents[2] / "schema.sql"
# The weeks' partitions are made for the weeks around today: both databases have the same ones
# only when made in one UTC week, so they are left out (the DEFAULT partitions stay).
DATED_PARTITIONS = ("public.snapshots_p[0-9]*", "public.battles_p[0-9]*")
# Lines that say nothing of the schema: comments, session settings, and the random key that
# recent pg_dump versions write around the dump.
NOISE = re.compile(r"^(--|SET |SELECT pg_catalog\.set_config|\\restrict |\\unrestrict |\s*$)")


def _dump(url: str) -> list[str]:
    excluded = [option for table in DATED_PARTITIONS for option in ("-T", table)]
    dumped = subprocess.run(
        [
            str(postgres_bin() / "pg_dump"),
            "--schema-only",
            "--no-owner",
            "--no-privileges",
            *excluded,
            url,
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return [line for line in dumped.stdout.splitlines() if not NOISE.match(line)]


@pytest.fixture
async def two_databases(fresh_database_url: str) -> AsyncIterator[tuple[str, str]]:
    name = f"t_{uuid.uuid4().hex}"
    admin = await asyncpg.connect(fresh_database_url)
    await admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield fresh_database_url, make_url(fresh_database_url, name)
    finally:
        await admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        await admin.close()


async def test_schema_sql_pictures_exactly_the_schema_the_migrations_make(
    two_databases: tuple[str, str],
) -> None:
    migrated, pictured = two_databases
    await migrate.migrate(migrated)
    conn = await asyncpg.connect(pictured)
    try:
        await conn.execute(SCHEMA.read_text())
    finally:
        await conn.close()
    by_migrations, by_picture = await asyncio.gather(
        asyncio.to_thread(_dump, migrated), asyncio.to_thread(_dump, pictured)
    )
    assert len(by_migrations) > 500
    assert by_picture == by_migrations
