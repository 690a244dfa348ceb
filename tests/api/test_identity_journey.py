"""A player's identity over its life, as a client lives it, through HTTP on the real database
(docs/api.md#players-and-sessions): sign in with a device, play, let the access token expire,
refresh, sign in on a second device, rename, sign out everywhere."""

import asyncio
import secrets
from typing import Any

from tests.api.runs_helpers import spend_gold
from tests.conftest import running_service


async def test_a_player_signs_in_plays_refreshes_moves_device_renames_and_signs_out(
    make_settings: Any,
) -> None:
    async with running_service(make_settings(access_token_ttl_seconds=2)) as api:
        phone, tablet = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        signed = (await api.post("/v1/auth/device", {"device_id": phone, "name": "ana"})).body
        token = signed["access_token"]
        run = (await api.post("/v1/runs", {}, token=token)).body
        run = await spend_gold(api, token, run)
        turn = await api.post(f"/v1/runs/{run['run_id']}/end-turn", {"round": 1}, token=token)
        assert turn.status == 200, turn.body

        await asyncio.sleep(3.1)
        expired = await api.get(f"/v1/runs/{run['run_id']}", token=token)
        assert expired.status == 401
        renewed = (
            await api.post("/v1/auth/refresh", {"refresh_token": signed["refresh_token"]})
        ).body
        assert (
            await api.get(f"/v1/runs/{run['run_id']}", token=renewed["access_token"])
        ).status == 200

        linked = await api.post(
            "/v1/auth/device/link", {"device_id": tablet}, token=renewed["access_token"]
        )
        assert len(linked.body["devices"]) == 2
        there = (await api.post("/v1/auth/device", {"device_id": tablet})).body
        assert there["player_id"] == signed["player_id"]
        mine = await api.get(f"/v1/runs/{run['run_id']}", token=there["access_token"])
        assert mine.status == 200 and mine.body["round"] == 2

        renamed = await api.call(
            "PATCH", "/v1/players/me", {"name": "Ana María"}, token=there["access_token"]
        )
        assert renamed.body["handle"] == f"Ana María#{signed['tag']}"

        out = await api.post("/v1/auth/logout", {"everywhere": True}, token=there["access_token"])
        assert out.body["sessions_revoked"] == 2
        for old in (renewed["access_token"], there["access_token"]):
            assert (await api.get("/v1/players/me", token=old)).status == 401
        for old in (signed["refresh_token"], renewed["refresh_token"], there["refresh_token"]):
            refused = await api.post("/v1/auth/refresh", {"refresh_token": old})
            assert refused.status == 401
        back = (await api.post("/v1/auth/device", {"device_id": phone})).body
        assert back["player_id"] == signed["player_id"] and back["name"] == "Ana María"
