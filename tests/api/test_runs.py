import asyncio
import uuid
from typing import Any

import pytest
from aiohttp import web

from service.api.keys import POOL
from tests.api.runs_helpers import STRONG, WEAK, fill_pool, seeded_run, spend_gold
from tests.http import Api


async def _new_run(api: Api) -> tuple[str, dict[str, Any]]:
    _, token = await api.new_player("runner")
    created = await api.post("/v1/runs", token=token)
    assert created.status == 201, created.body
    return token, created.body


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
async def test_a_new_run_has_five_lives_ten_gold_and_three_offers(api: Api, fmt: str) -> None:
    _, token = await api.new_player()
    run = (await api.post("/v1/runs", token=token, fmt=fmt)).body
    assert (run["round"], run["lives"], run["wins"], run["gold"]) == (1, 5, 0, 10)
    assert run["status"] == "shopping"
    assert run["warband"] == []
    assert [o["slot"] for o in run["shop"]] == [0, 1, 2]
    assert all(o["tier"] == 1 and o["cost"] == 3 and not o["frozen"] for o in run["shop"])
    assert (await api.get(f"/v1/runs/{run['run_id']}", token=token)).body == run
    listed = (await api.get("/v1/runs", token=token)).body["runs"]
    assert [r["run_id"] for r in listed] == [run["run_id"]]


async def test_shop_moves_answer_the_updated_run(api: Api) -> None:
    token, run = await _new_run(api)
    path = f"/v1/runs/{run['run_id']}"
    first, second = run["shop"][0]["species"], run["shop"][1]["species"]
    run = (await api.post(path + "/buy", {"slot": 0}, token=token)).body
    run = (await api.post(path + "/buy", {"slot": 1, "position": 0}, token=token)).body
    assert [m["species"] for m in run["warband"]] == [second, first]
    assert run["gold"] == 4 and run["shop"][0] is None and run["shop"][1] is None
    run = (
        await api.post(path + "/arrange", {"order": [1, 0], "abilities": [1, 0]}, token=token)
    ).body
    assert [(m["species"], m["ability"]) for m in run["warband"]] == [(first, 1), (second, 0)]
    run = (await api.post(path + "/freeze", {"slot": 2}, token=token)).body
    assert run["shop"][2]["frozen"] is True
    frozen = run["shop"][2]
    run = (await api.post(path + "/reroll", token=token)).body
    assert run["gold"] == 3 and run["shop"][2] == frozen
    run = (await api.post(path + "/sell", {"position": 1}, token=token)).body
    assert run["gold"] == 4 and [m["species"] for m in run["warband"]] == [first]


@pytest.mark.parametrize(
    ("move", "body", "code"),
    [
        ("buy", {"slot": 7}, "bad_slot"),
        ("buy", {"slot": 0, "position": 3}, "bad_position"),
        ("sell", {"position": 0}, "bad_position"),
        ("freeze", {"slot": 5}, "bad_slot"),
        ("arrange", {"order": [1]}, "bad_order"),
    ],
)
async def test_illegal_shop_moves_are_422_with_the_reason_and_change_nothing(
    api: Api, move: str, body: dict[str, Any], code: str
) -> None:
    token, run = await _new_run(api)
    answer = await api.post(f"/v1/runs/{run['run_id']}/{move}", body, token=token)
    assert answer.status == 422
    assert answer.error_code == code
    assert (await api.get(f"/v1/runs/{run['run_id']}", token=token)).body == run


async def test_no_gold_and_empty_slot_are_refused(api: Api) -> None:
    token, run = await _new_run(api)
    path = f"/v1/runs/{run['run_id']}"
    for slot in range(3):
        run = (await api.post(path + "/buy", {"slot": slot}, token=token)).body
    empty = await api.post(path + "/buy", {"slot": 0}, token=token)
    assert (empty.status, empty.error_code) == (422, "empty_slot")
    run = (await api.post(path + "/reroll", token=token)).body
    broke = await api.post(path + "/buy", {"slot": 0}, token=token)
    assert (broke.status, broke.error_code) == (422, "not_enough_gold")
    assert broke.body["error"]["message"] == "costs 3 gold, you have 0"
    assert (await api.get(path, token=token)).body == run


async def test_invalid_shop_fields_are_422_naming_the_field(api: Api) -> None:
    token, run = await _new_run(api)
    answer = await api.post(f"/v1/runs/{run['run_id']}/buy", {"slot": "0"}, token=token)
    assert answer.status == 422
    assert answer.body["error"]["details"]["fields"][0]["field"] == "slot"


async def test_another_players_run_is_404_for_reads_and_writes(api: Api) -> None:
    _, run = await _new_run(api)
    _, stranger = await api.new_player("stranger")
    path = f"/v1/runs/{run['run_id']}"
    assert (await api.get(path, token=stranger)).status == 404
    assert (await api.post(path + "/buy", {"slot": 0}, token=stranger)).status == 404
    assert (await api.post(path + "/end-turn", {"round": 1}, token=stranger)).status == 404
    assert (await api.get(f"/v1/runs/{uuid.uuid4()}", token=stranger)).status == 404
    assert (await api.get("/v1/runs/not-a-uuid", token=stranger)).status == 404


async def test_end_turn_with_an_empty_warband_is_refused(api: Api) -> None:
    token, run = await _new_run(api)
    answer = await api.post(f"/v1/runs/{run['run_id']}/end-turn", {"round": 1}, token=token)
    assert (answer.status, answer.error_code) == (422, "empty_warband")


async def _play_until_over(api: Api, token: str, run_id: str, buy: bool) -> list[dict[str, Any]]:
    results = []
    for _ in range(60):
        run = (await api.get(f"/v1/runs/{run_id}", token=token)).body
        if run["status"] != "shopping":
            break
        if buy or not run["warband"]:
            run = await spend_gold(api, token, run)
        if not buy:
            for position in range(len(run["warband"]) - 1, 0, -1):
                run = (
                    await api.post(f"/v1/runs/{run_id}/sell", {"position": position}, token=token)
                ).body
        answer = await api.post(f"/v1/runs/{run_id}/end-turn", {"round": run["round"]}, token=token)
        assert answer.status == 200, answer.body
        results.append(answer.body)
    return results


async def test_a_whole_run_played_to_won_applies_the_rating_at_the_end(
    fresh_service: tuple[Api, web.Application],
) -> None:
    api, app = fresh_service
    await fill_pool(app[POOL], WEAK, players=12, rounds=30, rating=1000)
    token, run_id = await seeded_run(app, api, seed=2024)
    rating_during = []
    results = await _play_until_over(api, token, run_id, buy=True)
    for result in results[:-1]:
        assert result["status"] == "shopping"
    final = results[-1]
    assert final["status"] == "won" and final["wins"] == 10 and final["lives"] >= 1
    assert sum(r["winner"] == "player" for r in results) == 10
    rating_during.append((await api.get("/v1/players/me", token=token)).body["rating"])
    assert rating_during == [1000 + round(final["rating_change_pending"])]
    assert final["rating_change_pending"] > 0
    over = await api.post(f"/v1/runs/{run_id}/buy", {"slot": 0}, token=token)
    assert (over.status, over.error_code) == (409, "run_over")
    ended = (await api.get(f"/v1/runs/{run_id}", token=token)).body["round"]
    again = await api.post(f"/v1/runs/{run_id}/end-turn", {"round": ended}, token=token)
    assert (again.status, again.error_code) == (409, "run_over")


async def test_a_whole_run_played_to_lost_and_rating_waits_for_the_end(
    fresh_service: tuple[Api, web.Application],
) -> None:
    api, app = fresh_service
    await fill_pool(app[POOL], STRONG, players=8, rounds=12, rating=1000)
    token, run_id = await seeded_run(app, api, seed=77)
    path = f"/v1/runs/{run_id}"
    run = await spend_gold(api, token, (await api.get(path, token=token)).body)
    first = (await api.post(path + "/end-turn", {"round": 1}, token=token)).body
    assert first["winner"] == "ghost" and first["lives"] == 4
    assert first["rating_change_pending"] < 0
    assert (await api.get("/v1/players/me", token=token)).body["rating"] == 1000
    results = [first, *await _play_until_over(api, token, run_id, buy=False)]
    final = results[-1]
    assert final["status"] == "lost" and final["lives"] == 0
    assert sum(r["winner"] == "ghost" for r in results) == 5
    me = (await api.get("/v1/players/me", token=token)).body
    assert me["rating"] == 1000 + round(final["rating_change_pending"]) < 1000
    assert run["run_id"] == run_id


async def test_a_retried_round_returns_the_same_battle(api: Api) -> None:
    token, run = await _new_run(api)
    path = f"/v1/runs/{run['run_id']}"
    await spend_gold(api, token, run)
    first = await api.post(path + "/end-turn", {"round": 1}, token=token)
    retry = await api.post(path + "/end-turn", {"round": 1}, token=token)
    assert first.status == retry.status == 200
    assert retry.body == first.body
    future = await api.post(path + "/end-turn", {"round": 5}, token=token)
    assert (future.status, future.error_code) == (422, "wrong_round")


async def test_idempotency_key_replays_the_answer_and_refuses_another_body(api: Api) -> None:
    token, run = await _new_run(api)
    path = f"/v1/runs/{run['run_id']}"
    await spend_gold(api, token, run)
    key = {"Idempotency-Key": "turn-1"}
    first = await api.post(path + "/end-turn", {}, token=token, headers=key)
    retry = await api.post(path + "/end-turn", {}, token=token, headers=key, fmt="msgpack")
    assert first.status == retry.status == 200
    assert retry.body == first.body
    other = await api.post(path + "/end-turn", {"round": 2}, token=token, headers=key)
    assert (other.status, other.error_code) == (409, "idempotency_conflict")


@pytest.mark.parametrize("by", ["round", "key"])
async def test_twenty_concurrent_end_turns_make_exactly_one_battle(
    fresh_service: tuple[Api, web.Application], by: str
) -> None:
    api, app = fresh_service
    token, run_id = await seeded_run(app, api, seed=5)
    path = f"/v1/runs/{run_id}"
    await spend_gold(api, token, (await api.get(path, token=token)).body)
    body = {"round": 1} if by == "round" else {}
    headers = {"Idempotency-Key": "same"} if by == "key" else {}
    answers = await asyncio.gather(
        *[api.post(path + "/end-turn", body, token=token, headers=headers) for _ in range(20)]
    )
    assert {a.status for a in answers} == {200}
    assert len({a.body["battle_id"] for a in answers}) == 1
    count = await app[POOL].fetchval(
        "SELECT count(*) FROM battles WHERE run_id = $1", uuid.UUID(run_id)
    )
    assert count == 1
    assert (await api.get(path, token=token)).body["round"] == 2


async def test_the_same_seed_gives_the_same_shop_and_the_same_battle(
    fresh_service: tuple[Api, web.Application],
) -> None:
    api, app = fresh_service
    await fill_pool(app[POOL], STRONG, players=1, rounds=1, rating=1000)
    played = []
    for _ in range(2):
        token, run_id = await seeded_run(app, api, seed=31337)
        run = (await api.get(f"/v1/runs/{run_id}", token=token)).body
        shop = run["shop"]
        run = await spend_gold(api, token, run)
        turn = (await api.post(f"/v1/runs/{run_id}/end-turn", {"round": 1}, token=token)).body
        battle = (await api.get(f"/v1/battles/{turn['battle_id']}", token=token)).body
        path = f"/v1/battles/{turn['battle_id']}/replay"
        replay = await api.get(path, token=token, fmt="msgpack")
        assert (await api.get(path, token=token, fmt="msgpack")).raw == replay.raw
        played.append((shop, run["warband"], battle["ghost"], battle["seed"], replay.raw))
        # Out of the pool (past its time-to-live), so the second run meets the same ghost.
        await app[POOL].execute(
            "UPDATE snapshots SET created_at = now() - interval '30 days' WHERE run_id = $1",
            uuid.UUID(run_id),
        )
    assert played[0] == played[1]


async def test_a_bare_end_turn_is_422_naming_round_and_a_double_tap_plays_nothing(
    fresh_service: tuple[Api, web.Application],
) -> None:
    api, app = fresh_service
    token, run_id = await seeded_run(app, api, seed=8)
    path = f"/v1/runs/{run_id}"
    await spend_gold(api, token, (await api.get(path, token=token)).body)
    answers = await asyncio.gather(
        *[api.post(path + "/end-turn", {}, token=token) for _ in range(20)]
    )
    assert {(a.status, a.error_code) for a in answers} == {(422, "invalid_field")}
    assert answers[0].body["error"]["details"]["fields"][0]["field"] == "round"
    count = await app[POOL].fetchval(
        "SELECT count(*) FROM battles WHERE run_id = $1", uuid.UUID(run_id)
    )
    assert count == 0
    assert (await api.get(path, token=token)).body["round"] == 1


async def test_every_run_answer_carries_a_version_that_guards_the_next_move(api: Api) -> None:
    token, run = await _new_run(api)
    path = f"/v1/runs/{run['run_id']}"
    assert run["version"] == 0
    bought = await api.post(path + "/buy", {"slot": 0, "version": 0}, token=token)
    assert bought.status == 200 and bought.body["version"] == 1
    # The same move retried at the version it was sent with: refused, nothing bought twice.
    retried = await api.post(path + "/buy", {"slot": 1, "version": 0}, token=token)
    assert (retried.status, retried.error_code) == (409, "stale_version")
    assert retried.body["error"]["details"]["version"] == 1
    current = (await api.get(path, token=token)).body
    assert current["version"] == 1 and len(current["warband"]) == 1
    turn = await api.post(path + "/end-turn", {"version": 1}, token=token)
    assert turn.status == 200 and turn.body["version"] == 2
    replayed = await api.post(path + "/end-turn", {"version": 1}, token=token)
    assert (replayed.status, replayed.error_code) == (409, "stale_version")


async def test_a_version_ahead_of_the_run_is_409_version_ahead_not_stale(api: Api) -> None:
    """A version the run has not reached was never shown: it is not stale, it is ahead, and
    the refusal gives the run's version so that the client can catch up."""
    token, run = await _new_run(api)
    path = f"/v1/runs/{run['run_id']}"
    writes = [
        ("/buy", {"slot": 0, "version": 5}),
        ("/end-turn", {"version": 5}),
        ("/abandon", {"version": 5}),
    ]
    for suffix, body in writes:
        ahead = await api.post(path + suffix, body, token=token)
        assert (ahead.status, ahead.error_code) == (409, "version_ahead"), suffix
        assert ahead.body["error"]["details"] == {"version": 0}
        assert "ahead" in ahead.body["error"]["message"]
    assert (await api.get(path, token=token)).body == run


@pytest.mark.parametrize("move", ["buy", "sell", "reroll", "freeze", "arrange"])
async def test_a_shop_move_retried_with_its_idempotency_key_is_applied_once(
    api: Api, move: str
) -> None:
    token, run = await _new_run(api)
    path = f"/v1/runs/{run['run_id']}"
    run = (await api.post(path + "/buy", {"slot": 0}, token=token)).body
    run = (await api.post(path + "/buy", {"slot": 1}, token=token)).body
    bodies = {
        "buy": {"slot": 2},
        "sell": {"position": 0},
        "reroll": {},
        "freeze": {"slot": 2},
        "arrange": {"order": [1, 0]},
    }
    key = {"Idempotency-Key": f"{move}-once"}
    first = await api.post(path + f"/{move}", bodies[move], token=token, headers=key)
    again = await api.post(path + f"/{move}", bodies[move], token=token, headers=key)
    assert first.status == again.status == 200, first.body
    assert again.body == first.body
    assert (await api.get(path, token=token)).body == first.body
    assert first.body["version"] == run["version"] + 1


async def test_starting_a_run_with_an_idempotency_key_starts_one(api: Api) -> None:
    _, token = await api.new_player("starter")
    key = {"Idempotency-Key": "start-1"}
    first = await api.post("/v1/runs", {}, token=token, headers=key)
    again = await api.post("/v1/runs", {}, token=token, headers=key)
    assert first.status == again.status == 201
    assert again.body["run_id"] == first.body["run_id"]
    assert len((await api.get("/v1/runs", token=token)).body["runs"]) == 1


async def test_concurrent_shop_moves_each_apply_once_to_the_run_as_it_is_then(
    fresh_service: tuple[Api, web.Application],
) -> None:
    api, app = fresh_service
    token, run_id = await seeded_run(app, api, seed=12)
    path = f"/v1/runs/{run_id}"
    run = (await api.get(path, token=token)).body
    slots = [offer["slot"] for offer in run["shop"] if offer is not None][:3]
    # All read version 0 at once; each write that finds the run moved reads it again.
    answers = await asyncio.gather(
        *[api.post(path + "/buy", {"slot": slot}, token=token) for slot in slots]
    )
    assert {a.status for a in answers} == {200}
    after = (await api.get(path, token=token)).body
    assert after["version"] == len(slots)
    assert sorted(a.body["version"] for a in answers) == list(range(1, len(slots) + 1))
    assert len(after["warband"]) == len(slots)
    spent = sum(run["shop"][slot]["cost"] for slot in slots)
    assert after["gold"] == run["gold"] - spent
    assert [after["shop"][slot] for slot in slots] == [None] * len(slots)


async def _age_out(app: web.Application, run_id: str) -> None:
    """Past the pool's time-to-live, so that a second run with the seed meets the same ghost."""
    await app[POOL].execute(
        "UPDATE snapshots SET created_at = now() - interval '30 days' WHERE run_id = $1",
        uuid.UUID(run_id),
    )


async def test_a_turn_in_one_request_plays_as_its_moves_one_by_one(
    fresh_service: tuple[Api, web.Application],
) -> None:
    api, app = fresh_service
    await fill_pool(app[POOL], STRONG, players=1, rounds=1, rating=1000)
    moves: list[dict[str, Any]] = [
        {"move": "buy", "slot": 0},
        {"move": "freeze", "slot": 2},
        {"move": "buy", "slot": 1, "position": 0},
        {"move": "sell", "position": 1},
        {"move": "reroll"},
    ]
    played = []
    for one_request in (False, True):
        token, run_id = await seeded_run(app, api, seed=4242)
        path = f"/v1/runs/{run_id}"
        if one_request:
            turn = await api.post(path + "/end-turn", {"round": 1, "moves": moves}, token=token)
        else:
            for move in moves:
                name, *_ = move.values()
                step = {k: v for k, v in move.items() if k != "move"}
                assert (await api.post(f"{path}/{name}", step, token=token)).status == 200
            turn = await api.post(path + "/end-turn", {"round": 1}, token=token)
        assert turn.status == 200, turn.body
        replay = await api.get(f"/v1/battles/{turn.body['battle_id']}/replay", token=token)
        after = turn.body["run"]
        assert after == (await api.get(path, token=token)).body
        assert after["version"] == turn.body["version"]
        assert (after["round"], after["lives"], after["wins"]) == (
            2,
            turn.body["lives"],
            turn.body["wins"],
        )
        played.append((turn.body["winner"], replay.raw, after["shop"], after["warband"]))
        await _age_out(app, run_id)
    assert played[0] == played[1]
    # The frozen offer stayed into round 2.
    assert played[1][2][2]["frozen"] is True


async def test_a_refused_move_refuses_the_whole_turn_naming_it(api: Api) -> None:
    token, run = await _new_run(api)
    path = f"/v1/runs/{run['run_id']}"
    moves = [{"move": "buy", "slot": 0}, {"move": "buy", "slot": 0}]
    refused = await api.post(path + "/end-turn", {"round": 1, "moves": moves}, token=token)
    assert (refused.status, refused.error_code) == (422, "empty_slot")
    assert refused.body["error"]["details"] == {"move": 1}
    # The first buy was not kept either: the run is as it was, with nothing to fight with.
    assert (await api.get(path, token=token)).body == run
    bare = await api.post(path + "/end-turn", {"round": 1}, token=token)
    assert (bare.status, bare.error_code) == (422, "empty_warband")


async def test_a_retried_turn_with_moves_spends_its_gold_once(api: Api) -> None:
    # Round 2 buys a species the warband lacks, so that it joins as a member of its own: a
    # third copy would merge (the shop comes from the run's seed); a run without one is
    # taken again.
    for _ in range(20):
        token, run = await _new_run(api)
        path = f"/v1/runs/{run['run_id']}"
        body = {"round": 1, "moves": [{"move": "buy", "slot": 0}, {"move": "buy", "slot": 1}]}
        first = await api.post(path + "/end-turn", body, token=token)
        retry = await api.post(path + "/end-turn", body, token=token)
        assert first.status == retry.status == 200
        assert retry.body == first.body
        after = (await api.get(path, token=token)).body
        assert (after["round"], after["gold"], len(after["warband"])) == (2, 10, 2)
        owned = {member["species"] for member in after["warband"]}
        new = [o["slot"] for o in after["shop"] if o is not None and o["species"] not in owned]
        if new:
            break
    else:
        pytest.fail("no run offered a new species in round 2")

    key = {"Idempotency-Key": "turn-2-with-buys"}
    second = {"moves": [{"move": "buy", "slot": new[0]}]}
    played = await api.post(path + "/end-turn", second, token=token, headers=key)
    again = await api.post(path + "/end-turn", second, token=token, headers=key)
    assert played.status == again.status == 200 and again.body == played.body
    assert len(played.body["run"]["warband"]) == 3
    other = {"moves": [{"move": "buy", "slot": (new[0] + 1) % len(after["shop"])}]}
    clash = await api.post(path + "/end-turn", other, token=token, headers=key)
    assert (clash.status, clash.error_code) == (409, "idempotency_conflict")


@pytest.mark.parametrize(
    "moves",
    [
        [{"move": "dance"}],
        [{"slot": 0}],
        [{"move": "buy"}],
        [{"move": "buy", "slot": 0, "version": 1}],
        [{"move": "buy", "slot": 0}] * 65,
        {"move": "buy", "slot": 0},
    ],
    ids=["unknown-move", "no-move", "missing-slot", "extra-field", "too-many", "not-a-list"],
)
async def test_malformed_turn_moves_are_422_naming_the_field_and_change_nothing(
    api: Api, moves: Any
) -> None:
    token, run = await _new_run(api)
    path = f"/v1/runs/{run['run_id']}"
    answer = await api.post(path + "/end-turn", {"round": 1, "moves": moves}, token=token)
    assert answer.status == 422, answer.body
    assert answer.body["error"]["details"]["fields"][0]["field"].startswith("moves")
    assert (await api.get(path, token=token)).body == run
