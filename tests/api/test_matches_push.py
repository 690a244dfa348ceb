"""Pushed match updates: long-poll, WebSocket, and across two service processes."""

import asyncio
import random
import signal
import subprocess
import time
from typing import Any

import aiohttp
import pytest

from tests.api.matches_helpers import (
    act,
    finished_matches_rebuild,  # noqa: F401 (autouse)
    new_players,
    play_out,
    read,
    receive,
    socket_url,
    start_match,
)
from tests.http import Api

WAIT = 5.0


async def _first_move(api: Api, tokens: list[str], match_id: str) -> dict[str, Any]:
    """The seat to act targets the next enemy; returns the action's answer."""
    match = await read(api, tokens[0], match_id)
    (seat,) = match["to_act"]
    legal = (await read(api, tokens[seat], match_id))["legal_actions"]
    answer = await act(api, tokens[seat], match_id, match["version"], legal[0])
    assert answer.status == 200, answer.body
    body: dict[str, Any] = answer.body
    return body


async def test_long_poll_returns_as_soon_as_an_event_arrives(api: Api) -> None:
    a, b, watcher = await new_players(api, 3)
    match_id = await start_match(api, [a, b])
    url = f"/v1/matches/{match_id}/events"
    backlog = await api.get(f"{url}?after=0", token=watcher)
    assert [e["seq"] for e in backlog.body["events"]] == [1, 2, 3, 4, 5]
    cursor = backlog.body["last_seq"]
    assert cursor == 5

    started = time.monotonic()
    empty = await api.get(f"{url}?after={cursor}&wait=0.3", token=watcher)
    assert time.monotonic() - started >= 0.3
    assert empty.body["events"] == [] and empty.body["last_seq"] == cursor

    poll = asyncio.create_task(api.get(f"{url}?after={cursor}&wait={WAIT}", token=watcher))
    await asyncio.sleep(0.2)
    assert not poll.done()
    started = time.monotonic()
    moved = await _first_move(api, [a, b], match_id)
    answer = await asyncio.wait_for(poll, WAIT)
    assert time.monotonic() - started < WAIT / 2
    assert answer.status == 200
    assert answer.body["events"] == moved["events"]
    assert answer.body["last_seq"] == moved["events"][-1]["seq"]
    assert answer.body["version"] == 1


@pytest.mark.parametrize("query", ["wait=31", "wait=-1", "after=-1", "after=x"])
async def test_bad_long_poll_parameters_are_422(api: Api, query: str) -> None:
    a, b = await new_players(api, 2)
    match_id = await start_match(api, [a, b])
    answer = await api.get(f"/v1/matches/{match_id}/events?{query}", token=a)
    assert answer.status == 422 and answer.error_code == "invalid_field"


async def test_long_poll_on_a_finished_match_does_not_wait(api: Api) -> None:
    a, b = await new_players(api, 2)
    match_id = await start_match(api, [a, b])
    await play_out(api, match_id, [a, b], random.Random(7))
    last = (await api.get(f"/v1/matches/{match_id}/events", token=a)).body["last_seq"]
    started = time.monotonic()
    answer = await api.get(f"/v1/matches/{match_id}/events?after={last}&wait=10", token=a)
    assert answer.body["events"] == [] and answer.body["status"] == "finished"
    assert time.monotonic() - started < 1


async def test_websocket_pushes_the_backlog_then_each_new_event(api: Api) -> None:
    a, b, watcher = await new_players(api, 3)
    match_id = await start_match(api, [a, b])
    # A browser passes the token in the query; another client sends the header and wants msgpack.
    seat_ws = await api.session.ws_connect(socket_url(api, match_id, f"?token={b}"))
    watcher_ws = await api.session.ws_connect(
        socket_url(api, match_id, "?after=2"),
        headers={"Authorization": f"Bearer {watcher}", "Accept": "application/msgpack"},
    )
    try:
        backlog = await receive(seat_ws)
        assert [e["seq"] for e in backlog["events"]] == [1, 2, 3, 4, 5]
        assert backlog["status"] == "active" and backlog["last_seq"] == 5
        late = await receive(watcher_ws)
        assert [e["kind"] for e in late["events"]] == ["match_started", "turn_order", "turn_start"]

        moved = await _first_move(api, [a, b], match_id)
        for ws in (seat_ws, watcher_ws):
            pushed = await receive(ws)
            assert pushed["events"] == moved["events"]
            assert pushed["version"] == 1
    finally:
        await seat_ws.close()
        await watcher_ws.close()


@pytest.mark.parametrize(
    ("query", "status"), [("?token=forged.token.here", 401), ("", 401), ("?after=-2", 422)]
)
async def test_websocket_refusals_answer_in_the_error_shape(
    api: Api, query: str, status: int
) -> None:
    a, b = await new_players(api, 2)
    match_id = await start_match(api, [a, b])
    if status == 422:
        query += f"&token={a}"
    answer = await api.get(f"/v1/matches/{match_id}/ws{query}")
    assert answer.status == status
    assert "error" in answer.body


async def test_websocket_of_an_unknown_match_is_404(api: Api) -> None:
    (a,) = await new_players(api, 1)
    answer = await api.get(f"/v1/matches/00000000-0000-0000-0000-000000000000/ws?token={a}")
    assert answer.status == 404 and answer.error_code == "not_found"


async def test_websocket_closes_after_a_finished_match_sent_everything(api: Api) -> None:
    a, b = await new_players(api, 2)
    match_id = await start_match(api, [a, b])
    await play_out(api, match_id, [a, b], random.Random(3))
    ws = await api.session.ws_connect(socket_url(api, match_id, f"?token={a}"))
    batch = await receive(ws)
    assert batch["status"] == "finished"
    assert batch["events"][-1]["kind"] == "game_over"
    closing = await ws.receive(timeout=WAIT)
    assert closing.type == aiohttp.WSMsgType.CLOSE
    await ws.close()
    # Reopened after everything was sent, it says the match is over before it closes.
    last = batch["last_seq"]
    again = await api.session.ws_connect(socket_url(api, match_id, f"?token={a}&after={last}"))
    told = await receive(again)
    assert told["events"] == [] and told["status"] == "finished" and told["last_seq"] == last
    assert (await again.receive(timeout=WAIT)).type == aiohttp.WSMsgType.CLOSE
    await again.close()


async def test_an_action_on_one_instance_is_pushed_by_the_other(
    api: Api, service_process: tuple[str, subprocess.Popen[bytes]]
) -> None:
    base, process = service_process
    other = Api(api.session, base)
    a, b = await new_players(api, 2)
    match_id = await start_match(api, [a, b])
    ws = await api.session.ws_connect(socket_url(other, match_id, f"?token={b}&after=5"))
    poll = asyncio.create_task(
        api.get(f"/v1/matches/{match_id}/events?after=5&wait={WAIT}", token=a)
    )
    try:
        # Sent to the second instance, seen by a long-poll on the first...
        match = await read(other, a, match_id)
        (seat,) = match["to_act"]
        token = [a, b][seat]
        legal = (await read(other, token, match_id))["legal_actions"]
        moved = (await act(other, token, match_id, 0, legal[0])).body
        assert (await asyncio.wait_for(poll, WAIT)).body["events"] == moved["events"]
        # ...and sent to the first, pushed by the second's WebSocket.
        assert (await receive(ws))["events"] == moved["events"]
        # The next decision may be the defender's: ask who acts now.
        (seat,) = (await read(api, a, match_id))["to_act"]
        token = [a, b][seat]
        mover = await read(api, token, match_id)
        again = await act(api, token, match_id, 1, mover["legal_actions"][0])
        assert again.status == 200
        assert (await receive(ws))["events"] == again.body["events"]

        # Shutting down closes open WebSockets instead of waiting for them.
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        closing = await ws.receive(timeout=WAIT)
        assert closing.type == aiohttp.WSMsgType.CLOSE
        assert closing.data == aiohttp.WSCloseCode.GOING_AWAY
        await asyncio.to_thread(process.wait, 30)
        assert process.returncode == 0
        assert time.monotonic() - started < 5
    finally:
        await ws.close()
