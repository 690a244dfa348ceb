"""Deleting an account through HTTP on the real database (docs/api.md#deleting-an-account):
what goes, what others still rely on, and that nothing of the player answers afterwards."""

import dataclasses
import time
import uuid
from typing import Any

import aiohttp
import asyncpg
import msgpack
from aiohttp import web

from service.api.auth import issue_token
from service.api.keys import POOL
from service.config import Settings
from service.games.cryptids.content import load_ruleset
from service.games.cryptids.engine import simulate
from service.usecases.deletion import FRESH_SIGN_IN_SECONDS
from tests.api.deletion_helpers import asked_match
from tests.api.matches_helpers import OPS, cache_agrees_with_log, create, socket_url, start_match
from tests.api.runs_helpers import spend_gold
from tests.conftest import TEST_SECRET, service_and_app
from tests.http import Answer, Api


async def delete_me(api: Api, token: str, body: Any = None) -> Answer:
    return await api.call("DELETE", "/v1/players/me", body, token=token)


def stale_token(player_id: str) -> str:
    """A valid token of the player, signed in longer ago than a deletion accepts."""
    signed_in = time.time() - FRESH_SIGN_IN_SECONDS - 60
    return issue_token(TEST_SECRET, uuid.UUID(player_id), 3600, now=signed_in)


async def play_round_one(api: Api, token: str) -> dict[str, Any]:
    """A new run's first turn: its snapshot joins the pool; the answer of the end-turn."""
    run = (await api.post("/v1/runs", token=token)).body
    await spend_gold(api, token, run)
    turn = await api.post(f"/v1/runs/{run['run_id']}/end-turn", {"round": 1}, token=token)
    assert turn.status == 200, turn.body
    body: dict[str, Any] = turn.body
    return body


async def handshake(api: Api, token: str, match_id: str) -> int:
    """The status of a browser's WebSocket handshake (`?token=`): 101 when it opened."""
    try:
        async with api.session.ws_connect(socket_url(api, match_id, f"?token={token}")):
            return 101
    except aiohttp.WSServerHandshakeError as refused:
        return refused.status


def resimulated(replay: dict[str, Any]) -> bytes:
    """The replay as a client makes it again from its own header: ruleset, seed, warbands."""
    ruleset = load_ruleset(replay["ruleset"])
    result = simulate(ruleset, replay["seed"], replay["a"], replay["b"], record=True)
    assert result.replay is not None
    packed: bytes = msgpack.packb(result.replay.to_wire())
    return packed


async def ranks(api: Api, token: str, query: str = "") -> list[tuple[int, str]]:
    board = (await api.get(f"/v1/leaderboard{query}", token=token)).body["entries"]
    return [(e["rank"], e["player_id"]) for e in board]


async def test_deleting_ends_what_the_player_holds_and_keeps_what_others_rely_on(
    fresh_service: tuple[Api, web.Application],
) -> None:
    api, app = fresh_service
    pool: asyncpg.Pool = app[POOL]
    doomed_id, doomed = await api.new_player("doomed")
    rival_id, rival = await api.new_player("rival")
    third_id, third = await api.new_player("third")

    # The doomed player's run stays open after its first turn; its snapshot is the only
    # player's ghost in this pool, so the rival's first battle is fought against it.
    await play_round_one(api, doomed)
    fought = await play_round_one(api, rival)
    battle_id = fought["battle_id"]
    assert not fought["opponent"]["is_bot"]
    ghost_owner = await pool.fetchval(
        "SELECT ghost_player_id FROM battles WHERE battle_id = $1", battle_id
    )
    assert str(ghost_owner) == doomed_id
    replay_before = await api.get(f"/v1/battles/{battle_id}/replay", token=rival, fmt="msgpack")
    assert replay_before.status == 200

    active = await start_match(api, [doomed, rival])
    waiting = (await create(api, doomed)).body["match_id"]

    # Ranks: doomed first, rival second, third last.
    for player_id, rating in ((doomed_id, 1500), (rival_id, 1200), (third_id, 1100)):
        await pool.execute(
            "UPDATE players SET rating = $2 WHERE player_id = $1", uuid.UUID(player_id), rating
        )
    assert await ranks(api, rival) == [(1, doomed_id), (2, rival_id), (3, third_id)]
    ops_before = (await api.get("/v1/ops/matchmaking", headers=OPS)).body

    refused = await delete_me(api, stale_token(doomed_id))
    assert (refused.status, refused.error_code) == (403, "reauthentication_required")
    guessed = await delete_me(api, stale_token(doomed_id), {"refresh_token": "not-a-token"})
    assert (guessed.status, guessed.error_code) == (403, "reauthentication_required")
    assert (await api.get("/v1/players/me", token=doomed)).status == 200

    deleted = await delete_me(api, doomed)
    assert deleted.status == 200, deleted.body
    assert deleted.body == {
        "player_id": doomed_id,
        "runs_ended": 1,
        "matches_resigned": 1,
        "matches_left": 1,
    }

    # Every token of the player is refused, on REST and on the match WebSocket.
    for token in (doomed, stale_token(doomed_id)):
        assert (await api.get("/v1/players/me", token=token)).status == 401
        assert (await api.get("/v1/runs", token=token)).status == 401
        assert await handshake(api, token, active) == 401
    assert (await delete_me(api, doomed)).status == 401
    assert await handshake(api, rival, active) == 101

    # The active match is over by the game's rule: the rival wins. The waiting one expired.
    match = (await api.get(f"/v1/matches/{active}", token=rival)).body
    assert match["status"] == "finished"
    assert match["outcome"]["winners"] == [1]
    assert await cache_agrees_with_log(pool, uuid.UUID(active))
    assert (await api.get(f"/v1/matches/{active}/replay", token=rival)).status == 200
    assert (await api.get(f"/v1/matches/{waiting}", token=rival)).body["status"] == "expired"

    # The rival's battle against the ghost still reads, and replays byte for byte.
    assert (await api.get(f"/v1/battles/{battle_id}", token=rival)).status == 200
    replay_after = await api.get(f"/v1/battles/{battle_id}/replay", token=rival, fmt="msgpack")
    assert replay_after.status == 200
    assert replay_after.raw == replay_before.raw
    assert resimulated(replay_after.body) == replay_after.raw

    # Nothing names the player: it is off the leaderboard, and counted in no rank.
    assert await ranks(api, rival) == [(1, rival_id), (2, third_id)]
    assert await ranks(api, third, "?around=me") == [(1, rival_id), (2, third_id)]
    counted = await pool.fetchval("SELECT sum(players) FROM rating_counts")
    assert counted == await pool.fetchval("SELECT count(*) FROM players WHERE deleted_at IS NULL")

    # Its open run ended abandoned; its name, devices and sessions are gone, its row kept.
    kept = await pool.fetchrow(
        "SELECT name, deleted_at FROM players WHERE player_id = $1", uuid.UUID(doomed_id)
    )
    assert kept["name"] is None and kept["deleted_at"] is not None
    statuses = await pool.fetch(
        "SELECT status FROM runs WHERE player_id = $1", uuid.UUID(doomed_id)
    )
    assert [r["status"] for r in statuses] == ["abandoned"]
    left = await pool.fetchrow(
        """
        SELECT (SELECT count(*) FROM devices WHERE player_id = $1) AS devices,
               (SELECT count(*) FROM sessions WHERE player_id = $1 AND revoked_at IS NULL)
                   AS live_sessions,
               (SELECT count(*) FROM refresh_tokens JOIN sessions USING (session_id)
                 WHERE player_id = $1) AS refresh_tokens
        """,
        uuid.UUID(doomed_id),
    )
    assert dict(left) == {"devices": 0, "live_sessions": 0, "refresh_tokens": 0}

    # The operators' battle figures are those of before.
    ops_after = (await api.get("/v1/ops/matchmaking", headers=OPS)).body
    assert ops_after["rounds"] == ops_before["rounds"]
    assert ops_after["timeline"] == ops_before["timeline"]


async def test_a_refresh_token_of_a_live_session_stands_for_a_recent_sign_in(api: Api) -> None:
    device = uuid.uuid4().hex
    signed = (await api.post("/v1/auth/device", {"device_id": device})).body
    player_id, refresh_token = signed["player_id"], signed["refresh_token"]
    deleted = await delete_me(api, stale_token(player_id), {"refresh_token": refresh_token})
    assert deleted.status == 200, deleted.body
    assert deleted.body["runs_ended"] == 0
    for token in (signed["access_token"], stale_token(player_id)):
        assert (await api.get("/v1/players/me", token=token)).status == 401
    # The device and the refresh token sign nobody in again; the device makes a new player.
    refreshed = await api.post("/v1/auth/refresh", {"refresh_token": refresh_token})
    assert refreshed.status == 401
    again = await api.post("/v1/auth/device", {"device_id": device})
    assert again.status == 201 and again.body["player_id"] != player_id


async def test_a_used_refresh_token_does_not_stand_for_a_sign_in(api: Api) -> None:
    signed = (await api.post("/v1/auth/device", {"device_id": uuid.uuid4().hex})).body
    used = signed["refresh_token"]
    assert (await api.post("/v1/auth/refresh", {"refresh_token": used})).status == 200
    refused = await delete_me(api, stale_token(signed["player_id"]), {"refresh_token": used})
    assert (refused.status, refused.error_code) == (403, "reauthentication_required")


async def test_every_write_of_a_deleted_player_is_a_401_even_where_its_token_still_passes(
    settings: Settings, fresh_database_url: str
) -> None:
    """An instance that has not yet read the deletion's revocations lets the player's token
    through: each write then reaches the database, which refuses it, and nothing is written."""
    fresh = dataclasses.replace(settings, database_url=fresh_database_url)
    late = dataclasses.replace(fresh, revocation_sync_seconds=3600.0)
    async with service_and_app(fresh) as (api, app), service_and_app(late) as (other, _):
        pool: asyncpg.Pool = app[POOL]
        player_id, token = await api.new_player("doomed")
        _, rival = await api.new_player("rival")
        run = (await api.post("/v1/runs", token=token)).body
        bought = await api.post(f"/v1/runs/{run['run_id']}/buy", {"slot": 0}, token=token)
        assert bought.status == 200, bought.body
        active, asked = await asked_match(api, token, rival)
        waiting = (await create(api, rival)).body["match_id"]
        tickets = "/v1/matchmaking/tickets"
        ticket = (await api.post(tickets, {"game": "necromancers", "seats": 3}, token=token)).body
        # The other instance has seen the player, and hears of the deletion only in an hour.
        assert (await other.get("/v1/players/me", token=token)).status == 200
        assert (await delete_me(api, token)).status == 200

        runs = f"/v1/runs/{run['run_id']}"
        action = {"version": asked["version"], "action": asked["legal_actions"][0]}
        writes = [
            ("POST", "/v1/runs", None),
            ("POST", f"{runs}/buy", {"slot": 1}),
            ("POST", f"{runs}/sell", {"position": 0}),
            ("POST", f"{runs}/end-turn", {"round": 1}),
            ("POST", f"{runs}/abandon", {}),
            ("POST", "/v1/matches", {"game": "necromancers", "seats": 2}),
            ("POST", "/v1/matches", {"game": "necromancers", "seats": 2, "bots": [1]}),
            ("POST", f"/v1/matches/{waiting}/join", None),
            ("POST", f"/v1/matches/{active}/actions", action),
            ("POST", f"/v1/matches/{active}/resign", None),
            ("POST", tickets, {"game": "necromancers", "seats": 2}),
            ("DELETE", f"{tickets}/{ticket['ticket_id']}", None),
        ]
        for method, path, body in writes:
            answer = await other.call(method, path, body, token=token)
            assert (answer.status, answer.error_code) == (401, "unauthorized"), (path, answer.body)
            assert answer.headers["WWW-Authenticate"] == "Bearer"
        left = await pool.fetchrow(
            """
            SELECT (SELECT count(*) FROM runs WHERE player_id = $1) AS runs,
                   (SELECT count(*) FROM runs WHERE player_id = $1 AND status = 'shopping')
                       AS open_runs,
                   (SELECT count(*) FROM match_seats WHERE player_id = $1) AS seats,
                   (SELECT count(*) FROM match_tickets WHERE player_id = $1) AS tickets,
                   (SELECT count(*) FROM match_tickets
                     WHERE player_id = $1 AND status = 'searching') AS searching
            """,
            uuid.UUID(player_id),
        )
        assert dict(left) == {"runs": 1, "open_runs": 0, "seats": 1, "tickets": 1, "searching": 0}
