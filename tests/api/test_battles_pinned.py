"""A battle is pinned to the ruleset its run was started under, also after the default moved."""

import uuid

import msgpack
from aiohttp import web

from service.api.keys import POOL
from service.games.cryptids import DEFAULT_RULESET, load_ruleset, simulate
from service.games.cryptids.shop import new_shop
from service.store import runs
from tests.api.runs_helpers import add_snapshot, spend_gold
from tests.http import Api

OLD = "cryptids-2026.12"
# Yeti and Mapinguari changed in the next ruleset, so the ruleset decides this battle's events.
GHOST = [["yeti", 0, 1], ["mapinguari", 0, 1], ["ogopogo", 1, 1]]


async def test_a_battle_stored_under_the_old_ruleset_replays_byte_for_byte_under_it(
    fresh_service: tuple[Api, web.Application],
) -> None:
    assert DEFAULT_RULESET != OLD
    api, app = fresh_service
    pool = app[POOL]
    ghost_id, _ = await api.new_player("ghost-owner")
    await add_snapshot(pool, uuid.UUID(ghost_id), 1, 1000, GHOST, ruleset=OLD)
    # A run as it was started before the default moved: its row names the old ruleset.
    player_id, token = await api.new_player()
    old = load_ruleset(OLD)
    async with pool.acquire() as conn:
        row = await runs.insert(
            conn, uuid.UUID(player_id), OLD, 31, old.run.lives, new_shop(old, 31).to_dict()
        )
    run = (await api.get(f"/v1/runs/{row.run_id}", token=token)).body
    await spend_gold(api, token, run)
    turn = (await api.post(f"/v1/runs/{row.run_id}/end-turn", {"round": 1}, token=token)).body
    assert turn["pairing"] == "same_round_100" and turn["opponent"]["is_bot"] is False

    battle = (await api.get(f"/v1/battles/{turn['battle_id']}", token=token)).body
    assert battle["ruleset"] == OLD
    stored = await api.get(f"/v1/battles/{turn['battle_id']}/replay", token=token, fmt="msgpack")
    replay = msgpack.unpackb(stored.raw)
    expected = simulate(old, replay["seed"], replay["a"], replay["b"])
    assert expected.replay is not None
    assert stored.raw == msgpack.packb(expected.replay.to_wire())
    assert replay["b"] == GHOST
    # Under the default the same inputs are another battle: the stored ruleset is what held it.
    moved = simulate(load_ruleset(), replay["seed"], replay["a"], replay["b"])
    assert moved.replay is not None and moved.replay.events != expected.replay.events
