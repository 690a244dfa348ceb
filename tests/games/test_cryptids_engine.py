"""One named test per battle rule (docs/rules/cryptids.md), on hand-built content.

Each test builds a tiny ruleset whose cryptids have exactly the abilities it needs, and picks
its seed by running the published generator (not the engine) until the draws are the ones the
test wants. The expected outcomes were worked out by hand from the rules.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from service.games.cryptids.content import ruleset_from_dict
from service.games.cryptids.engine import BattleResult, simulate
from service.games.kernel.rng import SplitMix64
from tests.games.helpers import TEST_RUN, TEST_SHOP

ANY = None  # a roll whose dice do not matter


@dataclass(frozen=True)
class Draw:
    """A `random_enemy` pick: next() % among == index."""

    among: int
    index: int


DiceSpec = tuple[int, int] | Callable[[int, int], bool] | Draw | None


def seed_for(draws: Sequence[DiceSpec]) -> int:
    """The first seed whose generator draws match: each roll takes two dice, each Draw one pick."""
    for seed in range(2_000_000):
        rng = SplitMix64(seed)
        ok = True
        for spec in draws:
            if isinstance(spec, Draw):
                ok = rng.next() % spec.among == spec.index
            else:
                d1, d2 = rng.die(6), rng.die(6)
                if isinstance(spec, tuple):
                    ok = (d1, d2) == spec
                elif spec is not None:
                    ok = spec(d1, d2)
            if not ok:
                break
        if ok:
            return seed
    raise AssertionError("no seed found")


def C(
    trigger: str = "on_death",
    effect: str = "shield",
    target: str = "self",
    magnitude: int | list[int] = 1,
    *,
    health: int = 10,
    threat: int = 1,
    token: str | None = None,
) -> dict[str, Any]:
    """A test cryptid: its ability 0 is the one given (default: passive, shields on death)."""
    ability: dict[str, Any] = {
        "trigger": trigger,
        "effect": effect,
        "target": target,
        "magnitude": magnitude if isinstance(magnitude, list) else [magnitude] * 3,
    }
    if token is not None:
        ability["token"] = token
    return {"health": health, "threat": threat, "ability": ability}


# Harmful, so the battle does not end as a stalemate, but it never fires by itself.
INERT = {"trigger": "sum:99", "effect": "damage", "target": "highest_threat"}


def dummy(health: int = 10, threat: int = 0) -> dict[str, Any]:
    return C(INERT["trigger"], INERT["effect"], INERT["target"], health=health, threat=threat)


def fight(
    a: Sequence[dict[str, Any]],
    b: Sequence[dict[str, Any]],
    draws: Sequence[DiceSpec] = (),
    *,
    tokens: Sequence[dict[str, Any]] = (),
    levels: Sequence[int] = (),
    **battle: int,
) -> BattleResult:
    species = []
    for side, cryptids in (("a", a), ("b", b)):
        for i, c in enumerate(cryptids):
            species.append(
                {
                    "id": f"{side}{i}",
                    "name": f"{side.upper()}{i}",
                    "tier": 1,
                    "cost": 3,
                    "health": c["health"],
                    "threat": c["threat"],
                    "abilities": [c["ability"], c["ability"]],
                }
            )
    token_tables = [
        {"id": t["id"], "name": t["id"], "health": t["health"], "threat": t["threat"]}
        | {"ability": t["ability"]}
        for t in tokens
    ]
    rules = {
        "board_size": 5,
        "roll_limit": 36,
        "sudden_death_start": 16,
        "chain_depth": 32,
        "reaction_limit": 256,
        "die_faces": 6,
    } | battle
    ruleset = ruleset_from_dict(
        {
            "ruleset": "test",
            "battle": rules,
            "shop": TEST_SHOP,
            "run": TEST_RUN,
            "pairing": {"bands": [100, 200, 400], "candidates_per_side": 8},
            "species": species,
            "token": token_tables,
        }
    )
    lv = list(levels) + [1] * (len(a) - len(levels))
    return simulate(
        ruleset,
        seed_for(draws),
        [(f"a{i}", 0, lv[i]) for i in range(len(a))],
        [(f"b{i}", 0, 1) for i in range(len(b))],
    )


def events(result: BattleResult, *kinds: str) -> list[tuple[Any, ...]]:
    assert result.replay is not None
    return [e for e in result.replay.events if not kinds or e[0] in kinds]


def triggers(result: BattleResult) -> list[Any]:
    return [e[1] for e in events(result, "trigger")]


def hits(result: BattleResult) -> list[tuple[Any, Any]]:
    """(source, target) of every damage event."""
    return [(e[1], e[2]) for e in events(result, "damage")]


HIT = ("every_roll", "damage", "highest_threat")

# --- threat order -------------------------------------------------------------------------


def test_abilities_resolve_in_threat_order_highest_first_across_both_boards() -> None:
    r = fight([C(*HIT, threat=1), C(*HIT, threat=2)], [C(*HIT, threat=3)], roll_limit=1)
    assert triggers(r) == [5, 1, 0]


def test_threat_tie_goes_to_the_leftmost_across_boards() -> None:
    r = fight([C(*HIT, threat=1), C(*HIT, threat=2)], [C(*HIT, threat=2)], roll_limit=1)
    assert triggers(r) == [5, 1, 0]


def test_tie_on_threat_and_slot_side_a_first_on_odd_rolls_side_b_on_even_rolls() -> None:
    r = fight([C(*HIT, threat=2)], [C(*HIT, threat=2)], roll_limit=2)
    assert triggers(r) == [0, 5, 5, 0]


def test_threat_order_is_fixed_when_step_four_starts() -> None:
    # a0 (threat 2) raises b0's threat above a1's, but a1 (1) still acts before b0 (0 → 5).
    a = [C("every_roll", "threat", "highest_threat", 5, threat=2), C(*HIT, threat=1)]
    r = fight(a, [C(*HIT, threat=0)], roll_limit=1)
    assert triggers(r) == [0, 1, 5]


def test_a_threat_raise_reorders_the_next_roll() -> None:
    r = fight([C("every_roll", "threat", "self", 5, threat=1)], [C(*HIT, threat=3)], roll_limit=2)
    assert triggers(r) == [5, 0, 0, 5]


def test_closing_up_moves_a_survivor_in_the_threat_order() -> None:
    # a0 dies in roll 1 and a1 closes up to slot 0: from then on it ties b0 on threat and slot,
    # so roll 3 (odd) puts side A first.
    a = [dummy(health=1), C(*HIT, threat=2)]
    r = fight(a, [C("every_roll", "damage", "leftmost", threat=2)], roll_limit=3)
    assert triggers(r) == [5, 1, 5, 1, 1, 5]


# --- targets ------------------------------------------------------------------------------


def test_single_target_hits_the_highest_threat_then_the_leftmost() -> None:
    r = fight([C(*HIT)], [dummy(threat=1), dummy(threat=3), dummy(threat=3)], roll_limit=1)
    assert hits(r) == [(0, 6)]


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ("lowest_health", [6]),
        ("highest_health", [7]),
        ("leftmost", [5]),
        ("rightmost", [8]),
        ("all_enemies", [5, 6, 7, 8]),
    ],
)
def test_enemy_target_rules(rule: str, expected: list[int]) -> None:
    b = [dummy(5, 1), dummy(3, 2), dummy(7, 1), dummy(3, 1)]
    r = fight([C("every_roll", "damage", rule)], b, roll_limit=1)
    assert [t for _, t in hits(r)] == expected


def test_random_enemy_draws_next_mod_living_count_after_the_dice() -> None:
    r = fight(
        [C("every_roll", "damage", "random_enemy")],
        [dummy(), dummy(), dummy()],
        [ANY, Draw(3, 2)],
        roll_limit=1,
    )
    assert hits(r) == [(0, 7)]


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ("self", [1]),
        ("all_allies", [0, 1, 2, 3]),
        ("lowest_health_ally", [2]),
        ("adjacent_allies", [0, 2]),
    ],
)
def test_ally_target_rules(rule: str, expected: list[int]) -> None:
    a = [C(health=5), C("every_roll", "shield", rule, health=4), C(health=2), C(health=6)]
    r = fight(a, [dummy()], roll_limit=1)
    assert [e[2] for e in events(r, "shield")] == expected


def test_a_cryptid_at_zero_is_no_target() -> None:
    a = [C(*HIT, 5, threat=3), C(*HIT, 1, threat=2)]
    r = fight(a, [dummy(5, threat=1), dummy(5, threat=0)], roll_limit=1)
    assert hits(r) == [(0, 5), (1, 6)]


def test_a_cryptid_at_zero_before_its_turn_does_not_activate() -> None:
    r = fight([C(*HIT, 5, threat=3)], [C(*HIT, health=5, threat=1), dummy()], roll_limit=1)
    assert triggers(r) == [0]


# --- triggers -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("trigger", "dice", "times"),
    [
        ("face:5", (5, 1), 1),
        ("face:5", (5, 5), 2),
        ("face:5", (1, 2), 0),
        ("sum:7", (3, 4), 1),
        ("sum:7", (3, 3), 0),
        ("sum_at_least:9", (4, 5), 1),
        ("sum_at_least:9", (4, 4), 0),
        ("sum_at_most:4", (1, 3), 1),
        ("sum_at_most:4", (2, 3), 0),
        ("doubles", (2, 2), 1),
        ("doubles", (2, 3), 0),
        ("odd", (2, 3), 1),
        ("odd", (2, 2), 0),
        ("even", (2, 2), 1),
        ("even", (2, 3), 0),
        ("every_roll", (1, 2), 1),
    ],
)
def test_roll_triggers(trigger: str, dice: tuple[int, int], times: int) -> None:
    r = fight([C(trigger, "damage", "highest_threat")], [dummy()], [dice], roll_limit=1)
    assert len(hits(r)) == times


def test_dice_abilities_resolve_before_anything_checks_the_roll() -> None:
    # b0 has the lowest threat, yet its +1 turns 3+4 into 8 before a0's sum:8 is checked.
    a = [C("sum:8", "damage", "highest_threat", threat=5)]
    b = [C("every_roll", "add_to_sum", "self", 1, threat=0)]
    r = fight(a, b, [(3, 4)], roll_limit=1)
    assert events(r)[:5] == [
        ("roll", 1, 3, 4),
        ("trigger", 5),
        ("sum", 5, 1, 8),
        ("trigger", 0),
        ("damage", 0, 5, 1, 0, 9),
    ]


def test_dice_triggers_see_the_plain_sum_and_faces_stay() -> None:
    # Two add_to_sum abilities both match the thrown 3+3; the second does not see 7.
    b = [C("sum:6", "add_to_sum", "self", 1, threat=2), C("sum:6", "add_to_sum", "self", 1)]
    a = [C("doubles", "damage", "highest_threat", threat=0)]
    r = fight(a, b, [(3, 3)], roll_limit=1)
    assert [e[3] for e in events(r, "sum")] == [7, 8]
    assert hits(r) == [(0, 5)]


def test_reroll_stops_the_roll_and_the_next_throw_is_a_new_roll() -> None:
    a = [C(*HIT)]
    b = [C("sum_at_most:4", "reroll", "self", threat=0), dummy()]
    r = fight(a, b, [(1, 2), (5, 6)], roll_limit=2)
    kinds = [e[0] for e in events(r)]
    assert kinds[:7] == ["roll", "trigger", "reroll", "roll", "trigger", "damage", "end"]
    assert r.rolls == 2
    assert r.replay is not None and len(r.replay.hashes) == 2


def test_damage_dealt_before_a_reroll_stays() -> None:
    # b0 is poisoned on roll 1; on roll 2 the poison ticks, then b1 re-rolls: the tick stays.
    a = [C("face:6", "poison", "leftmost", 2)]
    b = [dummy(), C("sum_at_most:3", "reroll", "self")]
    r = fight(a, b, [(6, 5), (1, 1)], roll_limit=2)
    assert events(r, "tick", "reroll") == [("tick", 5, 2), ("reroll", 6)]
    assert r.health_b == 8 + 10


def test_an_endless_reroll_is_bounded_by_the_roll_limit() -> None:
    r = fight([C("every_roll", "reroll", "self", threat=9)], [dummy()])
    assert r.rolls == 36 and r.reason == "roll_limit"
    assert len(events(r, "reroll")) == 36
    assert r.winner == "draw"


# --- reactions ----------------------------------------------------------------------------


def test_reactions_resolve_at_once_depth_first() -> None:
    a = [C("every_roll", "damage", "all_enemies", threat=3)]
    b = [C("on_damaged", "damage", "highest_threat"), C("on_damaged", "damage", "highest_threat")]
    r = fight(a, b, roll_limit=1)
    assert hits(r) == [(0, 5), (5, 0), (0, 6), (6, 0)]


def test_a_cryptid_killed_by_a_hit_does_not_react_to_it() -> None:
    r = fight([C(*HIT, 5)], [C("on_damaged", "damage", "highest_threat", health=5)], roll_limit=1)
    assert triggers(r) == [0]


def test_ally_and_enemy_damage_reactions() -> None:
    a = [C(*HIT, threat=3), C("on_enemy_damaged", "shield", "self")]
    b = [dummy(threat=1), C("on_ally_damaged", "shield", "self"), C("on_damaged", "threat", "self")]
    r = fight(a, b, roll_limit=1)
    assert triggers(r) == [0, 1, 6]


def test_healing_reactions_fire_only_when_health_rises() -> None:
    # b0 hits a0 (10 → 9); a1 heals the lowest ally (a0, +1): a0 on_healed, a2 on_ally_healed.
    # Then a1 heals again on roll 2 with everyone full: no reaction.
    a = [
        C("on_healed", "shield", "self", health=10),
        C("every_roll", "heal", "lowest_health_ally", health=20),
        C("on_ally_healed", "threat", "self", health=20),
    ]
    b = [C("face:6", "damage", "leftmost", threat=5)]
    r = fight(a, b, [(6, 1), (2, 2)], roll_limit=2)
    assert events(r, "heal", "shield", "threat") == [
        ("heal", 1, 0, 1, 10),
        ("shield", 0, 0, 1, 1),
        ("threat", 2, 2, 1, 2),
        ("heal", 1, 0, 0, 10),
    ]


def test_a_reaction_chain_is_cut_at_depth_32() -> None:
    # b1 hits a0; a0 and b0 then hit each other back and forth: reactions at depths 1..32
    # resolve, the 33rd (a0's) is cut.
    ping = C("on_damaged", "damage", "highest_threat", health=100, threat=1)
    r = fight([ping], [C(health=100, threat=1) | ping, C(*HIT, health=100, threat=0)], roll_limit=1)
    assert len(triggers(r)) == 1 + 32
    assert events(r, "chain_limit") == [("chain_limit", 0)]


def test_reactions_per_roll_are_bounded_by_the_reaction_limit() -> None:
    ping = C("on_damaged", "damage", "highest_threat", health=100, threat=1)
    r = fight([ping], [ping, C(*HIT, health=100, threat=0)], roll_limit=1, reaction_limit=5)
    assert len(triggers(r)) == 1 + 5
    assert len(events(r, "chain_limit")) == 1


# --- deaths -------------------------------------------------------------------------------


def test_deaths_are_processed_at_the_end_of_the_roll_all_at_once() -> None:
    # b0 and b1 drop to 0 early in the roll but leave only after everything else resolved.
    a = [C("every_roll", "damage", "all_enemies", 5, threat=3), C(*HIT, threat=1)]
    b = [dummy(5, 2), dummy(5, 2), dummy(20, 0)]
    r = fight(a, b, roll_limit=1)
    kinds = [e[0] for e in events(r)]
    assert kinds.index("death") > max(i for i, k in enumerate(kinds) if k == "damage")
    assert events(r, "death") == [("death", 5), ("death", 6)]
    assert hits(r)[-1] == (1, 7)


def test_death_abilities_resolve_in_threat_order_after_all_the_dead_leave() -> None:
    a = [C("every_roll", "damage", "all_enemies", 9, threat=9), C("on_enemy_death", threat=2)]
    b = [C("on_death", health=1, threat=1), C("on_death", health=1, threat=3)]
    r = fight(a, b, roll_limit=1)
    kinds = [(e[0], e[1]) for e in events(r, "death", "trigger")]
    assert kinds == [
        ("trigger", 0),
        ("death", 6),
        ("death", 5),
        ("trigger", 6),
        ("trigger", 1),
        ("trigger", 1),
        ("trigger", 5),
    ]


def test_deaths_repeat_in_waves_until_no_new_deaths() -> None:
    a = [C(*HIT, 3, threat=5), C("on_death", "damage", "all_enemies", 2, health=1)]
    b = [C("on_death", "damage", "all_enemies", 1, health=3, threat=2), dummy(2, 1)]
    r = fight(a, b, roll_limit=1)
    assert events(r, "death", "damage") == [
        ("damage", 0, 5, 3, 0, 0),
        ("death", 5),
        ("damage", 5, 0, 1, 0, 9),
        ("damage", 5, 1, 1, 0, 0),
        ("death", 1),
        ("damage", 1, 6, 2, 0, 0),
        ("death", 6),
    ]
    assert r.winner == "a" and r.reason == "wipe"


def test_survivors_close_up_to_the_left() -> None:
    r = fight([C("every_roll", "damage", "leftmost", 5)], [dummy(5), dummy(7)], roll_limit=2)
    assert hits(r) == [(0, 5), (0, 6)]
    assert events(r, "damage")[-1] == ("damage", 0, 6, 5, 0, 2)


# --- end ----------------------------------------------------------------------------------


def test_the_battle_ends_when_a_side_is_empty() -> None:
    r = fight([C(*HIT, 10)], [dummy(5), dummy(5)])
    assert (r.winner, r.reason, r.rolls, r.health_a, r.health_b) == ("a", "wipe", 2, 10, 0)


def test_both_sides_empty_at_once_is_a_draw() -> None:
    r = fight([C(*HIT, 5, health=1)], [C("on_death", "damage", "highest_threat", 5, health=1)])
    assert (r.winner, r.reason, r.rolls) == ("draw", "wipe", 1)


def test_after_the_roll_limit_more_total_health_wins() -> None:
    r = fight([C(*HIT)], [dummy(), dummy(5)], roll_limit=3)
    assert (r.winner, r.reason, r.rolls, r.health_a, r.health_b) == ("b", "roll_limit", 3, 10, 12)


def test_equal_health_at_the_limit_is_a_draw() -> None:
    r = fight([dummy(7)], [dummy(7)], roll_limit=2)
    assert (r.winner, r.reason) == ("draw", "roll_limit")


def test_when_neither_side_can_damage_the_battle_ends_on_health() -> None:
    r = fight([C("every_roll", "shield", "self", health=5)], [C("even", "heal", "self", health=4)])
    assert (r.winner, r.reason, r.rolls) == ("a", "stalemate", 0)


def test_pending_poison_keeps_the_battle_going() -> None:
    # Roll 1: a0 poisons b0 and b1 (3 each), b1 kills a0. Roll 2: b1 dies to its poison.
    # Nobody can damage any more, but b0's poison ticks on rolls 3 and 4 (2, then 1).
    a = [C("every_roll", "poison", "all_enemies", 3, health=1, threat=5), C(health=10, threat=0)]
    b = [C(health=10), C(*HIT, health=1, threat=4)]
    r = fight(a, b)
    assert [e[2] for e in events(r, "tick")] == [3, 3, 2, 1]
    assert (r.winner, r.reason, r.rolls, r.health_b) == ("a", "stalemate", 4, 4)


# --- sudden death -------------------------------------------------------------------------


def test_sudden_death_adds_roll_minus_15_to_ability_damage_only() -> None:
    a = [C(*HIT, 1, threat=1), C("every_roll", "poison", "highest_threat", 1, threat=0)]
    r = fight(a, [dummy(health=100)], roll_limit=17)
    assert [e[3] for e in events(r, "damage") if e[1] == 0] == [1] * 15 + [2, 3]
    assert {e[3] for e in events(r, "damage") if e[1] == -1} == {1}
    assert events(r, "sudden_death") == [("sudden_death", 1), ("sudden_death", 2)]


# --- effects ------------------------------------------------------------------------------


def test_heal_never_raises_health_above_max() -> None:
    r = fight([C("every_roll", "heal", "self", 3)], [C(*HIT, 2, threat=5)], roll_limit=1)
    assert events(r, "heal") == [("heal", 0, 0, 2, 10)]


def test_shield_absorbs_damage_before_health() -> None:
    r = fight([C("every_roll", "shield", "self", 3, threat=5)], [C(*HIT, 5)], roll_limit=1)
    assert events(r, "damage") == [("damage", 5, 0, 5, 3, 8)]


def test_poison_stacks_ticks_its_stacks_in_step_two_then_loses_one() -> None:
    r = fight([C("every_roll", "poison", "highest_threat", 2)], [dummy()], roll_limit=3)
    assert events(r, "tick", "poison") == [
        ("poison", 0, 5, 2, 2),
        ("tick", 5, 2),
        ("poison", 0, 5, 2, 3),
        ("tick", 5, 3),
        ("poison", 0, 5, 2, 4),
    ]
    assert r.health_b == 10 - 2 - 3


def test_stun_skips_the_next_activation_only() -> None:
    a = [C("face:6", "stun", "highest_threat", threat=5)]
    r = fight(a, [C(*HIT)], [(6, 1), (2, 3)], roll_limit=2)
    assert events(r, "skip", "damage") == [("skip", 5), ("damage", 5, 0, 1, 0, 9)]


def test_threat_raises_threat_and_redirects_single_targets() -> None:
    a = [C("every_roll", "threat", "self", 10, threat=5), dummy(threat=6)]
    r = fight(a, [C(*HIT)], roll_limit=1)
    assert events(r, "threat") == [("threat", 0, 0, 10, 15)]
    assert hits(r) == [(5, 0)]


def test_max_health_raises_max_and_health() -> None:
    r = fight([C("every_roll", "max_health", "self", 3, health=5)], [dummy()], roll_limit=1)
    assert events(r, "max_health") == [("max_health", 0, 0, 3, 8)]
    assert r.health_a == 8


IMP = {"id": "imp", "health": 2, "threat": 0, "ability": C(*HIT)["ability"]}


def test_summon_joins_the_leftmost_free_slot() -> None:
    a = [C("every_roll", "summon", "self", 2, token="imp"), dummy()]
    r = fight(a, [dummy()], tokens=[IMP], roll_limit=1)
    assert events(r, "summon") == [("summon", 0, 10, "imp", 2), ("summon", 0, 11, "imp", 3)]
    assert r.health_a == 10 + 10 + 2 + 2


def test_summon_on_death_takes_the_slot_the_dead_left() -> None:
    a = [C("on_death", "summon", "self", health=1, token="imp"), dummy()]
    r = fight(a, [C(*HIT, 5)], tokens=[IMP], roll_limit=1)
    assert events(r, "summon") == [("summon", 0, 10, "imp", 0)]


def test_summon_on_a_full_board_does_nothing_and_is_recorded() -> None:
    # a1 is at 0 after b0's hit but still holds its slot until step 6.
    a = [C("every_roll", "summon", "self", token="imp"), dummy(1, 9), dummy(), dummy(), dummy()]
    r = fight(a, [C(*HIT, threat=20)], tokens=[IMP], roll_limit=1)
    assert events(r, "summon", "summon_failed") == [("summon_failed", 0, "imp")]


def test_level_picks_the_magnitude() -> None:
    r = fight([C(*HIT, [1, 2, 5])], [dummy()], levels=[3], roll_limit=1)
    assert hits(r) == [(0, 5)] and events(r, "damage")[0][3] == 5


# --- generator ----------------------------------------------------------------------------


def test_the_engine_throws_dice_with_the_published_generator() -> None:
    r = fight([C(*HIT)], [dummy(health=100)], roll_limit=5)
    assert r.replay is not None
    rng = SplitMix64(r.replay.seed)
    expected = [("roll", n, rng.die(6), rng.die(6)) for n in range(1, 6)]
    assert events(r, "roll") == expected
