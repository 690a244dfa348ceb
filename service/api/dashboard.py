"""The operators' dashboard: a static page over `GET /v1/ops/matchmaking`, served offline.

The page, its stylesheet, script and icon are web/ops/ (service/api/pages.py serves them). The
browser asks for the ops token and calls the JSON API itself; these routes need no auth.
"""

from aiohttp import web

from service.api import pages
from service.api.endpoints import Call, Endpoints

endpoints = Endpoints("ops")

DIRECTORY = pages.WEB / "ops"
PAGE = "ops.html"
ASSETS = pages.load(DIRECTORY)


@endpoints.route(
    "GET",
    "/ops",
    summary="Operators' dashboard (HTML): matchmaking and match health, asks for the ops token",
    auth="none",
    rate_limited=False,
    media=("text/html",),
    database=False,
)
async def dashboard_page(call: Call) -> web.Response:
    return pages.serve(call.request, ASSETS[PAGE])


@endpoints.route(
    "GET",
    "/ops/{asset}",
    summary="The dashboard's stylesheet, script and icon",
    auth="none",
    rate_limited=False,
    errors=(404,),
    media=("text/css", "text/javascript", "image/svg+xml"),
    database=False,
)
async def dashboard_asset(call: Call) -> web.Response:
    asset = pages.asset_named(ASSETS, call.path_param("asset"), PAGE, "dashboard")
    return pages.serve(call.request, asset)
