"""Input a careless or hostile client sends: each gets its 4xx in the error shape, never a 500."""

import asyncio
import base64
import gzip
import json
import os
import re
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import msgpack
import pytest
from aiohttp import WSCloseCode

from service.api.auth import issue_token
from service.config import Settings
from tests.api.bystander import under_attack
from tests.api.hostile_client import STREAMS
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
async def tight_limit(make_settings: Any, fresh_database_url: str) -> AsyncIterator[Api]:
    # Failures count in the database's buckets: one of its own, so that they are its own.
    settings = make_settings(
        auth_failures_per_address_per_minute=5, database_url=fresh_database_url
    )
    async with running_service(settings) as client:
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


# -- what a body or a frame may cost --

MEGABYTE = 1_000_000
ANSWER_WAIT = 5.0


async def _connect(api: Api) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    host, port = api.base_url.removeprefix("http://").split(":")
    return await asyncio.open_connection(host, int(port))


async def _answer(reader: asyncio.StreamReader) -> tuple[int, dict[str, Any]]:
    """The status and JSON body of the answer, read within a few seconds."""
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), ANSWER_WAIT)
    length = re.search(rb"(?i)content-length: *(\d+)", head)
    assert length is not None, head
    body = await asyncio.wait_for(reader.readexactly(int(length[1])), ANSWER_WAIT)
    return int(head.split(b" ", 2)[1]), json.loads(body)


async def test_a_1_mb_body_is_refused_by_its_content_length_before_it_is_sent(api: Api) -> None:
    reader, writer = await _connect(api)
    try:
        # Unauthenticated, and only the first KiB of the megabyte it declares.
        writer.write(
            b"POST /v1/players HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % MEGABYTE + b'{"name": "' + b"x" * 1024
        )
        status, body = await _answer(reader)
    finally:
        writer.close()
    assert (status, body["error"]["code"]) == (413, "body_too_large")
    assert body["error"]["details"]["limit"] == Settings.max_body_bytes == 16 * 1024


async def test_a_client_that_asks_before_sending_a_1_mb_body_is_told_413_not_to_continue(
    api: Api,
) -> None:
    head = b"POST /v1/players HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    reader, writer = await _connect(api)
    try:
        writer.write(head + b"Expect: 100-continue\r\nContent-Length: %d\r\n\r\n" % MEGABYTE)
        status, body = await _answer(reader)
        assert (status, body["error"]["code"]) == (413, "body_too_large")
    finally:
        writer.close()
    small = b'{"name": "asked"}'
    reader, writer = await _connect(api)
    try:
        writer.write(head + b"Expect: 100-continue\r\nContent-Length: %d\r\n\r\n" % len(small))
        interim = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), ANSWER_WAIT)
        assert interim.startswith(b"HTTP/1.1 100 Continue")
        writer.write(small)
        status, body = await _answer(reader)
        assert (status, body["name"]) == (201, "asked")
    finally:
        writer.close()


async def test_a_chunked_body_is_refused_as_soon_as_it_passes_the_limit(api: Api) -> None:
    reader, writer = await _connect(api)
    try:
        writer.write(
            b"POST /v1/players HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        # Twice the limit, and never the last chunk: the answer must come without it.
        for _ in range(8):
            writer.write(b"1000\r\n" + b"x" * 0x1000 + b"\r\n")
        status, body = await _answer(reader)
    finally:
        writer.close()
    assert (status, body["error"]["code"]) == (413, "body_too_large")


async def test_a_compressed_body_is_refused_once_it_inflates_past_the_limit(api: Api) -> None:
    bomb = gzip.compress(b'{"name": "' + b"x" * (10 * MEGABYTE) + b'"}')
    assert len(bomb) < Settings.max_body_bytes
    answer = await api.post(
        "/v1/players",
        raw=bomb,
        headers={"Content-Type": "application/json", "Content-Encoding": "gzip"},
    )
    assert (answer.status, answer.error_code) == (413, "body_too_large")


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
async def test_the_deepest_body_within_the_limit_is_400_and_names_the_depth(
    api: Api, fmt: str
) -> None:
    """Deeper than the parsers' own limits (1024 levels): refused by depth all the same."""
    _, token = await api.new_player("deeper")
    raw = b"[" * 8000 + b"]" * 8000 if fmt == "json" else b"\x91" * 16000 + b"\x90"
    media = "application/json" if fmt == "json" else "application/msgpack"
    answer = await api.post(
        f"/v1/matches/{uuid.uuid4()}/actions", token=token, raw=raw, headers={"Content-Type": media}
    )
    assert (answer.status, answer.error_code) == (400, "malformed_body")
    assert answer.body["error"]["details"] == {"max_depth": 32}


async def _frame(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """One frame from the server (unmasked): its opcode and payload."""
    first, second = await reader.readexactly(2)
    length = second & 0x7F
    if length >= 126:
        length = int.from_bytes(await reader.readexactly(2 if length == 126 else 8), "big")
    return first & 0x0F, await reader.readexactly(length)


async def test_a_1_mb_frame_closes_the_socket_from_its_header_before_it_is_sent(api: Api) -> None:
    _, token = await api.new_player("framer")
    created = await api.post("/v1/matches", {"game": "necromancers", "seats": 2}, token=token)
    reader, writer = await _connect(api)
    try:
        key = base64.b64encode(os.urandom(16))
        writer.write(
            b"GET /v1/matches/%s/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
            b"Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: %s\r\n"
            b"Authorization: Bearer %s\r\n\r\n"
            % (created.body["match_id"].encode(), key, token.encode())
        )
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), ANSWER_WAIT)
        assert head.startswith(b"HTTP/1.1 101"), head
        # A masked text frame that declares a megabyte, and only its first KiB.
        writer.write(
            bytes([0x81, 0x80 | 127]) + MEGABYTE.to_bytes(8, "big") + os.urandom(4) + b"x" * 1024
        )
        opcode = 1
        while opcode != 8:  # the match's backlog may come first
            opcode, payload = await asyncio.wait_for(_frame(reader), ANSWER_WAIT)
    finally:
        writer.close()
    assert int.from_bytes(payload[:2], "big") == WSCloseCode.MESSAGE_TOO_BIG


async def test_a_compressed_frame_is_refused_once_it_inflates_past_the_limit(api: Api) -> None:
    """permessage-deflate: a frame of 10 KB that inflates to 10 MB is refused at the limit as
    aiohttp inflates it, and closes its socket like any frame too large."""
    _, token = await api.new_player("deflater")
    created = await api.post("/v1/matches", {"game": "necromancers", "seats": 2}, token=token)
    url = api.base_url.replace("http", "ws", 1) + f"/v1/matches/{created.body['match_id']}/ws"
    async with api.session.ws_connect(
        url, headers={"Authorization": f"Bearer {token}"}, compress=15
    ) as ws:
        assert ws.compress == 15, "the server did not take permessage-deflate"
        await ws.send_str("not json")
        replies = [message async for message in _until_reply(ws)]
        assert replies[-1]["status"] == 400
        await ws.send_str("x" * 10 * MEGABYTE)
        async with asyncio.timeout(ANSWER_WAIT):
            async for _ in ws:
                pass
    assert ws.close_code == WSCloseCode.MESSAGE_TOO_BIG


async def _until_reply(ws: aiohttp.ClientWebSocketResponse) -> AsyncIterator[dict[str, Any]]:
    """The socket's messages up to the first reply to a frame (the match's backlog first)."""
    async with asyncio.timeout(ANSWER_WAIT):
        async for message in ws:
            data = json.loads(message.data)
            yield data
            if "reply" in data:
                return


async def _warm_every_route(api: Api, token: str, ops_token: str) -> None:
    """A GET of every path of the OpenAPI document (a 405 where GET is not served), so that
    /metrics holds figures for each, as a service that has served a while does: a scrape costs
    by its figures."""
    document = (await api.get("/v1/openapi.json")).body
    headers = {"Authorization": f"Bearer {token}", "X-Ops-Token": ops_token}
    for path in document["paths"]:
        url = re.sub(r"{\w+}", str(uuid.uuid4()), path)
        async with api.session.get(api.base_url + url, headers=headers) as answer:
            await answer.read()


async def _bystander_under(
    settings: Settings, database_url: str, repo_root: Path, only: tuple[str, ...]
) -> dict[str, dict[str, int]]:
    """The bystander's `GET /v1/players/me`, idle and while one account sends the streams
    `only` of tests/api/hostile_client.py from a process of its own; with the shipped settings.

    The bystander is timed in windows, idle and under attack in turn, so that what else the
    machine does weighs on both alike (tests/api/bystander.py). Prints
    the figures; asserts the p50 under attack is within twice the idle one; returns how each
    kind of attack was answered."""
    shipped = Settings(
        port=0,
        database_url=database_url,
        data_dir=settings.data_dir,
        secret_key=settings.secret_key,
        ops_token=settings.ops_token,
    )
    async with running_service(shipped) as api:
        _, bystander = await api.new_player("bystander")
        _, hostile = await api.new_player("hostile")
        created = await api.post("/v1/matches", {"game": "necromancers", "seats": 2}, token=hostile)
        await _warm_every_route(api, hostile, shipped.ops_token)
        spec = {
            "base_url": api.base_url,
            "token": hostile,
            "match_id": created.body["match_id"],
            "rate": shipped.rate_limit_per_second,
            "only": only,
        }
        measured = await under_attack(api, bystander, "tests.api.hostile_client", spec, repo_root)
    answers: dict[str, dict[str, int]] = measured.counts
    print(f"\n{' + '.join(only)}\n{measured.summary('under attack')}")
    for kind, counts in answers.items():
        print(f"  {kind}: {dict(sorted(counts.items()))}")
    assert measured.loaded_p50 <= 2 * measured.idle_p50
    return answers


async def test_a_bystanders_p50_stays_within_twice_idle_while_one_account_does_its_worst(
    settings: Settings, fresh_database_url: str, repo_root: Path
) -> None:
    """Every attack of the hostile client at once, each as fast as the limits every account
    has let it: 1 MB bodies declared and chunked, the deepest and the dearest bodies and frames
    within the limit, 1 MB frames, gzip bombs and scrapes."""
    answers = await _bystander_under(settings, fresh_database_url, repo_root, STREAMS)
    assert answers["1 MB body"].get("413", 0) > 0
    assert answers["1 MB chunked body"].get("413", 0) > 0
    assert answers["16 KiB deep body"].get("400", 0) > 0
    assert answers["16 KiB dearest body"].get("400", 0) > 0
    assert answers["16 KiB dearest frames"].get("400", 0) > 0
    assert answers["1 MB frames"].get(f"closed {WSCloseCode.MESSAGE_TOO_BIG.value}", 0) > 0
    assert answers["gzip bomb"].get("413", 0) > 0
    assert answers["gzip bomb with a token"].get("413", 0) > 0
    assert answers["/metrics scrapes"].get("200", 0) > 0


async def test_a_bystanders_p50_stays_within_twice_idle_under_gzip_bombs(
    settings: Settings, fresh_database_url: str, repo_root: Path
) -> None:
    """16 KB bodies that inflate to 16 MiB, on four connections without a token and four with
    one: each is refused once it inflates past MAX_BODY_BYTES, or before it is read (429)."""
    answers = await _bystander_under(
        settings, fresh_database_url, repo_root, ("gzip bomb", "gzip bomb with a token")
    )
    assert answers["gzip bomb"].get("413", 0) > 0
    assert answers["gzip bomb with a token"].get("413", 0) > 0


async def test_a_bystanders_p50_stays_within_twice_idle_under_ten_scrapes_in_flight(
    settings: Settings, fresh_database_url: str, repo_root: Path
) -> None:
    """Ten scrapers of /metrics at once, of a service whose every route has figures: the text
    is rendered once a second, whoever asks."""
    answers = await _bystander_under(settings, fresh_database_url, repo_root, ("/metrics scrapes",))
    assert answers["/metrics scrapes"].get("200", 0) > 0
