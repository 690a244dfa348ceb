"""Errors a use-case raises; the HTTP layer answers each in the one error shape."""

from collections.abc import Mapping
from typing import Any


class ServiceError(Exception):
    """A refusal with a fitting status and a stable code; nothing was changed."""

    status = 400
    code = "bad_request"

    def __init__(
        self,
        message: str,
        details: Mapping[str, Any] | None = None,
        *,
        code: str | None = None,
        status: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.details = dict(details or {})
        if code is not None:
            self.code = code
        if status is not None:
            self.status = status


class NotFound(ServiceError):
    status = 404
    code = "not_found"


class Forbidden(ServiceError):
    status = 403
    code = "forbidden"


class Conflict(ServiceError):
    status = 409
    code = "conflict"


class Illegal(ServiceError):
    """Valid syntax, but not allowed by the rules or the state."""

    status = 422
    code = "illegal"


class InvalidFields(ServiceError):
    """Fields that decode but are not acceptable, each named: `details.fields`."""

    status = 422
    code = "invalid_field"

    def __init__(self, fields: list[tuple[str, str]]) -> None:
        field, message = fields[0]
        named = [{"field": f, "message": m} for f, m in fields]
        super().__init__(f"{field}: {message}", {"fields": named})


def invalid_field(field: str, message: str) -> InvalidFields:
    return InvalidFields([(field, message)])
