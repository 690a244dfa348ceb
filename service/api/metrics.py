"""Prometheus: request figures for every route, and the scrape endpoint."""

import time
import weakref

from aiohttp import web
from aiohttp.typedefs import Handler

from service.api.endpoints import Call, Endpoints
from service.api.keys import POOL, SETTINGS
from service.runtime import metrics
from service.usecases import ops

endpoints = Endpoints("ops")
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
# Each application's (each worker's) cached cluster gauges, made at its first scrape.
_GAUGES: weakref.WeakKeyDictionary[web.Application, ops.CachedGauges] = weakref.WeakKeyDictionary()


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
        " it sees (embedded database or BACKUP_DIR)"
    ),
    auth="none",
    rate_limited=False,
    media=("text/plain",),
)
async def scrape(call: Call) -> web.Response:
    app = call.request.app
    settings = app[SETTINGS]
    gauges = _GAUGES.get(app)
    if gauges is None:
        gauges = _GAUGES[app] = ops.CachedGauges(settings.metrics_cache_seconds)
    cluster = await gauges.read(app[POOL], settings.snapshot_ttl_seconds)
    backup_dir = ops.watched_backups(settings)
    if backup_dir is not None:
        # Read at every scrape: a few file system calls, and the age must be now's.
        ages = await ops.backup_ages(backup_dir)
        cluster = [*cluster, *metrics.backup_gauges(ages.base_seconds, ages.wal_seconds)]
    body = metrics.process_metrics_text() + metrics.families_text(cluster)
    return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE})
