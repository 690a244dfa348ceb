"""Moves the server makes itself: turn timers running out, and bots."""

import asyncio
import random
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from service.usecases.matches.progress import MAX_BOT_ACTIONS
from tests.api.matches_helpers import (
    act,
    create,
    finished_matches_rebuild,  # noqa: F401 (autouse)
    new_players,
    operator_match,
    play_out,
    read,
    start_match,
    wait_until,
)
from tests.conftest import running_service
from tests.http import Api

FAST_SWEEP = 0.1


@pytest.fixture
async def fast_sweeper(make_settings: Any) -> AsyncIterator[Api]:
    """Another instance on the same database, sweeping every FAST_SWEEP seconds."""
    async with running_service(make_settings(sweep_interval_seconds=FAST_SWEEP)) as client:
        yield client


async def test_a_turn_timer_running_out_applies_the_timeout_action(fast_sweeper: Api) -> None:
    api = fast_sweeper
    a, b = await new_players(api, 2)
    tokens = [a, b]
    started = time.monotonic()
    match_id = await start_match(api, tokens, turn_seconds=1)
    match = await read(api, a, match_id)
    (seat,) = match["to_act"]
    assert match["turn_seconds"] == 1
    left = datetime.fromisoformat(match["turn_deadline"]) - datetime.now(UTC)
    assert timedelta(0) < left <= timedelta(seconds=1)
    timeout_action = (await read(api, tokens[seat], match_id))["legal_actions"][0]

    after = await wait_until(api, a, match_id, lambda m: m["version"] >= 1)
    assert time.monotonic() - started >= 1
    assert after["view"]["target"] == timeout_action["seat"]
    stale = await act(api, tokens[seat], match_id, 0, timeout_action)
    assert stale.status == 409 and stale.error_code == "stale_version"

    await play_out(api, match_id, tokens, random.Random(5))
    replay = (await api.get(f"/v1/matches/{match_id}/replay", token=a)).body
    first = replay["actions"][0]
    assert (first["seat"], first["action"], first["source"]) == (seat, timeout_action, "timeout")


async def test_an_action_in_time_restarts_the_timer(fast_sweeper: Api) -> None:
    api = fast_sweeper
    a, b = await new_players(api, 2)
    tokens = [a, b]
    match_id = await start_match(api, tokens, turn_seconds=1)
    for version in range(2):
        match = await read(api, a, match_id)
        (seat,) = match["to_act"]
        mine = await read(api, tokens[seat], match_id)
        answer = await act(api, tokens[seat], match_id, version, mine["legal_actions"][-1])
        assert answer.status == 200, answer.body
        # Two turns over more than the second, each one in time: no timeout slips in.
        await asyncio.sleep(0.6)
    assert (await read(api, a, match_id))["version"] == 2
    await play_out(api, match_id, tokens, random.Random(6))


async def test_an_operators_bot_only_match_plays_to_the_end(api: Api) -> None:
    (watcher,) = await new_players(api, 1)
    # The seed and the bots' choices are the server's: now and then a match ends within the
    # moves one transaction may make, and leaves the sweeper nothing to carry on. Take another.
    for _ in range(20):
        created = await operator_match(api, seats=4, bots=[0, 1, 2, 3])
        assert created.status == 201
        assert created.body["seat"] is None
        if created.body["status"] == "active":
            break
        assert created.body["status"] == "finished"
        assert created.body["version"] <= MAX_BOT_ACTIONS
    # More moves than one transaction may make: the sweeper carries on.
    assert created.body["version"] == MAX_BOT_ACTIONS
    assert created.body["status"] == "active"
    match_id = created.body["match_id"]
    match = await wait_until(api, watcher, match_id, lambda m: m["status"] == "finished")
    assert match["outcome"]["winners"]
    assert [s["bot"] for s in match["seats"]] == [True] * 4
    replay = (await api.get(f"/v1/matches/{match_id}/replay", token=watcher)).body
    assert {a["source"] for a in replay["actions"]} == {"bot"}
    assert len(replay["actions"]) == match["version"] > MAX_BOT_ACTIONS


async def test_bots_answer_a_human_in_the_same_request(api: Api) -> None:
    (human,) = await new_players(api, 1)
    created = await create(api, human, seats=3, bots=[0, 2])
    assert created.status == 201
    assert created.body["seat"] == 1 and created.body["status"] == "active"
    match_id = created.body["match_id"]
    rng = random.Random(11)
    match = await read(api, human, match_id)
    while match["status"] == "active":
        if match["view"]["necromancers"][1]["alive"]:
            # Whenever the server answers, the bots have moved until the human must act.
            assert match["to_act"] == [1], match
            action = rng.choice(match["legal_actions"])
            answer = await act(api, human, match_id, match["version"], action)
            assert answer.status == 200, answer.body
            match = await read(api, human, match_id)
        else:
            # The human is out; the bots play on without it.
            match = await wait_until(api, human, match_id, lambda m: m["status"] == "finished")
    assert match["status"] == "finished"
    assert match["outcome"]["ranking"]
