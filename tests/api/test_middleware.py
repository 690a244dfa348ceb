import io
import json

import aiohttp
import pytest
from aiohttp import web

from service.api.keys import SETTINGS
from service.api.middleware import request_context
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
