import random
from typing import Any

import pytest
from aiohttp import web

from service.api.keys import POOL
from service.store.stats import TURN_BOUNDS
from service.usecases.ops import quantile
from tests.api.matches_helpers import new_players, play_step, start_match, wait_until
from tests.api.runs_helpers import WEAK, add_snapshot, ghost_player, seeded_run, spend_gold
from tests.conftest import TEST_OPS_TOKEN
from tests.http import Api

OPS = {"X-Ops-Token": TEST_OPS_TOKEN}


async def _turn(api: Api, token: str, run_id: str) -> str:
    run = (await api.get(f"/v1/runs/{run_id}", token=token)).body
    if not run["warband"]:
        await spend_gold(api, token, run)
    answer = await api.post(f"/v1/runs/{run_id}/end-turn", {"round": run["round"]}, token=token)
    return str(answer.body["pairing"])


async def test_matchmaking_report_counts_the_rounds_just_played(
    fresh_service: tuple[Api, web.Application],
) -> None:
    api, app = fresh_service
    pool = app[POOL]
    await add_snapshot(pool, await ghost_player(pool), 1, 1120, WEAK)
    rungs = []
    for seed in (1, 2, 3):
        token, run_id = await seeded_run(app, api, seed)
        rungs.append(await _turn(api, token, run_id))
    # The first run meets the 1120 ghost; the next two each meet an earlier run's snapshot.
    assert rungs == ["same_round_200", "same_round_100", "same_round_100"]
    token, run_id = await seeded_run(app, api, 4)
    later = [await _turn(api, token, run_id) for _ in range(3)]
    # Round 2 falls back to round 1; round 3 finds nobody in rounds 2-4 but itself: a bot.
    assert later[1:] == ["previous_round", "bot"]

    report = (await api.get("/v1/ops/matchmaking", headers=OPS)).body
    one, two, three = report["rounds"]
    assert [(r["round"], r["pool_depth"]) for r in (one, two, three)] == [(1, 4), (2, 1), (3, 1)]
    assert one["pairings_hour"]["same_round_100"] == 3
    assert one["pairings_hour"]["same_round_200"] == 1
    assert one["total_day"] == 4 and one["bot_rate_hour"] == 0.0
    assert one["fallback_rate_hour"] == 0.0
    assert two["pairings_day"]["previous_round"] == 1 and two["bot_rate_hour"] == 0.0
    assert two["fallback_rate_day"] == 1.0
    assert three["pairings_day"]["bot"] == 1 and three["bot_rate_hour"] == 1.0
    assert one["alerts"] == two["alerts"] == ["thin_pool"]  # under the default threshold, 20
    assert three["alerts"] == ["thin_pool", "high_bot_rate"]
    assert 0 <= one["rating_gap_p50"] <= one["rating_gap_p90"] <= 200
    assert one["pairing_ms_p50"] is not None
    assert report["timeline"][-1]["pairings"] == 6
    assert len(report["timeline"]) == 24
    assert report["thresholds"] == {
        "thin_pool": 20,
        "high_bot_rate": 0.25,
        "slow_queue_seconds": 10.0,
        "high_queue_bot_share": 0.5,
    }


async def test_matchmaking_report_shows_games(api: Api) -> None:
    _, token = await api.new_player()
    await api.post("/v1/matches", {"game": "necromancers", "seats": 3}, token=token)
    report = (await api.get("/v1/ops/matchmaking", headers=OPS, fmt="msgpack")).body
    necro = next(g for g in report["games"] if g["game"] == "necromancers")
    assert necro["waiting_matches"] >= 1
    assert necro["waiting_seats"] >= 2


async def test_game_figures_come_from_hourly_roll_ups_not_from_the_action_log(
    fresh_service: tuple[Api, web.Application],
) -> None:
    api, app = fresh_service
    pool = app[POOL]
    tokens = await new_players(api, 2)
    match_id = await start_match(api, tokens, turn_seconds=1)
    # Nobody plays: the turn timer runs out and the sweeper applies a timeout.
    await wait_until(api, tokens[0], match_id, lambda m: m["version"] >= 1)
    rng = random.Random(3)
    for _ in range(3):
        assert (await play_step(api, match_id, tokens, rng)).status in (200, 409)
    actions, timeouts = await pool.fetchrow(
        "SELECT count(*), count(*) FILTER (WHERE source = 'timeout') FROM match_actions"
    )
    assert actions >= 2 and timeouts >= 1

    def necromancers(report: dict[str, Any]) -> dict[str, Any]:
        found: dict[str, Any] = next(g for g in report["games"] if g["game"] == "necromancers")
        return found

    before = necromancers((await api.get("/v1/ops/matchmaking", headers=OPS)).body)
    assert (before["actions_hour"], before["timeouts_day"]) == (actions, timeouts)
    assert before["median_turn_seconds"] is not None
    # The figures are counted as actions are stored: the action log is not read again, so
    # sweeping it (or a day of a million actions in it) changes nothing.
    await pool.execute("DELETE FROM match_actions")
    after = necromancers((await api.get("/v1/ops/matchmaking", headers=OPS)).body)
    assert after == before


async def test_turns_are_bucketed_in_the_database_by_the_bounds_the_report_reads(
    fresh_service: tuple[Api, web.Application],
) -> None:
    pool = fresh_service[1][POOL]
    assert await pool.fetchval("SELECT match_turn_bounds()") == list(TURN_BOUNDS)
    buckets = await pool.fetch(
        "SELECT match_turn_bucket(s) FROM unnest($1::float8[]) s", [0, 0.5, 1, 4.9, 5, 1e6]
    )
    assert [b[0] for b in buckets] == [1, 1, 2, 3, 4, len(TURN_BOUNDS) + 1]
    assert await pool.fetchval("SELECT match_turn_bucket(NULL)") == 0


async def test_matchmaking_report_needs_the_ops_token(api: Api) -> None:
    assert (await api.get("/v1/ops/matchmaking")).status == 401
    assert (await api.get("/v1/ops/matchmaking", headers={"X-Ops-Token": "x"})).status == 403


@pytest.mark.parametrize(
    ("counts", "q", "expected"),
    [
        ([0, 0, 0], 0.5, None),
        ([0, 4, 0], 0.5, 15.0),  # bucket (10, 20]: half way
        ([2, 2, 0], 0.5, 10.0),
        ([0, 0, 5], 0.99, 20.0),  # the overflow bucket reports the last bound
    ],
)
def test_quantile_interpolates_inside_the_bucket(
    counts: list[int], q: float, expected: float | None
) -> None:
    assert quantile((10, 20), counts, q) == expected
