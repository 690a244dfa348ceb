"""Liveness and readiness."""

from typing_extensions import TypedDict

from service.api.endpoints import Call, Endpoints
from service.api.errors import ApiError, unavailable
from service.api.keys import POOL, SETTINGS
from service.runtime.supervisor import FAILED, read_state
from service.store.database import is_unavailable, ping

endpoints = Endpoints("health")


class Status(TypedDict):
    status: str


@endpoints.route(
    "GET",
    "/healthz",
    summary=(
        "The process is up; 503 only when its embedded database died and could not be restarted"
    ),
    auth="none",
    response=Status,
    rate_limited=False,
    database=False,
    errors=(503,),
)
async def healthz(call: Call) -> Status:
    # The process is up. Only in embedded mode does a database outage reach this probe, and
    # only once the supervisor gave up bringing it back: then a restart is the remedy.
    state = call.request.app[SETTINGS].embedded_db_state
    if state is not None and read_state(state) == FAILED:
        raise ApiError(
            503,
            "database_lost",
            "the embedded database died and could not be restarted; see the service's log",
        )
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
