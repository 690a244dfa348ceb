"""The web client at /play: a static page written on the TypeScript client library alone.

Its files are web/play/ (the bundle play.js is built from web/play/src and committed, so that the
service serves it without Node.js), served like the ops dashboard (service/api/pages.py). The
page signs in with a device id of its own and calls the public API; these routes need no auth.
"""

from aiohttp import web

from service.api import pages
from service.api.endpoints import Call, Endpoints

endpoints = Endpoints("play")

DIRECTORY = pages.WEB / "play"
PAGE = "play.html"
ASSETS = pages.load(DIRECTORY)


@endpoints.route(
    "GET",
    "/play",
    summary=(
        "The web client (HTML): the autobattler, and the turn-based games by the queue or the"
        " lobby, signed in with a device id this browser keeps"
    ),
    auth="none",
    rate_limited=False,
    media=("text/html",),
    database=False,
)
async def play_page(call: Call) -> web.Response:
    return pages.serve(call.request, ASSETS[PAGE])


@endpoints.route(
    "GET",
    "/play/assets/{asset}",
    summary="The web client's stylesheet and its script, one bundle built from web/play/src",
    auth="none",
    rate_limited=False,
    errors=(404,),
    media=("text/css", "text/javascript"),
    database=False,
)
async def play_asset(call: Call) -> web.Response:
    asset = pages.asset_named(ASSETS, call.path_param("asset"), PAGE, "web client")
    return pages.serve(call.request, asset)
