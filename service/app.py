"""The aiohttp application: middleware, routes, and the lifetime of everything it holds.

Every resource is opened and closed by a context in `cleanup_ctx`, in the order it needs the
others: the database pool first, then what uses it (pool gauges, the push hub's LISTEN
connection, the sweeper, the partition keeper), which stop in the reverse order.
"""

import asyncio
import time
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from typing import Any

import structlog
from aiohttp import web

from service.api import (
    address,
    battles,
    content,
    dashboard,
    deletion,
    docs,
    floor,
    health,
    leaderboard,
    match_socket,
    matches,
    matchmaking,
    metrics,
    ops,
    play,
    players,
    runs,
    server,
    sessions,
    watch,
)
from service.api.auth import KnownPlayers, Revocations, VerifiedTokens
from service.api.endpoints import Endpoints, register
from service.api.keys import (
    KNOWN_PLAYERS,
    LIMITER,
    MATCH_CACHE,
    MATCH_FEEDS,
    MATCH_HUB,
    MATCH_SOCKETS,
    POOL,
    REVOCATIONS,
    SCHEMA,
    SETTINGS,
    SHARED_LIMITS,
    TOKENS,
)
from service.api.middleware import request_context, tag_instance
from service.api.open_sockets import OpenSockets
from service.api.openapi import build_document
from service.api.ratelimit import RateLimiter, SharedLimits, keep_shared
from service.api.read_only import refuse_writes
from service.config import Settings
from service.runtime.metrics import sample_pool
from service.store.database import create_pool, is_unavailable
from service.store.notify import Hub, listen_forever
from service.store.partitions import keep_ahead
from service.usecases import catalogue, game_catalogues, game_ratings, schema_level
from service.usecases import sessions as session_usecases
from service.usecases.idle_runs import run_idle_sweeper
from service.usecases.matches import answers, lobby
from service.usecases.matches.cache import MatchCache
from service.usecases.matches.feed import Feeds
from service.usecases.matches.sweeper import Retention, run_sweeper
from service.usecases.matchmaking import run_matcher
from service.usecases.periodic import every
from service.usecases.schema_level import SchemaWatch

log = structlog.get_logger("service.app")

ENDPOINT_TABLES: list[Endpoints] = [
    health.endpoints,
    docs.endpoints,
    players.endpoints,
    deletion.endpoints,
    sessions.endpoints,
    content.endpoints,
    runs.endpoints,
    battles.endpoints,
    leaderboard.endpoints,
    ops.endpoints,
    metrics.endpoints,
    matches.endpoints,
    matchmaking.endpoints,
    match_socket.endpoints,
    dashboard.endpoints,
    watch.endpoints,
    play.endpoints,
]
STARTUP_ATTEMPTS = 20
POOL_SAMPLE_SECONDS = 1.0


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
                settings.db_statement_cache_size,
            )
            level = await schema_level.prepare(
                pool,
                settings.listen_database_url or settings.database_url,
                settings.migrate_on_start,
                settings.migration_wait_seconds,
            )
            await game_ratings.start_season(pool, settings.season)
            break
        except Exception as exc:
            if not is_unavailable(exc) or attempt == STARTUP_ATTEMPTS:
                raise
            log.warning("database_not_ready", attempt=attempt, error=type(exc).__name__)
            await asyncio.sleep(0.5)
    app[POOL] = pool
    app[SCHEMA] = SchemaWatch(level)
    yield
    await pool.close()


@asynccontextmanager
async def _running(
    work: Coroutine[Any, Any, None], writer_of: web.Application | None = None
) -> AsyncIterator[None]:
    """A task for the app's lifetime, cancelled when the app stops; a task that writes (given
    its app) is also cancelled when the database's migrations need newer code to write."""
    task = asyncio.create_task(work)
    if writer_of is not None:
        writer_of[SCHEMA].on_unwritable(task.cancel)
    try:
        yield
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def _pool_gauges(app: web.Application) -> AsyncIterator[None]:
    async def loop() -> None:
        while True:
            sample_pool(app[POOL])
            await asyncio.sleep(POOL_SAMPLE_SECONDS)

    async with _running(loop()):
        yield


async def _match_push(app: web.Application) -> AsyncIterator[None]:
    """The hub that wakes long-polls and WebSockets, fed by this process's LISTEN connection,
    the feeds that read each followed match's events for them, and the open sockets."""
    settings = app[SETTINGS]
    assert settings.database_url is not None
    hub = Hub()
    app[MATCH_HUB] = hub
    app[MATCH_FEEDS] = Feeds(app[POOL], hub)
    app[MATCH_SOCKETS] = OpenSockets(settings, app[REVOCATIONS])
    url = settings.listen_database_url or settings.database_url
    async with _running(listen_forever(url, hub, settings.db_timeout_seconds)):
        yield


async def _sweeper(app: web.Application) -> AsyncIterator[None]:
    """Turn timers and leftover bot moves, then old keys and matches, swept on every instance."""
    settings = app[SETTINGS]
    retention = Retention(
        settings.idempotency_key_ttl_seconds,
        settings.match_events_retention_seconds,
        settings.sweep_batch_rows,
    )
    async with _running(run_sweeper(app[POOL], settings.sweep_interval_seconds, retention), app):
        yield


async def _idle_runs(app: web.Application) -> AsyncIterator[None]:
    """Runs left idle end abandoned, swept on every instance."""
    settings = app[SETTINGS]
    sweeper = run_idle_sweeper(
        app[POOL],
        settings.run_idle_seconds,
        settings.rated_ghost_repeat_seconds,
        settings.run_sweep_interval_seconds,
    )
    async with _running(sweeper, app):
        yield


async def _matcher(app: web.Application) -> AsyncIterator[None]:
    """The matchmaking queues matched on every instance (service/usecases/matchmaking.py)."""
    settings = app[SETTINGS]
    tuning = matchmaking.tuning(settings)
    async with _running(run_matcher(app[POOL], tuning, settings.matchmaking_interval_seconds), app):
        yield


async def _rate_limits(app: web.Application) -> AsyncIterator[None]:
    """This process's per-request limits kept in step with the other processes', on every
    instance (service/api/ratelimit.py)."""
    limiter, seconds = app[LIMITER], app[SETTINGS].rate_limit_sync_seconds
    async with _running(keep_shared(app[POOL], limiter, seconds), app):
        yield


async def _revocations(app: web.Application) -> AsyncIterator[None]:
    """The sessions revoked by any process, read by this one every REVOCATION_SYNC_SECONDS:
    all of them at the first read, then what changed since the read before."""
    settings = app[SETTINGS]
    pool, revocations = app[POOL], app[REVOCATIONS]
    feed = session_usecases.RevocationFeed(
        settings.access_token_ttl_seconds, settings.db_timeout_seconds
    )

    async def sync() -> None:
        revoked = await feed.read(pool)
        now = time.time()
        revocations.absorb(
            revoked.sessions,
            revoked.players,
            forget_sessions_before=now - feed.session_window,
            forget_players_before=now - feed.player_window,
        )

    async with _running(every(settings.revocation_sync_seconds, "revocation_sync", sync)):
        yield


async def _schema_watch(app: web.Application) -> AsyncIterator[None]:
    """The database's migration level read again every MIGRATION_CHECK_SECONDS: a migration
    applied meanwhile that needs newer code to write turns this instance read-only."""
    watch, pool = app[SCHEMA], app[POOL]
    seconds = app[SETTINGS].migration_check_seconds
    async with _running(every(seconds, "migration_check", lambda: watch.read(pool))):
        yield


async def _partitions(app: web.Application) -> AsyncIterator[None]:
    """The coming days' partitions of snapshots and battles, made a week before they are
    needed, on every instance."""
    async with _running(keep_ahead(app[POOL]), app):
        yield


def _game_schemas() -> dict[str, Any]:
    """Each game's loadout, view and catalogue schemas, as components `Loadout_<game>`,
    `View_<game>` and `Catalogue_<game>` of the OpenAPI document."""
    loadouts = {
        f"Loadout_{game['id']}": game["loadout"]
        for game in lobby.games()["games"]
        if game["loadout"] is not None
    }
    return {**loadouts, **answers.view_schemas(), **game_catalogues.catalogue_schemas()}


def create_app(settings: Settings) -> web.Application:
    catalogue.load_all()
    # Metrics outermost, so that they count the answers the error middleware made.
    app = web.Application(
        middlewares=[metrics.record, request_context, refuse_writes],
        client_max_size=settings.max_body_bytes,
        # Whatever runs the application reads requests so: compressed bodies left to the codec.
        handler_args=server.HANDLER_ARGS,
    )
    app[SETTINGS] = settings
    app[LIMITER] = RateLimiter(settings.rate_limit_per_second, settings.rate_limit_burst)
    app[SHARED_LIMITS] = SharedLimits(settings, site_of=address.site_of)
    app[TOKENS] = VerifiedTokens(settings.secret_key)
    app[REVOCATIONS] = Revocations()
    app[KNOWN_PLAYERS] = KnownPlayers()
    app[MATCH_CACHE] = MatchCache()
    tables = [*ENDPOINT_TABLES, floor.endpoints] if settings.bench_floor else ENDPOINT_TABLES
    app[docs.OPENAPI] = build_document(
        tables, extra_schemas=_game_schemas(), max_body_bytes=settings.max_body_bytes
    )
    register(app, tables)
    app.on_response_prepare.append(tag_instance)
    app.cleanup_ctx.extend(
        [_database, _pool_gauges, _match_push, _sweeper, _idle_runs, _matcher, _partitions]
    )
    app.cleanup_ctx.extend([_rate_limits, _revocations, _schema_watch])
    # Open WebSockets would hold the server open until the shutdown timeout: close them
    # first, before the contexts above are unwound.
    app.on_shutdown.append(match_socket.close_sockets)
    return app
