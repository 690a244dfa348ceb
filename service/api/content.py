"""Public game content: what a client shows and what a re-simulator needs.

A catalogue never changes under a ruleset, so an answer for a named ruleset is cacheable for
good (`immutable`); without one it is the default ruleset's, which a release may change, so
it is revalidated by its ETag (docs/architecture.md#catalogues).
"""

import hashlib
from typing import Any

from aiohttp import web
from pydantic import Field

from service.api import codec
from service.api.endpoints import Call, Endpoints, Query
from service.api.errors import not_found
from service.games.cryptids.content import UnknownRulesetError
from service.games.kernel.protocol import GameError
from service.usecases import catalogue, game_catalogues
from service.usecases.errors import invalid_field

endpoints = Endpoints("content")

FOR_GOOD = "public, max-age=31536000, immutable"
REVALIDATE = "public, no-cache"


class ContentQuery(Query):
    ruleset: str | None = Field(None, max_length=64)


def _cached(call: Call, answer: Any, ruleset: str | None) -> web.Response:
    """The answer with its ETag (of the bytes sent, so JSON and msgpack differ), or a 304."""
    request = call.request
    body, content_type = codec.encode(answer, codec.prefers_msgpack(request.headers.get("Accept")))
    etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    headers = {
        "ETag": etag,
        "Cache-Control": REVALIDATE if ruleset is None else FOR_GOOD,
        "Vary": "Accept",
    }
    if request.headers.get("If-None-Match") == etag:
        return web.Response(status=304, headers=headers)
    response = web.Response(body=body, headers=headers)
    response.content_type = content_type
    return response


@endpoints.route(
    "GET",
    "/v1/content/cryptids",
    summary="The cryptid catalogue of a ruleset (default: the current one)",
    auth="none",
    query=ContentQuery,
    response=catalogue.CryptidCatalogue,
    errors=(422,),
    database=False,
)
async def cryptids(call: Call) -> web.Response:
    query: ContentQuery = call.query
    try:
        answer = catalogue.cryptid_catalogue(query.ruleset)
    except UnknownRulesetError as exc:
        raise invalid_field("query.ruleset", str(exc)) from exc
    return _cached(call, answer, query.ruleset)


@endpoints.route(
    "GET",
    "/v1/content/{game}",
    summary=(
        "A turn-based game's catalogue under a ruleset (default: the current one): every card,"
        " model, hazard and face its views name, with numbers, effects and text;"
        " schema per game: components Catalogue_<game>"
    ),
    auth="none",
    query=ContentQuery,
    response=game_catalogues.GameCatalogue,
    errors=(404, 422),
    database=False,
)
async def game_content(call: Call) -> web.Response:
    query: ContentQuery = call.query
    game_id = call.path_param("game")
    try:
        answer = game_catalogues.game_catalogue(game_id, query.ruleset)
    except GameError as exc:
        if query.ruleset is not None and game_id in game_catalogues.game_ids():
            raise invalid_field("query.ruleset", exc.reason) from exc
        raise not_found(exc.reason) from exc
    return _cached(call, answer, query.ruleset)
