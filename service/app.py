"""The aiohttp application: middleware, routes, and the database pool's lifetime."""

import asyncio
from collections.abc import AsyncIterator

import structlog
from aiohttp import web

from service.api import (
    battles,
    content,
    dashboard,
    docs,
    floor,
    health,
    leaderboard,
    matches,
    metrics,
    ops,
    players,
    runs,
)
from service.api.auth import VerifiedTokens
from service.api.endpoints import Endpoints, register
from service.api.keys import LIMITER, POOL, SETTINGS, TOKENS
from service.api.middleware import request_context
from service.api.openapi import build_document
from service.api.ratelimit import RateLimiter
from service.config import Settings
from service.store.database import apply_schema, create_pool, is_unavailable
from service.usecases import catalogue

log = structlog.get_logger("service.app")

ENDPOINT_TABLES: list[Endpoints] = [
    health.endpoints,
    docs.endpoints,
    players.endpoints,
    content.endpoints,
    runs.endpoints,
    battles.endpoints,
    leaderboard.endpoints,
    ops.endpoints,
    metrics.endpoints,
    matches.endpoints,
    dashboard.endpoints,
]
STARTUP_ATTEMPTS = 20


async def _database(app: web.Application) -> AsyncIterator[None]:
    settings = app[SETTINGS]
    if settings.database_url is None:
        raise RuntimeError("no database URL: start the embedded one or set DATABASE_URL")
    for attempt in range(1, STARTUP_ATTEMPTS + 1):
        try:
            pool = await create_pool(
                settings.database_url,
                settings.db_pool_min,
                settings.db_pool_max,
                settings.db_timeout_seconds,
            )
            await apply_schema(pool)
            break
        except Exception as exc:
            if not is_unavailable(exc) or attempt == STARTUP_ATTEMPTS:
                raise
            log.warning("database_not_ready", attempt=attempt, error=type(exc).__name__)
            await asyncio.sleep(0.5)
    app[POOL] = pool
    yield
    await pool.close()


def create_app(settings: Settings) -> web.Application:
    catalogue.load_all()
    # Metrics outermost, so that they count the answers the error middleware made.
    app = web.Application(
        middlewares=[metrics.record, request_context], client_max_size=settings.max_body_bytes
    )
    app[SETTINGS] = settings
    app[LIMITER] = RateLimiter(settings.rate_limit_per_second, settings.rate_limit_burst)
    app[TOKENS] = VerifiedTokens(settings.secret_key)
    tables = [*ENDPOINT_TABLES, floor.endpoints] if settings.bench_floor else ENDPOINT_TABLES
    app[docs.OPENAPI] = build_document(tables)
    register(app, tables)
    app.cleanup_ctx.append(_database)
    app.cleanup_ctx.append(metrics.sample_pool)
    app.cleanup_ctx.append(matches.background)
    app.on_shutdown.append(matches.close_sockets)
    return app
