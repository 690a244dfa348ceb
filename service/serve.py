"""Running the service: the embedded database when needed, then the HTTP server."""

import dataclasses

import structlog
from aiohttp import web

from service.app import create_app
from service.config import Settings
from service.embedded_db import EmbeddedPostgres

log = structlog.get_logger("service")


def serve(settings: Settings) -> None:
    """Serve until SIGINT/SIGTERM; in-flight requests finish, then the pool and database stop."""
    embedded: EmbeddedPostgres | None = None
    if settings.database_url is None:
        embedded = EmbeddedPostgres(settings.pgdata)
        log.info("embedded_database_starting", pgdata=str(settings.pgdata))
        settings = dataclasses.replace(settings, database_url=embedded.start())
    try:
        log.info("listening", host=settings.host, port=settings.port)
        web.run_app(
            create_app(settings),
            host=settings.host,
            port=settings.port,
            access_log=None,
            print=None,
            shutdown_timeout=settings.shutdown_timeout_seconds,
        )
    finally:
        if embedded is not None:
            embedded.release()
            log.info("embedded_database_stopped")
