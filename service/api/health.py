"""Liveness and readiness."""

from pydantic import BaseModel

from service.api.endpoints import Call, Endpoints
from service.api.errors import unavailable
from service.api.keys import POOL, SETTINGS
from service.store.database import is_unavailable, ping

endpoints = Endpoints("health")


class Status(BaseModel):
    status: str


@endpoints.route(
    "GET", "/healthz", summary="The process is up", auth="none", response=Status, rate_limited=False
)
async def healthz(call: Call) -> Status:
    return Status(status="ok")


@endpoints.route(
    "GET",
    "/readyz",
    summary="The database is reachable",
    auth="none",
    response=Status,
    rate_limited=False,
    errors=(503,),
)
async def readyz(call: Call) -> Status:
    app = call.request.app
    try:
        await ping(app[POOL], app[SETTINGS].db_timeout_seconds)
    except Exception as exc:
        if is_unavailable(exc):
            raise unavailable() from exc
        raise
    return Status(status="ready")
