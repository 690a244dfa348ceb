"""Backups and point-in-time recovery of the embedded database, drilled end to end.

The drill runs real services (`python -m service serve` on embedded PostgreSQL, archiving WAL
every second), players playing runs and a match against a bot meanwhile, a base backup taken
under that load with `python -m service backup`, and restores with `python -m service restore`,
each served afterwards by a service of its own and checked through HTTP and SQL. `pytest -s`
prints the figures given in docs/operations.md#backups-and-recovery.
"""

import asyncio
import os
import random
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import pytest

from service.runtime.backups import (
    base_backups,
    last_archived_wal_time,
    last_base_backup_time,
)
from service.runtime.embedded_db import (
    EmbeddedPostgres,
    RecoveryUnfinished,
    WalArchive,
    running_uri,
)
from tests.api.matches_helpers import assert_finished_matches_rebuild, cache_agrees_with_log
from tests.faults import Workload, lost_writes
from tests.http import Api
from tests.runtime.test_serve import _free_port, _stop, _wait_healthy

SECRETS = {
    "SECRET_KEY": "backup-drill-secret-key-of-32-bytes!",
    "OPS_TOKEN": "backup-drill-ops-token-of-32-bytes!!",
}


def _env(data_dir: Path, **more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "BACKUP_DIR")}
    env.update(
        {
            "DATA_DIR": str(data_dir),
            "LOG_FORMAT": "json",
            # Its stderr is a pipe read at the end only: a line per request would fill it.
            "LOG_LEVEL": "warning",
            "BACKUP_ARCHIVE_TIMEOUT_SECONDS": "1",
            "SWEEP_INTERVAL_SECONDS": "0.1",
            "REGISTRATIONS_PER_ADDRESS_PER_HOUR": "1000",
            "REGISTRATIONS_PER_ADDRESS_PER_DAY": "1000",
            **SECRETS,
            **more,
        }
    )
    return env


def _serve(repo_root: Path, data_dir: Path, port: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "service", "serve"],
        cwd=repo_root,
        env=_env(data_dir, PORT=str(port)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


async def _command(repo_root: Path, data_dir: Path, *args: str) -> tuple[str, float]:
    """`python -m service ARGS` for DATA_DIR; its output, and how long it took."""
    started = time.monotonic()
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "service", *args],
        cwd=repo_root,
        env=_env(data_dir),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout, time.monotonic() - started


async def _archived(pgdata: Path, wal_dir: Path) -> None:
    """Finish the current WAL segment and wait until the archive holds it."""
    uri = running_uri(pgdata)
    assert uri is not None
    conn = await asyncpg.connect(uri)
    try:
        segment = await conn.fetchval("SELECT pg_walfile_name(pg_switch_wal())")
    finally:
        await conn.close()
    for _ in range(200):
        if (wal_dir / segment).exists():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{segment} was not archived")


class BotMatch:
    """One player's Duelo de Nigromantes against a bot, played by random legal actions."""

    def __init__(self, api: Api, rng: random.Random) -> None:
        self.api, self.rng = api, rng
        self.token = ""
        self.match_id = ""

    async def create(self) -> None:
        _, self.token = await self.api.new_player("duelist")
        body = {"game": "necromancers", "seats": 2, "bots": [1]}
        created = await self.api.post("/v1/matches", body, token=self.token)
        assert created.status == 201, created.body
        self.match_id = created.body["match_id"]

    async def read(self) -> dict[str, Any]:
        answer = await self.api.get(f"/v1/matches/{self.match_id}", token=self.token)
        assert answer.status == 200, answer.body
        body: dict[str, Any] = answer.body
        return body

    async def play(self, actions: int) -> int:
        """Up to `actions` acknowledged actions of the player (fewer if the match ends)."""
        done = 0
        while done < actions:
            match = await self.read()
            if match["status"] == "finished":
                break
            if 0 not in match["to_act"]:
                await asyncio.sleep(0.05)  # the bot's turn
                continue
            body = {"version": match["version"], "action": self.rng.choice(match["legal_actions"])}
            path = f"/v1/matches/{self.match_id}/actions"
            answer = await self.api.post(path, body, token=self.token)
            if answer.status == 200:
                done += 1
            else:
                assert answer.error_code == "stale_version", answer.body
        return done


async def _battle_replays(api: Api, workload: Workload) -> dict[int, bytes]:
    replays = {}
    for battle_id, (run_id, _) in workload.battles.items():
        token = workload.runs[run_id]
        answer = await api.get(f"/v1/battles/{battle_id}/replay", token=token)
        assert answer.status == 200, answer.body
        replays[battle_id] = answer.raw
    return replays


async def _rebuilds(uri: str, match_id: str) -> bool:
    """The match's stored state is what its seed, loadouts and action log rebuild."""
    conn = await asyncpg.connect(uri)
    try:
        return await cache_agrees_with_log(conn, uuid.UUID(match_id))
    finally:
        await conn.close()


async def _held(uri: str, workload: Workload) -> tuple[int, int]:
    """How many of the workload's runs and battles the database holds."""
    conn = await asyncpg.connect(uri)
    try:
        runs = await conn.fetchval(
            "SELECT count(*) FROM runs WHERE run_id = ANY($1)",
            [uuid.UUID(r) for r in workload.runs],
        )
        battles = await conn.fetchval(
            "SELECT count(*) FROM battles WHERE battle_id = ANY($1)", list(workload.battles)
        )
        return runs, battles
    finally:
        await conn.close()


async def test_the_restore_drill(tmp_path: Path, repo_root: Path) -> None:
    live, restored = tmp_path / "live", tmp_path / "restored"
    wal_dir = live / "backups" / "wal"
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    rng = random.Random(7)
    first = _serve(repo_root, live, port)
    try:
        await asyncio.to_thread(_wait_healthy, base, first)
        async with aiohttp.ClientSession() as session:
            api = Api(session, base)
            # Before T: runs and a match against a bot, a base backup taken meanwhile.
            before = Workload(api)
            match = BotMatch(api, rng)
            await match.create()
            backup, _ = await asyncio.gather(
                _command(repo_root, live, "backup"), before.run(players=3, seconds=3.0)
            )
            actions_before = await match.play(6)
            match_at_t = await match.read()
            battles_at_t = await _battle_replays(api, before)
            assert not before.errors
            uri = running_uri(live / "pgdata")
            assert uri is not None
            conn = await asyncpg.connect(uri)
            target = await conn.fetchval("SELECT now()")
            await conn.close()
            # After T: more of the same; none of it may come back.
            after = Workload(api)
            await after.run(players=3, seconds=1.5)
            actions_after = await match.play(4)
            assert after.acknowledged and actions_after and not after.errors
            await _archived(live / "pgdata", wal_dir)

            _, restore_to_t_s = await _command(
                repo_root,
                live,
                "restore",
                "--to",
                target.isoformat(),
                "--into",
                str(restored / "pgdata"),
            )
            assert not (restored / "pgdata" / "recovery.signal").exists()
            second_port = _free_port()
            second = _serve(repo_root, restored, second_port)
            try:
                second_base = f"http://127.0.0.1:{second_port}"
                await asyncio.to_thread(_wait_healthy, second_base, second)
                back = Api(session, second_base)
                restored_uri = running_uri(restored / "pgdata")
                assert restored_uri is not None
                assert await lost_writes(restored_uri, before) == []
                assert await _held(restored_uri, after) == (0, 0)
                for battle_id, replay in battles_at_t.items():
                    token = before.runs[before.battles[battle_id][0]]
                    again = await back.get(f"/v1/battles/{battle_id}/replay", token=token)
                    assert again.raw == replay, battle_id
                match_back = await back.get(f"/v1/matches/{match.match_id}", token=match.token)
                assert match_back.body == match_at_t
                assert await _rebuilds(restored_uri, match.match_id)
                await assert_finished_matches_rebuild(restored_uri)
            finally:
                await asyncio.to_thread(_stop, second)

            # The data directory lost: everything archived comes back.
            last = Workload(api)
            await last.run(players=2, seconds=1.0)
            await match.play(2)
            match_last = await match.read()
            await _archived(live / "pgdata", wal_dir)
        await asyncio.to_thread(_stop, first)
        shutil.rmtree(live / "pgdata")
        output, restore_latest_s = await _command(
            repo_root, live, "restore", "--to", "latest", "--into", str(live / "pgdata")
        )
        assert "up to the end of the archive" in output
        first = _serve(repo_root, live, port)
        await asyncio.to_thread(_wait_healthy, base, first)
        async with aiohttp.ClientSession() as session:
            api = Api(session, base)
            match.api = api
            assert await match.read() == match_last
            assert await _rebuilds(uri, match.match_id)
            uri = running_uri(live / "pgdata")
            assert uri is not None
            for workload in (before, after, last):
                assert await lost_writes(uri, workload) == []
            await assert_finished_matches_rebuild(uri)
            # The service archives again after the restore, into the same archive.
            await _archived(live / "pgdata", wal_dir)
    finally:
        if first.poll() is None:
            await asyncio.to_thread(_stop, first)

    taken = base_backups(live / "backups")
    assert len(taken) == 1 and last_base_backup_time(live / "backups") == taken[0].finished
    assert last_archived_wal_time(live / "backups") is not None
    print(
        f"\nbackup drill: writes acknowledged before T {before.acknowledged + actions_before}"
        f" (runs and battles {before.acknowledged}, match actions {actions_before}),"
        f" after T {after.acknowledged + actions_after};"
        f" backup {taken[0].size_bytes} bytes in {backup[1]:.1f} s;"
        f" restore to T {restore_to_t_s:.1f} s, latest {restore_latest_s:.1f} s;"
        f" WAL segments archived {sum(1 for _ in wal_dir.iterdir())}"
    )


def test_the_service_refuses_a_restore_whose_recovery_has_not_finished(
    tmp_path: Path, repo_root: Path
) -> None:
    pgdata = tmp_path / "pgdata"
    pgdata.mkdir()
    (pgdata / "recovery.signal").touch()
    with pytest.raises(RecoveryUnfinished, match="restore --into"):
        EmbeddedPostgres(pgdata).start()
    served = subprocess.run(
        [sys.executable, "-m", "service", "serve"],
        cwd=repo_root,
        env=_env(tmp_path, PORT=str(_free_port())),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert served.returncode == 2
    assert f"{pgdata} is a restored database whose recovery has not finished" in served.stderr
    assert f"python -m service restore --into {pgdata}" in served.stderr


def test_restore_refuses_a_directory_that_holds_anything(tmp_path: Path, repo_root: Path) -> None:
    for into, why in (
        (tmp_path / "pgdata", "is the service's own data directory"),
        (tmp_path / "elsewhere", "exists and is not empty"),
    ):
        into.mkdir()
        (into / "PG_VERSION").write_text("18\n")
        refused = subprocess.run(
            [sys.executable, "-m", "service", "restore", "--to", "latest", "--into", str(into)],
            cwd=repo_root,
            env=_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert refused.returncode == 1
        assert f"{into} {why}: restore into a new directory" in refused.stderr
        assert (into / "PG_VERSION").read_text() == "18\n"


def _archive(archive: WalArchive, segment: Path) -> int:
    """The archive_command run as the server runs it: from the data directory, %p and %f."""
    command = archive.command().replace("%p", segment.name).replace("%f", segment.name)
    return subprocess.run(["sh", "-c", command], cwd=segment.parent, check=False).returncode


def test_the_archive_command_never_overwrites_a_different_segment(tmp_path: Path) -> None:
    archive = WalArchive(tmp_path / "wal archive", timeout_seconds=60)
    archive.directory.mkdir()
    segment = tmp_path / "000000010000000000000007"
    segment.write_bytes(b"first")
    assert _archive(archive, segment) == 0
    assert _archive(archive, segment) == 0  # the same segment again: accepted
    assert sorted(p.name for p in archive.directory.iterdir()) == [segment.name]
    segment.write_bytes(b"other")
    assert _archive(archive, segment) != 0
    assert (archive.directory / segment.name).read_bytes() == b"first"
