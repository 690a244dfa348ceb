"""Lasting identity through HTTP on the real database (docs/api.md#players-and-sessions):
device sign-in, access tokens that expire and refresh tokens that rotate, sign-out, devices."""

import asyncio
import secrets
import uuid
from typing import Any

from service.api.auth import issue_token
from tests.conftest import TEST_SECRET, running_service
from tests.http import Answer, Api


def new_device() -> str:
    return secrets.token_urlsafe(24)


async def sign_in(api: Api, device_id: str, **fields: Any) -> Answer:
    return await api.post("/v1/auth/device", {"device_id": device_id, **fields})


async def refresh(api: Api, token: str) -> Answer:
    return await api.post("/v1/auth/refresh", {"refresh_token": token})


async def me(api: Api, token: str) -> Answer:
    return await api.get("/v1/players/me", token=token)


async def test_a_device_makes_its_player_once_and_signs_it_in_after(api: Api) -> None:
    device = new_device()
    made = await sign_in(api, device, name="ana")
    assert made.status == 201, made.body
    again = await sign_in(api, device, name="someone else")
    assert again.status == 200
    assert again.body["player_id"] == made.body["player_id"]
    assert again.body["name"] == "ana" and again.body["handle"] == f"ana#{made.body['tag']}"
    assert made.body["expires_in"] == 3600
    assert made.body["refresh_token"] != again.body["refresh_token"]
    assert (await me(api, again.body["access_token"])).body["player_id"] == made.body["player_id"]


async def test_a_device_id_is_a_secret_of_16_to_128_printable_characters(api: Api) -> None:
    for bad in ("x" * 15, "x" * 129, "with space inside!", "é" * 20, 1234567890123456789):
        refused = await sign_in(api, bad)  # type: ignore[arg-type]
        assert (refused.status, refused.error_code) == (422, "invalid_field"), bad


async def test_a_refresh_gives_a_new_pair_and_a_used_token_sent_again_revokes_the_session(
    api: Api,
) -> None:
    first = (await sign_in(api, new_device())).body
    second = await refresh(api, first["refresh_token"])
    assert second.status == 200 and second.body["player_id"] == first["player_id"]
    third = await refresh(api, second.body["refresh_token"])
    assert third.status == 200
    # The first token again, after its successor was used: a stolen copy. The session goes.
    stolen = await refresh(api, first["refresh_token"])
    assert (stolen.status, stolen.error_code) == (401, "refresh_token_reused")
    after = await refresh(api, third.body["refresh_token"])
    assert (after.status, after.error_code) == (401, "invalid_refresh_token")
    for token in (first["access_token"], third.body["access_token"]):
        assert (await me(api, token)).status == 401


async def test_a_refresh_retried_before_its_answer_was_used_gets_the_same_answer_byte_for_byte(
    api: Api,
) -> None:
    first = (await sign_in(api, new_device())).body
    lost = await refresh(api, first["refresh_token"])
    retried = await refresh(api, first["refresh_token"])
    assert retried.status == 200, retried.body
    # The same refresh token and the same access token: one live pair, not two.
    assert retried.raw == lost.raw
    assert (await me(api, retried.body["access_token"])).status == 200
    onward = await refresh(api, retried.body["refresh_token"])
    assert onward.status == 200
    # Once the pair moved on, the first token again is a stolen copy.
    stolen = await refresh(api, first["refresh_token"])
    assert (stolen.status, stolen.error_code) == (401, "refresh_token_reused")
    assert (await me(api, onward.body["access_token"])).status == 401


async def test_concurrent_refreshes_of_one_token_answer_one_pair(api: Api) -> None:
    first = (await sign_in(api, new_device())).body
    answers = await asyncio.gather(*(refresh(api, first["refresh_token"]) for _ in range(10)))
    assert [a.status for a in answers] == [200] * 10
    assert len({a.raw for a in answers}) == 1
    pair = answers[0].body
    assert (await me(api, pair["access_token"])).status == 200
    assert (await refresh(api, pair["refresh_token"])).status == 200


async def test_a_thief_replaying_a_refresh_shares_the_pair_and_the_first_collision_revokes_it(
    make_settings: Any,
) -> None:
    async with running_service(make_settings(refresh_retry_seconds=0.5)) as api:
        stolen = (await sign_in(api, new_device())).body["refresh_token"]
        victims = await refresh(api, stolen)
        # Within the retry window the thief gets the victim's own pair, not one of its own.
        thiefs = await refresh(api, stolen)
        assert thiefs.raw == victims.raw
        onward = await refresh(api, thiefs.body["refresh_token"])
        assert onward.status == 200
        await asyncio.sleep(0.6)
        # The victim's next refresh meets a token the thief used: the session goes, for both.
        collided = await refresh(api, victims.body["refresh_token"])
        assert (collided.status, collided.error_code) == (401, "refresh_token_reused")
        kept = await refresh(api, onward.body["refresh_token"])
        assert (kept.status, kept.error_code) == (401, "invalid_refresh_token")
        for token in (victims.body["access_token"], onward.body["access_token"]):
            assert (await me(api, token)).status == 401


async def test_a_thief_replaying_a_token_whose_successor_was_used_revokes_the_session(
    api: Api,
) -> None:
    stolen = (await sign_in(api, new_device())).body["refresh_token"]
    victims = await refresh(api, stolen)
    onward = await refresh(api, victims.body["refresh_token"])
    # Within the retry window, but the victim has moved on: a stolen copy.
    thiefs = await refresh(api, stolen)
    assert (thiefs.status, thiefs.error_code) == (401, "refresh_token_reused")
    kept = await refresh(api, onward.body["refresh_token"])
    assert (kept.status, kept.error_code) == (401, "invalid_refresh_token")
    assert (await me(api, onward.body["access_token"])).status == 401


async def test_a_retry_whose_first_answer_was_derived_under_another_key_is_taken_for_a_reuse(
    make_settings: Any,
) -> None:
    """A used token whose successor is not the one it derives (issued by an instance with
    another SECRET_KEY, or by the scheme before) cannot be answered the same: its session goes."""
    other = make_settings(secret_key="another-secret-key-of-thirty-two-bytes")
    async with running_service(make_settings()) as one, running_service(other) as two:
        first = (await sign_in(one, new_device())).body
        answered = await refresh(one, first["refresh_token"])
        retried = await refresh(two, first["refresh_token"])
        assert (retried.status, retried.error_code) == (401, "refresh_token_reused")
        kept = await refresh(one, answered.body["refresh_token"])
        assert (kept.status, kept.error_code) == (401, "invalid_refresh_token")


async def test_signing_out_refuses_the_sessions_tokens_and_everywhere_refuses_all(
    api: Api,
) -> None:
    device = new_device()
    here = (await sign_in(api, device)).body
    there = (await sign_in(api, device)).body
    out = await api.post("/v1/auth/logout", {}, token=here["access_token"])
    assert out.body == {"sessions_revoked": 1}
    assert (await me(api, here["access_token"])).status == 401
    assert (await refresh(api, here["refresh_token"])).status == 401
    assert (await me(api, there["access_token"])).status == 200
    sessionless = issue_token(TEST_SECRET, uuid.UUID(there["player_id"]), 3600)
    assert (await me(api, sessionless)).status == 200
    everywhere = await api.post(
        "/v1/auth/logout", {"everywhere": True}, token=there["access_token"]
    )
    assert everywhere.body == {"sessions_revoked": 1}
    for token in (there["access_token"], sessionless):
        assert (await me(api, token)).status == 401
    assert (await refresh(api, there["refresh_token"])).status == 401
    # Signing in again opens a new session that works.
    back = (await sign_in(api, device)).body
    assert (await me(api, back["access_token"])).status == 200


async def test_a_second_device_signs_in_the_same_player_and_devices_are_listed_by_fingerprint(
    api: Api,
) -> None:
    phone, tablet = new_device(), new_device()
    signed = (await sign_in(api, phone)).body
    token = signed["access_token"]
    linked = await api.post("/v1/auth/device/link", {"device_id": tablet}, token=token)
    assert linked.status == 200 and len(linked.body["devices"]) == 2
    again = await api.post("/v1/auth/device/link", {"device_id": tablet}, token=token)
    assert again.body == linked.body
    assert (await sign_in(api, tablet)).body["player_id"] == signed["player_id"]
    listed = (await me(api, token)).body["devices"]
    assert [(d["fingerprint"], d["linked_at"]) for d in listed] == [
        (d["fingerprint"], d["linked_at"]) for d in linked.body["devices"]
    ]
    shown = str(listed)
    assert phone not in shown and tablet not in shown
    other = (await sign_in(api, new_device())).body
    taken = await api.post(
        "/v1/auth/device/link", {"device_id": tablet}, token=other["access_token"]
    )
    assert (taken.status, taken.error_code) == (409, "device_taken")
    first, second = (d["fingerprint"] for d in listed)
    gone = await api.call("DELETE", f"/v1/auth/devices/{first}", token=token)
    assert gone.status == 200 and [d["fingerprint"] for d in gone.body["devices"]] == [second]
    last = await api.call("DELETE", f"/v1/auth/devices/{second}", token=token)
    assert (last.status, last.error_code) == (409, "last_device")
    unknown = await api.call("DELETE", "/v1/auth/devices/00000000", token=token)
    assert unknown.status == 404


async def test_an_expired_access_token_is_refused_and_a_refresh_brings_a_working_one(
    make_settings: Any,
) -> None:
    async with running_service(make_settings(access_token_ttl_seconds=1)) as api:
        signed = (await sign_in(api, new_device())).body
        assert (await me(api, signed["access_token"])).status == 200
        await asyncio.sleep(2.1)
        expired = await me(api, signed["access_token"])
        assert expired.status == 401 and "expired" in expired.body["error"]["message"]
        renewed = await refresh(api, signed["refresh_token"])
        assert (await me(api, renewed.body["access_token"])).status == 200


async def test_a_player_holds_max_sessions_and_a_sign_in_past_it_revokes_the_oldest(
    make_settings: Any,
) -> None:
    async with running_service(make_settings(max_sessions=3)) as api:
        device = new_device()
        opened = [(await sign_in(api, device)).body for _ in range(5)]
        for gone in opened[:2]:
            assert (await me(api, gone["access_token"])).status == 401
            refused = await refresh(api, gone["refresh_token"])
            assert (refused.status, refused.error_code) == (401, "invalid_refresh_token")
        for kept in opened[2:]:
            assert (await me(api, kept["access_token"])).status == 200
        # Signing out everywhere revokes what is live, however many sessions were opened.
        newest = opened[-1]["access_token"]
        out = await api.post("/v1/auth/logout", {"everywhere": True}, token=newest)
        assert out.body == {"sessions_revoked": 3}


async def test_another_instance_refuses_a_revoked_session_within_the_sync_interval(
    make_settings: Any,
) -> None:
    settings = make_settings(revocation_sync_seconds=0.2)
    async with running_service(settings) as one, running_service(settings) as two:
        signed = (await sign_in(one, new_device())).body
        token = signed["access_token"]
        assert (await me(two, token)).status == 200
        await one.post("/v1/auth/logout", {}, token=token)
        await asyncio.sleep(0.6)
        assert (await me(two, token)).status == 401
