"""Liveness and readiness."""

from typing_extensions import TypedDict

from service.api import read_only
from service.api.endpoints import Call, Endpoints
from service.api.errors import ApiError, unavailable
from service.api.keys import POOL, SCHEMA, SETTINGS
from service.runtime.supervisor import FAILED, read_state
from service.store.database import is_unavailable, ping
from service.version import VERSION

endpoints = Endpoints("health")


class Status(TypedDict):
    status: str


class Liveness(TypedDict):
    status: str
    # The release running, pyproject.toml's version.
    version: str
    # The newest migration applied to the database, and the newest this release knows: the
    # database is ahead while an older release still serves beside a newer one.
    migration: int
    migration_known: int


@endpoints.route(
    "GET",
    "/healthz",
    summary=(
        "The process is up; 503 only when its embedded database died and could not be restarted"
    ),
    auth="none",
    response=Liveness,
    rate_limited=False,
    database=False,
    errors=(503,),
)
async def healthz(call: Call) -> Liveness:
    # The process is up. Only in embedded mode does a database outage reach this probe, and
    # only once the supervisor gave up bringing it back: then a restart is the remedy.
    state = call.request.app[SETTINGS].embedded_db_state
    if state is not None and read_state(state) == FAILED:
        raise ApiError(
            503,
            "database_lost",
            "the embedded database died and could not be restarted; see the service's log",
        )
    level = call.request.app[SCHEMA].level
    return {
        "status": "ok",
        "version": VERSION,
        "migration": level.applied,
        "migration_known": level.known,
    }


@endpoints.route(
    "GET",
    "/readyz",
    summary=(
        "The database is reachable and this instance may write to it; 503 `read_only` when"
        " the database's migrations need a newer release to write"
    ),
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
    level = app[SCHEMA].level
    if not level.writable:
        raise read_only.refusal(level)
    return {"status": "ready"}
