import time
import uuid

import jwt
import pytest

from service.api.auth import issue_token
from tests.conftest import TEST_SECRET
from tests.http import Api

FORMATS = ["json", "msgpack"]


@pytest.mark.parametrize("fmt", FORMATS)
async def test_register_then_read_me_with_the_token(api: Api, fmt: str) -> None:
    created = await api.post("/v1/players", {"name": "  Ana  "}, fmt=fmt)
    assert created.status == 201
    assert created.headers["Content-Type"].startswith(f"application/{fmt}")
    assert created.body["name"] == "Ana"
    uuid.UUID(created.body["player_id"])

    me = await api.get("/v1/players/me", token=created.body["token"], fmt=fmt)
    assert me.status == 200
    assert me.body == {"player_id": created.body["player_id"], "name": "Ana", "rating": 1000}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "name"),
        ({"name": ""}, "name"),
        ({"name": "   "}, "name"),
        ({"name": "x" * 33}, "name"),
        ({"name": 7}, "name"),
        ({"name": "bell\x07"}, "name"),
        ({"name": "ok", "rating": 3000}, "rating"),
    ],
)
async def test_invalid_registration_is_422_naming_the_field(
    api: Api, fmt: str, body: dict[str, object], field: str
) -> None:
    answer = await api.post("/v1/players", body, fmt=fmt)
    assert answer.status == 422
    assert answer.error_code == "invalid_field"
    assert answer.body["error"]["message"].startswith(f"{field}:")
    assert answer.body["error"]["details"]["fields"][0]["field"] == field


@pytest.mark.parametrize("fmt", FORMATS)
async def test_missing_token_is_401(api: Api, fmt: str) -> None:
    answer = await api.get("/v1/players/me", fmt=fmt)
    assert answer.status == 401
    assert answer.error_code == "unauthorized"
    assert answer.headers["WWW-Authenticate"] == "Bearer"


@pytest.mark.parametrize(
    "authorization", ["Basic abc", "Bearer", "Bearer not.a.jwt", "bearer x.y.z"]
)
async def test_malformed_token_is_401(api: Api, authorization: str) -> None:
    answer = await api.get("/v1/players/me", headers={"Authorization": authorization})
    assert answer.status == 401
    assert answer.error_code == "unauthorized"


async def test_expired_token_is_401(api: Api) -> None:
    player_id, _ = await api.new_player()
    expired = issue_token(TEST_SECRET, uuid.UUID(player_id), 60, now=time.time() - 3600)
    answer = await api.get("/v1/players/me", token=expired)
    assert answer.status == 401
    assert answer.body["error"]["message"] == "token expired"


async def test_forged_token_is_401(api: Api) -> None:
    player_id, _ = await api.new_player()
    forged = issue_token("someone-elses-key-of-32-bytes-long!", uuid.UUID(player_id), 3600)
    answer = await api.get("/v1/players/me", token=forged)
    assert answer.status == 401
    assert "signature" in answer.body["error"]["message"]


async def test_unsigned_token_is_401(api: Api) -> None:
    player_id, _ = await api.new_player()
    unsigned = jwt.encode(
        {"sub": player_id, "aud": "player", "exp": int(time.time()) + 60},
        key=None,
        algorithm="none",
    )
    answer = await api.get("/v1/players/me", token=unsigned)
    assert answer.status == 401


async def test_token_of_an_unknown_player_is_401(api: Api) -> None:
    token = issue_token(TEST_SECRET, uuid.uuid4(), 3600)
    answer = await api.get("/v1/players/me", token=token)
    assert answer.status == 401
