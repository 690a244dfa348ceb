"""The OpenAPI document endpoint."""

from typing import Any

from aiohttp import web

from service.api.endpoints import Call, Endpoints

endpoints = Endpoints("docs")
OPENAPI = web.AppKey("openapi", dict[str, Any])


@endpoints.route(
    "GET",
    "/v1/openapi.json",
    summary="This document: OpenAPI 3.1 of every endpoint",
    auth="none",
    rate_limited=False,
)
async def openapi(call: Call) -> dict[str, Any]:
    return call.request.app[OPENAPI]
