"""Prometheus: request figures for every route, and the scrape endpoint."""

import asyncio
import time
import weakref

from aiohttp import web
from aiohttp.typedefs import Handler

from service.api.endpoints import Call, Endpoints
from service.api.errors import not_found
from service.api.keys import POOL, SETTINGS
from service.runtime import metrics
from service.usecases import ops

endpoints = Endpoints("ops")
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class _Exposition:
    """One application's (one worker's) text of /metrics, rendered again once it is `seconds`
    old: a rendering costs about 20 µs a sample (several milliseconds with every route's
    figures), so scrapes in between, and those that arrive while it renders, are given the
    last one. Its cluster gauges are read from the database less often still."""

    def __init__(self, seconds: float, gauges_seconds: float) -> None:
        self.seconds = seconds
        self.gauges = ops.CachedGauges(gauges_seconds)
        self._text = b""
        self._rendered_at: float | None = None
        self._rendering = asyncio.Lock()

    async def text(self, app: web.Application) -> bytes:
        arrived = time.monotonic()
        async with self._rendering:
            if self._rendered_at is None or arrived - self._rendered_at >= self.seconds:
                self._rendered_at = time.monotonic()
                self._text = await self._render(app)
            return self._text

    async def _render(self, app: web.Application) -> bytes:
        settings = app[SETTINGS]
        cluster = await self.gauges.read(app[POOL], settings.snapshot_ttl_seconds)
        backup_dir = ops.watched_backups(settings)
        if backup_dir is not None:
            ages = await ops.backup_ages(backup_dir)
            cluster = [*cluster, *metrics.backup_gauges(ages.base_seconds, ages.wal_seconds)]
        # In a thread: a rendering holds the interpreter for milliseconds, and there the event
        # loop gets its turns in between instead of waiting for the whole of it.
        process = await asyncio.to_thread(metrics.process_metrics_text)
        return process + metrics.families_text(cluster)


_EXPOSITIONS: weakref.WeakKeyDictionary[web.Application, _Exposition] = weakref.WeakKeyDictionary()


def _local_port(request: web.Request) -> int | None:
    """The port of ours the request came in on."""
    sockname = request.transport.get_extra_info("sockname") if request.transport else None
    return int(sockname[1]) if isinstance(sockname, tuple) else None


def _route(request: web.Request) -> str:
    """The route template, so that ids do not explode the label set."""
    resource = request.match_info.route.resource
    return resource.canonical if resource is not None else "unmatched"


@web.middleware
async def record(request: web.Request, handler: Handler) -> web.StreamResponse:
    started = time.perf_counter()
    response = await handler(request)
    route = _route(request)
    metrics.child(metrics.HTTP_REQUESTS, route, request.method, str(response.status)).inc()
    metrics.child(metrics.HTTP_SECONDS, route).observe(time.perf_counter() - started)
    return response


@endpoints.route(
    "GET",
    "/metrics",
    summary=(
        "Prometheus text format: this service's figures (all workers) and the cluster's, read"
        " from the database at most every METRICS_CACHE_SECONDS, and the age of the backups"
        " it sees (embedded database or BACKUP_DIR), rendered at most every"
        " METRICS_RENDER_SECONDS; on METRICS_PORT alone when that is set (404 on PORT)"
    ),
    auth="none",
    media=("text/plain",),
    errors=(404,),
)
async def scrape(call: Call) -> web.Response:
    request = call.request
    app = request.app
    settings = app[SETTINGS]
    if settings.metrics_port is not None and _local_port(request) != settings.metrics_port:
        # Not on the port the public reaches: as any unknown path.
        raise not_found(f"no such path: {request.path}")
    exposition = _EXPOSITIONS.get(app)
    if exposition is None:
        exposition = _EXPOSITIONS[app] = _Exposition(
            settings.metrics_render_seconds, settings.metrics_cache_seconds
        )
    return web.Response(body=await exposition.text(app), headers={"Content-Type": CONTENT_TYPE})
