"""Keeps the embedded PostgreSQL up: notices when it dies and starts it again.

A thread of the process that owns the database (the only one with the right to restart it)
looks every `check_seconds` at the postmaster of the data directory. When it is gone it starts
the server again, waiting longer after each failed attempt, and logs every attempt. Its state
("up", "restarting", "failed") is written to a file beside the data directory, so that every
worker's /healthz can tell an orchestrator when the database could not be brought back.
"""

import threading
import time
from pathlib import Path

import structlog

from service.runtime.embedded_db import EmbeddedPostgres

log = structlog.get_logger("service.supervisor")

UP, RESTARTING, FAILED = "up", "restarting", "failed"


def read_state(path: Path) -> str:
    """The supervisor's last state, or "up" when it has written none."""
    try:
        return path.read_text().strip() or UP
    except FileNotFoundError:
        return UP


class DatabaseSupervisor:
    def __init__(
        self,
        database: EmbeddedPostgres,
        *,
        attempts: int,
        check_seconds: float = 1.0,
        first_backoff_seconds: float = 0.5,
        max_backoff_seconds: float = 5.0,
    ) -> None:
        self.database = database
        self.attempts = attempts
        self.check_seconds = check_seconds
        self.first_backoff_seconds = first_backoff_seconds
        self.max_backoff_seconds = max_backoff_seconds
        self.state_path = database.state_path
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="db-supervisor", daemon=True)

    def start(self) -> None:
        self._set(UP)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _set(self, state: str) -> None:
        self.state_path.write_text(state)

    def _watch(self) -> None:
        while not self._stop.wait(self.check_seconds):
            if not self.database.running():
                self._restart()

    def _restart(self) -> None:
        log.warning("embedded_database_down", pgdata=str(self.database.pgdata))
        self._set(RESTARTING)
        backoff = self.first_backoff_seconds
        for attempt in range(1, self.attempts + 1):
            started = time.monotonic()
            try:
                self.database.restart()
            except Exception as exc:
                log.warning(
                    "embedded_database_restart_failed",
                    attempt=attempt,
                    of=self.attempts,
                    error=f"{type(exc).__name__}: {exc}",
                )
                if self._stop.wait(backoff):
                    return
                backoff = min(backoff * 2, self.max_backoff_seconds)
                continue
            log.info(
                "embedded_database_restarted",
                attempt=attempt,
                seconds=round(time.monotonic() - started, 2),
            )
            self._set(UP)
            return
        log.error("embedded_database_lost", attempts=self.attempts)
        self._set(FAILED)
        # Still watched: once an operator brings the server back, the state is up again.
        while not self._stop.wait(self.check_seconds):
            if self.database.running():
                self._set(UP)
                return
