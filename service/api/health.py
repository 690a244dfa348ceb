"""Liveness and readiness."""

from typing_extensions import TypedDict

from service.api.endpoints import Call, Endpoints
from service.api.errors import unavailable
from service.api.keys import POOL, SETTINGS
from service.store.database import is_unavailable, ping

endpoints = Endpoints("health")


class Status(TypedDict):
    status: str


@endpoints.route(
    "GET",
    "/healthz",
    summary="The process is up",
    auth="none",
    response=Status,
    rate_limited=False,
    database=False,
)
async def healthz(call: Call) -> Status:
    return {"status": "ok"}


@endpoints.route(
    "GET",
    "/readyz",
    summary="The database is reachable",
    auth="none",
    response=Status,
    rate_limited=False,
)
async def readyz(call: Call) -> Status:
    app = call.request.app
    try:
        await ping(app[POOL], app[SETTINGS].db_timeout_seconds)
    except Exception as exc:
        if is_unavailable(exc):
            raise unavailable() from exc
        raise
    return {"status": "ready"}
