"""Writes refused while the database's migrations need newer code to write
(service/usecases/schema_level.py): the balancer's next instance, of the newer release, takes
the retry."""

from aiohttp import web
from aiohttp.typedefs import Handler

from service.api.errors import ApiError
from service.api.keys import SCHEMA
from service.store.migrate import Level

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
RETRY_AFTER_SECONDS = "1"


def refusal(level: Level) -> ApiError:
    return ApiError(
        503,
        "read_only",
        f"this instance is read-only: the {level}, and its migrations need a release that knows"
        f" migration {level.writers_from} to write. Nothing was written: retry",
        headers={"Retry-After": RETRY_AFTER_SECONDS},
    )


@web.middleware
async def refuse_writes(request: web.Request, handler: Handler) -> web.StreamResponse:
    if request.method not in SAFE_METHODS:
        level = request.app[SCHEMA].level
        if not level.writable:
            raise refusal(level)
    return await handler(request)
