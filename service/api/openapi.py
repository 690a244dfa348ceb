"""The OpenAPI 3.1 document, generated from the endpoint declarations and their models."""

import re
from typing import Any

from pydantic import TypeAdapter
from typing_extensions import TypedDict

from service.api.endpoints import (
    IDEMPOTENCY_HEADER,
    MAX_KEY_LENGTH,
    OPS_HEADER,
    Endpoint,
    Endpoints,
)
from service.config import Settings

_REF = "#/components/schemas/{model}"
_STATUS_TEXT = {
    400: "Malformed body",
    401: "Missing or invalid credentials",
    403: "Not allowed",
    404: "Not found",
    405: "Method not allowed",
    409: "Version or idempotency conflict",
    413: "Body too large",
    415: "Unsupported media type",
    422: "Invalid fields or illegal in the rules",
    429: "Rate limited (see Retry-After)",
    503: "Database unavailable (see Retry-After)",
}
_MEDIA = ("application/json", "application/msgpack")


class ErrorDetail(TypedDict):
    code: str
    message: str
    details: dict[str, Any]


class Error(TypedDict):
    error: ErrorDetail


def _content(schema: dict[str, Any]) -> dict[str, Any]:
    return {media: {"schema": schema} for media in _MEDIA}


def _ref(model: Any) -> dict[str, str]:
    return {"$ref": _REF.format(model=model.__name__)}


def _parameters(endpoint: Endpoint) -> list[dict[str, Any]]:
    params: list[dict[str, Any]] = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
        for name in re.findall(r"{(\w+)}", endpoint.path)
    ]
    if endpoint.idempotent:
        params.append(
            {
                "name": IDEMPOTENCY_HEADER,
                "in": "header",
                "required": False,
                "description": "the same key and request return the stored answer",
                "schema": {"type": "string", "minLength": 1, "maxLength": MAX_KEY_LENGTH},
            }
        )
    if endpoint.query is not None:
        schema = endpoint.query.model_json_schema(ref_template=_REF)
        required = set(schema.get("required", []))
        for name, prop in schema.get("properties", {}).items():
            params.append(
                {"name": name, "in": "query", "required": name in required, "schema": prop}
            )
    return params


def error_statuses(endpoint: Endpoint) -> list[int]:
    """The declared refusals plus those every endpoint of its kind can give."""
    statuses = set(endpoint.errors)
    if endpoint.body is not None:
        statuses |= {400, 413, 415, 422}
    if endpoint.query is not None:
        statuses.add(422)
    # Sign-ins and failed authentications count against the client's address: a 429 when
    # it has none left.
    if endpoint.auth == "player":
        statuses |= {401, 429}
    elif endpoint.auth == "ops":
        statuses |= {401, 403, 429}
    if endpoint.rate_limited:
        statuses.add(429)
    if endpoint.database:
        statuses.add(503)
    return sorted(statuses)


def _operation(endpoint: Endpoint, max_body_bytes: int) -> dict[str, Any]:
    ok: dict[str, Any] = {"description": "Success"}
    if endpoint.media:
        ok["content"] = {media: {"schema": {"type": "string"}} for media in endpoint.media}
    elif endpoint.response is not None:
        ok["content"] = _content(_ref(endpoint.response))
    responses: dict[str, Any] = {str(status): ok for status in (endpoint.status, *endpoint.also)}
    for status in error_statuses(endpoint):
        responses[str(status)] = {
            "description": _STATUS_TEXT.get(status, "Error"),
            "content": _content(_ref(Error)),
        }
    operation: dict[str, Any] = {
        "operationId": endpoint.handler.__name__,
        "summary": endpoint.summary,
        "tags": [endpoint.tag],
        "parameters": _parameters(endpoint),
        "responses": responses,
    }
    if endpoint.body is not None:
        # A body whose fields are all optional may be left out: it reads as {}.
        required = bool(endpoint.body.model_json_schema().get("required"))
        operation["requestBody"] = {
            "required": required,
            "description": f"at most {max_body_bytes} bytes (MAX_BODY_BYTES), else a 413",
            "content": _content(_ref(endpoint.body)),
            "x-max-body-bytes": max_body_bytes,
        }
    if endpoint.auth == "player":
        operation["security"] = [{"bearer": []}]
    elif endpoint.auth == "ops":
        operation["security"] = [{"opsToken": []}]
    return operation


def _schemas(endpoints: list[Endpoint]) -> dict[str, Any]:
    requests = {m for e in endpoints for m in (e.body, e.query) if m is not None}
    responses = {e.response for e in endpoints if e.response is not None} | {Error}
    inputs: list[tuple[Any, Any, TypeAdapter[Any]]] = [
        (m, "validation", TypeAdapter(m)) for m in requests
    ]
    inputs += [(m, "serialization", TypeAdapter(m)) for m in responses]
    # A type used both as request and as response would get two suffixed names; none is.
    _, defs = TypeAdapter.json_schemas(inputs, ref_template=_REF)
    schemas: dict[str, Any] = defs.get("$defs", {})
    return schemas


def build_document(
    tables: list[Endpoints],
    extra_schemas: dict[str, Any] | None = None,
    max_body_bytes: int = Settings.max_body_bytes,
) -> dict[str, Any]:
    endpoints = [e for table in tables for e in table.items]
    paths: dict[str, Any] = {}
    for endpoint in endpoints:
        operation = _operation(endpoint, max_body_bytes)
        paths.setdefault(endpoint.path, {})[endpoint.method.lower()] = operation
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Cryptid backend",
            "version": "1",
            "description": (
                "Every endpoint speaks JSON and msgpack: the request by Content-Type, the answer by"
                " Accept. Errors share one shape. See docs/api.md#the-wire-contract."
            ),
        },
        "paths": dict(sorted(paths.items())),
        "components": {
            "schemas": dict(sorted({**_schemas(endpoints), **(extra_schemas or {})}.items())),
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "bearerFormat": "JWT",
                    "description": (
                        "An access token from a sign-in (POST /v1/auth/device, /v1/players) or"
                        " a refresh (POST /v1/auth/refresh), accepted for its `expires_in`"
                        " seconds unless its session is signed out; on a 401, refresh, then"
                        " sign in again. See docs/api.md#players-and-sessions."
                    ),
                },
                "opsToken": {"type": "apiKey", "in": "header", "name": OPS_HEADER},
            },
        },
    }
