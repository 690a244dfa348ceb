"""The web apps' files (web/ at the top of the tree: ops, watch, play) and how they are served.

A built package carries a copy of web/ as package data (setup.py); an
editable install reads the tree's. Each app's files are read once at import, so that a missing
file stops the service at start-up instead of on a 3 a.m. page load, and are served with a
strict Content-Security-Policy and an ETag.
"""

import hashlib
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from service.api.errors import ApiError

_PACKAGED_WEB = Path(__file__).resolve().parents[1] / "web"
_SOURCE_WEB = Path(__file__).resolve().parents[2] / "web"
WEB = _PACKAGED_WEB if _PACKAGED_WEB.is_dir() else _SOURCE_WEB

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


def load(directory: Path) -> dict[str, Asset]:
    """Every file of a page's directory, by name, with its content type and ETag."""
    assets = {}
    for path in sorted(directory.iterdir()):
        if path.suffix in CONTENT_TYPES:
            body = path.read_bytes()
            etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
            assets[path.name] = Asset(body, CONTENT_TYPES[path.suffix], etag)
    return assets


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
