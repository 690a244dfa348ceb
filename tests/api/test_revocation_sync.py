"""What one instance revokes, another refuses within REVOCATION_SYNC_SECONDS, through HTTP on
the real database (docs/operations.md#the-revocation-sync): each sync after the first reads only
what changed since the one before (tests/store/test_sessions.py counts it on bulk-loaded rows),
and still sees a revocation whose transaction began before that read and committed after it."""

import asyncio
import secrets
import uuid
from typing import Any

import asyncpg

from service.api.auth import issue_token, verify_token
from tests.conftest import TEST_SECRET, running_service
from tests.http import Api

SYNC = 0.2
# Long enough for a few syncs.
WAIT = 0.8


async def status_of_me(api: Api, token: str) -> int:
    return (await api.get("/v1/players/me", token=token)).status


async def test_a_revocation_committed_after_a_sync_read_past_its_time_is_still_refused(
    make_settings: Any, settings: Any
) -> None:
    synced = make_settings(revocation_sync_seconds=SYNC)
    async with running_service(synced) as one, running_service(synced) as two:
        device = secrets.token_urlsafe(24)
        token = (await one.post("/v1/auth/device", {"device_id": device})).body["access_token"]
        assert await status_of_me(two, token) == 200
        session_id = verify_token(TEST_SECRET, token).session_id
        conn = await asyncpg.connect(settings.database_url)
        try:
            # Stamped now, committed after several syncs have read past this time.
            async with conn.transaction():
                await conn.execute(
                    "UPDATE sessions SET revoked_at = now() WHERE session_id = $1", session_id
                )
                await asyncio.sleep(WAIT)
        finally:
            await conn.close()
        await asyncio.sleep(WAIT)
        assert await status_of_me(two, token) == 401


async def test_signing_out_everywhere_after_the_first_sync_is_refused_elsewhere_within_it(
    make_settings: Any,
) -> None:
    synced = make_settings(revocation_sync_seconds=SYNC)
    async with running_service(synced) as one, running_service(synced) as two:
        signed = (await one.post("/v1/auth/device", {"device_id": secrets.token_urlsafe(24)})).body
        token = signed["access_token"]
        sessionless = issue_token(TEST_SECRET, uuid.UUID(signed["player_id"]), 3600)
        for each in (token, sessionless):
            assert await status_of_me(two, each) == 200
        # Past the first (full) read: what follows comes by the reads of what changed.
        await asyncio.sleep(WAIT)
        out = await one.post("/v1/auth/logout", {"everywhere": True}, token=token)
        assert out.body == {"sessions_revoked": 1}
        await asyncio.sleep(WAIT)
        for each in (token, sessionless):
            assert await status_of_me(two, each) == 401
