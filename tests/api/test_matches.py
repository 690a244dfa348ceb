"""Matches through real HTTP on the real database: create, join, read, act, replay."""

import asyncio
import random
import uuid
from typing import Any

import asyncpg
import pytest

from service.config import Settings
from service.games.kernel.rng import MASK64
from service.games.registry import get_game
from tests.api.matches_helpers import (
    act,
    all_events,
    cache_agrees_with_log,
    create,
    finished_matches_rebuild,  # noqa: F401 (autouse)
    ints_in,
    new_players,
    play_out,
    play_step,
    read,
    start_match,
)
from tests.http import Api

NECROMANCERS = get_game("necromancers")


async def test_games_list_each_game_with_its_seats_and_options(api: Api) -> None:
    (token,) = await new_players(api, 1)
    answer = await api.get("/v1/games", token=token)
    assert answer.status == 200
    games = {g["id"]: g for g in answer.body["games"]}
    assert games["necromancers"]["min_seats"] == 2
    assert games["necromancers"]["max_seats"] == 4
    assert games["necromancers"]["options"] == {}
    # Each with the name players know it by, for a client to show beside the id.
    assert {
        g: games[g]["name"] for g in ("necromancers", "fate-duel", "loyalty", "medianokte")
    } == {
        "necromancers": "Duelo de Nigromantes",
        "fate-duel": "Duelos Simples",
        "loyalty": "The loyalty card game",
        "medianokte": "Medianokte: Exploración",
    }
    assert (await api.get("/v1/games")).status == 401


@pytest.mark.parametrize(
    ("fields", "code", "mentions"),
    [
        ({"game": "chess"}, "unknown_game", "chess"),
        ({"seats": 1}, "invalid_match", "2 to 4"),
        ({"seats": 5}, "invalid_match", "2 to 4"),
        ({"options": {"lives": 3}}, "invalid_match", "lives"),
        ({"bots": [2]}, "invalid_bots", "0..1"),
        ({"bots": [-1]}, "invalid_bots", "0..1"),
        ({"bots": [1, 1]}, "invalid_bots", "distinct"),
        ({"seats": "2"}, "invalid_field", "seats"),
        ({"seats": 2.0}, "invalid_field", "seats"),
        ({"turn_seconds": 0}, "invalid_field", "turn_seconds"),
        ({"bots": "0"}, "invalid_field", "bots"),
        ({"owner": "me"}, "invalid_field", "owner"),
    ],
)
async def test_bad_match_requests_are_422_naming_the_reason(
    api: Api, fields: dict[str, Any], code: str, mentions: str
) -> None:
    (token,) = await new_players(api, 1)
    answer = await create(api, token, **fields)
    assert answer.status == 422, answer.body
    assert answer.error_code == code
    assert mentions in answer.body["error"]["message"]


async def test_seats_fill_in_order_and_the_last_join_starts_the_match(api: Api) -> None:
    a, b, c, d = await new_players(api, 4)
    created = await create(api, a, seats=3)
    assert created.status == 201
    assert created.body["seat"] == 0
    assert created.body["status"] == "waiting"
    assert created.body["version"] == 0
    match_id = created.body["match_id"]

    waiting = await read(api, a, match_id)
    assert waiting["status"] == "waiting"
    assert waiting["to_act"] == [] and waiting["legal_actions"] == []
    refused = await act(api, a, match_id, 0, {"type": "target", "seat": 1})
    assert refused.status == 409 and refused.error_code == "match_not_active"

    first = await api.post(f"/v1/matches/{match_id}/join", token=b)
    again = await api.post(f"/v1/matches/{match_id}/join", token=b)
    assert first.body == again.body
    assert first.body["seat"] == 1 and first.body["status"] == "waiting"
    last = await api.post(f"/v1/matches/{match_id}/join", token=c)
    assert last.status == 200
    assert last.body == {"match_id": match_id, "seat": 2, "version": 0, "status": "active"}
    full = await api.post(f"/v1/matches/{match_id}/join", token=d)
    assert full.status == 409 and full.error_code == "match_full"

    match = await read(api, a, match_id)
    assert [s["bot"] for s in match["seats"]] == [False] * 3
    assert all(s["player_id"] for s in match["seats"])
    (to_act,) = match["to_act"]
    tokens = [a, b, c]
    mover = await read(api, tokens[to_act], match_id)
    assert mover["seat"] == to_act and mover["legal_actions"]
    idle = await read(api, tokens[(to_act + 1) % 3], match_id)
    assert idle["legal_actions"] == []
    spectator = await read(api, d, match_id)
    assert spectator["seat"] is None and spectator["legal_actions"] == []
    assert spectator["view"] == {**mover["view"], "seat": None}
    kinds = [e["kind"] for e in await all_events(api, d, match_id)]
    assert kinds == ["seat_taken"] * 3 + ["match_started", "turn_order", "turn_start"]


@pytest.mark.parametrize(
    "path", ["", "/join", "/actions", "/events", "/replay"], ids=lambda p: p or "read"
)
@pytest.mark.parametrize("match_id", [str(uuid.uuid4()), "not-a-uuid", "1"])
async def test_unknown_or_malformed_match_ids_are_404(api: Api, path: str, match_id: str) -> None:
    (token,) = await new_players(api, 1)
    url = f"/v1/matches/{match_id}{path}"
    if path in ("/join", "/actions"):
        body = (
            {"version": 0, "action": {"type": "target", "seat": 1}} if path == "/actions" else None
        )
        answer = await api.post(url, body, token=token)
    else:
        answer = await api.get(url, token=token)
    assert answer.status == 404, answer.body
    assert answer.error_code == "not_found"


async def test_refused_actions_change_nothing(api: Api) -> None:
    a, b, stranger = await new_players(api, 3)
    match_id = await start_match(api, [a, b])
    tokens = [a, b]
    before = await read(api, a, match_id)
    (seat,) = before["to_act"]
    mover, idle = tokens[seat], tokens[1 - seat]
    legal = (await read(api, mover, match_id))["legal_actions"]
    attempts = [
        (stranger, 0, legal[0], 403, "not_seated"),
        (idle, 0, {"type": "target", "seat": seat}, 403, "not_your_turn"),
        (mover, 1, legal[0], 409, "version_ahead"),
        (mover, 0, {"type": "target", "seat": seat}, 422, "illegal_action"),
        (mover, 0, {"type": "target", "seat": 1 - seat, "extra": 1}, 422, "illegal_action"),
        (mover, 0, {"type": "target", "seat": float(1 - seat)}, 422, "illegal_action"),
        (mover, 0, {"seat": 1 - seat}, 422, "illegal_action"),
        (mover, 0, "target", 422, "invalid_field"),
        (mover, -1, legal[0], 422, "invalid_field"),
    ]
    for token, version, action, status, code in attempts:
        answer = await act(api, token, match_id, version, action)
        assert (answer.status, answer.error_code) == (status, code), (action, answer.body)
        if code == "illegal_action":
            reason = answer.body["error"]["details"]["reason"]
            assert reason.isidentifier() and reason.islower() and answer.body["error"]["message"]
        if code == "version_ahead":
            assert answer.body["error"]["details"]["version"] == 0
    assert await read(api, a, match_id) == before
    assert len(await all_events(api, a, match_id)) == 5


async def test_a_version_ahead_of_the_match_is_409_version_ahead_not_stale(api: Api) -> None:
    """A version the match has not reached was never shown: it is not stale, it is ahead, and
    the refusal gives the match's version and the seat's guard so that the client can catch up."""
    a, b = await new_players(api, 2)
    match_id = await start_match(api, [a, b])
    tokens = [a, b]
    before = await read(api, a, match_id)
    (seat,) = before["to_act"]
    action = (await read(api, tokens[seat], match_id))["legal_actions"][0]
    ahead = await act(api, tokens[seat], match_id, 5, action)
    assert (ahead.status, ahead.error_code) == (409, "version_ahead"), ahead.body
    assert ahead.body["error"]["details"] == {"version": 0, "guard": 0}
    assert ahead.body["error"]["message"] == (
        "version 5 is ahead of the match, which is at version 0"
    )
    assert await read(api, a, match_id) == before
    assert (await act(api, tokens[seat], match_id, 0, action)).status == 200


async def test_an_action_answers_the_new_version_events_view_and_legal_actions(api: Api) -> None:
    a, b = await new_players(api, 2)
    match_id = await start_match(api, [a, b])
    tokens = [a, b]
    (seat,) = (await read(api, a, match_id))["to_act"]
    target = 1 - seat
    answer = await act(api, tokens[seat], match_id, 0, {"type": "target", "seat": target})
    assert answer.status == 200
    done = answer.body
    assert done["version"] == 1 and done["status"] == "active"
    assert [e["kind"] for e in done["events"]][:3] == [
        "target_chosen",
        "attack_roll",
        "defence_roll",
    ]
    assert [e["seq"] for e in done["events"]] == list(range(6, 6 + len(done["events"])))
    assert {e["version"] for e in done["events"]} == {1}
    mine = await read(api, tokens[seat], match_id)
    assert mine["view"] == done["view"]
    assert mine["legal_actions"] == done["legal_actions"]
    assert mine["to_act"] == done["to_act"] and mine["version"] == 1


async def test_concurrent_actions_at_one_version_apply_exactly_once(api: Api) -> None:
    a, b = await new_players(api, 2)
    match_id = await start_match(api, [a, b])
    tokens = [a, b]
    (seat,) = (await read(api, a, match_id))["to_act"]
    action = {"type": "target", "seat": 1 - seat}
    answers = await asyncio.gather(*(act(api, tokens[seat], match_id, 0, action) for _ in range(8)))
    assert sorted(answer.status for answer in answers) == [200] + [409] * 7
    assert {a.error_code for a in answers if a.status == 409} == {"stale_version"}
    kinds = [e["kind"] for e in await all_events(api, a, match_id)]
    assert kinds.count("target_chosen") == 1
    assert (await read(api, a, match_id))["version"] == 1


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
async def test_a_retried_action_with_its_idempotency_key_is_applied_once(
    api: Api, fmt: str
) -> None:
    a, b = await new_players(api, 2)
    match_id = await start_match(api, [a, b])
    tokens = [a, b]
    (seat,) = (await read(api, a, match_id))["to_act"]
    action = {"type": "target", "seat": 1 - seat}
    key = {"Idempotency-Key": f"turn-1-{fmt}"}
    first = await act(api, tokens[seat], match_id, 0, action, headers=key, fmt=fmt)
    retry = await act(api, tokens[seat], match_id, 0, action, headers=key, fmt=fmt)
    assert first.status == retry.status == 200
    assert first.body == retry.body
    assert (await read(api, a, match_id))["version"] == 1
    other = await act(api, tokens[seat], match_id, 1, action, headers=key)
    assert other.status == 409 and other.error_code == "idempotency_conflict"


async def test_match_creation_accepts_an_idempotency_key(api: Api) -> None:
    (a,) = await new_players(api, 1)
    key = {"Idempotency-Key": "create-1"}
    body = {"game": "necromancers", "seats": 3}
    first = await api.post("/v1/matches", body, token=a, headers=key)
    retry = await api.post("/v1/matches", body, token=a, headers=key)
    assert first.status == retry.status == 201
    assert first.body == retry.body


@pytest.mark.parametrize(("seats", "client_seed"), [(2, 1), (3, 2), (4, 3), (4, 4)])
async def test_random_play_to_the_end_leaks_no_secret_and_replays(
    api: Api, seats: int, client_seed: int
) -> None:
    """Clients choose among legal_actions; every view, event and answer is kept and checked."""
    rng = random.Random(client_seed)
    tokens = await new_players(api, seats + 1)
    players, spectator = tokens[:seats], tokens[seats]
    match_id = await start_match(api, players)
    seen: list[Any] = []
    early = await api.get(f"/v1/matches/{match_id}/replay", token=spectator)
    assert early.status == 409 and early.error_code == "match_not_finished"
    for _ in range(1000):
        views = [await read(api, token, match_id) for token in tokens]
        seen += views
        if views[0]["status"] == "finished":
            break
        fmt = rng.choice(["json", "msgpack"])
        answer = await play_step(api, match_id, players, rng, fmt=fmt)
        assert answer.status == 200, answer.body
        seen.append(answer.body)
    final = views[0]
    assert final["outcome"] is not None and final["to_act"] == []
    assert {v["outcome"]["winners"][0] for v in views} == {final["outcome"]["winners"][0]}

    replay = (await api.get(f"/v1/matches/{match_id}/replay", token=spectator)).body
    assert replay["outcome"] == final["outcome"]
    assert [a["version"] for a in replay["actions"]] == list(range(1, final["version"] + 1))
    assert {a["source"] for a in replay["actions"]} == {"player"}
    # Every generator state the match went through, and its seed, are the secrets.
    state = NECROMANCERS.setup(replay["seed"], seats, {}, [None] * seats)
    secrets = {replay["seed"], NECROMANCERS.dump_state(state)["rng"]}
    for step in replay["actions"]:
        state, _ = NECROMANCERS.apply(state, step["seat"], step["action"])
        secrets.add(NECROMANCERS.dump_state(state)["rng"])
    assert replay["final"]["rng"] in secrets
    per_seat = {seat: await all_events(api, players[seat], match_id) for seat in range(seats)}
    watched = await all_events(api, spectator, match_id)
    assert not ints_in(seen + list(per_seat.values()) + [watched]) & secrets
    public = [
        {k: e[k] for k in ("seq", "version", "kind", "data")}
        for e in replay["events"]
        if e["visible_to"] is None
    ]
    assert watched == public
    for seat, events in per_seat.items():
        assert events == [
            {k: e[k] for k in ("seq", "version", "kind", "data")}
            for e in replay["events"]
            if e["visible_to"] is None or seat in e["visible_to"]
        ]
    assert 0 <= replay["seed"] <= MASK64


async def test_the_rebuild_check_notices_a_cached_state_that_drifted(
    api: Api, settings: Settings
) -> None:
    a, b = await new_players(api, 2)
    match_id = await start_match(api, [a, b])
    await play_out(api, match_id, [a, b], random.Random(9))
    conn = await asyncpg.connect(settings.database_url)
    try:
        assert await cache_agrees_with_log(conn, uuid.UUID(match_id))
        # Drift inside a transaction that is rolled back, so the suite's own check stays green.
        drift = conn.transaction()
        await drift.start()
        await conn.execute(
            "UPDATE matches SET state = jsonb_set(state, '{turn}', '0') WHERE match_id = $1",
            uuid.UUID(match_id),
        )
        assert not await cache_agrees_with_log(conn, uuid.UUID(match_id))
        await drift.rollback()
        assert await cache_agrees_with_log(conn, uuid.UUID(match_id))
    finally:
        await conn.close()
