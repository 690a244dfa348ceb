"""A player's devices through HTTP on the real database (docs/api.md#players-and-sessions): at
most MAX_DEVICES of them, listed with when each last signed in; a device id guessed on link
costs the guesser's address a failed sign-in, and one guessable from its shape is refused."""

import secrets
import uuid
from datetime import datetime
from typing import Any

from tests.conftest import running_service
from tests.http import Answer, Api

LINK = "/v1/auth/device/link"


def new_device() -> str:
    return secrets.token_urlsafe(24)


async def sign_in(api: Api, device_id: str) -> Answer:
    return await api.post("/v1/auth/device", {"device_id": device_id})


async def link(api: Api, token: str, device_id: str) -> Answer:
    return await api.post(LINK, {"device_id": device_id}, token=token)


async def test_an_account_holds_at_most_max_devices(make_settings: Any) -> None:
    async with running_service(make_settings(max_devices=3)) as api:
        first = new_device()
        token = (await sign_in(api, first)).body["access_token"]
        for _ in range(2):
            assert (await link(api, token, new_device())).status == 200
        refused = await link(api, token, new_device())
        assert (refused.status, refused.error_code) == (409, "too_many_devices")
        assert refused.body["error"]["details"] == {"setting": "MAX_DEVICES", "limit": 3}
        listed = (await api.get("/v1/players/me", token=token)).body["devices"]
        assert len(listed) == 3
        # One already linked links again; one unlinked makes room for another.
        assert (await link(api, token, first)).status == 200
        gone = listed[0]["fingerprint"]
        assert (await api.call("DELETE", f"/v1/auth/devices/{gone}", token=token)).status == 200
        assert (await link(api, token, new_device())).status == 200


async def test_the_device_list_shows_when_each_device_last_signed_in(api: Api) -> None:
    phone, tablet = new_device(), new_device()
    token = (await sign_in(api, phone)).body["access_token"]
    linked = (await link(api, token, tablet)).body["devices"]
    assert linked[0]["last_used_at"] is not None and linked[1]["last_used_at"] is None
    await sign_in(api, tablet)
    listed = (await api.get("/v1/players/me", token=token)).body["devices"]
    assert listed[0]["last_used_at"] == linked[0]["last_used_at"]
    used = datetime.fromisoformat(listed[1]["last_used_at"])
    assert used >= datetime.fromisoformat(listed[1]["linked_at"])


async def test_a_link_answered_device_taken_costs_the_address_a_failed_sign_in(
    make_settings: Any, fresh_database_url: str
) -> None:
    settings = make_settings(
        database_url=fresh_database_url, auth_failures_per_address_per_minute=3
    )
    async with running_service(settings) as api:
        victims = [new_device() for _ in range(3)]
        for device in victims:
            await sign_in(api, device)
        token = (await sign_in(api, new_device())).body["access_token"]
        guesses = [await link(api, token, device) for device in victims]
        assert [(g.status, g.error_code) for g in guesses] == [(409, "device_taken")] * 3
        # The budget spent, a link is refused before it is checked, even of a free device.
        free = new_device()
        refused = await link(api, token, free)
        assert (refused.status, refused.error_code) == (429, "rate_limited")
        assert refused.body["error"]["details"]["limit"] == "auth_failures_per_address_per_minute"
        assert len((await api.get("/v1/players/me", token=token)).body["devices"]) == 1


async def test_a_device_id_guessable_from_its_shape_is_refused(api: Api) -> None:
    token = (await sign_in(api, new_device())).body["access_token"]
    for weak in ("x" * 16, "abcd" * 4, "ab" * 10 + "a", "aaaaaaaaaaaaaabb"):
        for refused in (await sign_in(api, weak), await link(api, token, weak)):
            assert (refused.status, refused.error_code) == (422, "invalid_field"), weak
            (field,) = refused.body["error"]["details"]["fields"]
            assert field["field"] == "device_id"
            assert "can be guessed from its shape" in field["message"]
    # Ids made at random, as clients make them, are not.
    for random_id in (
        secrets.token_urlsafe(32),
        uuid.uuid4().hex,
        str(uuid.uuid4()),
        secrets.token_hex(8),
    ):
        assert (await link(api, token, random_id)).status == 200, random_id
