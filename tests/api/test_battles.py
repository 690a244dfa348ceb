import json
import uuid

import msgpack
from aiohttp import web

from service.api.keys import POOL
from tests.api.runs_helpers import WEAK, add_snapshot, seeded_run, spend_gold
from tests.http import Api


async def _one_battle(api: Api, app: web.Application) -> tuple[str, int, str]:
    """A battle against a ghost owned by a real player; returns (player token, id, ghost token)."""
    ghost_id, ghost_token = await api.new_player("ghost-owner")
    await add_snapshot(app[POOL], uuid.UUID(ghost_id), 1, 1000, WEAK)
    token, run_id = await seeded_run(app, api, seed=11)
    await spend_gold(api, token, (await api.get(f"/v1/runs/{run_id}", token=token)).body)
    turn = (await api.post(f"/v1/runs/{run_id}/end-turn", {"round": 1}, token=token)).body
    return token, turn["battle_id"], ghost_token


async def test_battle_shows_result_both_snapshots_seed_and_pairing(
    fresh_service: tuple[Api, web.Application],
) -> None:
    api, app = fresh_service
    token, battle_id, _ = await _one_battle(api, app)
    battle = (await api.get(f"/v1/battles/{battle_id}", token=token)).body
    assert battle["pairing"] == "same_round_100"
    assert battle["ghost"]["cryptids"] == [{"species": "mothman", "ability": 0, "level": 1}]
    assert len(battle["player"]["cryptids"]) >= 1
    assert battle["winner"] in ("player", "ghost", "draw")
    assert 0 <= battle["seed"] < 2**64
    assert battle["ruleset"] == "cryptids-2027.01"  # a new run plays the default


async def test_replay_is_readable_by_both_players_and_nobody_else(
    fresh_service: tuple[Api, web.Application],
) -> None:
    api, app = fresh_service
    token, battle_id, ghost_token = await _one_battle(api, app)
    _, stranger = await api.new_player("stranger")
    path = f"/v1/battles/{battle_id}/replay"
    as_json = await api.get(path, token=token)
    as_msgpack = await api.get(path, token=ghost_token, fmt="msgpack")
    assert as_json.status == as_msgpack.status == 200
    assert msgpack.unpackb(as_msgpack.raw) == json.loads(as_json.raw)
    assert (await api.get(path, token=stranger)).status == 404
    assert (await api.get(f"/v1/battles/{battle_id}", token=stranger)).status == 404
    assert (await api.get("/v1/battles/99999999", token=token)).status == 404
    for malformed in ("abc", "%C2%B2", "1" * 19, "-1"):
        assert (await api.get(f"/v1/battles/{malformed}", token=token)).status == 404


async def test_replay_matches_the_stored_result(
    fresh_service: tuple[Api, web.Application],
) -> None:
    api, app = fresh_service
    token, battle_id, _ = await _one_battle(api, app)
    battle = (await api.get(f"/v1/battles/{battle_id}", token=token)).body
    replay = (await api.get(f"/v1/battles/{battle_id}/replay", token=token)).body
    assert replay["seed"] == battle["seed"]
    assert replay["ruleset"] == battle["ruleset"]
    assert len(replay["hashes"]) == battle["rolls"]
    assert replay["b"] == [["mothman", 0, 1]]
