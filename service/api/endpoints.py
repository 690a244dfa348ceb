"""Endpoint declarations: one place states a route's models, auth and status.

The same declaration validates requests, encodes answers and generates the OpenAPI document,
so the documentation cannot drift from what the server accepts.
"""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal
from uuid import UUID

import structlog
from aiohttp import HttpVersion11, web
from pydantic import BaseModel, ConfigDict, ValidationError

from service.api import auth, codec
from service.api.address import client_address
from service.api.errors import (
    ApiError,
    forbidden,
    from_validation_error,
    not_found,
    rate_limited,
    unauthorized,
)
from service.api.keys import (
    KNOWN_PLAYERS,
    LIMITER,
    POOL,
    REVOCATIONS,
    SETTINGS,
    SHARED_LIMITS,
    TOKENS,
)
from service.store.database import is_unavailable
from service.usecases import players

Auth = Literal["none", "player", "ops"]
OPS_HEADER = "X-Ops-Token"
IDEMPOTENCY_HEADER = "Idempotency-Key"
MAX_KEY_LENGTH = 200


class Body(BaseModel):
    """Base of request bodies: strict types, unknown fields rejected."""

    model_config = ConfigDict(strict=True, extra="forbid")


class Query(BaseModel):
    """Base of query strings: values arrive as text, so types are coerced."""

    model_config = ConfigDict(extra="ignore")


@dataclass
class Call:
    """What a handler receives: the raw request plus its validated parts."""

    request: web.Request
    body: Any = None
    query: Any = None
    bearer: auth.Bearer | None = None

    @property
    def player_id(self) -> UUID | None:
        return None if self.bearer is None else self.bearer.player_id

    @property
    def player(self) -> UUID:
        if self.bearer is None:
            raise RuntimeError("endpoint is not authenticated")
        return self.bearer.player_id

    @property
    def session_id(self) -> UUID | None:
        """The session of the caller's access token; None for a token from before sessions."""
        return None if self.bearer is None else self.bearer.session_id

    @property
    def issued_at(self) -> float:
        """When the caller's access token was issued (epoch seconds)."""
        if self.bearer is None:
            raise RuntimeError("endpoint is not authenticated")
        return self.bearer.issued_at

    @property
    def idempotency_key(self) -> str | None:
        """The Idempotency-Key header: 1 to 200 printable ASCII characters, or absent."""
        key = self.request.headers.get(IDEMPOTENCY_HEADER)
        if key is None:
            return None
        if not 1 <= len(key) <= MAX_KEY_LENGTH or not (key.isascii() and key.isprintable()):
            raise ApiError(
                400,
                "invalid_idempotency_key",
                f"{IDEMPOTENCY_HEADER} must be 1 to {MAX_KEY_LENGTH} printable ASCII characters",
            )
        return key

    def path_param(self, name: str) -> str:
        return self.request.match_info[name]

    def uuid_param(self, name: str, what: str) -> UUID:
        """A path id; one that is not a UUID names nothing, so it is a 404 like an unknown one."""
        raw = self.path_param(name)
        try:
            return UUID(raw)
        except ValueError:
            raise not_found(f"no {what} {raw}") from None


Handler = Callable[[Call], Awaitable[Any]]


@dataclass(frozen=True)
class Endpoint:
    method: str
    path: str
    handler: Handler
    summary: str
    auth: Auth
    body: type[BaseModel] | None
    query: type[BaseModel] | None
    # The answer's type (a TypedDict or a model): what is encoded and what OpenAPI shows.
    response: Any
    status: int
    rate_limited: bool
    tag: str
    errors: tuple[int, ...]
    # An answer that is not JSON or msgpack (a page, the metrics text) names its media types.
    media: tuple[str, ...]
    # Whether the handler reads or writes the database, and so may answer 503.
    database: bool
    # Whether the write takes an Idempotency-Key (documented as a header parameter).
    idempotent: bool
    # Other success statuses with the same answer (a sign-in that made its player: 201).
    also: tuple[int, ...] = ()


class Endpoints:
    """A module's table of endpoints; the app registers every table."""

    def __init__(self, tag: str) -> None:
        self.tag = tag
        self.items: list[Endpoint] = []

    def route(
        self,
        method: str,
        path: str,
        *,
        summary: str,
        auth: Auth = "player",
        body: type[BaseModel] | None = None,
        query: type[BaseModel] | None = None,
        response: Any = None,
        status: int = 200,
        rate_limited: bool = True,
        errors: tuple[int, ...] = (),
        media: tuple[str, ...] = (),
        database: bool = True,
        idempotent: bool = False,
        also: tuple[int, ...] = (),
    ) -> Callable[[Handler], Handler]:
        def register(handler: Handler) -> Handler:
            self.items.append(
                Endpoint(
                    method,
                    path,
                    handler,
                    summary,
                    auth,
                    body,
                    query,
                    response,
                    status,
                    rate_limited,
                    self.tag,
                    errors,
                    media,
                    database,
                    idempotent,
                    also,
                )
            )
            return handler

        return register


def _validate(model: type[BaseModel], data: Any, prefix: tuple[str, ...] = ()) -> BaseModel:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise from_validation_error(exc, prefix) from exc


async def _sign_in(request: web.Request, outage_allows: bool = False) -> None:
    """Before a credential is checked: a sign-in of the client's address, refused while the
    address has no failure left (so a guess is refused before it is checked, on every
    process alike)."""
    shared, address = request.app[SHARED_LIMITS], client_address(request)
    await shared.take(
        request.app[POOL],
        shared.sign_ins.take(address),
        shared.auth_failures.take(address, cost=0),
        outage_allows=outage_allows,
    )


async def _failed(request: web.Request, outage_allows: bool = False) -> None:
    """A failed authentication counts against the client's address: a 429 once it has none
    left, so that credentials cannot be guessed at speed."""
    shared = request.app[SHARED_LIMITS]
    failure = shared.auth_failures.take(client_address(request))
    await shared.take(request.app[POOL], failure, outage_allows=outage_allows)


async def authenticate(request: web.Request, token: str | None = None) -> auth.Bearer:
    """Who a bearer token speaks for (`token`, or the Authorization header's).

    A token this process has verified before costs nothing more; a new one is a sign-in. A
    battle simulation needs no database, so an outage lets its sign-in through rather than
    turn it into a 503. A revoked token is refused like a bad one.
    """
    tokens = request.app[TOKENS]
    try:
        if token is None:
            token = auth.bearer_token(request.headers.get("Authorization"))
        bearer = tokens.known(token)
        if bearer is None:
            await _sign_in(request, outage_allows=True)
            bearer = tokens.bearer(token)
        if request.app[REVOCATIONS].refused(bearer):
            raise auth.InvalidToken("token revoked: refresh it, or sign in again")
    except auth.InvalidToken as exc:
        await _failed(request, outage_allows=True)
        raise unauthorized(str(exc)) from exc
    return bearer


async def check_known(request: web.Request, player_id: UUID, outage_allows: bool = False) -> None:
    """A signed token whose player is gone (deleted, or never in a restored database) is
    refused, not a 500. With `outage_allows` (a route that needs no database), a database that
    cannot be reached lets a validly signed token through rather than answer 503."""
    known = request.app[KNOWN_PLAYERS]
    if known.known(player_id):
        return
    try:
        live = await players.is_live(request.app[POOL], player_id)
    except Exception as exc:
        if outage_allows and is_unavailable(exc):
            return
        raise
    if not live:
        await _failed(request, outage_allows=outage_allows)
        raise unauthorized("the token names no known player")
    known.remember(player_id)


async def _check_ops(request: web.Request) -> None:
    given = request.headers.get(OPS_HEADER)
    if not given:
        await _failed(request)
        raise ApiError(401, "unauthorized", f"missing {OPS_HEADER} header")
    await _sign_in(request)
    if not auth.ops_token_matches(request.app[SETTINGS].ops_token, given):
        await _failed(request)
        raise forbidden("ops token is not valid")


def address_key(request: web.Request) -> str:
    """The per-request limit's key of an unauthenticated request."""
    return f"address:{client_address(request)}"


def _limit(request: web.Request, key: object) -> None:
    wait = request.app[LIMITER].take(key)
    if wait > 0:
        raise rate_limited(wait)


def to_aiohttp(endpoint: Endpoint) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    async def handle(request: web.Request) -> web.StreamResponse:
        call = Call(request)
        if endpoint.auth == "player":
            call.bearer = await authenticate(request)
            structlog.contextvars.bind_contextvars(player_id=str(call.player))
            await check_known(request, call.player, outage_allows=not endpoint.database)
        elif endpoint.auth == "ops":
            await _check_ops(request)
        if endpoint.rate_limited:
            _limit(request, call.player_id or address_key(request))
        if endpoint.query is not None:
            call.query = _validate(endpoint.query, dict(request.query), ("query",))
        if endpoint.body is not None:
            raw = await codec.read_body(request, request.app[SETTINGS].max_body_bytes)
            call.body = _validate(endpoint.body, raw)
        result = await endpoint.handler(call)
        if isinstance(result, web.StreamResponse):
            return result
        return codec.respond(request, result, endpoint.status)

    handle.__name__ = endpoint.handler.__name__
    return handle


async def _continue_within_limit(request: web.Request) -> None:
    """`Expect: 100-continue` is answered only for a body within MAX_BODY_BYTES: a larger one
    gets its 413 before the client has sent it. Otherwise as aiohttp answers it."""
    if request.version != HttpVersion11:
        return
    expect = request.headers.get("Expect", "")
    if expect.lower() != "100-continue":
        raise web.HTTPExpectationFailed(text=f"Unknown Expect: {expect}")
    length = request.content_length
    if (length is None or length <= request.app[SETTINGS].max_body_bytes) and request.transport:
        request.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")


def register(app: web.Application, tables: list[Endpoints]) -> None:
    for table in tables:
        for endpoint in table.items:
            app.router.add_route(
                endpoint.method,
                endpoint.path,
                to_aiohttp(endpoint),
                expect_handler=_continue_within_limit,
            )
