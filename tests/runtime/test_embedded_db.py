import asyncio
import os
import subprocess
import sys
from pathlib import Path

import asyncpg
import pytest

from service.runtime.embedded_db import EmbeddedDatabaseBusy, EmbeddedPostgres

KILLED_OWNER = """
import os, sys, asyncio, asyncpg
from pathlib import Path
from service.runtime.embedded_db import EmbeddedPostgres

uri = EmbeddedPostgres(Path(sys.argv[1])).start()

async def write() -> None:
    conn = await asyncpg.connect(uri)
    await conn.execute("CREATE TABLE left_behind (note text)")
    await conn.execute("INSERT INTO left_behind VALUES ('kept')")
    await conn.close()

asyncio.run(write())
os.kill(os.getpid(), 9)
"""


async def test_a_server_left_by_a_killed_process_is_adopted_and_stopped(
    tmp_path: Path, repo_root: Path
) -> None:
    pgdata = tmp_path / "pgdata"
    owner = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-c", KILLED_OWNER, str(pgdata)],
        cwd=repo_root,
        timeout=60,
    )
    assert owner.returncode == -9
    postmaster = int((pgdata / "postmaster.pid").read_text().split()[0])
    os.kill(postmaster, 0)  # still running after its owner died

    db = EmbeddedPostgres(pgdata)
    conn = await asyncpg.connect(db.start())
    assert await conn.fetchval("SELECT note FROM left_behind") == "kept"
    await conn.close()
    db.release()
    assert not (pgdata / "postmaster.pid").exists()


async def test_a_live_owner_keeps_its_server(tmp_path: Path) -> None:
    owner = EmbeddedPostgres(tmp_path / "pgdata")
    uri = owner.start()
    try:
        with pytest.raises(EmbeddedDatabaseBusy, match=str(os.getpid())):
            EmbeddedPostgres(tmp_path / "pgdata").start()
        conn = await asyncpg.connect(uri)
        assert await conn.fetchval("SELECT 1") == 1
        await conn.close()
    finally:
        owner.release()
    again = EmbeddedPostgres(tmp_path / "pgdata")
    again.start()
    again.release()
