"""The OpenAPI document endpoint."""

from typing import Any

from aiohttp import web
from typing_extensions import TypedDict

from service.api.endpoints import Call, Endpoints

endpoints = Endpoints("docs")
OPENAPI = web.AppKey("openapi", dict[str, Any])


class OpenApiDocument(TypedDict):
    openapi: str
    info: dict[str, Any]
    paths: dict[str, Any]
    components: dict[str, Any]


@endpoints.route(
    "GET",
    "/v1/openapi.json",
    summary="This document: OpenAPI 3.1 of every endpoint",
    auth="none",
    response=OpenApiDocument,
    rate_limited=False,
    database=False,
)
async def openapi(call: Call) -> dict[str, Any]:
    return call.request.app[OPENAPI]
