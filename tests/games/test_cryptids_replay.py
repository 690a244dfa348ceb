"""Replays: wire shape, byte-identical msgpack, and a client-side re-check of every board hash."""

import json
import subprocess
import sys
from typing import Any

import msgpack
from hypothesis import given, settings
from hypothesis import strategies as st

from service.games.cryptids import Replay, load_ruleset, result_to_wire, simulate
from service.games.cryptids.hashing import board_hash

RULESET = load_ruleset()
SPECIES = sorted(RULESET.species)
A = [("chupacabra", 0, 1), ("kraken", 1, 2), ("tunche", 1, 1), ("jersey_devil", 1, 3)]
B = [("wendigo", 0, 1), ("el_silbon", 0, 2), ("caleuche", 0, 1), ("la_llorona", 1, 2)]


def test_replay_header_and_wire_shape() -> None:
    result = simulate(RULESET, 7, A, B)
    assert result.replay is not None
    wire = result.replay.to_wire()
    assert list(wire) == ["format", "ruleset", "seed", "a", "b", "events", "hashes"]
    assert wire["ruleset"] == RULESET.id and wire["seed"] == 7
    assert wire["a"] == [list(p) for p in A] and wire["b"] == [list(p) for p in B]
    assert all(isinstance(e, tuple) and isinstance(e[0], str) for e in wire["events"])
    assert len(wire["hashes"]) == result.rolls
    assert wire["events"][-1][0] == "end"
    # Both formats carry the same plain arrays, strings and integers.
    decoded = msgpack.unpackb(msgpack.packb(wire))
    assert decoded == json.loads(json.dumps(wire))
    assert decoded["events"] == [list(e) for e in wire["events"]]


def test_result_wire_shape_with_and_without_replay() -> None:
    result = simulate(RULESET, 7, A, B)
    wire = result_to_wire(result, include_replay=False)
    assert wire == {
        "ruleset": RULESET.id,
        "seed": 7,
        "winner": result.winner,
        "reason": result.reason,
        "rolls": result.rolls,
        "health": {"a": result.health_a, "b": result.health_b},
    }
    assert result.replay is not None
    assert result_to_wire(result, include_replay=True)["replay"] == result.replay.to_wire()


def test_record_false_gives_the_same_result_without_a_replay() -> None:
    full = simulate(RULESET, 99, A, B)
    bare = simulate(RULESET, 99, A, B, record=False)
    assert bare.replay is None
    assert (bare.winner, bare.rolls, bare.health_a, bare.health_b) == (
        full.winner,
        full.rolls,
        full.health_a,
        full.health_b,
    )


_SCRIPT = """
import sys, msgpack
from service.games.cryptids import load_ruleset, simulate
A = {a!r}
B = {b!r}
r = simulate(load_ruleset(), 12345, A, B)
sys.stdout.write(msgpack.packb(r.replay.to_wire()).hex())
"""


def test_same_inputs_give_byte_identical_msgpack_in_another_process() -> None:
    here = simulate(RULESET, 12345, A, B)
    assert here.replay is not None
    code = _SCRIPT.format(a=A, b=B)
    other = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert bytes.fromhex(other) == msgpack.packb(here.replay.to_wire())


def replay_check(replay: Replay) -> None:
    """Rebuild the board from the header and the events alone, as a client would, and check
    every rule the events can show: hashes match, health stays in 0..max, the dead never act
    and are never targeted."""
    size = RULESET.battle.board_size
    state: dict[int, dict[str, int]] = {}
    rows: list[list[int]] = [[], []]
    on_death: dict[int, bool] = {}
    for side, warband in enumerate((replay.a, replay.b)):
        for slot, pick in enumerate(warband):
            s = RULESET.species[pick.species]
            uid = side * size + slot
            state[uid] = {"side": side, "health": s.health, "max": s.health, "threat": s.threat}
            state[uid] |= {"shield": 0, "poison": 0, "stun": 0}
            rows[side].append(uid)
            on_death[uid] = s.abilities[pick.ability].trigger == "on_death"
    gone: set[int] = set()
    hashes = iter(replay.hashes)
    rolls = 0

    def check_hash() -> None:
        values: list[int] = []
        for side in (0, 1):
            rows[side] = [u for u in rows[side] if u >= 0]
            values.append(len(rows[side]))
            for uid in rows[side]:
                s = state[uid]
                values += [uid, s["health"], s["max"], s["threat"], s["shield"], s["poison"]]
                values.append(s["stun"])
        assert board_hash(values) == next(hashes)

    def alive(uid: Any) -> None:
        assert uid not in gone and state[uid]["health"] > 0

    for event in replay.events:
        kind, *args = event
        if kind == "roll":
            if rolls:
                check_hash()
            rolls += 1
        elif kind in ("trigger", "skip", "tick", "sum", "reroll"):
            uid = args[0]
            if uid in gone:  # only its own death ability may still act
                assert kind in ("trigger", "skip") and on_death[uid]
            else:
                alive(uid)
            if kind == "tick":
                state[uid]["poison"] -= 1
            if kind == "skip":
                state[uid]["stun"] -= 1
        elif kind == "damage":
            src, uid, amount, absorbed, after = args
            alive(uid)
            st_ = state[uid]
            st_["shield"] -= absorbed
            assert st_["shield"] >= 0
            assert after == max(0, st_["health"] - (amount - absorbed))
            st_["health"] = after
        elif kind == "heal":
            _, uid, gain, after = args
            alive(uid)
            assert after == state[uid]["health"] + gain <= state[uid]["max"]
            state[uid]["health"] = after
        elif kind in ("shield", "poison", "stun", "threat"):
            _, uid, added, after = args
            alive(uid)
            state[uid][kind] += added
            assert state[uid][kind] == after
        elif kind == "max_health":
            _, uid, added, after = args
            alive(uid)
            state[uid]["max"] += added
            state[uid]["health"] += added
            assert state[uid]["max"] == after
        elif kind == "summon":
            src, uid, token, slot = args
            t = RULESET.tokens[token]
            side = state[src]["side"]
            state[uid] = {"side": side, "health": t.health, "max": t.health, "threat": t.threat}
            state[uid] |= {"shield": 0, "poison": 0, "stun": 0}
            on_death[uid] = t.ability.trigger == "on_death"
            row = rows[side]
            assert slot == len([u for u in row if u >= 0]) or -1 in row
            if -1 in row:
                assert slot == row.index(-1)
                row[slot] = uid
            else:
                row.append(uid)
        elif kind == "death":
            uid = args[0]
            assert state[uid]["health"] == 0 and uid not in gone
            gone.add(uid)
            row = rows[state[uid]["side"]]
            row[row.index(uid)] = -1
        for row in rows:
            for uid in row:
                if uid >= 0:
                    assert 0 <= state[uid]["health"] <= state[uid]["max"]

    if rolls:
        check_hash()
    assert rolls <= RULESET.battle.roll_limit
    assert next(hashes, None) is None


pick = st.tuples(st.sampled_from(SPECIES), st.integers(0, 1), st.integers(1, 3))
warband = st.lists(pick, min_size=1, max_size=5)


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**64 - 1), a=warband, b=warband)
def test_property_replays_rebuild_the_board_and_every_hash(seed: int, a: Any, b: Any) -> None:
    result = simulate(RULESET, seed, a, b)
    assert result.replay is not None
    assert result.rolls <= 36
    replay_check(result.replay)


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**64 - 1), a=warband, b=warband)
def test_property_simulation_is_deterministic(seed: int, a: Any, b: Any) -> None:
    first = simulate(RULESET, seed, a, b)
    second = simulate(RULESET, seed, a, b)
    assert first.replay is not None and second.replay is not None
    assert msgpack.packb(first.replay.to_wire()) == msgpack.packb(second.replay.to_wire())
    bare = simulate(RULESET, seed, a, b, record=False)
    assert (bare.winner, bare.rolls) == (first.winner, first.rolls)
