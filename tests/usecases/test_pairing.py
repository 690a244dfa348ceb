"""The pairing ladder, each rung reached on purpose through end-turn.

The rules: docs/rules/cryptids.md#pairing.
"""

from typing import Any

import pytest
from aiohttp import web

from service.api.keys import POOL
from tests.api.runs_helpers import WEAK, add_snapshot, ghost_player, seeded_run, spend_gold
from tests.http import Api


async def _end_turn(api: Api, token: str, run_id: str) -> dict[str, Any]:
    run = (await api.get(f"/v1/runs/{run_id}", token=token)).body
    if not run["warband"]:
        await spend_gold(api, token, run)
    answer = await api.post(f"/v1/runs/{run_id}/end-turn", {"round": run["round"]}, token=token)
    assert answer.status == 200, answer.body
    return dict(answer.body)


@pytest.mark.parametrize(
    ("ghost_rating", "rung"),
    [
        (1060, "same_round_100"),
        (900, "same_round_100"),
        (1150, "same_round_200"),
        (1380, "same_round_400"),
        (620, "same_round_400"),
        (1700, "same_round_any"),
    ],
)
async def test_same_round_bands_widen_from_100_to_any(
    fresh_service: tuple[Api, web.Application], ghost_rating: int, rung: str
) -> None:
    api, app = fresh_service
    ghost = await add_snapshot(app[POOL], await ghost_player(app[POOL]), 1, ghost_rating, WEAK)
    token, run_id = await seeded_run(app, api, seed=1)
    turn = await _end_turn(api, token, run_id)
    assert turn["pairing"] == rung
    assert turn["opponent"] == {
        "snapshot_id": ghost,
        "rating": ghost_rating,
        "is_bot": False,
        "round": 1,
    }


async def test_the_nearest_band_wins_over_a_wider_one(
    fresh_service: tuple[Api, web.Application],
) -> None:
    api, app = fresh_service
    pool = app[POOL]
    far = await add_snapshot(pool, await ghost_player(pool), 1, 1300, WEAK)
    near = await add_snapshot(pool, await ghost_player(pool), 1, 1090, WEAK)
    token, run_id = await seeded_run(app, api, seed=2)
    turn = await _end_turn(api, token, run_id)
    assert turn["opponent"]["snapshot_id"] == near != far
    assert turn["pairing"] == "same_round_100"


async def test_adjacent_rounds_then_a_bot_and_never_the_same_opponent_twice(
    fresh_service: tuple[Api, web.Application],
) -> None:
    api, app = fresh_service
    pool = app[POOL]
    first, previous, following = [await ghost_player(pool, n) for n in ("a", "b", "c")]
    first_id = await add_snapshot(pool, first, 1, 1000, WEAK)
    for round_ in range(2, 8):  # "a" is in every round, but once met it may not come back
        await add_snapshot(pool, first, round_, 1000, WEAK)
    previous_id = await add_snapshot(pool, previous, 1, 1150, WEAK)
    following_id = await add_snapshot(pool, following, 4, 1000, WEAK)

    token, run_id = await seeded_run(app, api, seed=3)
    turns = [await _end_turn(api, token, run_id) for _ in range(4)]
    rungs = [(t["pairing"], t["opponent"]["snapshot_id"], t["opponent"]["round"]) for t in turns]
    assert rungs[:3] == [
        ("same_round_100", first_id, 1),
        ("previous_round", previous_id, 1),
        ("next_round", following_id, 4),
    ]
    assert rungs[3][0] == "bot" and turns[3]["opponent"]["is_bot"] is True
    owners = await pool.fetch(
        "SELECT ghost_player_id FROM battles WHERE run_id = $1::uuid"
        " AND ghost_player_id IS NOT NULL",
        run_id,
    )
    assert sorted(o["ghost_player_id"] for o in owners) == sorted([first, previous, following])


async def test_never_paired_with_oneself_nor_with_an_expired_snapshot(
    fresh_service: tuple[Api, web.Application],
) -> None:
    api, app = fresh_service
    pool = app[POOL]
    await add_snapshot(pool, await ghost_player(pool), 1, 1000, WEAK, age_seconds=8 * 24 * 3600)
    token, first_run = await seeded_run(app, api, seed=4)
    assert (await _end_turn(api, token, first_run))["pairing"] == "bot"
    second_run = (await api.post("/v1/runs", token=token)).body["run_id"]
    # The pool now holds this player's own round-1 snapshot, and an expired one.
    assert (await _end_turn(api, token, second_run))["pairing"] == "bot"


async def test_bot_ghosts_are_marked_and_fight_with_the_rounds_budget(
    fresh_service: tuple[Api, web.Application],
) -> None:
    api, app = fresh_service
    token, run_id = await seeded_run(app, api, seed=5)
    turn = await _end_turn(api, token, run_id)
    battle = (await api.get(f"/v1/battles/{turn['battle_id']}", token=token)).body
    assert battle["ghost"]["is_bot"] is True
    # A bot is nobody's account: never rated (docs/rules/cryptids.md#rated-ghosts).
    assert (turn["rated"], turn["unrated_reason"], turn["rating_change"]) == (False, "bot", 0)
    assert (battle["rated"], battle["unrated_reason"]) == (False, "bot")
    levels = [c["level"] for c in battle["ghost"]["cryptids"]]
    assert sum(3 ** (level - 1) for level in levels) == 3  # round 1: 10 gold buys three
    assert battle["rating_change"] == 0
