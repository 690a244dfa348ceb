"""aiohttp's HTTP server under the application: what its parser accepts, and its own refusals.

aiohttp answers a request it cannot parse (a URL or a header too long, too many headers,
bytes that are not HTTP) in plain text, and a refusal raised before the middleware runs (an
unknown `Expect`) as aiohttp words it, both outside every middleware and signal of the
application (aiohttp issues #3287 and #6463). Its only hook for the first is
`RequestHandler.handle_error`, a method of the connection that its server makes, and AppRunner
takes no server of ours: so `Runner` is aiohttp's AppRunner whose `_make_server` rebuilds the
server it made into one whose connections answer those refusals in the error shape, and whose
handler answers the second so too. Everything that runs the service (`python -m service serve`,
the tests) runs it through `Runner`.
"""

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError, LineTooLong
from aiohttp.web_protocol import RequestHandler

from service.api import codec, middleware
from service.api.errors import ApiError, error_body
from service.api.keys import SETTINGS

# The longest URL (path and query) and header name or value read, and the most header
# fields. Every URL of the API is far shorter than its limit; a header may carry the large
# cookies of a site the API shares a domain with. The two lengths differ so that a refusal
# tells which was passed (aiohttp says only the limit).
MAX_URL_BYTES = 4096
MAX_FIELD_BYTES = 8190
MAX_HEADERS = 128
# The server's own inflating of compressed bodies is off: it inflates every compressed body as
# it arrives, all of it, whatever the handler does with it (a 16 KB gzip body can be 16 MiB).
# codec.read_body inflates the bodies it reads, bounded by MAX_BODY_BYTES.
HANDLER_ARGS: dict[str, Any] = {
    "auto_decompress": False,
    "max_line_size": MAX_URL_BYTES,
    "max_field_size": MAX_FIELD_BYTES,
    "max_headers": MAX_HEADERS,
}
# aiohttp's words for a message with more than MAX_HEADERS fields.
_TOO_MANY_HEADERS = "Too many headers"
# What of aiohttp's message about a malformed request is repeated to the client.
MAX_REASON = 200

log = structlog.get_logger("service.http")

_Handler = Callable[[web.BaseRequest], Awaitable[web.StreamResponse]]


def _reason(message: str) -> str:
    """aiohttp's message without the excerpt of the request it quotes ("b'...'", "^")."""
    parts = [
        line.strip().rstrip(":")
        for line in message.splitlines()
        if line.strip() and not line.strip().startswith(("b'", 'b"', "^"))
    ]
    return ": ".join(parts) or "not an HTTP request"


def refusal(status: int, exc: BaseException | None) -> ApiError:
    """What aiohttp's refusal of a request (`status`, and the exception behind it) tells the
    client, in the error shape."""
    if isinstance(exc, LineTooLong):
        if exc.args[1] == MAX_URL_BYTES:
            return ApiError(
                414,
                "url_too_long",
                f"the URL is over {MAX_URL_BYTES} bytes",
                {"limit": MAX_URL_BYTES},
            )
        return ApiError(
            431,
            "header_too_large",
            f"a header's name or value is over {MAX_FIELD_BYTES} bytes",
            {"limit": MAX_FIELD_BYTES},
        )
    if isinstance(exc, HttpProcessingError) and status < 500:
        if exc.message.startswith(_TOO_MANY_HEADERS):
            return ApiError(
                431,
                "too_many_headers",
                f"the request has more than {MAX_HEADERS} header fields",
                {"max_headers": MAX_HEADERS},
            )
        return ApiError(400, "malformed_request", _reason(exc.message)[:MAX_REASON])
    return ApiError(500, "internal", "internal error")


class _Connection(RequestHandler):
    """aiohttp's connection, with the refusals it makes itself in the error shape."""

    def __init__(self, manager: web.Server, *, instance: str, **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        self.instance = instance

    def handle_error(
        self,
        request: web.BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        if request.writer.output_size > 0:
            # Too late for an answer: aiohttp's own handling drops the connection.
            return super().handle_error(request, status, exc, message)
        error = refusal(status, exc)
        if error.status >= 500:
            log.error("unhandled_error", exc_info=exc)
        else:
            # A line, not aiohttp's traceback: the internet sends such requests all day.
            log.info("protocol_refused", status=error.status, code=error.code, peer=request.remote)
        # A request that could not be parsed has no headers: it is answered in JSON.
        body, content_type = codec.encode(
            error_body(error), codec.prefers_msgpack(request.headers.get("Accept"))
        )
        headers = {**error.headers, middleware.INSTANCE_HEADER: self.instance}
        response = web.Response(body=body, status=error.status, headers=headers)
        response.content_type = content_type
        response.force_close()
        return response


def _in_shape(handler: _Handler) -> _Handler:
    """The application's handler, with an aiohttp refusal raised before its middleware (by an
    expect handler) answered in the error shape."""

    async def handle(request: web.BaseRequest) -> web.StreamResponse:
        try:
            return await handler(request)
        except web.HTTPException as exc:
            if exc.status < 400 or not isinstance(request, web.Request):
                raise
            return middleware.error_response(request, middleware.http_refusal(request, exc))

    return handle


class _Server(web.Server):
    """aiohttp's server, making `_Connection`s."""

    def __init__(self, made: web.Server, instance: str) -> None:
        # The same server AppRunner made, rebuilt from its parts: its keyword arguments are
        # those of its connections (the application's handler_args among them).
        super().__init__(
            _in_shape(made.request_handler),
            request_factory=made.request_factory,
            handler_cancellation=made.handler_cancellation,
            loop=asyncio.get_running_loop(),
            **made._kwargs,
        )
        self.instance = instance

    def __call__(self) -> RequestHandler:
        return _Connection(self, loop=self._loop, instance=self.instance, **self._kwargs)


class Runner(web.AppRunner):
    """aiohttp's AppRunner, whose connections answer their own refusals in the error shape."""

    async def _make_server(self) -> web.Server:
        made = await super()._make_server()
        return _Server(made, self.app[SETTINGS].instance_id)
