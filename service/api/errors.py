"""The one error shape: {"error": {"code", "message", "details"}} with a fitting status."""

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from service.usecases.errors import (
    Conflict,
    Forbidden,
    Illegal,
    InvalidFields,
    NotFound,
    ServiceError,
)

# The status of each kind of refusal a use-case raises (the most specific kind wins).
_STATUS_OF_KIND: tuple[tuple[type[ServiceError], int], ...] = (
    (NotFound, 404),
    (Forbidden, 403),
    (Conflict, 409),
    (Illegal, 422),
)


class ApiError(ServiceError):
    """A refusal decided by the HTTP layer, possibly with headers (Retry-After, Allow…)."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        details: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message, details, code=code)
        self.status = status
        self.headers = dict(headers or {})


def status_of(error: ServiceError) -> int:
    if isinstance(error, ApiError):
        return error.status
    return next((status for kind, status in _STATUS_OF_KIND if isinstance(error, kind)), 400)


def error_body(error: ServiceError) -> dict[str, Any]:
    return {"error": {"code": error.code, "message": error.message, "details": error.details}}


def field_path(loc: tuple[int | str, ...]) -> str:
    """('a', 'cryptids', 2, 'species') -> 'a.cryptids[2].species'."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path or "(body)"


def from_validation_error(exc: ValidationError, prefix: tuple[str, ...] = ()) -> InvalidFields:
    return InvalidFields(
        [
            (field_path(prefix + tuple(err["loc"])), err["msg"])
            for err in exc.errors(include_url=False, include_input=False)
        ]
    )


def unauthorized(message: str) -> ApiError:
    return ApiError(401, "unauthorized", message, headers={"WWW-Authenticate": "Bearer"})


def forbidden(message: str) -> ApiError:
    return ApiError(403, "forbidden", message)


def not_found(message: str) -> ApiError:
    return ApiError(404, "not_found", message)


def rate_limited(retry_after: float, limit: str | None = None) -> ApiError:
    """A 429; `limit` names the limit that refused, when it is not the per-request one."""
    seconds = max(1, int(retry_after + 0.999))
    details: dict[str, Any] = {"retry_after": seconds}
    if limit is not None:
        details["limit"] = limit
    return ApiError(
        429,
        "rate_limited",
        f"too many requests; retry in {seconds}s",
        details,
        {"Retry-After": str(seconds)},
    )


def unavailable(message: str = "the database is unavailable; retry shortly") -> ApiError:
    """Nothing was written: the request may be retried as it is."""
    return ApiError(503, "unavailable", message, headers={"Retry-After": "1"})


def outcome_unknown() -> ApiError:
    """The database went away while the write committed: it may or may not have happened."""
    return ApiError(
        503,
        "outcome_unknown",
        "the database went away while committing: the write may have been applied. Retry with"
        " the same Idempotency-Key or version, which returns its answer or applies it once",
        headers={"Retry-After": "1"},
    )
