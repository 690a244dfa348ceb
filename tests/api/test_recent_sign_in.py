"""An account belongs to whoever signed in recently, not to whoever holds a token, through HTTP
on the real database (docs/api.md#players-and-sessions): linking and unlinking a device,
signing out everywhere and deleting the account need a sign-in of the last 10 minutes or a
refresh token of a live session; an access token that leaked is not enough."""

import secrets
import time
from typing import Any

from service.api.auth import issue_token, verify_token
from tests.conftest import TEST_SECRET
from tests.http import Answer, Api

LINK = "/v1/auth/device/link"


def new_device() -> str:
    return secrets.token_urlsafe(24)


def leaked(access_token: str, minutes_ago: float = 20) -> str:
    """The same session's access token, as one issued `minutes_ago` and leaked since."""
    bearer = verify_token(TEST_SECRET, access_token)
    issued = time.time() - minutes_ago * 60
    return issue_token(TEST_SECRET, bearer.player_id, 3600, issued, bearer.session_id)


async def sign_in(api: Api, device_id: str) -> Answer:
    return await api.post("/v1/auth/device", {"device_id": device_id})


async def devices(api: Api, token: str) -> list[dict[str, Any]]:
    listed: list[dict[str, Any]] = (await api.get("/v1/players/me", token=token)).body["devices"]
    return listed


def assert_needs_a_recent_sign_in(answer: Answer) -> None:
    assert (answer.status, answer.error_code) == (403, "reauthentication_required"), answer.body
    assert answer.body["error"]["details"] == {"fresh_seconds": 600}
    assert "within the last 10 minutes" in answer.body["error"]["message"]


async def test_a_leaked_access_token_twenty_minutes_old_cannot_take_the_account(api: Api) -> None:
    device = new_device()
    victim = (await sign_in(api, device)).body
    stolen = leaked(victim["access_token"])
    assert (await api.get("/v1/players/me", token=stolen)).status == 200
    before = await devices(api, victim["access_token"])

    # Each step of the takeover: link the attacker's device, sign in with it, unlink the
    # victim's, sign out everywhere, delete.
    attackers = new_device()
    assert_needs_a_recent_sign_in(await api.post(LINK, {"device_id": attackers}, token=stolen))
    elsewhere = await sign_in(api, attackers)
    assert elsewhere.status == 201 and elsewhere.body["player_id"] != victim["player_id"]
    victims = before[0]["fingerprint"]
    unlinked = await api.call("DELETE", f"/v1/auth/devices/{victims}", {}, token=stolen)
    assert_needs_a_recent_sign_in(unlinked)
    everywhere = await api.post("/v1/auth/logout", {"everywhere": True}, token=stolen)
    assert_needs_a_recent_sign_in(everywhere)
    assert_needs_a_recent_sign_in(await api.call("DELETE", "/v1/players/me", {}, token=stolen))

    # The victim keeps the account, its refresh token and its device.
    assert await devices(api, victim["access_token"]) == before
    refreshed = await api.post("/v1/auth/refresh", {"refresh_token": victim["refresh_token"]})
    assert refreshed.status == 200 and refreshed.body["player_id"] == victim["player_id"]
    again = await sign_in(api, device)
    assert again.status == 200 and again.body["player_id"] == victim["player_id"]


async def test_a_refresh_token_of_a_live_session_stands_for_a_recent_sign_in(api: Api) -> None:
    signed = (await sign_in(api, new_device())).body
    stale, proof = leaked(signed["access_token"]), signed["refresh_token"]
    linked = await api.post(LINK, {"device_id": new_device(), "refresh_token": proof}, token=stale)
    assert linked.status == 200 and len(linked.body["devices"]) == 2
    first = linked.body["devices"][0]["fingerprint"]
    unlinked = await api.call(
        "DELETE", f"/v1/auth/devices/{first}", {"refresh_token": proof}, token=stale
    )
    assert unlinked.status == 200 and len(unlinked.body["devices"]) == 1
    # A refresh token used since, or another player's, stands for nothing.
    renewed = (await api.post("/v1/auth/refresh", {"refresh_token": proof})).body
    used = await api.post(LINK, {"device_id": new_device(), "refresh_token": proof}, token=stale)
    assert_needs_a_recent_sign_in(used)
    others = (await sign_in(api, new_device())).body["refresh_token"]
    body = {"everywhere": True, "refresh_token": others}
    assert_needs_a_recent_sign_in(await api.post("/v1/auth/logout", body, token=stale))
    body = {"everywhere": True, "refresh_token": renewed["refresh_token"]}
    out = await api.post("/v1/auth/logout", body, token=stale)
    assert out.status == 200 and out.body["sessions_revoked"] == 1


async def test_a_sign_in_of_the_last_ten_minutes_needs_no_refresh_token(api: Api) -> None:
    signed = (await sign_in(api, new_device())).body
    recent = leaked(signed["access_token"], minutes_ago=9)
    assert (await api.post(LINK, {"device_id": new_device()}, token=recent)).status == 200
    out = await api.post("/v1/auth/logout", {"everywhere": True}, token=recent)
    assert out.body == {"sessions_revoked": 1}


async def test_signing_out_of_ones_own_session_needs_no_recent_sign_in(api: Api) -> None:
    signed = (await sign_in(api, new_device())).body
    out = await api.post("/v1/auth/logout", {}, token=leaked(signed["access_token"]))
    assert out.body == {"sessions_revoked": 1}
    assert (await api.get("/v1/players/me", token=signed["access_token"])).status == 401
