import json
import re
import time
import uuid

import jwt
import pytest
from aiohttp import web

from service.api.auth import issue_token
from service.api.keys import POOL
from tests.conftest import TEST_SECRET
from tests.http import Answer, Api

FORMATS = ["json", "msgpack"]
TAG = re.compile(r"^[0-9]{4}$")


async def _rename(api: Api, token: str, name: object, fmt: str = "json") -> Answer:
    return await api.call("PATCH", "/v1/players/me", {"name": name}, token=token, fmt=fmt)


@pytest.mark.parametrize("fmt", FORMATS)
async def test_register_then_read_me_with_the_token(api: Api, fmt: str) -> None:
    created = await api.post("/v1/players", {"name": "  Ana  "}, fmt=fmt)
    assert created.status == 201
    assert created.headers["Content-Type"].startswith(f"application/{fmt}")
    assert created.body["name"] == "Ana"
    uuid.UUID(created.body["player_id"])
    tag = created.body["tag"]
    assert TAG.match(tag)
    assert created.body["handle"] == f"Ana#{tag}"

    me = await api.get("/v1/players/me", token=created.body["token"], fmt=fmt)
    assert me.status == 200
    assert me.body == {
        "player_id": created.body["player_id"],
        "name": "Ana",
        "tag": tag,
        "handle": f"Ana#{tag}",
        "rating": 1000,
        "devices": [],
        "ratings": [],
    }


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "name"),
        ({"name": 7}, "name"),
        ({"name": None}, "name"),
        ({"name": "ok", "rating": 3000}, "rating"),
    ],
)
async def test_a_registration_of_the_wrong_shape_is_422_naming_the_field(
    api: Api, fmt: str, body: dict[str, object], field: str
) -> None:
    answer = await api.post("/v1/players", body, fmt=fmt)
    assert answer.status == 422
    assert answer.error_code == "invalid_field"
    assert answer.body["error"]["message"].startswith(f"{field}:")
    assert answer.body["error"]["details"]["fields"][0]["field"] == field


REFUSED_NAMES = [
    ("", "empty", None),
    ("   ", "empty", None),
    ("\u3000\u2003", "empty", None),
    ("x" * 33, "too_long", None),
    ("\ufb03" * 11, "too_long", None),  # eleven ffi ligatures: 33 letters
    ("bell\x07", "control_character", "U+0007"),
    ("two\nlines", "control_character", "U+000A"),
    ("a\u200bb", "format_character", "U+200B"),
    ("\u202eevil", "format_character", "U+202E"),
    ("a\u2028b", "unusable_character", "U+2028"),
    ("private\ue000", "unusable_character", "U+E000"),
    ("a\u0378b", "unusable_character", "U+0378"),
    ("\u3164", "invisible_character", "U+1160"),
    ("\u2800", "invisible_character", "U+2800"),
    ("bea#0042", "tag_separator", "U+0023"),
    ("a" + "\u0301" * 31, "too_many_marks", "U+0301"),
    ("\u0301", "no_visible_character", None),
]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(("name", "rule", "code_point"), REFUSED_NAMES)
async def test_a_refused_name_is_422_invalid_name_naming_the_rule(
    api: Api, fmt: str, name: str, rule: str, code_point: str | None
) -> None:
    _, token = await api.new_player("before")
    for answer in (
        await api.post("/v1/players", {"name": name}, fmt=fmt),
        await _rename(api, token, name, fmt),
    ):
        assert answer.status == 422
        assert answer.error_code == "invalid_name"
        error = answer.body["error"]
        assert error["message"].startswith("name: ")
        assert error["details"]["rule"] == rule
        assert error["details"]["fields"][0]["field"] == "name"
        if code_point is not None:
            assert error["details"]["code_point"] == code_point
            assert code_point in error["message"]
    me = await api.get("/v1/players/me", token=token)
    assert me.body["name"] == "before"


@pytest.mark.parametrize("fmt", FORMATS)
async def test_rename_keeps_the_tag_and_shows_everywhere(api: Api, fmt: str) -> None:
    created = (await api.post("/v1/players", {"name": "ana"})).body
    token, tag = created["token"], created["tag"]
    renamed = await _rename(api, token, " \uff22\uff45\uff41 ", fmt)  # full-width "Bea"
    assert renamed.status == 200
    assert renamed.headers["Content-Type"].startswith(f"application/{fmt}")
    expected = {
        "player_id": created["player_id"],
        "name": "Bea",
        "tag": tag,
        "handle": f"Bea#{tag}",
        "rating": 1000,
        "devices": [],
        "ratings": [],
    }
    assert renamed.body == expected
    assert (await api.get("/v1/players/me", token=token)).body == expected
    # The same name again: the same answer, nothing else changes.
    again = await _rename(api, token, "Bea", fmt)
    assert (again.status, again.body) == (200, expected)


async def test_a_rename_of_the_wrong_shape_is_422_invalid_field(api: Api) -> None:
    _, token = await api.new_player()
    for body in ({}, {"name": 7}, {"name": "ok", "tag": "0001"}):
        answer = await api.call("PATCH", "/v1/players/me", body, token=token)
        assert (answer.status, answer.error_code) == (422, "invalid_field"), body


async def test_a_rename_needs_a_token(api: Api) -> None:
    answer = await api.call("PATCH", "/v1/players/me", {"name": "x"})
    assert (answer.status, answer.error_code) == (401, "unauthorized")


async def test_two_players_may_share_a_name_and_differ_by_handle(
    fresh_service: tuple[Api, web.Application],
) -> None:
    api, app = fresh_service
    first_id, first = await api.new_player("ana")
    second_id, second = await api.new_player("ana")
    # Tags are drawn at random and may meet; these two are told apart whatever was drawn.
    await app[POOL].execute(
        "UPDATE players SET tag = CASE player_id WHEN $1::uuid THEN 42 ELSE 4821 END"
        " WHERE player_id IN ($1::uuid, $2::uuid)",
        first_id,
        second_id,
    )
    mine = (await api.get("/v1/players/me", token=first)).body
    theirs = (await api.get("/v1/players/me", token=second)).body
    assert (mine["name"], mine["tag"], mine["handle"]) == ("ana", "0042", "ana#0042")
    assert (theirs["name"], theirs["tag"], theirs["handle"]) == ("ana", "4821", "ana#4821")
    board = (await api.get("/v1/leaderboard", token=first)).body["entries"]
    assert sorted(e["handle"] for e in board) == ["ana#0042", "ana#4821"]
    # Renaming to a name another player holds is allowed too.
    _, third = await api.new_player("bea")
    assert (await _rename(api, third, "ana")).body["name"] == "ana"


async def test_markup_in_a_name_is_stored_and_answered_as_plain_text(
    fresh_service: tuple[Api, web.Application],
) -> None:
    api, app = fresh_service
    markup = "<script>alert(1)</script>"
    created = await api.post("/v1/players", {"name": markup})
    assert created.status == 201
    assert created.body["name"] == markup
    assert created.body["handle"] == f"{markup}#{created.body['tag']}"
    token = created.body["token"]
    me = await api.get("/v1/players/me", token=token)
    assert me.headers["Content-Type"].startswith("application/json")
    assert json.loads(me.raw)["name"] == markup
    board = (await api.get("/v1/leaderboard", token=token)).body["entries"]
    assert [e["name"] for e in board] == [markup]
    stored = await app[POOL].fetchval(
        "SELECT name FROM players WHERE player_id = $1::uuid", created.body["player_id"]
    )
    assert stored == markup
    renamed = await _rename(api, token, '<img src=x onerror="alert(1)">')
    assert renamed.body["name"] == '<img src=x onerror="alert(1)">'


async def test_a_deleted_player_is_no_one_to_read_or_rename(
    fresh_service: tuple[Api, web.Application],
) -> None:
    api, app = fresh_service
    player_id, token = await api.new_player("gone")
    # As a deletion leaves the row: without a name.
    await app[POOL].execute(
        "UPDATE players SET name = NULL, deleted_at = now() WHERE player_id = $1::uuid", player_id
    )
    for answer in (
        await api.get("/v1/players/me", token=token),
        await _rename(api, token, "back"),
    ):
        assert (answer.status, answer.error_code) == (401, "unauthorized")
    assert (
        await app[POOL].fetchval("SELECT name FROM players WHERE player_id = $1::uuid", player_id)
        is None
    )


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
