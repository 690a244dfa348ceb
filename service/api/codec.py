"""JSON and msgpack both ways: request bodies by Content-Type, responses by Accept."""

import gc
import json
import re
import zlib
from itertools import islice
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
# Arrays and objects in one body, many times what any request holds (an end of turn with 64
# shop moves holds 67): what a body costs is mostly its containers, each an object to allocate
# and for the garbage collector to go through, far more than its bytes.
MAX_CONTAINERS = 512


# A JSON string, escapes included, or an unterminated one up to the end of the body: matched in
# one pass whatever the body holds (the quantifiers never give back), so stripping is linear.
_JSON_STRING = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+(?:"|\\?\Z)', re.DOTALL)
# Outside strings, only brackets count for depth: `{`/`[` open, `}`/`]` close.
_BRACKETS = bytes.maketrans(b"{}", b"[]")
_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")
# orjson reads an integer beyond 64 bits as a float; 19 digits in a row may be one.
_LONG_DIGITS = re.compile(rb"[0-9]{19}")


def _bracket_patterns(limit: int) -> tuple[re.Pattern[bytes], re.Pattern[bytes]]:
    """Two patterns over brackets alone: groups nested at most `limit` deep, and an opening of
    one level more than `limit` reached through such groups.

    Nesting bounded by a number is a regular language, so a regular expression decides it;
    with possessive quantifiers it never backtracks, so each bracket is read once, in C.
    """
    within = [b""]
    for _ in range(limit):
        within.append(rb"(?:\[" + within[-1] + rb"\])*+")
    deeper = b"".join(rb"\[" + within[limit - 1 - level] for level in range(limit)) + rb"\["
    return re.compile(within[limit]), re.compile(deeper)


_WITHIN_DEPTH, _DEEPER = _bracket_patterns(MAX_DEPTH)


def too_deep() -> ApiError:
    return ApiError(
        400,
        "malformed_body",
        f"body is nested more than {MAX_DEPTH} levels deep",
        {"max_depth": MAX_DEPTH},
    )


def too_many_containers() -> ApiError:
    return ApiError(
        400,
        "malformed_body",
        f"body holds more than {MAX_CONTAINERS} arrays and objects",
        {"max_containers": MAX_CONTAINERS},
    )


def _nested_too_deep(brackets: bytes) -> bool:
    """Whether the brackets open a level deeper than MAX_DEPTH before they go wrong.

    Brackets that close what is not open, or leave something open, are malformed rather than
    deep: the parser names what is wrong with them.
    """
    within = _WITHIN_DEPTH.match(brackets)
    end = within.end() if within else 0
    return end < len(brackets) and _DEEPER.match(brackets, end) is not None


def _utf8(raw: bytes) -> bytes:
    """The body as UTF-8, as the json module read it: a byte order mark, UTF-16 and UTF-32 too."""
    encoding = json.detect_encoding(raw)
    if encoding == "utf-8":
        return raw
    try:
        return raw.decode(encoding).encode()
    except UnicodeError as exc:
        raise ApiError(400, "malformed_body", f"body is not valid JSON: {exc}") from exc


def _decode_json(raw: bytes) -> Any:
    """orjson reads the body once a scan of its bytes outside strings, in C, has bounded its
    depth and its arrays and objects, so that a body past them is never parsed.

    The result is what `json.loads` gave, but for numbers no double holds (Infinity, NaN,
    1e400), refused as before, and lone surrogates, refused now. Integers beyond 64 bits, which
    orjson would read as floats, are read by the json module, so that they stay integers.
    """
    raw = _utf8(raw)
    outside_strings = _JSON_STRING.sub(b"", raw)
    brackets = outside_strings.translate(_BRACKETS, _NOT_BRACKETS)
    if _nested_too_deep(brackets):
        raise too_deep()
    if brackets.count(b"[") > MAX_CONTAINERS:
        raise too_many_containers()
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ApiError(400, "malformed_body", f"body is not valid JSON: {exc}") from exc
    if _LONG_DIGITS.search(outside_strings):
        return json.loads(raw)
    return data


_CONTAINERS = (dict, list)


def _msgpack_refusal(value: Any) -> ApiError | None:
    """Why a decoded msgpack body is refused: nested past MAX_DEPTH, or holding more than
    MAX_CONTAINERS arrays and objects; None when it is neither.

    It walks one level of containers at a time (no recursion, however deep the body) and stops
    as soon as it has seen too many.
    """
    level = [value] if type(value) in _CONTAINERS else []
    seen = len(level)
    for _ in range(MAX_DEPTH):
        if not level:
            return None
        children = (
            child
            for item in level
            for child in (item.values() if type(item) is dict else item)
            if type(child) in _CONTAINERS
        )
        level = list(islice(children, MAX_CONTAINERS - seen + 1))
        seen += len(level)
        if seen > MAX_CONTAINERS:
            return too_many_containers()
    return too_deep() if level else None


def decode(content_type: str, raw: bytes) -> Any:
    """Decode a request body; 400 when malformed, too deep or holding too many arrays and
    objects, 415 for another media type."""
    if content_type == JSON:
        decoder = _decode_json
    elif content_type in _MSGPACK_TYPES:
        decoder = _decode_msgpack
    else:
        raise _unsupported(content_type)
    # msgpack has no scan as cheap as JSON's brackets: its arrays and objects are counted once
    # decoded. Thousands of them would set off a collection every 700, and now and then one of
    # the whole heap, at many times the cost of the decoding; a body holds no cycle, and one
    # refused is freed before collecting resumes.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return decoder(raw)
    finally:
        if collecting:
            gc.enable()


def _unsupported(content_type: str) -> ApiError:
    return ApiError(
        415,
        "unsupported_media_type",
        f"Content-Type must be {JSON} or {MSGPACK}, got {content_type!r}",
        {"supported": [JSON, MSGPACK]},
    )


def _decode_msgpack(raw: bytes) -> Any:
    """msgpack bounds every length it reads by the body's own size; depth and containers are
    bounded once decoded."""
    try:
        data = msgpack.unpackb(raw, raw=False, strict_map_key=True)
    except msgpack.StackError as exc:  # deeper than msgpack's own limit, 1024 levels
        raise too_deep() from exc
    except Exception as exc:  # msgpack raises several unrelated types for bad input
        raise ApiError(400, "malformed_body", "body is not valid msgpack") from exc
    refusal = _msgpack_refusal(data)
    if refusal is not None:
        # Freed now, while collecting waits, rather than kept alive by the traceback.
        del data
        raise refusal
    return data


# The content codings a body may come in, by zlib's window bits for each ("deflate" is zlib's
# format, RFC 9110; a raw deflate stream, which some clients send instead, is told by its
# first byte). Brotli and zstd are refused: bodies this small gain little from them.
GZIP_BITS = 16 + zlib.MAX_WBITS
_CODINGS = {"gzip": GZIP_BITS, "x-gzip": GZIP_BITS, "deflate": zlib.MAX_WBITS}
CONTENT_CODINGS = ("gzip", "deflate")


def unsupported_encoding(encoding: str) -> ApiError:
    return ApiError(
        415,
        "unsupported_encoding",
        f"Content-Encoding must be {' or '.join(CONTENT_CODINGS)} (or none), got {encoding!r}",
        {"supported": list(CONTENT_CODINGS)},
        # RFC 7694: what a 415 for a content coding tells the client it may send instead.
        {"Accept-Encoding": ", ".join(CONTENT_CODINGS)},
    )


def malformed_encoding(encoding: str, why: str) -> ApiError:
    return ApiError(400, "malformed_body", f"body is not valid {encoding}: {why}")


class _Inflater:
    """A compressed body inflated a chunk at a time, never past what the limit still allows:
    the server's own inflating is off, so a small body that would inflate to gigabytes costs
    no more than `limit` bytes of output before it is refused."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        self._bits = _CODINGS[encoding]
        self._zlib: zlib._Decompress | None = None

    def feed(self, chunk: bytes, room: int) -> bytes:
        """`chunk` inflated, at most `room` bytes of it (room > 0)."""
        if self._zlib is None:
            raw_deflate = self._bits == zlib.MAX_WBITS and chunk[0] & 0x0F != 8
            self._zlib = zlib.decompressobj(-zlib.MAX_WBITS if raw_deflate else self._bits)
        if self._zlib.eof:
            raise malformed_encoding(self.encoding, "data after the end of the stream")
        try:
            inflated = self._zlib.decompress(chunk, room)
        except zlib.error as exc:
            raise malformed_encoding(self.encoding, str(exc)) from exc
        if self._zlib.eof and self._zlib.unused_data:
            raise malformed_encoding(self.encoding, "data after the end of the stream")
        return inflated

    def finish(self) -> None:
        if self._zlib is not None and not self._zlib.eof:
            raise malformed_encoding(self.encoding, "the stream ends before its end")


def _inflater(request: web.Request) -> _Inflater | None:
    """How the body is inflated: None when it is not compressed; 415 for a coding refused."""
    codings = [
        coding.strip().lower()
        for coding in request.headers.get("Content-Encoding", "").split(",")
        if coding.strip() and coding.strip().lower() != "identity"
    ]
    if not codings:
        return None
    if len(codings) > 1 or codings[0] not in _CODINGS:
        raise unsupported_encoding(", ".join(codings))
    return _Inflater(codings[0])


async def _chunk(request: web.Request) -> bytes:
    """The next bytes of the body as they arrive; a body that ends before its length (the
    client went away) is a 400, not taken for a lost database."""
    try:
        return await request.content.readany()
    except (web.RequestPayloadError, ConnectionError) as exc:
        raise ApiError(400, "malformed_body", "the body ended before its length") from exc


async def read_body(request: web.Request, limit: int) -> Any:
    """The decoded body; an empty body reads as an empty object.

    A body declared over `limit` is refused before a byte of it is read, and one that is not
    declared (chunked) as soon as what was read passes `limit`. A compressed body is bounded
    twice: what was read, and what it inflates to, each by `limit`.
    """
    inflater = _inflater(request)
    if request.content_length is not None and request.content_length > limit:
        raise too_large(limit)
    raw = bytearray()
    read = 0
    while chunk := await _chunk(request):
        read += len(chunk)
        if inflater is not None:
            chunk = inflater.feed(chunk, limit + 1 - len(raw))
        raw += chunk
        if len(raw) > limit or read > limit:
            raise too_large(limit)
    if inflater is not None and read:
        inflater.finish()
    if not raw:
        return {}
    return decode(request.content_type, bytes(raw))


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


_INT64 = range(-(2**63), 2**64)


def _writable(value: Any, msgpack_wanted: bool) -> Any:
    """`value` with what the format cannot hold written another way: an error's details may
    echo what a client sent, in the other format (bytes in JSON, an integer past 64 bits in
    msgpack) or as a string no UTF-8 holds (a lone surrogate). Bytes become their text,
    such integers their digits, a lone surrogate U+FFFD, a key that is not text its text."""
    if isinstance(value, dict):
        return {_key(k): _writable(v, msgpack_wanted) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_writable(v, msgpack_wanted) for v in value]
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, bytes | bytearray) and not msgpack_wanted:
        return bytes(value).decode("utf-8", "replace")
    if type(value) is int and msgpack_wanted and value not in _INT64:
        return str(value)
    return value


def _key(key: Any) -> str:
    text = _writable(key, msgpack_wanted=False)
    return text if isinstance(text, str) else str(text)


def encode(data: Any, msgpack_wanted: bool) -> tuple[bytes, str]:
    try:
        return _encode(data, msgpack_wanted)
    except (TypeError, ValueError, OverflowError):
        # Only an answer echoing what a client sent gets here: the fast path stays as it was.
        return _encode(_writable(data, msgpack_wanted), msgpack_wanted)


def _encode(data: Any, msgpack_wanted: bool) -> tuple[bytes, str]:
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
