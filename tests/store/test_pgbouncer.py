"""The service behind PgBouncer in transaction pooling mode (Debian's pgbouncer, started here).

PgBouncer before 1.21 cannot carry prepared statements across transactions, so the pool runs
with DB_STATEMENT_CACHE_SIZE=0; a transaction pooler cannot hold a session's LISTEN either, so
LISTEN_DATABASE_URL points at PostgreSQL itself while NOTIFY goes through PgBouncer.
"""

import asyncio
import shutil
import subprocess
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.api.matches_helpers import act, new_players, read, start_match
from tests.api.runs_helpers import spend_gold
from tests.conftest import running_service
from tests.faults import FaultProxy
from tests.http import Api
from tests.runtime.test_serve import _free_port

PGBOUNCER = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"


@pytest.fixture
def bouncer_dir() -> Iterator[Path]:
    # PgBouncer refuses to run as root, and its user must read its files.
    directory = Path(tempfile.mkdtemp(prefix="pgbouncer-"))
    directory.chmod(0o777)
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
async def through_pgbouncer(
    make_settings: Any, fresh_database_url: str, bouncer_dir: Path
) -> AsyncIterator[tuple[Api, subprocess.Popen[bytes]]]:
    # PostgreSQL listens on a unix socket in a private directory: a local TCP proxy lets
    # PgBouncer (another user) reach it.
    direct = FaultProxy(fresh_database_url)
    await direct.start()
    host, port = direct.url.removeprefix("postgresql://postgres@").split("/")[0].split(":")
    bouncer_port = _free_port()
    process = _start_pgbouncer(bouncer_dir, host, port, bouncer_port)
    try:
        await _wait_listening(bouncer_port, process)
        database = direct.database
        settings = make_settings(
            database_url=f"postgresql://postgres@127.0.0.1:{bouncer_port}/{database}",
            listen_database_url=direct.url,
            db_statement_cache_size=0,
        )
        async with running_service(settings) as api:
            yield api, process
    finally:
        process.terminate()
        await asyncio.to_thread(process.communicate, timeout=10)
        await direct.close()


def _start_pgbouncer(
    bouncer_dir: Path, host: str, port: str, bouncer_port: int
) -> subprocess.Popen[bytes]:
    (bouncer_dir / "users.txt").write_text('"postgres" ""\n')
    (bouncer_dir / "pgbouncer.ini").write_text(
        f"""
[databases]
* = host={host} port={port}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {bouncer_port}
unix_socket_dir =
auth_type = trust
auth_file = {bouncer_dir}/users.txt
pool_mode = transaction
default_pool_size = 5
ignore_startup_parameters = extra_float_digits
logfile = {bouncer_dir}/pgbouncer.log
"""
    )
    for file in bouncer_dir.iterdir():
        file.chmod(0o666)
    process = subprocess.Popen(
        [PGBOUNCER, "-u", "nobody", str(bouncer_dir / "pgbouncer.ini")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    return process


async def _wait_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    for _ in range(100):
        assert process.poll() is None, process.stderr.read() if process.stderr else b""
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.05)
            continue
        writer.close()
        return
    raise AssertionError("pgbouncer did not start")


async def test_a_run_and_a_match_play_through_pgbouncer_in_transaction_mode(
    through_pgbouncer: tuple[Api, subprocess.Popen[bytes]], bouncer_dir: Path
) -> None:
    api, _ = through_pgbouncer
    _, token = await api.new_player("bounced")
    run = (await api.post("/v1/runs", {}, token=token)).body
    for round_ in (1, 2, 3):
        run = await spend_gold(api, token, run)
        turn = await api.post(f"/v1/runs/{run['run_id']}/end-turn", {"round": round_}, token=token)
        assert turn.status == 200, turn.body
        run = (await api.get(f"/v1/runs/{run['run_id']}", token=token)).body
    assert run["round"] == 4
    replay = await api.get(f"/v1/battles/{turn.body['battle_id']}/replay", token=token)
    assert replay.status == 200

    a, b = await new_players(api, 2)
    match_id = await start_match(api, [a, b])
    waiting = (await read(api, a, match_id))["to_act"][0]
    watcher = [a, b][1 - waiting]
    after = (await api.get(f"/v1/matches/{match_id}/events", token=watcher)).body["last_seq"]
    # A long-poll woken by the NOTIFY that the action's transaction sent through PgBouncer.
    poll = asyncio.create_task(
        api.get(f"/v1/matches/{match_id}/events?after={after}&wait=10", token=watcher)
    )
    await asyncio.sleep(0.2)
    mover = [a, b][waiting]
    mine = await read(api, mover, match_id)
    moved = await act(api, mover, match_id, mine["version"], mine["legal_actions"][0])
    assert moved.status == 200, moved.body
    woken = await asyncio.wait_for(poll, 5)
    assert woken.status == 200 and woken.body["events"]
    assert "login attempt" in (bouncer_dir / "pgbouncer.log").read_text()
