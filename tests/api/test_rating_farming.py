"""Rating cannot be farmed: runs left idle end abandoned and settle their rating, a player holds
few runs open, and only an established account's ghost moves a rating, once a day per owner.

The rules: docs/rules/cryptids.md#abandoned-runs, docs/rules/cryptids.md#open-runs and
docs/rules/cryptids.md#rated-ghosts.
"""

import asyncio
import dataclasses
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from aiohttp import web

from service.api.keys import POOL
from service.config import Settings
from service.usecases import idle_runs, runs
from tests.api.runs_helpers import STRONG, WEAK, fill_pool, spend_gold
from tests.conftest import service_and_app
from tests.http import Api

# A loss against a ghost of one's own rating, with the ruleset's elo_k of 32.
ONE_LOSS = 16.0


@asynccontextmanager
async def _service(
    settings: Settings, url: str, **changes: Any
) -> AsyncIterator[tuple[Api, web.Application]]:
    async with service_and_app(dataclasses.replace(settings, database_url=url, **changes)) as pair:
        yield pair


async def _rating(api: Api, token: str) -> int:
    rating: int = (await api.get("/v1/players/me", token=token)).body["rating"]
    return rating


async def _turn(api: Api, token: str, run: dict[str, Any], buy: bool = True) -> dict[str, Any]:
    """End the run's turn, having bought what gold allows (or one cryptid, if not `buy`)."""
    path = f"/v1/runs/{run['run_id']}"
    moves = []
    if buy:
        run = await spend_gold(api, token, run)
    elif not run["warband"]:
        moves = [{"move": "buy", "slot": 0}]
    answer = await api.post(
        path + "/end-turn", {"round": run["round"], "moves": moves}, token=token
    )
    assert answer.status == 200, answer.body
    return dict(answer.body)


async def _play_out(api: Api, token: str, run: dict[str, Any], buy: bool = True) -> list[Any]:
    """Every turn of the run until it ends; the answers."""
    turns = []
    while run["status"] == "shopping":
        turns.append(await _turn(api, token, run, buy))
        run = turns[-1]["run"]
    return turns


async def _until(check: Callable[[], Awaitable[bool]], seconds: float = 15.0) -> None:
    deadline = time.monotonic() + seconds
    while not await check():
        assert time.monotonic() < deadline, "the condition never came true"
        await asyncio.sleep(0.1)


# -- Abandoned runs ----------------------------------------------------------------------------


async def test_leaving_runs_before_a_net_loss_no_longer_keeps_the_rating_from_rising_only(
    settings: Settings, fresh_database_url: str
) -> None:
    """The exploit: stop whenever one more loss would settle the run as a net loss, and leave
    the run open. Left runs used to never settle, so the rating only went up; now each ends
    abandoned and settles its pending change plus the forfeited battle, below zero."""
    # Every battle rated (no once-a-day rule), so that the runs play out as they did before it.
    async with _service(
        settings,
        fresh_database_url,
        run_idle_seconds=2.0,
        run_sweep_interval_seconds=0.2,
        rated_ghost_repeat_seconds=0,
    ) as (api, app):
        pool = app[POOL]
        # Weak and strong ghosts of established owners, made in turns so that the nearest
        # candidates hold both.
        for owner in range(16):
            await fill_pool(pool, STRONG if owner % 2 else WEAK, players=1, rounds=14)
        player_id, token = await api.new_player("leaver")
        left: dict[str, float] = {}
        settled = 0
        for seed in (1, 2, 3):
            run = await runs.start(pool, uuid.UUID(player_id), seed=seed)
            while True:
                turn = await _turn(api, token, dict(run))
                run, pending = turn["run"], turn["rating_change_pending"]
                if turn["status"] != "shopping":
                    settled += round(pending)
                    break
                if pending - ONE_LOSS < 0:
                    left[run["run_id"]] = pending
                    break
        assert left, "the policy left no run"
        # What the exploit kept: the runs played out settled, and those left never did.
        kept = 1000 + settled

        async def all_abandoned() -> bool:
            statuses = [
                (await api.get(f"/v1/runs/{run_id}", token=token)).body["status"] for run_id in left
            ]
            return statuses == ["abandoned"] * len(left)

        await _until(all_abandoned)
        forfeits = {run_id: round(pending - ONE_LOSS) for run_id, pending in left.items()}
        assert all(change < 0 for change in forfeits.values())
        assert await _rating(api, token) == kept + sum(forfeits.values()) < kept
        for run_id, pending in left.items():
            after = (await api.get(f"/v1/runs/{run_id}", token=token)).body
            assert after["rating_change_pending"] == round(pending - ONE_LOSS, 2)
            buy = await api.post(f"/v1/runs/{run_id}/buy", {"slot": 0}, token=token)
            assert (buy.status, buy.error_code) == (409, "run_over")


async def test_a_run_left_idle_settles_its_pending_change_and_one_loss(
    settings: Settings, fresh_database_url: str
) -> None:
    async with _service(
        settings, fresh_database_url, run_idle_seconds=1.0, run_sweep_interval_seconds=0.2
    ) as (api, _):
        _, token = await api.new_player("idle")
        run = (await api.post("/v1/runs", token=token)).body
        path = f"/v1/runs/{run['run_id']}"

        async def abandoned() -> bool:
            return bool((await api.get(path, token=token)).body["status"] == "abandoned")

        await _until(abandoned)
        after = (await api.get(path, token=token)).body
        assert (after["lives"], after["wins"], after["round"]) == (5, 0, 1)
        assert after["rating_change_pending"] == -ONE_LOSS
        assert await _rating(api, token) == 1000 - ONE_LOSS
        turn = await api.post(path + "/end-turn", {"round": 1}, token=token)
        assert (turn.status, turn.error_code) == (409, "run_over")
        listed = (await api.get("/v1/runs", token=token)).body["runs"]
        assert [r["status"] for r in listed] == ["abandoned"]


async def test_a_player_may_abandon_a_run_at_once_as_an_idle_run_would_end(
    fresh_service: tuple[Api, web.Application],
) -> None:
    api, _ = fresh_service
    _, token = await api.new_player("quitter")
    opened = [(await api.post("/v1/runs", token=token)).body for _ in range(3)]
    assert (await api.post("/v1/runs", token=token)).error_code == "too_many_open_runs"
    run = await _turn(api, token, opened[0])
    path = f"/v1/runs/{run['run']['run_id']}"
    pending = run["run"]["rating_change_pending"]
    stale = await api.post(path + "/abandon", {"version": 0}, token=token)
    assert (stale.status, stale.error_code) == (409, "stale_version")
    key = {"Idempotency-Key": "give-up"}
    ended = await api.post(path + "/abandon", {}, token=token, headers=key)
    assert (ended.status, ended.body["status"]) == (200, "abandoned")
    assert ended.body["rating_change_pending"] == pending - ONE_LOSS
    assert await _rating(api, token) == 1000 + round(pending - ONE_LOSS)
    # A retry with its key gets the same answer and settles nothing twice.
    again = await api.post(path + "/abandon", {}, token=token, headers=key)
    assert again.body == ended.body and await _rating(api, token) == 1000 + round(
        pending - ONE_LOSS
    )
    twice = await api.post(path + "/abandon", {}, token=token)
    assert (twice.status, twice.error_code) == (409, "run_over")
    _, other = await api.new_player("other")
    foreign = await api.post(f"/v1/runs/{opened[1]['run_id']}/abandon", {}, token=other)
    assert foreign.status == 404
    assert (await api.post("/v1/runs", token=token)).status == 201


async def test_two_sweeps_at_once_end_and_settle_each_idle_run_once(
    fresh_service: tuple[Api, web.Application],
) -> None:
    api, app = fresh_service
    pool = app[POOL]
    tokens = []
    for number in range(12):
        _, token = await api.new_player(f"idle-{number}")
        for _ in range(3):
            assert (await api.post("/v1/runs", token=token)).status == 201
        tokens.append(token)
    # The service's own sweep waits a day; these two, in small batches, find every run idle.
    ended = await asyncio.gather(
        idle_runs.sweep(pool, 0.001, 86400, batch=5), idle_runs.sweep(pool, 0.001, 86400, batch=5)
    )
    assert sum(ended) == 36 and all(ended)
    assert await idle_runs.sweep(pool, 0.001, 86400) == 0
    for token in tokens:
        assert await _rating(api, token) == 1000 - 3 * ONE_LOSS
        listed = (await api.get("/v1/runs", token=token)).body["runs"]
        assert {(r["status"], r["rating_change_pending"]) for r in listed} == {
            ("abandoned", -ONE_LOSS)
        }


# -- Open runs ---------------------------------------------------------------------------------


async def test_a_run_beyond_the_open_limit_is_409_naming_the_open_ones(api: Api) -> None:
    _, token = await api.new_player("hoarder")
    opened = [(await api.post("/v1/runs", token=token)).body["run_id"] for _ in range(3)]
    refused = await api.post("/v1/runs", token=token)
    assert (refused.status, refused.error_code) == (409, "too_many_open_runs")
    assert refused.body["error"]["details"] == {"open_runs": opened, "max_open_runs": 3}
    listed = (await api.get("/v1/runs", token=token)).body["runs"]
    assert sorted(r["run_id"] for r in listed) == sorted(opened)


async def test_concurrent_starts_open_no_more_runs_than_the_limit(api: Api) -> None:
    _, token = await api.new_player("rusher")
    answers = await asyncio.gather(*[api.post("/v1/runs", token=token) for _ in range(10)])
    assert sorted(a.status for a in answers) == [201] * 3 + [409] * 7
    assert len((await api.get("/v1/runs", token=token)).body["runs"]) == 3


async def test_a_start_retried_with_its_key_answers_its_run_and_an_ended_run_frees_a_place(
    settings: Settings, fresh_database_url: str
) -> None:
    async with _service(
        settings, fresh_database_url, run_idle_seconds=1.0, run_sweep_interval_seconds=0.2
    ) as (api, _):
        _, token = await api.new_player("patient")
        key = {"Idempotency-Key": "first-start"}
        first = await api.post("/v1/runs", token=token, headers=key)
        for _ in range(2):
            assert (await api.post("/v1/runs", token=token)).status == 201
        again = await api.post("/v1/runs", token=token, headers=key)
        assert (again.status, again.body["run_id"]) == (201, first.body["run_id"])
        assert (await api.post("/v1/runs", token=token)).status == 409

        async def started() -> bool:
            return (await api.post("/v1/runs", token=token)).status == 201

        await _until(started)


async def test_the_documented_run_statuses_include_abandoned(api: Api) -> None:
    document = (await api.get("/v1/openapi.json")).body
    schemas = document["components"]["schemas"]
    run = next(s for name, s in schemas.items() if name == "Run")
    assert set(run["properties"]["status"]["enum"]) == {"shopping", "won", "lost", "abandoned"}


# -- Rated ghosts ------------------------------------------------------------------------------


async def _one_weak_round(api: Api, token: str) -> dict[str, Any]:
    """A run that ends round 1 with one cryptid: what a second account feeds the first."""
    run = (await api.post("/v1/runs", token=token)).body
    return await _turn(api, token, run, buy=False)


async def test_a_second_accounts_ghost_moves_no_rating_until_established_then_once_a_day(
    settings: Settings, fresh_database_url: str
) -> None:
    """The exploit: pairing excludes only oneself and the opponents of the run, so a second
    account that ends round 1 with one weak cryptid is the first one's same-round ghost."""
    async with _service(
        settings,
        fresh_database_url,
        rated_ghost_min_age_seconds=2,
        rated_ghost_min_runs=1,
        rated_ghost_repeat_seconds=86400,
    ) as (api, _):
        made = time.monotonic()
        _, feeder = await api.new_player("second")
        _, main = await api.new_player("first")
        await _one_weak_round(api, feeder)

        fed = (await api.post("/v1/runs", token=main)).body
        first = await _turn(api, main, fed)
        assert first["pairing"] == "same_round_100" and not first["opponent"]["is_bot"]
        assert (first["rated"], first["unrated_reason"]) == (False, "new_account")
        assert first["rating_change"] == 0 == first["rating_change_pending"]
        # Unrated, the battle still counted for the run.
        counted = {"player": (5, 1), "ghost": (4, 0), "draw": (5, 0)}[first["winner"]]
        assert (first["lives"], first["wins"]) == counted
        battle = (await api.get(f"/v1/battles/{first['battle_id']}", token=main)).body
        assert (battle["rated"], battle["unrated_reason"], battle["rating_change"]) == (
            False,
            "new_account",
            0,
        )
        # Played out (against bots: the feeder is met), the run leaves the rating where it was.
        await _play_out(api, main, first["run"])
        assert await _rating(api, main) == 1000

        # The feeder plays a run out and its account ages: now it is established.
        feeding = await _one_weak_round(api, feeder)
        await _play_out(api, feeder, feeding["run"], buy=False)
        await asyncio.sleep(max(0.0, made + 2.5 - time.monotonic()))
        await _one_weak_round(api, feeder)

        rated = await _turn(api, main, (await api.post("/v1/runs", token=main)).body)
        assert not rated["opponent"]["is_bot"]
        assert (rated["rated"], rated["unrated_reason"]) == (True, None)
        elo = {"player": ONE_LOSS, "ghost": -ONE_LOSS, "draw": 0.0}[rated["winner"]]
        assert rated["rating_change"] == rated["rating_change_pending"] == elo

        # Once a day: the same owner's ghost, met again in another run, rates no more.
        again = await _turn(api, main, (await api.post("/v1/runs", token=main)).body)
        assert not again["opponent"]["is_bot"]
        assert (again["rated"], again["unrated_reason"]) == (False, "rated_recently")
        assert again["rating_change"] == 0 == again["rating_change_pending"]


async def _abandon(api: Api, token: str, run_id: str) -> None:
    ended = await api.post(f"/v1/runs/{run_id}/abandon", {}, token=token)
    assert (ended.status, ended.body["status"]) == (200, "abandoned"), ended.body


async def test_runs_abandoned_without_a_battle_do_not_make_an_owner_established(
    settings: Settings, fresh_database_url: str
) -> None:
    """The exploit: three runs started and abandoned at once counted as three runs ended, so a
    second account old enough was established in a second. Only runs that played a battle
    count: abandoned past round 1, or played out."""
    async with _service(
        settings,
        fresh_database_url,
        rated_ghost_min_age_seconds=0,
        rated_ghost_min_runs=3,
        rated_ghost_repeat_seconds=86400,
    ) as (api, _):
        _, feeder = await api.new_player("second")
        _, main = await api.new_player("first")
        started = await asyncio.gather(*[api.post("/v1/runs", token=feeder) for _ in range(3)])
        await asyncio.gather(*[_abandon(api, feeder, run.body["run_id"]) for run in started])
        fought = [await _one_weak_round(api, feeder)]

        first = await _turn(api, main, (await api.post("/v1/runs", token=main)).body)
        assert first["pairing"] == "same_round_100" and not first["opponent"]["is_bot"]
        assert (first["rated"], first["unrated_reason"]) == (False, "new_account")

        # Three runs left after one battle each: now the owner is established.
        fought += [await _one_weak_round(api, feeder) for _ in range(2)]
        for turn in fought:
            await _abandon(api, feeder, turn["run"]["run_id"])
        await _one_weak_round(api, feeder)
        rated = await _turn(api, main, (await api.post("/v1/runs", token=main)).body)
        assert not rated["opponent"]["is_bot"]
        assert (rated["rated"], rated["unrated_reason"]) == (True, None)
