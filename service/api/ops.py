"""Operator endpoints, guarded by the ops token."""

from pydantic import BaseModel

from service.api.endpoints import Call, Endpoints
from service.api.keys import POOL

endpoints = Endpoints("ops")


class DatabasePool(BaseModel):
    size: int
    idle: int
    in_use: int
    max_size: int


@endpoints.route(
    "GET",
    "/v1/ops/database",
    summary="Database connection pool figures of this instance",
    auth="ops",
    response=DatabasePool,
    rate_limited=False,
    errors=(401, 403),
)
async def database(call: Call) -> DatabasePool:
    pool = call.request.app[POOL]
    size, idle = pool.get_size(), pool.get_idle_size()
    return DatabasePool(size=size, idle=idle, in_use=size - idle, max_size=pool.get_max_size())
