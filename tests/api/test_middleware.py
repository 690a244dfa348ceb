import asyncio
import io
import json

import aiohttp
import asyncpg
import msgpack
import pytest
from aiohttp import web

from service.api.errors import ApiError
from service.api.keys import SETTINGS
from service.api.middleware import refusal_of, request_context
from service.api.server import MAX_FIELD_BYTES, MAX_HEADERS, MAX_URL_BYTES
from service.config import Settings
from service.runtime.logs import configure_logging
from tests.conftest import running_service
from tests.http import Api

FORMATS = ["json", "msgpack"]


@pytest.mark.parametrize("fmt", FORMATS)
async def test_unknown_path_is_404_in_the_error_shape(api: Api, fmt: str) -> None:
    answer = await api.get("/v1/nowhere", fmt=fmt)
    assert answer.status == 404
    assert answer.body == {
        "error": {"code": "not_found", "message": "no such path: /v1/nowhere", "details": {}}
    }


@pytest.mark.parametrize("fmt", FORMATS)
async def test_wrong_method_is_405_with_allow(api: Api, fmt: str) -> None:
    answer = await api.call("DELETE", "/v1/players", fmt=fmt)
    assert answer.status == 405
    assert answer.error_code == "method_not_allowed"
    assert answer.headers["Allow"] == "POST"
    assert answer.body["error"]["details"]["allowed"] == ["POST"]


async def test_request_id_is_echoed_when_given(api: Api) -> None:
    answer = await api.get("/healthz", headers={"X-Request-Id": "client-chosen.id-1"})
    assert answer.headers["X-Request-Id"] == "client-chosen.id-1"


@pytest.mark.parametrize("given", [None, "", "has spaces", "x" * 129])
async def test_request_id_is_generated_when_missing_or_unusable(
    api: Api, given: str | None
) -> None:
    headers = {} if given is None else {"X-Request-Id": given}
    first = await api.get("/healthz", headers=headers)
    second = await api.get("/healthz", headers=headers)
    assert len(first.headers["X-Request-Id"]) == 32
    assert first.headers["X-Request-Id"] != second.headers["X-Request-Id"]


async def test_request_id_is_on_every_log_line_of_the_request(settings: Settings) -> None:
    stream = io.StringIO()
    configure_logging("json", "debug", stream)
    try:
        async with running_service(settings) as api:
            created = await api.post(
                "/v1/players", {"name": "logged"}, headers={"X-Request-Id": "trace-me"}
            )
            await api.get(
                "/v1/players/me",
                token=created.body["token"],
                headers={"X-Request-Id": "trace-me-too"},
            )
    finally:
        configure_logging("json", "info")
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    first = [line for line in lines if line.get("request_id") == "trace-me"]
    second = [line for line in lines if line.get("request_id") == "trace-me-too"]
    assert [line["event"] for line in first] == ["request"]
    assert first[0]["status"] == 201
    assert second[0]["player_id"] == created.body["player_id"]
    # The second request on the same connection must not inherit the first one's fields.
    assert all(line.get("request_id") != "trace-me" or "player_id" not in line for line in lines)


async def test_unexpected_error_is_500_in_the_error_shape_without_a_trace(
    settings: Settings,
) -> None:
    async def broken(request: web.Request) -> web.Response:
        raise RuntimeError("secret internals")

    app = web.Application(middlewares=[request_context])
    app[SETTINGS] = settings
    app.router.add_get("/broken", broken)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        async with aiohttp.ClientSession() as session:
            # A bare app without the service's routes has no OpenAPI document to check against.
            base = f"http://127.0.0.1:{runner.addresses[0][1]}"
            api = Api(session, base, check_answers=False)
            answer = await api.get("/broken", fmt="msgpack")
    finally:
        await runner.cleanup()
    assert answer.status == 500
    assert answer.error_code == "internal"
    assert answer.body["error"]["details"]["request_id"] == answer.headers["X-Request-Id"]
    assert b"secret internals" not in answer.raw
    assert b"Traceback" not in answer.raw


async def test_every_answer_names_the_instance_that_gave_it(api: Api, settings: Settings) -> None:
    for path in ("/healthz", "/v1/nowhere", "/ops"):
        answer = await api.get(path)
        assert answer.headers["X-Instance"] == settings.instance_id, path


async def _raw(api: Api, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """A request written byte for byte; the status, headers and body of the answer, read
    until the server closes the connection, as it does after each of these refusals."""
    host, port = api.base_url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(request)
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), 5)
    finally:
        writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (x.partition(":") for x in lines)}
    return int(status_line.split()[1]), headers, body


POST = b"POST /v1/players HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"


@pytest.mark.parametrize(
    ("request_bytes", "status", "code", "details"),
    [
        (
            b"GET /" + b"a" * MAX_URL_BYTES + b" HTTP/1.1\r\nHost: x\r\n\r\n",
            414,
            "url_too_long",
            {"limit": MAX_URL_BYTES},
        ),
        (
            b"GET / HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * (MAX_FIELD_BYTES + 1) + b"\r\n\r\n",
            431,
            "header_too_large",
            {"limit": MAX_FIELD_BYTES},
        ),
        (
            b"GET / HTTP/1.1\r\n"
            + b"".join(b"X-%d: a\r\n" % n for n in range(MAX_HEADERS + 1))
            + b"\r\n",
            431,
            "too_many_headers",
            {"max_headers": MAX_HEADERS},
        ),
        (
            POST + b"Expect: 100-teapot\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
            417,
            "expectation_failed",
            {"supported": ["100-continue"]},
        ),
        (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 400, "malformed_request", {}),
        (b"G@T / HTTP/1.1\r\nHost: x\r\n\r\n", 400, "malformed_request", {}),
        (b"GET / HTTP/7.1\r\nHost: x\r\n\r\n", 400, "malformed_request", {}),
        (b"GET / HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n", 400, "malformed_request", {}),
        (
            POST + b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n",
            400,
            "malformed_request",
            {},
        ),
        (
            POST + b"Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
            400,
            "malformed_request",
            {},
        ),
    ],
    ids=[
        "url too long",
        "header too long",
        "too many headers",
        "unknown expect",
        "tls on the http port",
        "no such method",
        "no such version",
        "nul in a header",
        "length and chunked",
        "chunk size not a number",
    ],
)
async def test_a_request_the_server_cannot_read_is_refused_in_the_error_shape(
    api: Api,
    settings: Settings,
    request_bytes: bytes,
    status: int,
    code: str,
    details: dict[str, object],
) -> None:
    got, headers, body = await _raw(api, request_bytes)
    assert got == status
    assert headers["content-type"].startswith("application/json")
    assert headers["x-instance"] == settings.instance_id
    error = json.loads(body)["error"]
    assert (error["code"], error["details"]) == (code, details)
    assert error["message"] and "\n" not in error["message"]


async def test_the_limits_of_a_request_line_and_header_admit_what_fits(api: Api) -> None:
    path = b"/v1/" + b"a" * (MAX_URL_BYTES - 4)
    pad = b"X-Pad: " + b"a" * MAX_FIELD_BYTES
    fields = b"".join(b"X-%d: a\r\n" % n for n in range(MAX_HEADERS - 3))
    status, _, body = await _raw(
        api,
        b"GET "
        + path
        + b" HTTP/1.1\r\nHost: x\r\n"
        + pad
        + b"\r\n"
        + fields
        + b"Connection: close\r\n\r\n",
    )
    assert (status, json.loads(body)["error"]["code"]) == (404, "not_found")


async def test_a_refusal_made_before_the_middleware_speaks_the_format_asked_for(api: Api) -> None:
    status, headers, body = await _raw(
        api,
        POST + b"Accept: application/msgpack\r\nExpect: 100-teapot\r\nContent-Length: 2\r\n"
        b"Connection: close\r\n\r\n{}",
    )
    assert (status, headers["content-type"]) == (417, "application/msgpack")
    assert msgpack.unpackb(body)["error"]["code"] == "expectation_failed"


async def test_a_body_cut_short_by_the_client_is_not_taken_for_a_database_outage(
    settings: Settings,
) -> None:
    stream = io.StringIO()
    configure_logging("json", "info", stream)
    try:
        async with running_service(settings) as api:
            host, port = api.base_url.removeprefix("http://").split(":")
            _, writer = await asyncio.open_connection(host, int(port))
            writer.write(POST + b"X-Request-Id: cut-short\r\nContent-Length: 100\r\n\r\n" + b'{"na')
            await writer.drain()
            await asyncio.sleep(0.2)
            writer.close()
            await asyncio.sleep(0.2)
    finally:
        configure_logging("json", "info")
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    logged = [line for line in lines if line.get("request_id") == "cut-short"]
    assert [(line["event"], line.get("status")) for line in logged] == [("request", 400)]


async def test_a_write_the_database_rolled_back_to_break_a_deadlock_is_503_unavailable(
    fresh_pool: asyncpg.Pool,
) -> None:
    """Two transactions taking two rows in crossing orders: PostgreSQL rolls one back. Its
    request wrote nothing, so it is answered as an outage is: 503 `unavailable`, retry."""
    await fresh_pool.execute("CREATE TABLE crossing (id int PRIMARY KEY)")
    await fresh_pool.execute("INSERT INTO crossing VALUES (1), (2)")
    both_hold = asyncio.Barrier(2)

    async def take(first: int, second: int) -> None:
        async with fresh_pool.acquire() as conn, conn.transaction():
            await conn.execute("SELECT 1 FROM crossing WHERE id = $1 FOR UPDATE", first)
            await both_hold.wait()
            await conn.execute("SELECT 1 FROM crossing WHERE id = $1 FOR UPDATE", second)

    outcomes = await asyncio.gather(take(1, 2), take(2, 1), return_exceptions=True)
    (broken,) = [o for o in outcomes if isinstance(o, Exception)]
    refusal = refusal_of(broken)
    assert isinstance(refusal, ApiError)
    assert (refusal.status, refusal.code) == (503, "unavailable")
    assert refusal.headers == {"Retry-After": "1"}
    # Not a bug to hide: any other database error is still a 500.
    assert refusal_of(asyncpg.exceptions.UniqueViolationError("dup")) is None
