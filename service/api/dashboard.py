"""The operators' dashboard: a static page over `GET /v1/ops/matchmaking`, served offline.

The page, its stylesheet, script and icon live in `dashboard/` as real files, read once at
import so that a missing file stops the service at start-up instead of on a 3 a.m. page load.
The browser asks for the ops token and calls the JSON API itself; these routes need no auth.
"""

import hashlib
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from service.api.endpoints import Call, Endpoints
from service.api.errors import ApiError

endpoints = Endpoints("ops")

DIRECTORY = Path(__file__).with_name("dashboard")
PAGE = "ops.html"
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
}
# Everything from this origin only: no inline script or style, no framing, no form posts away.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; font-src 'none'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)


@dataclass(frozen=True)
class Asset:
    body: bytes
    content_type: str
    etag: str


def load(directory: Path = DIRECTORY) -> dict[str, Asset]:
    """Every file of a page's directory, by name, with its content type and ETag."""
    assets = {}
    for path in sorted(directory.iterdir()):
        if path.suffix in CONTENT_TYPES:
            body = path.read_bytes()
            etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
            assets[path.name] = Asset(body, CONTENT_TYPES[path.suffix], etag)
    return assets


ASSETS = load()


def asset_named(assets: dict[str, Asset], name: str, page: str, what: str) -> Asset:
    """A page's file by name; 404 for an unknown one and for the page itself, which has one
    address of its own so that its relative links and bookmarks agree."""
    asset = assets.get(name)
    if asset is None or name == page:
        raise ApiError(404, "not_found", f"no such {what} file: {name}")
    return asset


def serve(request: web.Request, asset: Asset) -> web.Response:
    """The asset, or 304 when the browser's copy is current.

    The URLs carry no version, so browsers revalidate every time (`no-cache`): a deploy shows
    up on the next refresh, and an unchanged file costs a 304.
    """
    headers = {
        "Content-Security-Policy": CSP,
        "Cache-Control": "no-cache",
        "ETag": asset.etag,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
    }
    if request.headers.get("If-None-Match") == asset.etag:
        return web.Response(status=304, headers=headers)
    return web.Response(body=asset.body, headers={**headers, "Content-Type": asset.content_type})


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
    return serve(call.request, ASSETS[PAGE])


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
    return serve(call.request, asset_named(ASSETS, call.path_param("asset"), PAGE, "dashboard"))
