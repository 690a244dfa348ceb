import gzip
import json
import zlib
from typing import Any

import msgpack
import pytest

from service.api import codec
from service.api.battles import MAX_LEVEL, SPECIES, SimulateRequest
from service.api.codec import prefers_msgpack
from service.api.errors import ApiError
from service.api.matches import INT32, NewMatch
from service.api.runs import EndTurn
from service.config import Settings
from service.games.registry import REGISTRY
from service.usecases import battles
from tests.http import Api


async def test_msgpack_request_json_answer(api: Api) -> None:
    answer = await api.post(
        "/v1/players",
        raw=msgpack.packb({"name": "mixed"}),
        headers={"Content-Type": "application/msgpack", "Accept": "application/json"},
    )
    assert answer.status == 201
    assert answer.headers["Content-Type"].startswith("application/json")
    assert json.loads(answer.raw)["name"] == "mixed"


async def test_json_request_msgpack_answer(api: Api) -> None:
    answer = await api.post(
        "/v1/players",
        raw=b'{"name": "mixed2"}',
        headers={"Content-Type": "application/json", "Accept": "application/msgpack"},
    )
    assert answer.status == 201
    assert msgpack.unpackb(answer.raw)["name"] == "mixed2"


@pytest.mark.parametrize(
    ("content_type", "raw"),
    [
        ("application/json", b'{"name": '),
        ("application/json", b'{"name": NaN}'),
        ("application/json", b"\xff\xfe"),
        ("application/msgpack", b"\xc1"),
        ("application/msgpack", msgpack.packb({"name": "a"}) + b"\x00"),
        ("application/msgpack", b"\x81\x01\x02"),
    ],
)
@pytest.mark.parametrize("accept", ["application/json", "application/msgpack"])
async def test_malformed_body_is_400(api: Api, content_type: str, raw: bytes, accept: str) -> None:
    answer = await api.post(
        "/v1/players", raw=raw, headers={"Content-Type": content_type, "Accept": accept}
    )
    assert answer.status == 400
    assert answer.error_code == "malformed_body"
    assert answer.headers["Content-Type"].startswith(accept)


@pytest.mark.parametrize("accept", ["application/json", "application/msgpack"])
async def test_unsupported_content_type_is_415(api: Api, accept: str) -> None:
    answer = await api.post(
        "/v1/players", raw=b"name=ana", headers={"Content-Type": "text/plain", "Accept": accept}
    )
    assert answer.status == 415
    assert answer.error_code == "unsupported_media_type"
    assert answer.body["error"]["details"]["supported"] == [
        "application/json",
        "application/msgpack",
    ]


@pytest.mark.parametrize("accept", ["application/json", "application/msgpack"])
async def test_a_body_of_max_body_bytes_is_read_and_one_byte_more_is_413(
    api: Api, settings: Settings, accept: str
) -> None:
    limit = settings.max_body_bytes
    assert limit == 16 * 1024
    headers = {"Content-Type": "application/json", "Accept": accept}
    padding = limit - len(json.dumps({"name": ""}))
    exact = json.dumps({"name": "x" * padding}).encode()
    assert len(exact) == limit
    read = await api.post("/v1/players", raw=exact, headers=headers)
    assert (read.status, read.error_code) == (422, "invalid_name")
    answer = await api.post("/v1/players", raw=exact + b" ", headers=headers)
    assert answer.status == 413
    assert answer.error_code == "body_too_large"
    assert answer.body["error"]["details"]["limit"] == limit


async def test_chunked_body_over_the_limit_is_413(api: Api) -> None:
    async def chunks():  # type: ignore[no-untyped-def]
        for _ in range(1100):
            yield b"x" * 1024

    async with api.session.post(
        api.base_url + "/v1/players", data=chunks(), headers={"Content-Type": "application/json"}
    ) as response:
        assert response.status == 413
        assert (await response.json())["error"]["code"] == "body_too_large"


def _deflate(raw: bytes, wbits: int) -> bytes:
    packer = zlib.compressobj(wbits=wbits)
    return packer.compress(raw) + packer.flush()


# Every way a body may be compressed: gzip, deflate as RFC 9110 has it (zlib's format) and as
# some clients send it (a raw deflate stream).
CODINGS = {
    "gzip": gzip.compress,
    "deflate": lambda raw: _deflate(raw, zlib.MAX_WBITS),
    "raw deflate": lambda raw: _deflate(raw, -zlib.MAX_WBITS),
}


@pytest.mark.parametrize("coding", sorted(CODINGS))
async def test_a_compressed_body_within_the_limit_is_inflated_and_read(
    api: Api, coding: str
) -> None:
    encoding = coding.split()[-1]
    body = CODINGS[coding](json.dumps({"name": f"squeezed {encoding}"[:20]}).encode())
    answer = await api.post(
        "/v1/players",
        raw=body,
        headers={"Content-Type": "application/json", "Content-Encoding": encoding.upper()},
    )
    assert (answer.status, answer.body["name"]) == (201, f"squeezed {encoding}"[:20])


@pytest.mark.parametrize("coding", sorted(CODINGS))
async def test_a_compressed_body_is_refused_as_soon_as_it_inflates_past_the_limit(
    api: Api, settings: Settings, coding: str
) -> None:
    """Its data check comes after 10 MB and is broken: an inflater that went on past the limit
    would find it and answer 400; one that stops at the limit answers 413."""
    bomb = bytearray(CODINGS[coding](b'{"name": "' + b"x" * 10_000_000 + b'"}'))
    assert len(bomb) < settings.max_body_bytes
    if coding != "raw deflate":  # a raw stream has no check to break
        bomb[-4:] = bytes(4)
    encoding = coding.split()[-1]
    answer = await api.post(
        "/v1/players",
        raw=bytes(bomb),
        headers={"Content-Type": "application/json", "Content-Encoding": encoding},
    )
    assert (answer.status, answer.error_code) == (413, "body_too_large")
    assert answer.body["error"]["details"]["limit"] == settings.max_body_bytes


async def test_a_compressed_body_whose_own_bytes_pass_the_limit_is_refused(api: Api) -> None:
    """Bytes that inflate to nothing still cost their reading: empty deflate blocks, sent
    chunked so that no length refuses them first."""
    empty_blocks = b"\x00\x00\x00\xff\xff" * 8000

    async def chunks():  # type: ignore[no-untyped-def]
        for start in range(0, len(empty_blocks), 4000):
            yield empty_blocks[start : start + 4000]

    headers = {"Content-Type": "application/json", "Content-Encoding": "deflate"}
    async with api.session.post(
        api.base_url + "/v1/players", data=chunks(), headers=headers
    ) as response:
        assert response.status == 413
        assert (await response.json())["error"]["code"] == "body_too_large"


@pytest.mark.parametrize("encoding", ["br", "zstd", "compress", "gzip, gzip", "rot13"])
@pytest.mark.parametrize("accept", ["application/json", "application/msgpack"])
async def test_a_body_in_a_content_coding_not_read_is_415_naming_those_read(
    api: Api, encoding: str, accept: str
) -> None:
    answer = await api.post(
        "/v1/players",
        raw=b'{"name": "squeezed"}',
        headers={
            "Content-Type": "application/json",
            "Content-Encoding": encoding,
            "Accept": accept,
        },
    )
    assert (answer.status, answer.error_code) == (415, "unsupported_encoding")
    assert answer.headers["Content-Type"].startswith(accept)
    assert answer.body["error"]["details"] == {"supported": ["gzip", "deflate"]}
    assert answer.headers["Accept-Encoding"] == "gzip, deflate"


async def test_identity_is_no_coding(api: Api) -> None:
    answer = await api.post(
        "/v1/players",
        raw=b'{"name": "plain"}',
        headers={"Content-Type": "application/json", "Content-Encoding": "identity"},
    )
    assert answer.status == 201


@pytest.mark.parametrize(
    ("encoding", "raw"),
    [
        ("gzip", b"{}"),
        ("gzip", gzip.compress(b'{"name": "cut"}')[:-6]),
        ("gzip", gzip.compress(b'{"name": "one"}') + b"trailing"),
        ("deflate", b"\x78\x9c\xff\xff"),
    ],
)
async def test_a_body_that_does_not_inflate_is_400(api: Api, encoding: str, raw: bytes) -> None:
    answer = await api.post(
        "/v1/players",
        raw=raw,
        headers={"Content-Type": "application/json", "Content-Encoding": encoding},
    )
    assert (answer.status, answer.error_code) == (400, "malformed_body")
    assert answer.body["error"]["message"].startswith(f"body is not valid {encoding}")


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        (None, False),
        ("*/*", False),
        ("application/json", False),
        ("application/msgpack", True),
        ("application/x-msgpack", True),
        ("application/json, application/msgpack", True),
        ("application/msgpack;q=0.5, application/json", False),
        ("application/msgpack, application/json;q=0.9", True),
        ("application/msgpack;q=0", False),
    ],
)
def test_accept_negotiation(accept: str | None, expected: bool) -> None:
    assert prefers_msgpack(accept) is expected


def _within(depth: int, container: str) -> Any:
    """A body whose innermost container is `depth` deep, beside scalars at every level."""
    body: Any = {"leaf": 1} if container == "dict" else [1]
    for level in range(depth - 1):
        body = {"n": level, "inner": body} if container == "dict" else [level, "x", body]
    return body


def _encoded(body: Any, fmt: str) -> tuple[str, bytes]:
    if fmt == "json":
        return codec.JSON, json.dumps(body).encode()
    return codec.MSGPACK, msgpack.packb(body)


def _refusal(content_type: str, raw: bytes) -> ApiError:
    with pytest.raises(ApiError) as refused:
        codec.decode(content_type, raw)
    return refused.value


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
@pytest.mark.parametrize("container", ["dict", "list"])
def test_depth_limit_admits_max_depth_and_refuses_one_more(container: str, fmt: str) -> None:
    assert codec.decode(*_encoded(_within(codec.MAX_DEPTH, container), fmt)) == _within(
        codec.MAX_DEPTH, container
    )
    refused = _refusal(*_encoded(_within(codec.MAX_DEPTH + 1, container), fmt))
    assert (refused.status, refused.code) == (400, "malformed_body")
    assert refused.details == {"max_depth": codec.MAX_DEPTH}


def test_depth_counts_the_deepest_branch_not_the_first() -> None:
    body = {"a": [1, 2], "b": [{"c": _within(codec.MAX_DEPTH - 1, "list")}]}
    with pytest.raises(ApiError):
        codec.decode(codec.JSON, json.dumps(body).encode())
    assert codec.decode(codec.JSON, json.dumps({"a": [], "b": body["a"]}).encode())


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
def test_a_body_deeper_than_the_parsers_own_limit_is_refused_by_depth(fmt: str) -> None:
    """Past 1024 levels orjson and msgpack refuse a body themselves: still a depth refusal."""
    raw = b"[" * 2000 + b"]" * 2000 if fmt == "json" else b"\x91" * 2000 + b"\x90"
    refused = _refusal(codec.JSON if fmt == "json" else codec.MSGPACK, raw)
    assert refused.details == {"max_depth": codec.MAX_DEPTH}


def test_brackets_inside_strings_do_not_count_for_depth() -> None:
    deep_text = "[" * 40 + '\\"{' * 40 + "]" * 40
    body = {"a": deep_text, 'k"[[[': ["]]]", "\\", '"'], "b": _within(codec.MAX_DEPTH - 1, "list")}
    assert codec.decode(codec.JSON, json.dumps(body).encode()) == body
    escaped = json.dumps(body, ensure_ascii=True).encode()
    assert codec.decode(codec.JSON, escaped) == body


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
def test_a_body_holds_at_most_max_containers_arrays_and_objects(fmt: str) -> None:
    """Each array and object is an object to allocate and to collect: their number, not the
    bytes, is what a body costs."""
    most = {"moves": [{"m": i} for i in range(codec.MAX_CONTAINERS - 2)]}
    assert codec.decode(*_encoded(most, fmt)) == most
    refused = _refusal(*_encoded({**most, "one": []}, fmt))
    assert (refused.status, refused.code) == (400, "malformed_body")
    assert refused.details == {"max_containers": codec.MAX_CONTAINERS}


def _same(decoded: Any, expected: Any) -> bool:
    """Equal, and of the same types throughout (1 == 1.0 == True in Python)."""
    return json.dumps(decoded) == json.dumps(expected) and repr(decoded) == repr(expected)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"a": 1, "a": 2}',
        b"[18446744073709551615, 18446744073709551616, -9223372036854775808]",
        b'{"seed": -9223372036854775809, "big": 123456789012345678901234567890}',
        b"[0.1, 1e2, 1E-7, -0.0, 1.7976931348623157e308, 0.12345678901234567890123]",
        b'{"text": "\\u00f1and\\u00fa \\ud83d\\ude00 \\"q\\" \\\\ \\/", "k": null, "t": true}',
        b'  [ {} , [] , "" ]  ',
        "\ufeff".encode() + b'{"bom": 1}',
        '{"utf16": "\u00f1"}'.encode("utf-16"),
        '{"utf32": "\u00f1"}'.encode("utf-32"),
    ],
)
def test_json_bodies_read_as_the_json_module_read_them(raw: bytes) -> None:
    decoded = codec.decode(codec.JSON, raw)
    assert _same(decoded, json.loads(raw))


@pytest.mark.parametrize(
    "raw",
    [
        b'{"n": NaN}',
        b'{"n": Infinity}',
        b"[-Infinity]",
        b"[1e400]",
        b'{"name": "\\ud800"}',
        b'{"name": "\xff"}',
        b"[1, 2",
        b"][",
    ],
)
def test_json_the_service_cannot_hold_is_400(raw: bytes) -> None:
    """Numbers no double holds and strings that are not Unicode (a lone surrogate) cannot be
    stored or answered: refused, as a body that is not JSON is."""
    refused = _refusal(codec.JSON, raw)
    assert (refused.status, refused.code) == (400, "malformed_body")
    assert refused.message.startswith("body is not valid JSON")


def _largest(schema: dict[str, Any]) -> Any:
    """A value of the JSON schema that takes about the most bytes: the longest choices, the
    most items, every property (an upper bound where the schema allows only some at once)."""

    def size(value: Any) -> int:
        return len(json.dumps(value))

    if "enum" in schema:
        return max(schema["enum"], key=size)
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if kind == "object":
        return {name: _largest(part) for name, part in schema["properties"].items()}
    if kind == "array":
        return [_largest(schema["items"])] * schema["maxItems"]
    if kind == "integer":
        return max(schema.get("minimum", 0), schema.get("maximum", 0), key=size)
    if kind == "string":
        return "x" * schema["maxLength"]
    return max((_largest(part) for part in schema.get("oneOf", schema.get("anyOf"))), key=size)


def _largest_bodies() -> dict[str, Any]:
    """The largest body each kind of request can have and still be valid."""
    bodies: dict[str, Any] = {}
    for game in REGISTRY.games():
        options = {
            name: spec.get("max", max(spec.get("choices", [True]), key=lambda c: len(str(c))))
            for name, spec in game.options_schema().items()
        }
        schema = game.loadout_schema()
        bodies[f"POST /v1/matches {game.id}"] = NewMatch.model_validate(
            {
                "game": game.id,
                "ruleset": game.ruleset,
                "seats": game.max_seats,
                "options": options,
                "bots": [-INT32] * (game.max_seats - 1),
                "loadout": None if schema is None else _largest(schema),
                "turn_seconds": 7 * 24 * 3600,
            }
        ).model_dump()
    species = max(SPECIES, key=len)
    warband = {"cryptids": [{"species": species, "ability": 1, "level": MAX_LEVEL}] * 16}
    bodies["POST /v1/battles/simulate"] = SimulateRequest.model_validate(
        {"seed": 2**64 - 1, "a": warband, "b": warband, "ruleset": "r" * 64}
    ).model_dump()
    bodies["POST /v1/runs/{id}/end-turn"] = EndTurn.model_validate(
        {
            "version": INT32,
            "round": 10_000,
            "order": [64] * 64,
            "abilities": [1] * 64,
            "moves": [{"move": "buy", "slot": 64, "position": 64}] * 64,
        }
    ).model_dump()
    return bodies


def test_the_largest_valid_bodies_fit_max_body_bytes_twice_over(settings: Settings) -> None:
    """The limit is far below a megabyte and far above any valid request, indented JSON too."""
    for name, body in _largest_bodies().items():
        indented = json.dumps(body, indent=2).encode()
        for encoded in (indented, msgpack.packb(body)):
            assert 2 * len(encoded) <= settings.max_body_bytes, (name, len(encoded))
        assert codec.decode(codec.JSON, indented) == json.loads(indented)


async def test_the_body_limit_is_in_the_openapi_document(api: Api, settings: Settings) -> None:
    document = (await api.get("/v1/openapi.json")).body
    bodies = [
        operation["requestBody"]
        for operations in document["paths"].values()
        for operation in operations.values()
        if "requestBody" in operation
    ]
    assert len(bodies) > 10
    assert {body["x-max-body-bytes"] for body in bodies} == {settings.max_body_bytes}


@pytest.mark.parametrize(
    "answer",
    [
        {"seed": 2**64 - 1, "floor": -(2**63), "rate": 1.5, "ok": True, "none": None},
        {"nested": [{"dice": [6, 5], "seat": 0}, (1, 2), b"\x00raw"], "text": "ñandú"},
        # Past what the fast encoder takes: integer keys, and a map keyed by bytes.
        {1: "one", 2: [3]},
        {b"key": 1},
    ],
)
def test_msgpack_answers_are_the_bytes_msgpack_writes(answer: Any) -> None:
    body, media = codec.encode(answer, msgpack_wanted=True)
    assert media == codec.MSGPACK
    assert body == msgpack.packb(answer)


def test_a_battle_answer_in_msgpack_is_the_bytes_msgpack_writes() -> None:
    """Replays are compared byte for byte; the faster encoder must not change one byte."""
    outcome = battles.simulate_battle(
        None, 264, [("mothman", 1, 2)] * 5, [("trauco", 0, 1)] * 5, True
    )
    assert codec.encode(outcome, msgpack_wanted=True)[0] == msgpack.packb(outcome)


@pytest.mark.parametrize(
    ("crew", "sent", "accept", "echoed"),
    [
        # msgpack's bin type, here the UTF-8 bytes of a lone surrogate: JSON has no bytes.
        (b"\xed\xa0\x80", "msgpack", "json", "\ufffd\ufffd\ufffd"),
        (b"gremio", "msgpack", "json", "gremio"),
        # An integer JSON holds and msgpack does not: its digits.
        (2**70, "json", "msgpack", str(2**70)),
    ],
)
async def test_a_refusal_echoing_what_the_answers_format_cannot_hold_is_still_a_422(
    api: Api, crew: Any, sent: str, accept: str, echoed: Any
) -> None:
    """A loadout's crew is named back in the refusal's details: a value the answer's format
    cannot write is written another way, not a 500."""
    _, token = await api.new_player("echo")
    body = {"game": "fate-duel", "seats": 2, "loadout": {"crew": crew}}
    raw = msgpack.packb(body) if sent == "msgpack" else json.dumps(body).encode()
    answer = await api.post(
        "/v1/matches",
        raw=raw,
        token=token,
        headers={"Content-Type": f"application/{sent}", "Accept": f"application/{accept}"},
    )
    assert (answer.status, answer.error_code) == (422, "unknown_crew")
    assert answer.body["error"]["details"]["card"] == echoed


def test_an_answer_holding_a_lone_surrogate_is_written_with_a_replacement_character() -> None:
    for wanted in (False, True):
        raw, _ = codec.encode({"card": "a\ud800b"}, wanted)
        decoded = msgpack.unpackb(raw) if wanted else json.loads(raw)
        assert decoded == {"card": "a\ufffdb"}
