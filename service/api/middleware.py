"""Request ids, the instance tag, a log line per request, every failure in the error shape."""

import re
import time
import uuid

import structlog
from aiohttp import web
from aiohttp.typedefs import Handler

from service.api import codec
from service.api.errors import (
    ApiError,
    error_body,
    outcome_unknown,
    status_of,
    unauthorized,
    unavailable,
)
from service.api.keys import SETTINGS
from service.store.database import CommitUnknown, is_rolled_back, is_unavailable
from service.usecases.errors import PlayerGone, ServiceError

REQUEST_ID_HEADER = "X-Request-Id"
INSTANCE_HEADER = "X-Instance"
_VALID_REQUEST_ID = re.compile(r"[A-Za-z0-9._:\-]{1,128}")

_HTTP_CODES = {
    400: "bad_request",
    404: "not_found",
    405: "method_not_allowed",
    413: "body_too_large",
    415: "unsupported_media_type",
    417: "expectation_failed",
}
EXPECTATIONS = ("100-continue",)

log = structlog.get_logger("service.http")


def _request_id(request: web.Request) -> str:
    given = request.headers.get(REQUEST_ID_HEADER, "")
    return given if _VALID_REQUEST_ID.fullmatch(given) else uuid.uuid4().hex


def http_refusal(request: web.Request, exc: web.HTTPException) -> ApiError:
    """aiohttp's own refusal (an unknown path or method, an unknown Expect, ...) in the shape of
    ours."""
    if exc.status == 404:
        return ApiError(404, "not_found", f"no such path: {request.path}")
    if exc.status == 405 and isinstance(exc, web.HTTPMethodNotAllowed):
        allowed = sorted(exc.allowed_methods)
        return ApiError(
            405,
            "method_not_allowed",
            f"{request.method} is not allowed on {request.path}",
            {"allowed": allowed},
            {"Allow": ", ".join(allowed)},
        )
    if exc.status == 413:
        return codec.too_large(request.app[SETTINGS].max_body_bytes)
    if exc.status == 417:
        expect = request.headers.get("Expect", "")
        return ApiError(
            417,
            "expectation_failed",
            f"Expect: {expect!r} is not supported, only {', '.join(EXPECTATIONS)}",
            {"supported": list(EXPECTATIONS)},
        )
    code = _HTTP_CODES.get(exc.status, "http_error")
    return ApiError(exc.status, code, exc.reason)


def error_response(request: web.Request, error: ServiceError) -> web.Response:
    headers = error.headers if isinstance(error, ApiError) else None
    return codec.respond(request, error_body(error), status_of(error), headers)


def refusal_of(exc: Exception) -> ServiceError | None:
    """What a failure tells the client in the error shape; None for a bug, which is a 500."""
    if isinstance(exc, PlayerGone):
        # The answer every request of a deleted player gets, its tokens being refused.
        return unauthorized(exc.message)
    if isinstance(exc, ServiceError):
        return exc
    if isinstance(exc, CommitUnknown):
        log.warning("commit_outcome_unknown", error=str(exc))
        return outcome_unknown()
    if is_unavailable(exc):
        log.warning("database_unavailable", error=type(exc).__name__)
        return unavailable()
    if is_rolled_back(exc):
        # Rare (writes take their locks in one order), and nothing was written: a retry passes.
        log.warning("transaction_rolled_back", error=type(exc).__name__)
        return unavailable("the database rolled the write back to let another through; retry")
    return None


async def tag_instance(request: web.Request, response: web.StreamResponse) -> None:
    """On every answer, WebSocket handshakes included: which instance gave it."""
    response.headers[INSTANCE_HEADER] = request.app[SETTINGS].instance_id


@web.middleware
async def request_context(request: web.Request, handler: Handler) -> web.StreamResponse:
    request_id = _request_id(request)
    # Keep-alive connections reuse one task, so clear what the previous request bound.
    structlog.contextvars.clear_contextvars()
    structlog.contextvars.bind_contextvars(request_id=request_id)
    started = time.perf_counter()
    try:
        response = await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        response = error_response(request, http_refusal(request, exc))
    except Exception as exc:
        error = refusal_of(exc)
        if error is None:
            log.exception("unhandled_error")
            error = ApiError(500, "internal", "internal error", {"request_id": request_id})
        response = error_response(request, error)
    if not response.prepared:
        response.headers[REQUEST_ID_HEADER] = request_id
    # A line per request costs about a tenth of a battle; LOG_REQUESTS=errors keeps the failures.
    if response.status >= 400 or request.app[SETTINGS].log_requests == "all":
        log.info(
            "request",
            method=request.method,
            path=request.path,
            status=response.status,
            ms=round((time.perf_counter() - started) * 1000, 2),
        )
    return response
