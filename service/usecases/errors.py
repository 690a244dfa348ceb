"""Refusals a use-case raises, by kind; the HTTP layer gives each kind its status.

Every refusal has a stable code and changes nothing.
"""

from collections.abc import Mapping
from typing import Any


class ServiceError(Exception):
    """A refusal: a stable `code`, a message for people, and details for programs."""

    code = "bad_request"

    def __init__(
        self, message: str, details: Mapping[str, Any] | None = None, *, code: str | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.details = dict(details or {})
        if code is not None:
            self.code = code


class NotFound(ServiceError):
    code = "not_found"


class Forbidden(ServiceError):
    code = "forbidden"


class Conflict(ServiceError):
    """The request clashes with the resource's state (a stale version, a finished run, …)."""

    code = "conflict"


class Illegal(ServiceError):
    """Valid syntax, but not allowed by the rules or the state."""

    code = "illegal"


class PlayerGone(ServiceError):
    """The player's account was deleted: a request of its is refused as its tokens are (401)."""

    code = "unauthorized"


class InvalidFields(Illegal):
    """Fields that decode but are not acceptable, each named: `details.fields`."""

    code = "invalid_field"

    def __init__(self, fields: list[tuple[str, str]]) -> None:
        field, message = fields[0]
        named = [{"field": f, "message": m} for f, m in fields]
        super().__init__(f"{field}: {message}", {"fields": named})


def invalid_field(field: str, message: str) -> InvalidFields:
    return InvalidFields([(field, message)])
