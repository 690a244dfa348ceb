"""Turn-based matches over HTTP: games, create, join, read, act, events, WebSocket, replay."""

import asyncio
import weakref
from collections.abc import AsyncIterator
from contextlib import aclosing, suppress
from typing import Annotated, Any
from uuid import UUID

import structlog
from aiohttp import WSCloseCode, web
from pydantic import BaseModel, Field, StringConstraints

from service.api import auth, codec
from service.api.endpoints import Body, Call, Endpoints, Query
from service.api.errors import unauthorized
from service.api.keys import MATCH_HUB, MATCH_SOCKETS, POOL, SETTINGS, TOKENS
from service.runtime import metrics
from service.store.notify import Hub, listen_forever
from service.usecases.matches import play as matches
from service.usecases.matches.sweeper import run_sweeper

log = structlog.get_logger("service.api.matches")

endpoints = Endpoints("matches")

IDEMPOTENCY_HEADER = "Idempotency-Key"
MAX_WAIT_SECONDS = 30.0
HEARTBEAT_SECONDS = 20.0

GameId = Annotated[str, StringConstraints(min_length=1, max_length=64)]


class GameInfo(BaseModel):
    id: str
    ruleset: str
    min_seats: int
    max_seats: int
    options: dict[str, Any]


class GameList(BaseModel):
    games: list[GameInfo]


class NewMatch(Body):
    game: GameId
    seats: int
    options: dict[str, Any] = Field(default_factory=dict)
    bots: list[int] = Field(default_factory=list, max_length=64)
    turn_seconds: int | None = Field(default=None, ge=1, le=7 * 24 * 3600)


class Joined(BaseModel):
    match_id: str
    seat: int | None = Field(description="your seat; null when every seat is a bot")
    version: int
    status: str


class SeatInfo(BaseModel):
    seat: int
    player_id: str | None
    bot: bool


class MatchState(BaseModel):
    match_id: str
    game: str
    ruleset: str
    status: str
    version: int
    seat: int | None = Field(description="your seat; null for a spectator")
    seats: list[SeatInfo]
    to_act: list[int]
    view: dict[str, Any]
    legal_actions: list[dict[str, Any]]
    turn_seconds: int | None
    turn_deadline: str | None
    outcome: dict[str, Any] | None


class NewAction(Body):
    version: int = Field(ge=0)
    action: dict[str, Any]


class WireEvent(BaseModel):
    seq: int
    version: int
    kind: str
    data: dict[str, Any]


class ActionDone(BaseModel):
    version: int
    status: str
    events: list[WireEvent]
    view: dict[str, Any]
    to_act: list[int]
    legal_actions: list[dict[str, Any]]
    outcome: dict[str, Any] | None


class EventsQuery(Query):
    after: int = Field(default=0, ge=0)
    wait: float = Field(default=0.0, ge=0.0, le=MAX_WAIT_SECONDS)


class EventBatch(BaseModel):
    events: list[WireEvent]
    last_seq: int = Field(description="pass as `after` next time")
    status: str
    version: int


class SocketQuery(Query):
    after: int = Field(default=0, ge=0)
    token: str | None = Field(default=None, description="for browsers: the bearer token")


class ReplayEvent(WireEvent):
    visible_to: list[int] | None


class ReplayAction(BaseModel):
    version: int
    seat: int
    action: dict[str, Any]
    source: str


class Replay(BaseModel):
    match_id: str
    game: str
    ruleset: str
    seed: int
    seats: list[SeatInfo]
    options: dict[str, Any]
    actions: list[ReplayAction]
    events: list[ReplayEvent]
    final: dict[str, Any]
    outcome: dict[str, Any] | None


def _match_id(call: Call) -> UUID:
    return call.uuid_param("match_id", "match")


def _idempotency_key(call: Call) -> str | None:
    return call.request.headers.get(IDEMPOTENCY_HEADER)


@endpoints.route(
    "GET",
    "/v1/games",
    summary="The turn-based games: seat range and options of each",
    response=GameList,
    errors=(401, 429),
)
async def list_games(call: Call) -> GameList:
    return GameList.model_validate({"games": matches.games()})


@endpoints.route(
    "POST",
    "/v1/matches",
    summary="Create a match and take its first non-bot seat (accepts Idempotency-Key)",
    body=NewMatch,
    response=Joined,
    status=201,
    errors=(400, 401, 409, 413, 415, 422, 429),
)
async def create_match(call: Call) -> Joined:
    body: NewMatch = call.body
    answer = await matches.create(
        call.request.app[POOL],
        call.player,
        game_id=body.game,
        seats=body.seats,
        options=body.options,
        bots=body.bots,
        turn_seconds=body.turn_seconds,
        idempotency_key=_idempotency_key(call),
    )
    return Joined.model_validate(answer)


@endpoints.route(
    "POST",
    "/v1/matches/{match_id}/join",
    summary="Take the lowest free seat; joining again answers the seat you hold",
    response=Joined,
    errors=(401, 404, 409, 429),
)
async def join_match(call: Call) -> Joined:
    answer = await matches.join(call.request.app[POOL], call.player, _match_id(call))
    return Joined.model_validate(answer)


@endpoints.route(
    "GET",
    "/v1/matches/{match_id}",
    summary="The match as you may see it: your seat's view and legal actions, or a spectator's",
    response=MatchState,
    errors=(401, 404, 429),
)
async def get_match(call: Call) -> MatchState:
    answer = await matches.read(call.request.app[POOL], call.player, _match_id(call))
    return MatchState.model_validate(answer)


@endpoints.route(
    "POST",
    "/v1/matches/{match_id}/actions",
    summary="Act at the version you saw (accepts Idempotency-Key)",
    body=NewAction,
    response=ActionDone,
    errors=(400, 401, 403, 404, 409, 413, 415, 422, 429),
)
async def act(call: Call) -> ActionDone:
    body: NewAction = call.body
    answer = await matches.act(
        call.request.app[POOL],
        call.player,
        _match_id(call),
        version=body.version,
        action=body.action,
        idempotency_key=_idempotency_key(call),
    )
    return ActionDone.model_validate(answer)


@endpoints.route(
    "GET",
    "/v1/matches/{match_id}/events",
    summary="Events after a sequence number that you may see; waits up to `wait` seconds",
    query=EventsQuery,
    response=EventBatch,
    errors=(401, 404, 422, 429),
)
async def events(call: Call) -> EventBatch:
    query: EventsQuery = call.query
    app = call.request.app
    page = await matches.wait_events(
        app[POOL], app[MATCH_HUB], call.player, _match_id(call), query.after, query.wait
    )
    return EventBatch.model_validate(page.wire())


@endpoints.route(
    "GET",
    "/v1/matches/{match_id}/replay",
    summary="Seed, action log and every event of a finished match (409 before)",
    response=Replay,
    errors=(401, 404, 409, 429),
)
async def replay(call: Call) -> Replay:
    return Replay.model_validate(await matches.replay(call.request.app[POOL], _match_id(call)))


def _socket_player(call: Call) -> UUID:
    query: SocketQuery = call.query
    header = call.request.headers.get("Authorization")
    try:
        token = auth.bearer_token(header) if header or query.token is None else query.token
        return call.request.app[TOKENS].player(token)
    except auth.InvalidToken as exc:
        raise unauthorized(str(exc)) from exc


@endpoints.route(
    "GET",
    "/v1/matches/{match_id}/ws",
    summary=(
        "WebSocket: pushes {events, last_seq, status, version} batches you may see, from"
        " `after` on; auth by bearer header or `?token=`; msgpack frames if Accept asks;"
        " closed once a finished match has sent everything"
    ),
    auth="none",
    query=SocketQuery,
    status=101,
    errors=(401, 404, 422, 429),
)
async def websocket(call: Call) -> web.WebSocketResponse:
    player_id = _socket_player(call)
    match_id = _match_id(call)
    app = call.request.app
    await matches.ensure_exists(app[POOL], match_id)
    after: int = call.query.after
    binary = codec.prefers_msgpack(call.request.headers.get("Accept"))
    socket = web.WebSocketResponse(heartbeat=HEARTBEAT_SECONDS)
    await socket.prepare(call.request)
    app[MATCH_SOCKETS].add(socket)
    metrics.WEBSOCKETS.inc()

    async def push() -> None:
        try:
            pages = matches.follow(app[POOL], app[MATCH_HUB], player_id, match_id, after)
            async with aclosing(pages):
                async for page in pages:
                    data, _ = codec.encode(page.wire(), binary)
                    await (socket.send_bytes(data) if binary else socket.send_str(data.decode()))
            await socket.close()
        except Exception:
            log.exception("websocket_push_failed", match_id=str(match_id))
            await socket.close(code=WSCloseCode.INTERNAL_ERROR)

    pusher = asyncio.create_task(push())
    try:
        # Clients only listen; reading keeps pings answered and notices the close.
        async for _ in socket:
            pass
    finally:
        metrics.WEBSOCKETS.dec()
        pusher.cancel()
        with suppress(asyncio.CancelledError):
            await pusher
    return socket


async def background(app: web.Application) -> AsyncIterator[None]:
    """The push hub with its LISTEN connection, and the sweeper, for the app's lifetime."""
    settings = app[SETTINGS]
    assert settings.database_url is not None
    hub = Hub()
    app[MATCH_HUB] = hub
    app[MATCH_SOCKETS] = weakref.WeakSet()
    tasks = [
        asyncio.create_task(
            listen_forever(settings.database_url, hub, settings.db_timeout_seconds)
        ),
        asyncio.create_task(run_sweeper(app[POOL], settings.sweep_interval_seconds)),
    ]
    yield
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def close_sockets(app: web.Application) -> None:
    """On shutdown: close open WebSockets, which would otherwise hold the server open."""
    sockets = app.get(MATCH_SOCKETS, weakref.WeakSet())
    for socket in list(sockets):
        await socket.close(code=WSCloseCode.GOING_AWAY, message=b"server shutdown")
