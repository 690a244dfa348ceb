"""JSON and msgpack both ways: request bodies by Content-Type, responses by Accept."""

import json
from typing import Any

import msgpack
import orjson
import ormsgpack
from aiohttp import web

from service.api.errors import ApiError

JSON = "application/json"
MSGPACK = "application/msgpack"
_MSGPACK_TYPES = frozenset({MSGPACK, "application/x-msgpack"})
# Deeper than any request needs; a deeper body would exhaust the stack while it is encoded.
MAX_DEPTH = 32


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


_CONTAINERS = (dict, list)


def _depth_within(value: Any, limit: int) -> bool:
    """Whether no container inside `value` is nested more than `limit` deep.

    It walks one level of containers at a time and never visits a scalar, so a body costs
    about as much as it has dicts and lists (no recursion, however deep the body).
    """
    level = [value] if type(value) in _CONTAINERS else []
    for _ in range(limit):
        if not level:
            return True
        level = [
            child
            for item in level
            for child in (item.values() if type(item) is dict else item)
            if type(child) in _CONTAINERS
        ]
    return not level


def decode(content_type: str, raw: bytes) -> Any:
    """Decode a request body; 400 when malformed or too deep, 415 for another media type."""
    data = _decode(content_type, raw)
    if not _depth_within(data, MAX_DEPTH):
        raise ApiError(
            400,
            "malformed_body",
            f"body is nested more than {MAX_DEPTH} levels deep",
            {"max_depth": MAX_DEPTH},
        )
    return data


def _decode(content_type: str, raw: bytes) -> Any:
    if content_type == JSON:
        try:
            return json.loads(raw, parse_constant=_reject_constant)
        except (ValueError, RecursionError) as exc:
            raise ApiError(400, "malformed_body", f"body is not valid JSON: {exc}") from exc
    if content_type in _MSGPACK_TYPES:
        try:
            return msgpack.unpackb(raw, raw=False, strict_map_key=True)
        except Exception as exc:  # msgpack raises several unrelated types for bad input
            raise ApiError(400, "malformed_body", "body is not valid msgpack") from exc
    raise ApiError(
        415,
        "unsupported_media_type",
        f"Content-Type must be {JSON} or {MSGPACK}, got {content_type!r}",
        {"supported": [JSON, MSGPACK]},
    )


async def read_body(request: web.Request, limit: int) -> Any:
    """The decoded body; an empty body reads as an empty object."""
    if request.content_length is not None and request.content_length > limit:
        raise too_large(limit)
    try:
        raw = await request.read()
    except web.HTTPRequestEntityTooLarge as exc:
        raise too_large(limit) from exc
    if not raw:
        return {}
    return decode(request.content_type, raw)


def too_large(limit: int) -> ApiError:
    return ApiError(413, "body_too_large", f"request body is over {limit} bytes", {"limit": limit})


def _quality(params: list[str]) -> float:
    for param in params:
        key, _, value = param.strip().partition("=")
        if key.strip() == "q":
            try:
                return float(value)
            except ValueError:
                return 0.0
    return 1.0


def prefers_msgpack(accept: str | None) -> bool:
    """True when Accept names msgpack at least as highly as JSON (JSON is the default)."""
    if not accept or "msgpack" not in accept:
        return False
    best_msgpack = best_json = 0.0
    for item in accept.split(","):
        media, *params = item.split(";")
        media = media.strip().lower()
        if media in _MSGPACK_TYPES:
            best_msgpack = max(best_msgpack, _quality(params))
        elif media == JSON:
            best_json = max(best_json, _quality(params))
    return best_msgpack > 0 and best_msgpack >= best_json


def encode(data: Any, msgpack_wanted: bool) -> tuple[bytes, str]:
    if msgpack_wanted:
        try:
            # ormsgpack writes the same bytes as msgpack, about three times faster on a replay.
            return ormsgpack.packb(data), MSGPACK
        except TypeError:
            # What it refuses (integers past 64 bits, non-string keys) msgpack writes or refuses.
            return msgpack.packb(data), MSGPACK
    try:
        # orjson writes a battle's replay about five times faster than the json module.
        return orjson.dumps(data), JSON
    except TypeError:
        # What orjson refuses (integers past 64 bits, non-string keys) the json module writes.
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode(), JSON


def respond(
    request: web.Request, data: Any, status: int = 200, headers: dict[str, str] | None = None
) -> web.Response:
    body, content_type = encode(data, prefers_msgpack(request.headers.get("Accept")))
    response = web.Response(body=body, status=status, headers=headers)
    response.content_type = content_type
    return response
