"""The replay viewer: a static page that fetches a replay, re-simulates it and plays it back.

The page, its stylesheet and its ES modules are web/watch/, served like the ops dashboard
(service/api/pages.py). The browser asks for the player's token and calls the JSON API itself,
so these routes need no auth. `web/watch/resim.js` is the reference re-simulator a client
developer can import on its own.
"""

from aiohttp import web

from service.api import pages
from service.api.endpoints import Call, Endpoints

endpoints = Endpoints("watch")

DIRECTORY = pages.WEB / "watch"
PAGE = "watch.html"
ASSETS = pages.load(DIRECTORY)


@endpoints.route(
    "GET",
    "/watch",
    summary="Replay viewer (HTML) for a pasted or uploaded replay, or a simulation from the URL",
    auth="none",
    rate_limited=False,
    media=("text/html",),
    database=False,
)
async def watch_page(call: Call) -> web.Response:
    return pages.serve(call.request, ASSETS[PAGE])


@endpoints.route(
    "GET",
    "/watch/{battle_id}",
    summary="Replay viewer (HTML) for a stored battle: plays it and verifies every roll's hash",
    auth="none",
    rate_limited=False,
    media=("text/html",),
    database=False,
)
async def watch_battle_page(call: Call) -> web.Response:
    # The page reads the battle id from its own address; any id gets the page, and the API
    # answers the replay (or 404) with the player's token.
    return pages.serve(call.request, ASSETS[PAGE])


@endpoints.route(
    "GET",
    "/watch/matches/{match_id}",
    summary="Replay viewer (HTML) for a finished turn-based match: its events, leg by leg",
    auth="none",
    rate_limited=False,
    media=("text/html",),
    database=False,
)
async def watch_match_page(call: Call) -> web.Response:
    return pages.serve(call.request, ASSETS[PAGE])


@endpoints.route(
    "GET",
    "/watch/assets/{asset}",
    summary="The viewer's stylesheet and ES modules, among them the re-simulator resim.js",
    auth="none",
    rate_limited=False,
    errors=(404,),
    media=("text/css", "text/javascript", "image/svg+xml"),
    database=False,
)
async def watch_asset(call: Call) -> web.Response:
    asset = pages.asset_named(ASSETS, call.path_param("asset"), PAGE, "viewer")
    return pages.serve(call.request, asset)
