"""The match sockets a process holds: each answers to the token it was opened under (revoked,
expired or its player deleted, its frames are refused and it is closed, even when it sends
nothing), and they are capped per player and per match, refused before the upgrade with a 409
that names the setting, a seat's own never crowded out by spectators."""

import asyncio
import json
import time
from typing import Any
from uuid import UUID

import aiohttp
import jwt
import pytest

from service.api.auth import issue_token
from tests.api.matches_helpers import new_players, read, receive, socket_url, start_match
from tests.conftest import TEST_SECRET, running_service
from tests.http import Api

REVOKED, EXPIRED = 4002, 4001


async def _open(api: Api, token: str, match_id: str) -> aiohttp.ClientWebSocketResponse:
    """A socket on the match, its backlog already received."""
    headers = {"Authorization": f"Bearer {token}"}
    ws = await api.session.ws_connect(socket_url(api, match_id), headers=headers)
    assert (await receive(ws))["events"]
    return ws


async def _closing(ws: aiohttp.ClientWebSocketResponse, within: float) -> list[dict[str, Any]]:
    """Whatever the socket sends until it closes, which it must within `within` seconds."""
    sent = []
    deadline = time.monotonic() + within
    while (message := await ws.receive(timeout=deadline - time.monotonic())).type in (
        aiohttp.WSMsgType.TEXT,
        aiohttp.WSMsgType.BINARY,
    ):
        sent.append(json.loads(message.data))
    assert message.type == aiohttp.WSMsgType.CLOSE, message
    return sent


async def _seated_match(api: Api) -> tuple[list[str], str, int, dict[str, Any]]:
    """A 2-seat match: its tokens, its id, the seat asked first and what that seat sees."""
    tokens = await new_players(api, 2)
    match_id = await start_match(api, tokens)
    (seat,) = (await read(api, tokens[0], match_id))["to_act"]
    return tokens, match_id, seat, await read(api, tokens[seat], match_id)


async def test_signing_out_closes_an_idle_socket_at_once_on_its_instance(
    make_settings: Any,
) -> None:
    # The revocations read from the database would come too late to close it.
    async with running_service(make_settings(revocation_sync_seconds=600)) as api:
        tokens, match_id, seat, _ = await _seated_match(api)
        ws = await _open(api, tokens[seat], match_id)
        signed_out = await api.post("/v1/auth/logout", {}, token=tokens[seat])
        assert signed_out.status == 200, signed_out.body
        assert await _closing(ws, within=2.0) == []
        assert ws.close_code == REVOKED


async def test_a_frame_sent_after_signing_out_is_refused_and_not_applied(api: Api) -> None:
    tokens, match_id, seat, match = await _seated_match(api)
    ws = await _open(api, tokens[seat], match_id)
    assert (await api.post("/v1/auth/logout", {}, token=tokens[seat])).status == 200
    frame = {"ref": "late", "version": match["version"], "action": match["legal_actions"][0]}
    await ws.send_str(json.dumps(frame))
    # Refused in the error shape if it came before the close; never applied.
    for reply in await _closing(ws, within=2.0):
        assert (reply["status"], reply["error"]["code"]) == (401, "unauthorized"), reply
    assert ws.close_code == REVOKED
    assert (await read(api, tokens[1 - seat], match_id))["version"] == match["version"]


async def test_a_revocation_on_another_instance_closes_the_socket_within_the_sync_interval(
    make_settings: Any,
) -> None:
    settings = make_settings(revocation_sync_seconds=1.0)
    async with running_service(settings) as here, running_service(settings) as there:
        tokens, match_id, seat, _ = await _seated_match(here)
        ws = await _open(here, tokens[seat], match_id)
        assert (await there.post("/v1/auth/logout", {}, token=tokens[seat])).status == 200
        started = time.monotonic()
        await _closing(ws, within=settings.revocation_sync_seconds + 2.0)
        closed_after = time.monotonic() - started
        assert ws.close_code == REVOKED
    print(f"\nclosed {closed_after:.2f} s after a revocation on another instance")


async def test_a_socket_closes_when_its_token_expires(api: Api) -> None:
    tokens, match_id, seat, _ = await _seated_match(api)
    claims = jwt.decode(tokens[seat], options={"verify_signature": False})
    short = issue_token(TEST_SECRET, UUID(claims["sub"]), 2, session_id=UUID(claims["sid"]))
    expires_at = jwt.decode(short, options={"verify_signature": False})["exp"]
    ws = await _open(api, short, match_id)
    await _closing(ws, within=expires_at - time.time() + 2.0)
    assert ws.close_code == EXPIRED
    assert time.time() >= expires_at
    # The same session's other token still opens a socket.
    await (await _open(api, tokens[seat], match_id)).close()


async def test_deleting_the_account_closes_its_sockets(api: Api) -> None:
    tokens, match_id, seat, _ = await _seated_match(api)
    # A spectator, so that the match (and the seats' sockets) goes on without it.
    (watcher,) = await new_players(api, 1)
    watching = await _open(api, watcher, match_id)
    playing = await _open(api, tokens[seat], match_id)
    deleted = await api.call("DELETE", "/v1/players/me", {}, token=watcher)
    assert deleted.status == 200, deleted.body
    await _closing(watching, within=2.0)
    assert watching.close_code == REVOKED
    assert not playing.closed
    await playing.close()


async def _refused(api: Api, token: str, match_id: str, setting: str, limit: int) -> None:
    """The handshake is refused before the upgrade, in the error shape naming `setting`."""
    answer = await api.get(f"/v1/matches/{match_id}/ws?token={token}")
    assert (answer.status, answer.error_code) == (409, "too_many_sockets"), answer.body
    assert answer.body["error"]["details"] == {"setting": setting, "limit": limit}
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await api.session.ws_connect(socket_url(api, match_id, f"?token={token}"))
    assert refused.value.status == 409


async def _reopened(api: Api, token: str, match_id: str) -> aiohttp.ClientWebSocketResponse:
    """A socket opened once the one closed before it has left the count (its handler ends just
    after the client sees the close)."""
    for _ in range(50):
        try:
            return await _open(api, token, match_id)
        except aiohttp.WSServerHandshakeError as exc:
            assert exc.status == 409
            await asyncio.sleep(0.05)
    raise AssertionError("the closed socket still counts")


async def test_a_player_past_its_socket_cap_is_refused_until_it_closes_one(
    make_settings: Any,
) -> None:
    async with running_service(make_settings(max_sockets_per_player=2)) as api:
        tokens = await new_players(api, 3)
        first, second = await start_match(api, tokens[:2]), await start_match(api, tokens[1:])
        # One socket on each match: the cap counts the player's sockets on every match.
        sockets = [await _open(api, tokens[1], first), await _open(api, tokens[1], second)]
        await _refused(api, tokens[1], first, "MAX_SOCKETS_PER_PLAYER", 2)
        # Another player is not held back by it.
        await (await _open(api, tokens[0], first)).close()
        await sockets.pop().close()
        sockets.append(await _reopened(api, tokens[1], second))
        for ws in sockets:
            await ws.close()


async def test_spectators_past_a_matchs_cap_are_refused_but_its_seats_still_open(
    make_settings: Any,
) -> None:
    async with running_service(make_settings(max_sockets_per_match=2)) as api:
        seats, watchers = await new_players(api, 2), await new_players(api, 3)
        match_id = await start_match(api, seats)
        sockets = [await _open(api, watcher, match_id) for watcher in watchers[:2]]
        await _refused(api, watchers[2], match_id, "MAX_SOCKETS_PER_MATCH", 2)
        sockets += [await _open(api, seat, match_id) for seat in seats]
        await sockets.pop(0).close()
        sockets.append(await _reopened(api, watchers[2], match_id))
        for ws in sockets:
            await ws.close()
