import json
from typing import Any

import msgpack
import pytest

from service.api import codec
from service.api.codec import prefers_msgpack
from service.api.errors import ApiError
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
async def test_body_over_one_mebibyte_is_413(api: Api, accept: str) -> None:
    big = json.dumps({"name": "x" * (1024 * 1024)}).encode()
    answer = await api.post(
        "/v1/players", raw=big, headers={"Content-Type": "application/json", "Accept": accept}
    )
    assert answer.status == 413
    assert answer.error_code == "body_too_large"
    assert answer.body["error"]["details"]["limit"] == 1024 * 1024


async def test_chunked_body_over_the_limit_is_413(api: Api) -> None:
    async def chunks():  # type: ignore[no-untyped-def]
        for _ in range(1100):
            yield b"x" * 1024

    async with api.session.post(
        api.base_url + "/v1/players", data=chunks(), headers={"Content-Type": "application/json"}
    ) as response:
        assert response.status == 413
        assert (await response.json())["error"]["code"] == "body_too_large"


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


@pytest.mark.parametrize("container", ["dict", "list"])
def test_depth_limit_admits_max_depth_and_refuses_one_more(container: str) -> None:
    raw = json.dumps(_within(codec.MAX_DEPTH, container)).encode()
    assert codec.decode(codec.JSON, raw) == _within(codec.MAX_DEPTH, container)
    deeper = msgpack.packb(_within(codec.MAX_DEPTH + 1, container))
    with pytest.raises(ApiError) as refused:
        codec.decode(codec.MSGPACK, deeper)
    assert refused.value.code == "malformed_body"
    assert refused.value.details == {"max_depth": codec.MAX_DEPTH}


def test_depth_counts_the_deepest_branch_not_the_first() -> None:
    body = {"a": [1, 2], "b": [{"c": _within(codec.MAX_DEPTH - 1, "list")}]}
    with pytest.raises(ApiError):
        codec.decode(codec.JSON, json.dumps(body).encode())
    assert codec.decode(codec.JSON, json.dumps({"a": [], "b": body["a"]}).encode())


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
