"""Base backups, the WAL archive, and restoring them to a point in time.

The embedded server copies every finished WAL segment into the archive (`WalArchive` in
runtime/embedded_db.py); `take_base_backup` copies the whole database with pg_basebackup;
`restore` rebuilds a data directory from a base backup and the archive, up to a time or to the
end of the archive. Everything lives under one backup directory (BACKUP_DIR, by default
DATA_DIR/backups):

    <backup_dir>/wal/<segment files>            every WAL segment archived, by its own name
                                                (000000010000000000000042; *.tmp while copied)
    <backup_dir>/base/<YYYYMMDDTHHMMSSZ>/       a base backup, named by its start (UTC):
        base.tar.gz, pg_wal.tar.gz              pg_basebackup -Ft -z -X stream
        backup_manifest                         pg_basebackup's, for pg_verifybackup
        backup.json                             written last: start, end, first WAL segment
    <backup_dir>/base/.<YYYYMMDDTHHMMSSZ>.partial/   a backup being taken, never restored

A backup's time is the database server's clock, as recovery targets are.
"""

import asyncio
import contextlib
import fcntl
import json
import re
import shlex
import shutil
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import psutil

from service.config import Settings
from service.runtime.embedded_db import (
    WalArchive,
    claim,
    hand_to_server,
    postgres_bin,
    server_account,
)

BASE, WAL = "base", "wal"
NAME_FORMAT = "%Y%m%dT%H%M%SZ"
NAME = re.compile(r"^\d{8}T\d{6}Z$")
SEGMENT = re.compile(r"^[0-9A-F]{24}$")
RECORD = "backup.json"
START_WAL = re.compile(r"^START WAL LOCATION: \S+ \(file ([0-9A-F]{24})\)$", re.MULTILINE)
# Written into a restored directory for its recovery only, and taken out once it is over.
RECOVERY_SETTINGS = ("restore_command", "recovery_target_time", "recovery_target_action")
STOP_SECONDS = 60


class BackupError(RuntimeError):
    """A backup or a restore could not be done; the message says why and what to do."""


def archive_of(settings: Settings) -> WalArchive:
    """The WAL archive the embedded server keeps, from the BACKUP_* settings."""
    return WalArchive(
        settings.backups / WAL,
        settings.backup_archive_timeout_seconds,
        enabled=settings.backup_archive,
    )


@dataclass(frozen=True)
class BaseBackup:
    path: Path
    started: datetime
    finished: datetime
    start_wal: str  # the first WAL segment a restore from it needs
    size_bytes: int


def base_backups(backup_dir: Path) -> list[BaseBackup]:
    """The complete base backups, oldest first."""
    found = []
    for path in sorted((backup_dir / BASE).glob("*")):
        if not NAME.match(path.name) or not (path / RECORD).is_file():
            continue
        record = json.loads((path / RECORD).read_text())
        found.append(
            BaseBackup(
                path=path,
                started=datetime.fromisoformat(record["started"]),
                finished=datetime.fromisoformat(record["finished"]),
                start_wal=record["start_wal"],
                size_bytes=int(record["size_bytes"]),
            )
        )
    return found


def last_base_backup_time(backup_dir: Path) -> datetime | None:
    """When the newest complete base backup finished (UTC), or None when there is none."""
    backups = base_backups(backup_dir)
    return backups[-1].finished if backups else None


def last_archived_wal_time(backup_dir: Path) -> datetime | None:
    """When the newest WAL segment was archived (its file's mtime, UTC), or None."""
    newest = max(
        (p.stat().st_mtime for p in _segments(backup_dir / WAL)),
        default=None,
    )
    return None if newest is None else datetime.fromtimestamp(newest, UTC)


def _segments(wal_dir: Path) -> Iterator[Path]:
    if wal_dir.is_dir():
        yield from (p for p in wal_dir.iterdir() if SEGMENT.match(p.name))


@contextlib.contextmanager
def _exclusive(backup_dir: Path) -> Iterator[None]:
    """One backup at a time in a backup directory, so that pruning never meets a partial one
    that is still being written."""
    (backup_dir / BASE).mkdir(parents=True, exist_ok=True)
    with (backup_dir / BASE / ".lock").open("a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise BackupError(f"another backup into {backup_dir} is running") from exc
        yield


def _run(args: list[str], user: int | None = None, timeout: float | None = None) -> str:
    """Run a PostgreSQL program; its stderr becomes the error's message when it fails."""
    done = subprocess.run(
        args, capture_output=True, text=True, user=user, timeout=timeout, check=False
    )
    if done.returncode != 0:
        raise BackupError(f"{Path(args[0]).name} failed: {done.stderr.strip() or done.stdout}")
    return done.stdout


async def _server_clock(url: str) -> datetime:
    conn = await asyncpg.connect(url)
    try:
        now: datetime = await conn.fetchval("SELECT clock_timestamp()")
        return now.astimezone(UTC)
    finally:
        await conn.close()


def _start_wal(base_tar: Path) -> str:
    """The first WAL segment of a backup, from the backup_label at the head of its tar."""
    with tarfile.open(base_tar, "r:gz") as tar:
        for member in tar:
            if member.name == "backup_label":
                label = tar.extractfile(member)
                found = START_WAL.search(label.read().decode()) if label else None
                if found is None:
                    break
                return found[1]
    raise BackupError(f"{base_tar} holds no readable backup_label")


@dataclass(frozen=True)
class Pruned:
    backups: list[Path]
    segments: int


def prune(backup_dir: Path, keep: int) -> Pruned:
    """Keep the newest `keep` base backups; delete the older ones, left-over partial ones, and
    the archived WAL older than the oldest kept backup's first segment."""
    backups = base_backups(backup_dir)
    removed = [b.path for b in backups[:-keep]]
    removed += [p for p in (backup_dir / BASE).glob(".*.partial")]
    for path in removed:
        shutil.rmtree(path)
    segments = 0
    kept = backups[-keep:]
    wal_dir = backup_dir / WAL
    if kept and wal_dir.is_dir():
        before = sum(1 for _ in _segments(wal_dir))
        _run([str(postgres_bin() / "pg_archivecleanup"), str(wal_dir), kept[0].start_wal])
        segments = before - sum(1 for _ in _segments(wal_dir))
    return Pruned([p for p in removed if NAME.match(p.name)], segments)


def take_base_backup(url: str, backup_dir: Path, keep: int) -> tuple[BaseBackup, Pruned]:
    """A base backup of the server at `url` into `backup_dir`, then the retention applied.

    pg_basebackup streams the WAL written during the copy beside it (`-X stream`), so each
    backup restores on its own even without the archive; the archive carries it further.
    """
    with _exclusive(backup_dir):
        started = asyncio.run(_server_clock(url))
        name = started.strftime(NAME_FORMAT)
        final = backup_dir / BASE / name
        if final.exists():
            raise BackupError(f"{final} exists: one base backup a second at most")
        partial = backup_dir / BASE / f".{name}.partial"
        _run(
            [
                str(postgres_bin() / "pg_basebackup"),
                f"--dbname={url}",
                f"--pgdata={partial}",
                "--format=tar",
                "--gzip",
                "--wal-method=stream",
                # An immediate checkpoint: the default spread one can take minutes to start.
                "--checkpoint=fast",
                f"--label=cryptid {name}",
                "--no-password",
            ]
        )
        finished = asyncio.run(_server_clock(url))
        size = sum(p.stat().st_size for p in partial.rglob("*") if p.is_file())
        record = {
            "started": started.isoformat(),
            "finished": finished.isoformat(),
            "start_wal": _start_wal(partial / "base.tar.gz"),
            "size_bytes": size,
        }
        (partial / RECORD).write_text(json.dumps(record, indent=2) + "\n")
        partial.rename(final)
        pruned = prune(backup_dir, keep)
    return base_backups(backup_dir)[-1], pruned


@dataclass(frozen=True)
class Restored:
    backup: BaseBackup | None  # None: an unfinished restore was finished
    into: Path
    target: datetime | None
    recovered_to: datetime | None  # the last transaction replayed
    seconds: float


def choose(backup_dir: Path, target: datetime | None) -> BaseBackup:
    """The newest base backup that ended before `target` (the newest of all for None)."""
    backups = base_backups(backup_dir)
    usable = [b for b in backups if target is None or b.finished < target]
    if not usable:
        when = "" if target is None else f" that ended before {target.isoformat()}"
        raise BackupError(f"no base backup in {backup_dir / BASE}{when}")
    return usable[-1]


def _quote_setting(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _unpack(backup: BaseBackup, into: Path) -> None:
    into.mkdir(parents=True, exist_ok=True)
    into.chmod(0o700)
    for archive, where in (("base.tar.gz", into), ("pg_wal.tar.gz", into / "pg_wal")):
        where.mkdir(exist_ok=True)
        with tarfile.open(backup.path / archive, "r:gz") as tar:
            tar.extractall(where, filter="tar")
    # The live server's socket lock (its socket is in its data directory) and the package's
    # list of its users came along; either would stop the restored server or confuse its owner.
    for left in [*into.glob(".s.PGSQL.*"), into / ".handle_pids.json"]:
        left.unlink(missing_ok=True)


def _prepare(into: Path, wal_dir: Path, target: datetime | None) -> None:
    """The settings of the recovery, and recovery.signal, which starts it."""
    source = shlex.quote(str(wal_dir)).replace("%", "%%")
    settings = {"restore_command": f"cp {source}/%f %p"}
    if target is not None:
        settings["recovery_target_time"] = target.isoformat()
        settings["recovery_target_action"] = "promote"
    with (into / "postgresql.auto.conf").open("a") as conf:
        for key, value in settings.items():
            conf.write(f"{key} = {_quote_setting(value)}\n")
    (into / "recovery.signal").touch()


def _log_tail(into: Path, lines: int = 15) -> str:
    try:
        return "\n".join((into / "log").read_text(errors="replace").splitlines()[-lines:])
    except FileNotFoundError:
        return "(no log)"


def _postmaster_alive(pgdata: Path) -> bool:
    try:
        process = psutil.Process(int((pgdata / "postmaster.pid").read_text().split()[0]))
        return bool(process.status() != psutil.STATUS_ZOMBIE)
    except (FileNotFoundError, IndexError, ValueError, psutil.Error):
        return False


async def _finish_if_promoted(url: str) -> tuple[bool, datetime | None]:
    """Whether recovery is over, and then the last transaction it replayed; the recovery's
    settings are taken out once it is (ALTER SYSTEM rewrites its file without them)."""
    conn = await asyncpg.connect(url, timeout=2)
    try:
        if await conn.fetchval("SELECT pg_is_in_recovery()"):
            return False, None
        replayed: datetime | None = await conn.fetchval("SELECT pg_last_xact_replay_timestamp()")
        for key in RECOVERY_SETTINGS:
            await conn.execute(f"ALTER SYSTEM RESET {key}")
        return True, None if replayed is None else replayed.astimezone(UTC)
    finally:
        await conn.close()


async def _wait_promoted(url: str, into: Path) -> datetime | None:
    """Poll until recovery is over; then the last transaction it replayed."""
    while True:
        if not _postmaster_alive(into):
            raise BackupError(f"recovery of {into} failed:\n{_log_tail(into)}")
        with contextlib.suppress(OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
            promoted, replayed = await _finish_if_promoted(url)
            if promoted:
                return replayed
        await asyncio.sleep(0.1)


def _recover(into: Path) -> datetime | None:
    """Run the server on `into` until its recovery is over and it is promoted, then stop it.

    It listens on a socket of its own only, and does not archive: the WAL of its new timeline
    belongs to whoever runs the restored database next, into an archive of their own.
    """
    pg_ctl = str(postgres_bin() / "pg_ctl")
    account = server_account()
    user = None if account is None else account[0]
    with tempfile.TemporaryDirectory(prefix="pgrestore-") as sockets:
        hand_to_server(Path(sockets))
        options = f"-h '' -k {shlex.quote(sockets)} -c archive_mode=off"
        # Without -w: a long recovery is waited for below, where a failure is noticed.
        _run([pg_ctl, "-D", str(into), "-l", str(into / "log"), "-o", options, "start"], user)
        try:
            url = f"postgresql://postgres@/postgres?host={sockets}"
            return asyncio.run(_wait_promoted(url, into))
        finally:
            if _postmaster_alive(into):
                _run([pg_ctl, "-D", str(into), "-m", "fast", "-w", "stop"], user, STOP_SECONDS)


def restore(
    backup_dir: Path, into: Path, target: datetime | None, live_pgdata: Path, finish: bool
) -> Restored:
    """Restore into the new directory `into` the newest base backup that ended before
    `target`, replay the archive up to `target` (to its end for None) and promote; or, with
    `finish`, finish the recovery of a restore that was interrupted."""
    into = into.resolve()
    began = time.monotonic()
    holding = into.exists() and any(into.iterdir())
    backup: BaseBackup | None = None
    with claim(into):
        if finish:
            if not (into / "recovery.signal").exists():
                raise BackupError(f"{into} holds no unfinished restore (no recovery.signal)")
        elif holding and into == live_pgdata.resolve():
            raise BackupError(
                f"{into} is the service's own data directory: restore into a new directory"
            )
        elif holding:
            raise BackupError(f"{into} exists and is not empty: restore into a new directory")
        else:
            backup = choose(backup_dir, target)
            _unpack(backup, into)
            _prepare(into, backup_dir / WAL, target)
            hand_to_server(into, recursive=True)
        recovered_to = _recover(into)
    return Restored(backup, into, target, recovered_to, time.monotonic() - began)
