"""The battle endpoint's shortcuts must not change what a client or an operator sees."""

import asyncio
import io
import json
import time
import uuid
from collections.abc import Callable

import jwt

from service.api.auth import issue_token
from service.config import Settings
from service.runtime.logs import configure_logging
from tests.conftest import TEST_SECRET, running_service
from tests.http import Api


async def test_a_remembered_token_still_expires(api: Api) -> None:
    player_id, _ = await api.new_player()
    # Expiry is in whole seconds: this token lives between one and two seconds.
    token = issue_token(TEST_SECRET, uuid.UUID(player_id), 2)
    expires = jwt.decode(token, options={"verify_signature": False})["exp"]
    assert (await api.get("/v1/players/me", token=token)).status == 200
    await asyncio.sleep(expires - time.time() + 0.05)
    answer = await api.get("/v1/players/me", token=token)
    assert answer.status == 401
    assert answer.body["error"]["message"] == "token expired"


async def test_a_remembered_token_is_trusted_only_under_its_own_key(
    api: Api, make_settings: Callable[..., Settings]
) -> None:
    _, token = await api.new_player()
    assert (await api.get("/v1/players/me", token=token)).status == 200
    other = make_settings(secret_key="another-secret-key-of-thirty-two-b")
    async with running_service(other) as elsewhere:
        answer = await elsewhere.get("/v1/players/me", token=token)
    assert answer.status == 401
    assert answer.body["error"]["message"] == "token signature is not valid"


async def test_log_requests_errors_keeps_only_the_failures(
    make_settings: Callable[..., Settings],
) -> None:
    stream = io.StringIO()
    configure_logging("json", "info", stream)
    try:
        quiet = make_settings(log_requests="errors")
        async with running_service(quiet) as api:
            assert (await api.get("/healthz", headers={"X-Request-Id": "fine"})).status == 200
            assert (await api.get("/nowhere", headers={"X-Request-Id": "lost"})).status == 404
    finally:
        configure_logging("json", "info")
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    requests = [line for line in lines if line["event"] == "request"]
    assert [(line["request_id"], line["status"]) for line in requests] == [("lost", 404)]
