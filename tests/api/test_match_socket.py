"""Actions sent on a match's WebSocket: answered on it, retry-safe, refused in the error shape."""

import json
from typing import Any

import aiohttp
import msgpack

from tests.api.matches_helpers import (
    act,
    new_players,
    read,
    receive,
    socket_url,
    start_match,
)
from tests.conftest import running_service
from tests.http import Api


async def _open(api: Api, token: str, match_id: str, **headers: str) -> Any:
    """A seat's socket, its backlog already received."""
    headers = {"Authorization": f"Bearer {token}", **headers}
    ws = await api.session.ws_connect(socket_url(api, match_id), headers=headers)
    backlog = await receive(ws)
    assert backlog["events"], backlog
    return ws


async def _turn(api: Api, tokens: list[str], match_id: str) -> tuple[int, dict[str, Any]]:
    """The seat asked to act now, and the match as it sees it."""
    (seat,) = (await read(api, tokens[0], match_id))["to_act"]
    return seat, await read(api, tokens[seat], match_id)


async def _new_match(api: Api) -> tuple[list[str], str, int, dict[str, Any]]:
    """A new 2-seat match: its players' tokens, its id, the seat asked first and its view."""
    tokens = await new_players(api, 2)
    match_id = await start_match(api, tokens)
    seat, match = await _turn(api, tokens, match_id)
    return tokens, match_id, seat, match


async def test_an_action_on_the_socket_gets_the_http_answer_and_its_events_are_not_pushed_again(
    api: Api,
) -> None:
    tokens, match_id, seat, match = await _new_match(api)
    ws = await _open(api, tokens[seat], match_id)
    other = await _open(api, tokens[1 - seat], match_id)
    try:
        frame = {"ref": "first", "version": match["version"], "action": match["legal_actions"][0]}
        await ws.send_str(json.dumps(frame))
        reply = await receive(ws)
        assert reply["reply"] == "first"
        answer = reply["answer"]
        assert answer["version"] == match["version"] + 1
        assert set(answer) == {
            "version", "status", "events", "view", "to_act", "prompt", "legal_actions", "outcome"
        }  # fmt: skip
        # The other seat is pushed the same events; the acting socket only had them in its reply.
        pushed = await receive(other)
        assert pushed["events"] == answer["events"]
        last = answer["events"][-1]["seq"]

        # The next thing the acting socket receives is the push of the other seat's action.
        now = await read(api, tokens[0], match_id)
        asked = now["to_act"][0]
        legal = (await read(api, tokens[asked], match_id))["legal_actions"]
        moved = await act(api, tokens[asked], match_id, now["version"], legal[0])
        assert moved.status == 200, moved.body
        after = await receive(ws)
        assert "reply" not in after
        assert [e["seq"] for e in after["events"]] == [e["seq"] for e in moved.body["events"]]
        assert all(e["seq"] > last for e in after["events"])
    finally:
        await ws.close()
        await other.close()


async def test_a_retried_socket_action_is_applied_once(api: Api) -> None:
    tokens, match_id, seat, match = await _new_match(api)
    ws = await _open(api, tokens[seat], match_id)
    try:
        frame = {"version": match["version"], "action": match["legal_actions"][0]}
        # By key: the same answer again, applied once.
        keyed = {**frame, "ref": 1, "idempotency_key": "socket-retry"}
        await ws.send_str(json.dumps(keyed))
        first = await receive(ws)
        await ws.send_str(json.dumps({**keyed, "ref": 2}))
        second = await receive(ws)
        assert (first["reply"], second["reply"]) == (1, 2)
        assert second["answer"] == first["answer"]
        # By version: the seat's prompt has moved, so the same action again is stale.
        await ws.send_str(json.dumps({**frame, "ref": 3}))
        stale = await receive(ws)
        assert stale["reply"] == 3 and stale["status"] == 409
        assert stale["error"]["code"] == "stale_version"
    finally:
        await ws.close()
    assert (await read(api, tokens[0], match_id))["version"] == first["answer"]["version"]


async def test_a_key_used_over_http_answers_the_same_action_on_the_socket(api: Api) -> None:
    tokens, match_id, seat, match = await _new_match(api)
    frame = {"version": match["version"], "action": match["legal_actions"][0]}
    posted = await act(
        api, tokens[seat], match_id, **frame, headers={"Idempotency-Key": "shared-key"}
    )
    assert posted.status == 200, posted.body
    ws = await _open(api, tokens[seat], match_id)
    try:
        await ws.send_str(json.dumps({**frame, "idempotency_key": "shared-key"}))
        reply = await receive(ws)
        assert reply["answer"] == posted.body
        # Another request under the same key is refused, as over HTTP.
        other = {**frame, "action": {"type": "other"}, "idempotency_key": "shared-key"}
        await ws.send_str(json.dumps(other))
        conflict = await receive(ws)
        assert (conflict["status"], conflict["error"]["code"]) == (409, "idempotency_conflict")
    finally:
        await ws.close()
    assert (await read(api, tokens[0], match_id))["version"] == posted.body["version"]


BAD_FRAMES: list[tuple[str | bytes, int, str, Any]] = [
    ("not json", 400, "malformed_body", None),
    (b"\xc1", 400, "malformed_body", None),
    (json.dumps({"ref": "x", "action": {"type": "target", "seat": 1}}), 422, "invalid_field", "x"),
    (json.dumps({"ref": "x", "version": 0, "action": [1]}), 422, "invalid_field", "x"),
    (json.dumps({"ref": 7, "version": 0, "action": {}, "extra": 1}), 422, "invalid_field", 7),
    (json.dumps({"ref": 7, "version": "0", "action": {}}), 422, "invalid_field", 7),
    (json.dumps({"ref": "y", "version": 0, "action": {"type": "nope"}}), 422, "illegal_action",
     "y"),
    (json.dumps({"ref": "k", "version": 0, "action": {}, "idempotency_key": ""}), 422,
     "invalid_field", "k"),
    (json.dumps({"ref": "z" * 65, "version": 0, "action": {}}), 422, "invalid_field", None),
    (json.dumps([1, 2]), 422, "invalid_field", None),
]  # fmt: skip


async def test_refused_socket_frames_answer_in_the_error_shape_and_change_nothing(
    api: Api,
) -> None:
    tokens, match_id, seat, match = await _new_match(api)
    ws = await _open(api, tokens[seat], match_id)
    try:
        for frame, status, code, ref in BAD_FRAMES:
            await (ws.send_bytes(frame) if isinstance(frame, bytes) else ws.send_str(frame))
            reply = await receive(ws)
            assert (reply["reply"], reply["status"], reply["error"]["code"]) == (
                ref,
                status,
                code,
            ), frame
            assert set(reply["error"]) == {"code", "message", "details"}
        assert (await read(api, tokens[0], match_id))["version"] == match["version"]
        # The socket stays open and a good action still goes through.
        frame = {"ref": "ok", "version": match["version"], "action": match["legal_actions"][0]}
        await ws.send_str(json.dumps(frame))
        assert (await receive(ws))["answer"]["version"] == match["version"] + 1
    finally:
        await ws.close()


async def test_only_the_seat_asked_may_act_on_its_socket(api: Api) -> None:
    tokens = await new_players(api, 3)
    match_id = await start_match(api, tokens[:2])
    seat, match = await _turn(api, tokens, match_id)
    frame = json.dumps({"version": match["version"], "action": match["legal_actions"][0]})
    for token, code in ((tokens[1 - seat], "not_your_turn"), (tokens[2], "not_seated")):
        ws = await _open(api, token, match_id)
        try:
            await ws.send_str(frame)
            reply = await receive(ws)
            assert (reply["status"], reply["error"]["code"]) == (403, code)
        finally:
            await ws.close()
    assert (await read(api, tokens[0], match_id))["version"] == match["version"]


async def test_a_msgpack_socket_acts_in_binary_frames(api: Api) -> None:
    tokens, match_id, seat, match = await _new_match(api)
    ws = await _open(api, tokens[seat], match_id, Accept="application/msgpack")
    try:
        frame = {"ref": "m", "version": match["version"], "action": match["legal_actions"][0]}
        await ws.send_bytes(msgpack.packb(frame))
        message = await ws.receive(timeout=5)
        assert message.type == aiohttp.WSMsgType.BINARY
        reply = msgpack.unpackb(message.data)
        assert reply["reply"] == "m" and reply["answer"]["version"] == match["version"] + 1
    finally:
        await ws.close()


async def test_the_socket_closes_after_the_reply_to_the_action_that_ends_the_match(
    api: Api,
) -> None:
    tokens = await new_players(api, 2)
    match_id = await start_match(api, tokens)
    sockets = {}
    try:
        for seat, token in enumerate(tokens):
            sockets[seat] = await _open(api, token, match_id)
        status = "active"
        while status == "active":
            seat, match = await _turn(api, tokens, match_id)
            ws = sockets[seat]
            await ws.send_str(
                json.dumps({"version": match["version"], "action": match["legal_actions"][0]})
            )
            reply = await receive(ws)
            while "reply" not in reply:  # a push of the other seat's action came first
                reply = await receive(ws)
            status = reply["answer"]["status"]
        assert reply["answer"]["outcome"] is not None
        # A push of the other seat's last action may still come; then the socket closes.
        while (message := await ws.receive(timeout=5)).type == aiohttp.WSMsgType.TEXT:
            assert "reply" not in json.loads(message.data)
        assert message.type == aiohttp.WSMsgType.CLOSE
    finally:
        for ws in sockets.values():
            await ws.close()


async def test_socket_actions_count_against_the_players_rate_limit(make_settings: Any) -> None:
    settings = make_settings(rate_limit_per_second=0.001, rate_limit_burst=6)
    async with running_service(settings) as api:
        tokens, match_id, seat, _ = await _new_match(api)
        ws = await _open(api, tokens[seat], match_id)
        try:
            codes = []
            for ref in range(6):
                await ws.send_str(json.dumps({"ref": ref, "version": 99, "action": {}}))
                reply = await receive(ws)
                codes.append(reply["error"]["code"])
        finally:
            await ws.close()
    assert "rate_limited" in codes
    limited = codes.index("rate_limited")
    assert set(codes[:limited]) == {"version_ahead"} and set(codes[limited:]) == {"rate_limited"}


async def test_a_frame_of_the_body_limit_is_answered_and_one_byte_more_closes_the_socket(
    make_settings: Any,
) -> None:
    async with running_service(make_settings(max_body_bytes=1000)) as api:
        tokens = await new_players(api, 2)
        match_id = await start_match(api, tokens)
        ws = await _open(api, tokens[0], match_id)
        frame = {"ref": "edge", "version": 0, "action": {"type": ""}}
        frame["action"]["type"] = "x" * (1000 - len(json.dumps(frame)))
        assert len(json.dumps(frame)) == 1000
        await ws.send_str(json.dumps(frame))
        reply = await receive(ws)
        while "reply" not in reply:  # a push may come first
            reply = await receive(ws)
        assert reply["reply"] == "edge" and reply["status"] < 500
        await ws.send_str(json.dumps(frame) + " ")
        closing = await ws.receive(timeout=5)
        while closing.type == aiohttp.WSMsgType.TEXT:
            closing = await ws.receive(timeout=5)
        assert closing.type == aiohttp.WSMsgType.CLOSE
        assert ws.close_code == aiohttp.WSCloseCode.MESSAGE_TOO_BIG
        assert (await read(api, tokens[0], match_id))["version"] == 0


async def test_frames_past_the_rate_limit_are_refused_unread_and_close_the_socket(
    make_settings: Any,
) -> None:
    """A frame past the limit is answered 429 before it is decoded (its reply cannot name its
    `ref`, and one that would be a 422 is a 429); MAX_LIMITED_FRAMES of them in a row close
    the socket (1008)."""
    settings = make_settings(rate_limit_per_second=0.001, rate_limit_burst=12, max_limited_frames=3)
    async with running_service(settings) as api:
        tokens, match_id, seat, _ = await _new_match(api)
        ws = await _open(api, tokens[seat], match_id)
        try:
            replies = []
            for ref in range(20):
                # Decoded, it would be refused 422 and its reply would name its ref.
                await ws.send_str(json.dumps({"ref": ref, "version": "not a number"}))
                message = await ws.receive(timeout=5)
                if message.type != aiohttp.WSMsgType.TEXT:
                    break
                reply = json.loads(message.data)
                if "reply" in reply:
                    replies.append((reply["reply"], reply["status"], reply["error"]["code"]))
        finally:
            await ws.close()
    limited = [reply for reply in replies if reply[1] == 429]
    read_ones = replies[: len(replies) - len(limited)]
    assert read_ones and all(status == 422 and ref is not None for ref, status, _ in read_ones)
    assert limited == [(None, 429, "rate_limited")] * 3
    assert message.type == aiohttp.WSMsgType.CLOSE
    assert ws.close_code == aiohttp.WSCloseCode.POLICY_VIOLATION
