"""Running the service: the embedded database when needed, then one or several workers."""

import dataclasses
from collections.abc import Callable

import structlog
from aiohttp import web

from service.config import Settings
from service.games.cryptids import ENGINE_BUILD
from service.runtime.backups import archive_of
from service.runtime.embedded_db import EmbeddedPostgres
from service.runtime.supervisor import DatabaseSupervisor
from service.runtime.workers import run_worker, run_workers, shared_metrics_dir

log = structlog.get_logger("service")


def _app_factory() -> Callable[[Settings], web.Application]:
    # Imported late: with several workers, the metrics module must see the shared metrics
    # directory that `shared_metrics_dir` sets up when it is first imported.
    from service.app import create_app

    return create_app


def serve(settings: Settings) -> int:
    """Serve until SIGINT/SIGTERM; in-flight requests finish, then the pool and database stop.

    Returns the exit status: non-zero when a worker died on its own.
    """
    embedded: EmbeddedPostgres | None = None
    supervisor: DatabaseSupervisor | None = None
    if settings.database_url is None:
        archive = archive_of(settings)
        embedded = EmbeddedPostgres(settings.pgdata, archive)
        log.info(
            "embedded_database_starting",
            pgdata=str(settings.pgdata),
            wal_archive=str(archive.directory) if archive.enabled else None,
        )
        settings = dataclasses.replace(
            settings, database_url=embedded.start(), embedded_db_state=embedded.state_path
        )
        supervisor = DatabaseSupervisor(embedded, attempts=settings.embedded_db_restarts)
        supervisor.start()
    try:
        log.info(
            "listening",
            host=settings.host,
            port=settings.port,
            workers=settings.workers,
            engine=ENGINE_BUILD,
        )
        if settings.workers == 1:
            run_worker(settings, _app_factory())
            return 0
        with shared_metrics_dir():
            return run_workers(settings, _app_factory())
    finally:
        if supervisor is not None:
            supervisor.stop()
        if embedded is not None:
            embedded.release()
            log.info("embedded_database_stopped")
