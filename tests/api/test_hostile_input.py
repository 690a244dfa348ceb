"""Input a careless or hostile client sends: each gets its 4xx in the error shape, never a 500."""

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import msgpack
import pytest

from service.api.auth import issue_token
from tests.conftest import TEST_SECRET, running_service
from tests.http import Api


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


async def _raw(api: Api, head: bytes, body: bytes = b"") -> tuple[int, bytes]:
    """One request written byte for byte (headers no client library would send)."""
    host, port = api.base_url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(
            head + b"\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body
        )
        await writer.drain()
        answer = await reader.read()
    finally:
        writer.close()
    status = int(answer.split(b" ", 2)[1])
    return status, answer


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/v1/runs"),
        ("POST", "/v1/matches"),
        ("POST", "/v1/matches/{match}/join"),
        ("GET", "/v1/players/me"),
    ],
)
async def test_a_signed_token_of_a_player_that_does_not_exist_is_401(
    api: Api, method: str, path: str
) -> None:
    _, owner = await api.new_player("owner")
    match = (await api.post("/v1/matches", {"game": "necromancers", "seats": 2}, token=owner)).body
    ghost = issue_token(TEST_SECRET, uuid.uuid4(), 3600)
    body = {"game": "necromancers", "seats": 2} if path == "/v1/matches" else {}
    answer = await api.call(method, path.format(match=match["match_id"]), body, token=ghost)
    assert (answer.status, answer.error_code) == (401, "unauthorized")


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
async def test_a_body_nested_too_deep_is_400_even_with_an_idempotency_key(
    api: Api, fmt: str
) -> None:
    _, token = await api.new_player("deep")
    # JSON as deep as the client's own encoder allows; msgpack as deep as the issue's report.
    body = {
        "version": 0,
        "action": {"type": "x", "deep": _nested(900 if fmt == "msgpack" else 500)},
    }
    headers = {"Idempotency-Key": "deep-1"}
    answer = await api.post(
        f"/v1/matches/{uuid.uuid4()}/actions", body, token=token, headers=headers, fmt=fmt
    )
    assert (answer.status, answer.error_code) == (400, "malformed_body")
    assert answer.body["error"]["details"]["max_depth"] == 32
    shallow = {"version": 0, "action": {"type": "x", "deep": _nested(20)}}
    fine = await api.post(f"/v1/matches/{uuid.uuid4()}/actions", shallow, token=token, fmt=fmt)
    assert fine.status == 404


async def test_a_header_that_is_not_ascii_is_refused_in_the_error_shape(api: Api) -> None:
    _, token = await api.new_player("bytes")
    status, answer = await _raw(
        api, b"GET /v1/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \xff\xfe"
    )
    assert status == 401 and b'"unauthorized"' in answer
    key = b"POST /v1/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token.encode()
    status, answer = await _raw(
        api, key + b"\r\nIdempotency-Key: caf\xe9\r\nContent-Type: application/json", b"{}"
    )
    assert status == 400 and b'"invalid_idempotency_key"' in answer
    status, answer = await _raw(
        api, b"GET /v1/ops/matchmaking HTTP/1.1\r\nHost: x\r\nX-Ops-Token: \xe9"
    )
    assert status == 403 and b'"forbidden"' in answer


async def test_an_idempotency_key_out_of_bounds_is_400(api: Api) -> None:
    _, token = await api.new_player("keys")
    for key in ("x" * 201, "tab\there"):
        answer = await api.post("/v1/runs", {}, token=token, headers={"Idempotency-Key": key})
        assert (answer.status, answer.error_code) == (400, "invalid_idempotency_key")


async def test_query_integers_past_their_range_are_422(api: Api) -> None:
    _, token = await api.new_player("ranges")
    match = (await api.post("/v1/matches", {"game": "necromancers", "seats": 2}, token=token)).body
    base = f"/v1/matches/{match['match_id']}"
    for query in (f"after={2**63}", "after=-1", f"after={2**64 + 5}"):
        answer = await api.get(f"{base}/events?{query}", token=token)
        assert (answer.status, answer.error_code) == (422, "invalid_field"), query
    socket = await api.get(f"{base}/ws?after={2**63}&token={token}")
    assert (socket.status, socket.error_code) == (422, "invalid_field")
    version = await api.post(
        f"{base}/actions", {"version": 2**40, "action": {"type": "x"}}, token=token
    )
    assert (version.status, version.error_code) == (422, "invalid_field")


@pytest.fixture
async def tight_limit(make_settings: Any) -> AsyncIterator[Api]:
    async with running_service(
        make_settings(rate_limit_per_second=1.0, rate_limit_burst=5)
    ) as client:
        yield client


async def test_failed_authentications_are_rate_limited_per_client_address(
    tight_limit: Api,
) -> None:
    statuses = [
        (await tight_limit.get("/v1/runs", token=f"forged.{n}.token")).status for n in range(12)
    ]
    assert statuses[0] == 401
    assert 429 in statuses and statuses.index(429) <= 6
    limited = await tight_limit.get("/v1/runs", token="forged")
    assert limited.status == 429 and int(limited.headers["Retry-After"]) >= 1


async def test_a_msgpack_body_with_a_map_key_that_is_not_a_string_is_400(api: Api) -> None:
    _, token = await api.new_player("keys2")
    raw = msgpack.packb({1: "x"})
    answer = await api.post(
        "/v1/players", token=token, raw=raw, headers={"Content-Type": "application/msgpack"}
    )
    assert (answer.status, answer.error_code) == (400, "malformed_body")
