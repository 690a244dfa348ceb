"""Database faults under concurrent writes: every acknowledged write survives, runs add up, and
the service serves again without a restart. One test per fault; the figures are printed
(`pytest -s`) for docs/operations.md#reliability.
"""

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import pytest

from service.config import Settings
from service.store.database import (
    CommitUnknown,
    create_pool,
    is_unavailable,
    one_statement,
    transaction,
)
from tests.conftest import running_service
from tests.faults import FaultProxy, Workload, lost_writes, recovery_seconds
from tests.http import Api
from tests.runtime.test_serve import _free_port

PLAYERS = 6
SECONDS = 4.0


@pytest.fixture
async def proxied(
    make_settings: Any, fresh_database_url: str
) -> AsyncIterator[tuple[Api, FaultProxy, str]]:
    proxy = FaultProxy(fresh_database_url)
    await proxy.start()
    settings: Settings = make_settings(database_url=proxy.url, db_timeout_seconds=1.0)
    try:
        async with running_service(settings) as api:
            yield api, proxy, fresh_database_url
    finally:
        await proxy.close()


def _report(fault: str, workload: Workload, lost: list[str], recovered_s: float) -> None:
    print(
        f"\n{fault}: {workload.acknowledged} writes acknowledged, {len(lost)} lost,"
        f" answers {dict(sorted(workload.answers.items()))}, recovered in {recovered_s:.2f} s"
    )


async def _under_fault(
    proxied: tuple[Api, FaultProxy, str], fault: Callable[[FaultProxy], Awaitable[None]]
) -> tuple[Workload, list[str], float]:
    api, proxy, database_url = proxied
    workload = Workload(api)
    await asyncio.gather(workload.run(PLAYERS, SECONDS), fault(proxy))
    recovered = await recovery_seconds(api)
    assert workload.errors == []
    assert workload.battles, "the workload fought no battle"
    return workload, await lost_writes(database_url, workload), recovered


async def test_connections_cut_mid_transaction_lose_no_acknowledged_write(
    proxied: tuple[Api, FaultProxy, str],
) -> None:
    async def cut_repeatedly(proxy: FaultProxy) -> None:
        await asyncio.sleep(0.5)
        for _ in range(8):
            proxy.cut()
            await asyncio.sleep(0.25)

    workload, lost, recovered = await _under_fault(proxied, cut_repeatedly)
    _report("cut mid-transaction x8", workload, lost, recovered)
    assert lost == []
    assert workload.answers.get(503, 0) > 0, "the cuts reached no request"


async def test_refused_connections_are_503s_then_the_service_serves_again(
    proxied: tuple[Api, FaultProxy, str],
) -> None:
    async def drop_for_a_while(proxy: FaultProxy) -> None:
        await asyncio.sleep(0.5)
        proxy.refusing = True
        proxy.cut()
        await asyncio.sleep(1.5)
        proxy.refusing = False

    workload, lost, recovered = await _under_fault(proxied, drop_for_a_while)
    _report("connections refused for 1.5 s", workload, lost, recovered)
    assert lost == []
    assert workload.answers.get(503, 0) > 0


async def test_a_slow_database_gives_timeouts_and_no_wrong_answer(
    proxied: tuple[Api, FaultProxy, str],
) -> None:
    async def slow_for_a_while(proxy: FaultProxy) -> None:
        await asyncio.sleep(0.5)
        proxy.delay_s = 0.3
        await asyncio.sleep(2.0)
        proxy.delay_s = 0.0

    workload, lost, recovered = await _under_fault(proxied, slow_for_a_while)
    _report("0.3 s per packet for 2 s", workload, lost, recovered)
    assert lost == []


async def test_a_connection_lost_during_commit_is_reported_as_an_unknown_outcome(
    fresh_database_url: str,
) -> None:
    proxy = FaultProxy(fresh_database_url)
    await proxy.start()
    pool = await create_pool(proxy.url, 1, 2, 5.0)
    try:
        await pool.execute("CREATE TABLE notes (note text)")

        async def cut_while_committing() -> None:
            await asyncio.sleep(0.1)
            proxy.cut()

        with pytest.raises(CommitUnknown):
            async with transaction(pool) as conn:
                await conn.execute("INSERT INTO notes VALUES ('maybe')")
                # From here the COMMIT is held in the proxy until the connection is cut.
                proxy.delay_s = 1.0
                asyncio.get_running_loop().create_task(cut_while_committing())
        proxy.delay_s = 0.0
        assert await pool.fetchval("SELECT count(*) FROM notes") == 0
    finally:
        await pool.close()
        await proxy.close()


async def test_a_connection_lost_during_a_one_statement_write_is_an_unknown_outcome(
    fresh_database_url: str,
) -> None:
    """Outside a transaction the writing statement is its own commit: losing the connection
    while it runs leaves the outcome unknown; inside one, nothing was committed yet."""
    proxy = FaultProxy(fresh_database_url)
    await proxy.start()
    pool = await create_pool(proxy.url, 1, 2, 5.0)
    try:
        await pool.execute("CREATE TABLE notes (note text)")

        async def cut_soon() -> None:
            await asyncio.sleep(0.1)
            proxy.cut()

        async def write(conn: asyncpg.Connection) -> None:
            proxy.delay_s = 1.0
            asyncio.get_running_loop().create_task(cut_soon())
            await one_statement(conn, "INSERT INTO notes VALUES ('maybe') RETURNING 1")

        with pytest.raises(CommitUnknown):
            async with pool.acquire() as conn:
                await write(conn)
        proxy.delay_s = 0.0
        with pytest.raises(Exception) as raised:
            async with transaction(pool) as conn:
                await write(conn)
        assert not isinstance(raised.value, CommitUnknown) and is_unavailable(raised.value)
        proxy.delay_s = 0.0
        assert await pool.fetchval("SELECT count(*) FROM notes") == 0
    finally:
        await pool.close()
        await proxy.close()


def _serve(repo_root: Path, data_dir: Path, port: int, **env: str) -> subprocess.Popen[bytes]:
    """The service as `make serve` runs it, logging to a file (a full pipe would stall it)."""
    environment = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    environment.update({"DATA_DIR": str(data_dir), "PORT": str(port), "LOG_FORMAT": "json", **env})
    environment.update(RATE_LIMIT_PER_SECOND="10000", RATE_LIMIT_BURST="10000")
    with (data_dir / "service.log").open("ab") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "service", "serve"],
            cwd=repo_root,
            env=environment,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )


def _postmaster(data_dir: Path) -> int:
    return int((data_dir / "pgdata" / "postmaster.pid").read_text().split()[0])


@contextlib.asynccontextmanager
async def _embedded_service(
    repo_root: Path, data_dir: Path, **env: str
) -> AsyncIterator[tuple[Api, subprocess.Popen[bytes]]]:
    port = _free_port()
    process = _serve(repo_root, data_dir, port, **env)
    try:
        async with aiohttp.ClientSession() as session:
            api = Api(session, f"http://127.0.0.1:{port}")
            for _ in range(600):
                assert process.poll() is None, (data_dir / "service.log").read_text()
                with contextlib.suppress(OSError):
                    if (await api.get("/readyz")).status == 200:
                        break
                await asyncio.sleep(0.1)
            yield api, process
    finally:
        process.send_signal(signal.SIGTERM)
        await asyncio.to_thread(process.communicate, timeout=30)


async def test_a_killed_postmaster_is_restarted_by_the_supervisor_under_writes(
    tmp_path: Path, repo_root: Path
) -> None:
    async with _embedded_service(repo_root, tmp_path) as (api, process):
        workload = Workload(api)
        recovered = 0.0

        async def kill_postmaster() -> None:
            nonlocal recovered
            await asyncio.sleep(1.0)
            os.kill(_postmaster(tmp_path), signal.SIGKILL)
            recovered = await recovery_seconds(api)

        await asyncio.gather(workload.run(PLAYERS, SECONDS + 2), kill_postmaster())
        healthy = await api.get("/healthz")
        socket_dir = tmp_path / "pgdata"
        lost = await lost_writes(f"postgresql://postgres@/postgres?host={socket_dir}", workload)
    _report("postmaster SIGKILL", workload, lost, recovered)
    assert workload.errors == []
    assert lost == []
    assert healthy.status == 200
    assert process.returncode == 0
    assert not (tmp_path / "pgdata" / "postmaster.pid").exists(), "shutdown left the server"


async def test_healthz_turns_503_when_the_supervisor_cannot_bring_the_database_back(
    tmp_path: Path, repo_root: Path
) -> None:
    async with _embedded_service(repo_root, tmp_path, EMBEDDED_DB_RESTARTS="2") as (api, _):
        assert (await api.get("/healthz")).status == 200
        conf = tmp_path / "pgdata" / "postgresql.conf"
        good = conf.read_text()
        conf.write_text(good + "\nthis is not a setting\n")
        os.kill(_postmaster(tmp_path), signal.SIGKILL)
        health = None
        for _ in range(200):
            health = await api.get("/healthz")
            if health.status == 503:
                break
            await asyncio.sleep(0.1)
        ready = await api.get("/readyz")
        conf.write_text(good)
    assert health is not None and (health.status, health.error_code) == (503, "database_lost")
    assert ready.status == 503


async def test_sign_ins_and_refreshes_under_cuts_lose_no_answered_session(
    proxied: tuple[Api, FaultProxy, str],
) -> None:
    """Clients sign in with their device and refresh again and again while connections are
    cut; each retries a refused request as the docs say (a 503 or an unknown outcome: the same
    request again). Afterwards every session a client was answered still refreshes, and every
    device still signs in the one player it made."""
    api, proxy, _ = proxied
    answers: dict[int, int] = {}
    devices = [f"fault-device-{i:02d}-{uuid.uuid4().hex}" for i in range(PLAYERS)]

    async def until_answered(path: str, body: dict[str, Any]) -> dict[str, Any]:
        for _ in range(200):
            answer = await api.post(path, body)
            answers[answer.status] = answers.get(answer.status, 0) + 1
            if answer.status in (200, 201):
                return dict(answer.body)
            assert answer.status == 503, answer.body
            await asyncio.sleep(0.05)
        raise AssertionError(f"{path} never answered")

    async def client(device: str) -> tuple[str, dict[str, Any]]:
        signed = await until_answered("/v1/auth/device", {"device_id": device})
        player = signed["player_id"]
        deadline = time.monotonic() + SECONDS
        while time.monotonic() < deadline:
            body = {"refresh_token": signed["refresh_token"]}
            signed = await until_answered("/v1/auth/refresh", body)
            assert signed["player_id"] == player
        return player, signed

    async def cut_repeatedly() -> None:
        await asyncio.sleep(0.3)
        for _ in range(10):
            proxy.cut()
            await asyncio.sleep(0.3)

    results, _ = await asyncio.gather(
        asyncio.gather(*(client(d) for d in devices)), cut_repeatedly()
    )
    await recovery_seconds(api)
    print(f"\nsign-ins and refreshes under 10 cuts: answers {dict(sorted(answers.items()))}")
    assert answers.get(503, 0) > 0, "the cuts reached no request"
    for device, (player, last) in zip(devices, results, strict=True):
        again = await api.post("/v1/auth/refresh", {"refresh_token": last["refresh_token"]})
        assert again.status == 200, again.body
        me = await api.get("/v1/players/me", token=again.body["access_token"])
        assert me.body["player_id"] == player
        signed_in = await api.post("/v1/auth/device", {"device_id": device})
        assert (signed_in.status, signed_in.body["player_id"]) == (200, player)
