"""A match's WebSocket: the events a player may see, pushed, and the player's actions, answered.

The server pushes batches {events, last_seq, status, version} from `after` on, and
{"matched": ticket} when a matchmaking ticket of the socket's player is matched while the socket
is open (the ticket's long-poll stays the record: a socket may be closed then). A seated player
may also act on the socket, one frame per action: {"ref"?, "version", "action",
"idempotency_key"?}, JSON in a text frame or msgpack in a binary one. Each frame gets one reply
in the socket's encoding: {"reply": ref, "answer": …}, the answer POST …/actions would give, or
{"reply": ref, "status": …, "error": {code, message, details}}, with the status and error that
request would have had. The events an answer holds are not pushed to the socket again.

A socket answers to the token it was opened under: once that token expires or its session is
revoked, a frame is refused (401) and the socket closed (4001, 4002; open_sockets.py), and the
socket is closed even when it sends nothing. Sockets are capped per player and per match.

A frame costs what it is worth: one over MAX_BODY_BYTES is refused from its header, before it
is read, and closes the socket (1009); the rate limit's token is taken before a frame is
decoded; MAX_LIMITED_FRAMES frames in a row past the limit close the socket (1008).

Sends are taken in turn (one lock), so a push never overtakes the reply of an action in flight
and the socket closes only once that reply is out.
"""

import asyncio
import time
from contextlib import aclosing, suppress
from typing import Annotated, Any
from uuid import UUID

import structlog
from aiohttp import WSCloseCode, WSMessage, WSMsgType, web
from pydantic import ConfigDict, Field, StringConstraints, TypeAdapter, ValidationError

from service.api import codec, read_only
from service.api.address import client_address
from service.api.auth import Bearer
from service.api.endpoints import (
    MAX_KEY_LENGTH,
    Body,
    Call,
    Endpoints,
    Query,
    authenticate,
    check_known,
)
from service.api.errors import (
    ApiError,
    error_body,
    from_validation_error,
    rate_limited,
    status_of,
    unauthorized,
)
from service.api.keys import (
    LIMITER,
    MATCH_CACHE,
    MATCH_FEEDS,
    MATCH_HUB,
    MATCH_SOCKETS,
    POOL,
    SCHEMA,
    SETTINGS,
    SHARED_LIMITS,
)
from service.api.matches import INT32, INT64
from service.api.middleware import refusal_of
from service.api.open_sockets import Ending
from service.runtime import metrics
from service.store.database import is_unavailable
from service.usecases import matchmaking
from service.usecases.errors import ServiceError
from service.usecases.matches import follow, play
from service.usecases.matches.follow import Cursor

log = structlog.get_logger("service.api.match_socket")

endpoints = Endpoints("matches")

HEARTBEAT_SECONDS = 20.0
MAX_REF_LENGTH = 64
SHUTDOWN = Ending(WSCloseCode.GOING_AWAY, "server shutdown")

Ref = (
    Annotated[str, StringConstraints(max_length=MAX_REF_LENGTH)]
    | Annotated[int, Field(ge=-INT64, le=INT64)]
)


# Checked as the frame's own field is (Body is strict), before the rest of the frame.
_REF: TypeAdapter[Ref | None] = TypeAdapter(Ref | None, config=ConfigDict(strict=True))


class SocketQuery(Query):
    after: int = Field(default=0, ge=0, le=INT64)
    token: str | None = Field(default=None, description="for browsers: the bearer token")


class SocketAction(Body):
    """An action sent on the socket: POST …/actions's body, with a reference and the key."""

    ref: Ref | None = Field(default=None, description="echoed in the reply as `reply`")
    version: int = Field(ge=0, le=INT32)
    action: dict[str, Any]
    idempotency_key: (
        Annotated[
            str,
            StringConstraints(min_length=1, max_length=MAX_KEY_LENGTH, pattern=r"^[\x20-\x7e]+$"),
        ]
        | None
    ) = None


async def _socket_bearer(call: Call) -> Bearer:
    """Who the handshake's token speaks for (the bearer header, or `?token=` for browsers);
    each handshake counts against that player and against the client's address, in the
    buckets every process shares."""
    query: SocketQuery = call.query
    request = call.request
    given = None if request.headers.get("Authorization") or query.token is None else query.token
    bearer = await authenticate(request, given)
    player_id = bearer.player_id
    # As every route that reads the database: a token of a player who is gone opens nothing.
    await check_known(request, player_id)
    shared = request.app[SHARED_LIMITS]
    await shared.take(
        request.app[POOL],
        shared.handshakes_per_player.take(str(player_id)),
        shared.handshakes_per_address.take(client_address(request)),
    )
    return bearer


class MatchSocket:
    """One open socket: its player's token, its match, where its follower stands, and its
    sends."""

    def __init__(
        self, call: Call, socket: web.WebSocketResponse, bearer: Bearer, match_id: UUID
    ) -> None:
        self.app = call.request.app
        self.socket = socket
        self.bearer = bearer
        self.player_id = bearer.player_id
        self.match_id = match_id
        self.binary = codec.prefers_msgpack(call.request.headers.get("Accept"))
        self.cursor = Cursor(call.query.after)
        self.sending = asyncio.Lock()
        # Frames refused by the rate limit since the last one it let through.
        self.limited_in_a_row = 0
        # Set when a frame finds the socket's token expired or revoked.
        self.ended: Ending | None = None

    async def send(self, data: Any) -> None:
        encoded, _ = codec.encode(data, self.binary)
        socket = self.socket
        # A frame read just before the socket closed (the client left, or the match ended) is
        # still answered: its reply has nowhere to go, and a retry finds the action applied.
        with suppress(ConnectionResetError):
            await (socket.send_bytes(encoded) if self.binary else socket.send_str(encoded.decode()))

    async def end(self, ending: Ending) -> None:
        """Close the socket, once a reply or a push under way has gone out; one still in its
        handshake is checked once that is done (`websocket`)."""
        if not self.socket.prepared:
            return
        async with self.sending:
            await self.socket.close(code=ending.code, message=ending.reason.encode())

    async def push(self) -> None:
        """Every page the follower reads, less what replies delivered meanwhile, and a finished
        match's last page however empty; then close."""
        app, cursor = self.app, self.cursor
        try:
            pages = follow.follow(
                app[MATCH_FEEDS], self.player_id, self.match_id, cursor, self.sending
            )
            async with aclosing(pages):
                async for page in pages:
                    async with self.sending:
                        events = cursor.fresh(page)
                        cursor.advance(page.last_seq)
                        # A finished match's last page goes out even with nothing new in it:
                        # a socket opened after the end learns so before it is closed.
                        if events or page.over:
                            await self.send({**page.wire(), "events": events})
            async with self.sending:
                await self.socket.close()
        except Exception:
            log.exception("websocket_push_failed", match_id=str(self.match_id))
            await self.socket.close(code=WSCloseCode.INTERNAL_ERROR)

    async def announce_matches(self) -> None:
        """{"matched": ticket} for each of the player's tickets matched while the socket is
        open, woken by the NOTIFY of the match made on any instance."""
        pool = self.app[POOL]
        # The tickets matched before the socket opened (known from its first read) are old news.
        announced: set[str] | None = None
        with self.app[MATCH_HUB].subscribe(self.player_id) as signal:
            while True:
                signal.clear()
                try:
                    lately = await matchmaking.matched_lately(pool, self.player_id)
                except Exception as exc:
                    if not is_unavailable(exc):
                        log.exception("websocket_announce_failed", match_id=str(self.match_id))
                        return
                    # Read again on the next wake-up: the hub wakes everyone on reconnecting.
                    lately = None
                if lately is not None:
                    if announced is None:
                        announced = {t["ticket_id"] for t in lately}
                    for ticket in lately:
                        if ticket["ticket_id"] not in announced:
                            announced.add(ticket["ticket_id"])
                            async with self.sending:
                                await self.send({"matched": ticket})
                await signal.wait()

    async def answer(self, message: WSMessage) -> None:
        """Reply to one frame from the client: the action's answer, or why it was refused.

        A frame whose token has expired or been revoked is refused and closes the socket (4001,
        4002). A socket that goes on sending past its rate limit, MAX_LIMITED_FRAMES frames in
        a row, is closed (1008): each refusal costs little, but a flood of them would not.
        """
        started = time.perf_counter()
        async with self.sending:
            reply = await self._reply(message)
            await self.send(reply)
            if self.ended is not None:
                await self.socket.close(code=self.ended.code, message=self.ended.reason.encode())
            elif self.limited_in_a_row >= self.app[SETTINGS].max_limited_frames:
                await self.socket.close(
                    code=WSCloseCode.POLICY_VIOLATION, message=b"frames past the rate limit"
                )
        status = reply.get("status", 200)
        if status >= 400 or self.app[SETTINGS].log_requests == "all":
            ms = round((time.perf_counter() - started) * 1000, 2)
            log.info("socket_action", match_id=str(self.match_id), status=status, ms=ms)

    async def _reply(self, message: WSMessage) -> dict[str, Any]:
        # Checked before anything else, as every route checks its token: nothing of the frame
        # is read, so its reply cannot name its `ref`.
        self.ended = self.app[MATCH_SOCKETS].ending(self.bearer)
        if self.ended is not None:
            return _refused(None, unauthorized(self.ended.reason))
        # The token is taken before the frame is decoded, so a frame past the limit costs no
        # decoding; its reply cannot name its `ref`, and replies come in the frames' order.
        wait = self.app[LIMITER].take(self.player_id)
        if wait > 0:
            self.limited_in_a_row += 1
            return _refused(None, rate_limited(wait))
        self.limited_in_a_row = 0
        level = self.app[SCHEMA].level
        if not level.writable:
            return _refused(None, read_only.refusal(level))
        ref: Ref | None = None
        try:
            data = _decode(message)
            ref = _ref_of(data)
            try:
                frame = SocketAction.model_validate(data)
            except ValidationError as exc:
                raise from_validation_error(exc) from exc
            acted = await play.act(
                self.app[POOL],
                self.player_id,
                self.match_id,
                version=frame.version,
                action=frame.action,
                idempotency_key=frame.idempotency_key,
                cache=self.app[MATCH_CACHE],
            )
        except Exception as exc:
            error = refusal_of(exc)
            if error is None:
                log.exception("websocket_action_failed", match_id=str(self.match_id))
                error = ApiError(500, "internal", "internal error")
            return _refused(ref, error)
        # Under the send lock: the follower will skip what this answer delivers.
        if acted.covers is not None:
            self.cursor.answered(*acted.covers, acted.answer["status"])
        return {"reply": ref, "answer": acted.answer}


def _refused(ref: Ref | None, error: ServiceError) -> dict[str, Any]:
    return {"reply": ref, "status": status_of(error), **error_body(error)}


def _decode(message: WSMessage) -> Any:
    if message.type == WSMsgType.TEXT:
        return codec.decode(codec.JSON, message.data.encode())
    return codec.decode(codec.MSGPACK, message.data)


def _ref_of(data: Any) -> Ref | None:
    """The frame's `ref` if it is a valid one, so that even a refused frame's reply names it."""
    if not isinstance(data, dict):
        return None
    try:
        return _REF.validate_python(data.get("ref"))
    except ValidationError:
        return None


@endpoints.route(
    "GET",
    "/v1/matches/{match_id}/ws",
    summary=(
        "WebSocket: pushes {events, last_seq, status, version} batches you may see, from"
        " `after` on, and answers the actions you send on it ({ref, version, action,"
        " idempotency_key?} → {reply, answer} or {reply, status, error}); auth by bearer"
        " header or `?token=`; msgpack frames if Accept asks; {matched: ticket} when one of your"
        " matchmaking tickets is matched; closed once a finished match has sent everything, its"
        " last batch (status finished) sent even when it holds no event; closed 4001 when the"
        " token expires, 4002 once its session is revoked; 409 too_many_sockets past"
        " MAX_SOCKETS_PER_PLAYER, or past MAX_SOCKETS_PER_MATCH for a player not seated"
    ),
    auth="none",
    query=SocketQuery,
    status=101,
    errors=(401, 404, 409, 422, 429),
)
async def websocket(call: Call) -> web.WebSocketResponse:
    bearer = await _socket_bearer(call)
    match_id = call.uuid_param("match_id", "match")
    app = call.request.app
    seat = await follow.seat_of(app[POOL], match_id, bearer.player_id)
    # aiohttp refuses a frame of max_msg_size bytes or more from its header, before reading
    # it, and closes the socket (1009): a frame may be as large as a request body.
    socket = web.WebSocketResponse(
        heartbeat=HEARTBEAT_SECONDS, max_msg_size=app[SETTINGS].max_body_bytes + 1
    )
    match_socket = MatchSocket(call, socket, bearer, match_id)
    sockets = app[MATCH_SOCKETS]
    with sockets.held(match_socket, seated=seat is not None):
        await socket.prepare(call.request)
        # The token may have expired, or its session been revoked, during the handshake.
        ending = sockets.ending(bearer)
        if ending is not None:
            await match_socket.end(ending)
        metrics.WEBSOCKETS.inc()
        pusher = asyncio.create_task(match_socket.push())
        announcer = asyncio.create_task(match_socket.announce_matches())
        try:
            # Frames are answered one after another, in the order they came.
            async for message in socket:
                if message.type in (WSMsgType.TEXT, WSMsgType.BINARY):
                    await match_socket.answer(message)
        finally:
            metrics.WEBSOCKETS.dec()
            for task in (pusher, announcer):
                task.cancel()
            for task in (pusher, announcer):
                with suppress(asyncio.CancelledError):
                    await task
    return socket


async def close_sockets(app: web.Application) -> None:
    """On shutdown: close open WebSockets, which would otherwise hold the server open."""
    if MATCH_SOCKETS in app:
        await asyncio.gather(*(socket.end(SHUTDOWN) for socket in app[MATCH_SOCKETS]))
