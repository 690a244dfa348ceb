"""Duelo de Nigromantes: one test per rule of docs/rules/necromancers.md, each group of tests
under a comment naming the sections it covers.

Dice are controlled honestly: a test asks for the generator state whose next d6 rolls are
the faces it wants (found by searching SplitMix64 seeds) and puts it in the match state.
"""

import itertools
import tomllib
from importlib import resources
from typing import Any

import pytest

from service.games.kernel.content import ContentError
from service.games.kernel.protocol import Action, Event, GameError, IllegalAction
from service.games.kernel.rng import SplitMix64
from service.games.necromancers import NecromancersGame
from service.games.necromancers.content import load_ruleset, parse_ruleset
from service.games.necromancers.state import Die, State

GAME = NecromancersGame()


def rng_yielding(*faces: int) -> int:
    """A generator state whose next d6 rolls are `faces`."""
    for seed in itertools.count():
        rng = SplitMix64(seed)
        if all(rng.die(6) == face for face in faces):
            return seed
    raise AssertionError("unreachable")


def duel(seats: int = 2, current: int = 0, dice: tuple[int, ...] = ()) -> State:
    """A fresh match in seat order, `current` to choose a target, the next rolls `dice`."""
    state = GAME.setup(1, seats, {}, [None] * seats)
    state.order = list(range(seats))
    state.current = current
    state.rng = rng_yielding(*dice)
    return state


def resolving(faces: tuple[int, ...], attacker: int = 0, target: int = 1, seats: int = 2) -> State:
    """A match where `attacker` has rolled `faces` against `target` and none was cancelled."""
    state = duel(seats, attacker)
    state.phase = "resolve"
    state.target = target
    state.dice = [Die(face) for face in faces]
    return state


def troops(state: State, seat: int, lives: int = 6, skeletons: int = 6, zombies: int = 6) -> None:
    necromancer = state.necromancers[seat]
    necromancer.lives, necromancer.skeletons, necromancer.zombies = lives, skeletons, zombies


def standing(state: State, seat: int) -> tuple[int, int, int]:
    n = state.necromancers[seat]
    return n.lives, n.skeletons, n.zombies


def kinds(events: list[Event]) -> list[str]:
    return [e.kind for e in events]


def act(state: State, seat: int, /, **action: Any) -> tuple[State, list[Event]]:
    """`seat` applies the action written as keywords (which may include its own "seat")."""
    return GAME.apply(state, seat, dict(action))


def damage(die: int, skeletons: int, zombies: int) -> Action:
    return {
        "type": "resolve",
        "die": die,
        "effect": "damage",
        "skeletons": skeletons,
        "zombies": zombies,
    }


# --- content ---------------------------------------------------------------------------
# docs/rules/necromancers.md#faces


def test_face_table_is_data_with_every_face_of_the_die() -> None:
    rules = load_ruleset()
    assert sorted(rules.faces) == [1, 2, 3, 4, 5, 6]
    assert [o.effect for o in rules.faces[4]] == ["damage", "revive"]
    assert rules.faces[6][1].at == ("skeletons", "zombies", "necromancer")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["faces"].pop(), "faces must be exactly"),
        (lambda d: d["faces"][0]["options"][0].update(effect="curse"), "unknown effect"),
        (lambda d: d["faces"][0]["options"][0].update(at=["necromancer"]), "may only name"),
        (lambda d: d["faces"][0]["options"][0].update(points=0), "positive integer"),
        (lambda d: d.update(lives=7), "must not exceed"),
    ],
)
def test_face_table_is_validated(change: Any, message: str) -> None:
    text = resources.files("service.games.necromancers").joinpath("faces.toml").read_text()
    data = tomllib.loads(text)
    change(data)
    with pytest.raises(ContentError, match=message):
        parse_ruleset(data)


# --- setup and turn order --------------------------------------------------------------
# docs/rules/necromancers.md#players-and-troops docs/rules/necromancers.md#turn-order


def test_each_necromancer_starts_with_six_lives_skeletons_and_zombies() -> None:
    state = GAME.setup(99, 4, {}, [None] * 4)
    assert [standing(state, seat) for seat in range(4)] == [(6, 6, 6)] * 4


@pytest.mark.parametrize("seats", [1, 5])
def test_two_to_four_players(seats: int) -> None:
    with pytest.raises(GameError, match="2 to 4 seats"):
        GAME.setup(1, seats, {}, [None] * seats)


def test_unknown_options_are_rejected() -> None:
    with pytest.raises(GameError, match="unknown option"):
        GAME.setup(1, 2, {"lives": 9}, [None] * 2)


def test_turn_order_by_die_roll_highest_first() -> None:
    seed = rng_yielding(2, 5, 3)
    state = GAME.setup(seed, 3, {}, [None] * 3)
    assert state.order_rolls == [[[0, 2], [1, 5], [2, 3]]]
    assert state.order == [1, 2, 0]
    assert state.current == 1


def test_turn_order_ties_are_rerolled_among_the_tied() -> None:
    # Seats 0 and 2 tie on 4 above seat 1's 1; their re-roll (2 then 6) puts seat 2 first.
    seed = rng_yielding(4, 1, 4, 2, 6)
    state = GAME.setup(seed, 3, {}, [None] * 3)
    assert state.order_rolls == [[[0, 4], [1, 1], [2, 4]], [[0, 2], [2, 6]]]
    assert state.order == [2, 0, 1]
    rolls = [
        [{"seat": 0, "roll": 4}, {"seat": 1, "roll": 1}, {"seat": 2, "roll": 4}],
        [{"seat": 0, "roll": 2}, {"seat": 2, "roll": 6}],
    ]
    assert GAME.setup_events(state) == [
        Event("turn_order", {"rolls": rolls, "order": [2, 0, 1]}),
        Event("turn_start", {"seat": 2, "turn": 1}),
    ]
    assert GAME.view(state, None)["order_rolls"] == rolls


# --- choosing a target -----------------------------------------------------------------
# docs/rules/necromancers.md#choosing-the-target


def test_target_is_one_living_enemy() -> None:
    state = duel(3)
    troops(state, 2, lives=0)
    assert GAME.legal_actions(state, 0) == [{"type": "target", "seat": 1}]
    with pytest.raises(IllegalAction) as refused:
        act(state, 0, type="target", seat=0)
    assert refused.value.code == "cannot_target_self"
    with pytest.raises(IllegalAction) as refused:
        act(state, 0, type="target", seat=2)
    assert refused.value.code == "seat_eliminated"


def test_only_the_turn_player_chooses_the_target() -> None:
    state = duel(2)
    assert GAME.to_act(state) == [0]
    with pytest.raises(IllegalAction, match="may not act now"):
        act(state, 1, type="target", seat=0)


# --- attack and defence rolls ----------------------------------------------------------
# docs/rules/necromancers.md#the-attack-roll docs/rules/necromancers.md#the-defence-roll


def test_two_attack_dice_with_skeletons_and_zombies() -> None:
    state, events = act(duel(dice=(3, 2, 1)), 0, type="target", seat=1)
    assert kinds(events) == ["target_chosen", "attack_roll", "defence_roll", "phase"]
    assert events[1].data == {"seat": 0, "dice": [3, 2]}
    assert events[2].data == {"seat": 1, "die": 1}
    assert [d.face for d in state.dice] == [3, 2]


@pytest.mark.parametrize(("skeletons", "zombies"), [(6, 0), (0, 6), (0, 0)])
def test_one_attack_die_with_a_single_troop_type(skeletons: int, zombies: int) -> None:
    state = duel(dice=(3, 1))
    troops(state, 0, skeletons=skeletons, zombies=zombies)
    state, events = act(state, 0, type="target", seat=1)
    assert events[1].data["dice"] == [3]
    assert events[2].data["die"] == 1


def test_defence_die_cancels_only_when_strictly_higher() -> None:
    state, events = act(duel(dice=(2, 5, 3)), 0, type="target", seat=1)
    assert events[-2:] == [
        Event("die_cancelled", {"seat": 1, "die": 0, "face": 2}),
        Event("phase", {"phase": "resolve", "seat": 0}),
    ]
    assert [d.status for d in state.dice] == ["cancelled", "pending"]
    assert GAME.to_act(state) == [0]
    assert {a["die"] for a in GAME.legal_actions(state, 0)} == {1}


def test_tie_cancels_nothing() -> None:
    state, events = act(duel(dice=(3, 4, 3)), 0, type="target", seat=1)
    assert "die_cancelled" not in kinds(events)
    assert [d.status for d in state.dice] == ["pending", "pending"]


def test_a_cancelled_single_die_ends_the_turn() -> None:
    state = duel(dice=(2, 3))
    troops(state, 0, zombies=0)
    state, events = act(state, 0, type="target", seat=1)
    assert kinds(events)[-2:] == ["die_cancelled", "turn_start"]
    assert state.current == 1
    assert state.phase == "target"


def test_defender_chooses_when_beating_both() -> None:
    state, events = act(duel(dice=(1, 3, 6)), 0, type="target", seat=1)
    assert "die_cancelled" not in kinds(events)
    assert events[-1] == Event("phase", {"phase": "defend", "seat": 1})
    assert state.phase == "defend"
    assert GAME.to_act(state) == [1]
    assert GAME.legal_actions(state, 1) == [
        {"type": "cancel", "die": 0},
        {"type": "cancel", "die": 1},
    ]
    assert GAME.legal_actions(state, 0) == []
    prompt = GAME.prompt(state, 1)
    assert prompt is not None and prompt.kind == "defend"
    assert GAME.prompt(state, 0) is None
    with pytest.raises(IllegalAction) as refused:
        act(state, 0, type="resolve", die=0)
    assert refused.value.code == "not_asked"
    state, events = act(state, 1, type="cancel", die=1)
    assert events == [
        Event("die_cancelled", {"seat": 1, "die": 1, "face": 3}),
        Event("phase", {"phase": "resolve", "seat": 0}),
    ]
    assert GAME.to_act(state) == [0]
    assert {a["die"] for a in GAME.legal_actions(state, 0)} == {0}


def test_beating_two_equal_dice_cancels_one_without_asking() -> None:
    state, _ = act(duel(dice=(2, 2, 5)), 0, type="target", seat=1)
    assert state.phase == "resolve"
    assert [d.status for d in state.dice] == ["pending", "cancelled"]


# --- resolving the dice ----------------------------------------------------------------
# docs/rules/necromancers.md#resolving-the-dice
# docs/rules/necromancers.md#a-point-at-an-empty-troop-type
# docs/rules/necromancers.md#caps-on-revive-and-heal


@pytest.mark.parametrize("face", [1, 2, 3])
def test_faces_1_to_3_deal_that_many_points_split_as_the_attacker_assigns(face: int) -> None:
    state = resolving((face,))
    splits = [(a["skeletons"], a["zombies"]) for a in GAME.legal_actions(state, 0)]
    assert splits == [(s, face - s) for s in range(face, -1, -1)]
    for skeletons, zombies in splits:
        after, events = GAME.apply(state, 0, damage(0, skeletons, zombies))
        assert standing(after, 1) == (6, 6 - skeletons, 6 - zombies)
        assert events[0].kind == "damage"
        assert events[0].data["skeletons"] == skeletons
        assert events[0].data["zombies"] == zombies


def test_face_4_damages_an_enemy_skeleton_or_revives_one_of_yours() -> None:
    state = resolving((4,))
    troops(state, 0, skeletons=3)
    assert GAME.legal_actions(state, 0) == [
        damage(0, 1, 0),
        {"type": "resolve", "die": 0, "effect": "revive", "at": "skeletons"},
    ]
    after, _ = GAME.apply(state, 0, damage(0, 1, 0))
    assert standing(after, 1) == (6, 5, 6)
    after, events = act(state, 0, type="resolve", die=0, effect="revive", at="skeletons")
    assert standing(after, 0) == (6, 4, 6)
    assert events[0].kind == "revive"
    assert events[0].data["amount"] == 1


def test_face_5_damages_an_enemy_zombie_or_revives_one_of_yours() -> None:
    state = resolving((5,))
    troops(state, 0, zombies=0)
    assert GAME.legal_actions(state, 0) == [
        damage(0, 0, 1),
        {"type": "resolve", "die": 0, "effect": "revive", "at": "zombies"},
    ]
    after, _ = GAME.apply(state, 0, damage(0, 0, 1))
    assert standing(after, 1) == (6, 6, 5)
    after, _ = act(state, 0, type="resolve", die=0, effect="revive", at="zombies")
    assert standing(after, 0) == (6, 6, 1)


def test_face_6_damages_any_enemy_troop_or_heals_one_of_yours() -> None:
    state = resolving((6,))
    troops(state, 0, lives=4, skeletons=5, zombies=2)
    heal = {"type": "resolve", "die": 0, "effect": "heal"}
    assert GAME.legal_actions(state, 0) == [
        damage(0, 1, 0),
        damage(0, 0, 1),
        {**heal, "at": "skeletons"},
        {**heal, "at": "zombies"},
        {**heal, "at": "necromancer"},
    ]
    expected = {"skeletons": (4, 6, 2), "zombies": (4, 5, 3), "necromancer": (5, 5, 2)}
    for what, after_heal in expected.items():
        after, events = GAME.apply(state, 0, {**heal, "at": what})
        assert standing(after, 0) == after_heal
        assert events[0] == Event("heal", {"seat": 0, "die": 0, "face": 6, "at": what, "amount": 1})


def test_point_at_empty_troop_type_hits_the_necromancer() -> None:
    state = resolving((3,))
    troops(state, 1, skeletons=1, zombies=4)
    after, events = GAME.apply(state, 0, damage(0, 3, 0))
    assert standing(after, 1) == (4, 0, 4)
    assert events[0].data == {
        "seat": 1,
        "die": 0,
        "aimed": {"skeletons": 3, "zombies": 0},
        "skeletons": 1,
        "zombies": 0,
        "necromancer": 2,
    }


def test_necromancer_without_troops_takes_every_point() -> None:
    state = resolving((2, 5))
    troops(state, 1, skeletons=0, zombies=0)
    after, _ = GAME.apply(state, 0, damage(0, 1, 1))
    after, _ = GAME.apply(after, 0, damage(1, 0, 1))
    assert standing(after, 1) == (3, 0, 0)


def test_revive_capped_at_six() -> None:
    state = resolving((4, 5))
    assert all(a["effect"] == "damage" for a in GAME.legal_actions(state, 0))
    with pytest.raises(IllegalAction) as refused:
        act(state, 0, type="resolve", die=0, effect="revive", at="skeletons")
    assert refused.value.code == "at_cap"


def test_heal_capped_at_six() -> None:
    state = resolving((6,))
    troops(state, 0, lives=6, skeletons=6, zombies=5)
    heals = [a["at"] for a in GAME.legal_actions(state, 0) if a["effect"] == "heal"]
    assert heals == ["zombies"]
    with pytest.raises(IllegalAction) as refused:
        act(state, 0, type="resolve", die=0, effect="heal", at="necromancer")
    assert refused.value.code == "at_cap"


def test_attacker_resolves_the_dice_in_the_order_he_chooses() -> None:
    state = resolving((1, 4))
    after, _ = GAME.apply(state, 0, damage(1, 1, 0))
    assert [d.status for d in after.dice] == ["pending", "resolved"]
    assert {a["die"] for a in GAME.legal_actions(after, 0)} == {0}
    after, events = GAME.apply(after, 0, damage(0, 0, 1))
    assert kinds(events) == ["damage", "turn_start"]
    assert after.current == 1


def test_dice_are_not_summed() -> None:
    # A 1 and a 2 are two separate effects of 1 and 2 points, never one of 3.
    state = resolving((1, 2))
    assert {a["skeletons"] + a["zombies"] for a in GAME.legal_actions(state, 0)} == {1, 2}


# --- elimination and the end -----------------------------------------------------------
# docs/rules/necromancers.md#elimination-and-the-winner
# docs/rules/necromancers.md#when-the-target-falls-mid-turn


def test_elimination() -> None:
    state = resolving((2,), seats=3)
    troops(state, 1, lives=1, skeletons=0, zombies=3)
    after, events = GAME.apply(state, 0, damage(0, 1, 1))
    assert kinds(events) == ["damage", "eliminated", "turn_start"]
    assert events[0].data["necromancer"] == 1
    assert events[1].data == {"seat": 1, "by": 0}
    # His troops stay but count for nothing: he is never a target and takes no turn.
    assert standing(after, 1) == (0, 0, 3)
    assert after.current == 2
    assert {a["seat"] for a in GAME.legal_actions(after, 2)} == {0}
    assert GAME.outcome(after) is None


def test_remaining_die_after_the_target_falls_may_only_revive_or_heal() -> None:
    state = resolving((3, 6), seats=3)
    troops(state, 0, lives=5)
    troops(state, 1, lives=1, skeletons=0, zombies=0)
    after, _ = GAME.apply(state, 0, damage(0, 3, 0))
    assert GAME.legal_actions(after, 0) == [
        {"type": "resolve", "die": 1, "effect": "heal", "at": "necromancer"}
    ]


def test_remaining_die_with_no_legal_use_is_lost() -> None:
    state = resolving((3, 4), seats=3)
    troops(state, 1, lives=1, skeletons=0, zombies=0)
    after, events = GAME.apply(state, 0, damage(0, 3, 0))
    assert kinds(events) == ["damage", "eliminated", "die_lost", "turn_start"]
    assert after.dice == []


def test_last_one_standing_wins() -> None:
    state = resolving((3, 6))
    troops(state, 1, lives=2, skeletons=0, zombies=0)
    after, events = GAME.apply(state, 0, damage(0, 2, 1))
    assert kinds(events) == ["damage", "eliminated", "game_over"]
    assert events[-1].data == {"winners": [0], "ranking": [[0], [1]]}
    assert GAME.outcome(after) == {"winners": [0], "ranking": [[0], [1]]}
    assert GAME.to_act(after) == []
    with pytest.raises(IllegalAction, match="over"):
        GAME.apply(after, 0, {"type": "resolve", "die": 1, "effect": "heal", "at": "skeletons"})


def test_ranking_follows_elimination_order() -> None:
    state = resolving((3,), attacker=2, target=0, seats=3)
    state.eliminated = [1]
    troops(state, 1, lives=0)
    troops(state, 0, lives=1, skeletons=0, zombies=0)
    after, _ = GAME.apply(state, 2, damage(0, 3, 0))
    assert GAME.outcome(after) == {"winners": [2], "ranking": [[2], [0], [1]]}


def test_turns_pass_in_order_skipping_the_eliminated() -> None:
    state = resolving((1,), attacker=3, target=0, seats=4)
    state.order = [3, 1, 0, 2]
    troops(state, 1, lives=0)
    _, events = GAME.apply(state, 3, damage(0, 1, 0))
    assert events[-1] == Event("turn_start", {"seat": 0, "turn": 2})


# --- resigning -------------------------------------------------------------------------
# docs/rules/necromancers.md#resigning


def test_a_resigning_necromancer_falls_and_the_others_go_on() -> None:
    state = duel(3, current=0)
    after, events = GAME.resign(state, 2)
    assert kinds(events) == ["resigned", "eliminated"]
    assert events[1].data == {"seat": 2, "by": None}
    assert standing(after, 2)[0] == 0
    assert after.eliminated == [2]
    assert GAME.to_act(after) == [0]
    assert GAME.legal_actions(after, 0) == [{"type": "target", "seat": 1}]
    assert GAME.outcome(after) is None
    with pytest.raises(IllegalAction) as refused:
        GAME.resign(after, 2)
    assert refused.value.code == "seat_eliminated"
    with pytest.raises(IllegalAction) as refused:
        GAME.resign(after, 3)
    assert refused.value.code == "not_seated"


def test_resigning_on_his_turn_passes_the_turn() -> None:
    state = duel(3, current=1)
    after, events = GAME.resign(state, 1)
    assert kinds(events) == ["resigned", "eliminated", "turn_start"]
    assert after.current == 2
    assert GAME.to_act(after) == [2]


def test_a_target_who_resigns_loses_his_defence_choice_and_the_damage_dice() -> None:
    state, _ = act(duel(3, dice=(1, 3, 6)), 0, type="target", seat=1)
    assert GAME.to_act(state) == [1]
    troops(state, 0, skeletons=5)
    after, events = GAME.resign(state, 1)
    # Face 1 only damages: lost. Face 3 only damages: lost. The turn passes.
    assert kinds(events) == ["resigned", "eliminated", "die_lost", "die_lost", "turn_start"]
    assert after.current == 2


def test_resigners_rank_by_the_order_of_falling() -> None:
    state = duel(3)
    state, _ = GAME.resign(state, 1)
    state, events = GAME.resign(state, 0)
    assert kinds(events)[-1] == "game_over"
    assert GAME.outcome(state) == {"winners": [2], "ranking": [[2], [0], [1]]}
    with pytest.raises(IllegalAction, match="over"):
        GAME.resign(state, 2)


# --- views and bots --------------------------------------------------------------------
# docs/rules/necromancers.md#what-everyone-sees docs/rules/necromancers.md#the-bot


def test_view_shows_the_board_to_everyone_but_not_the_generator() -> None:
    state = GAME.setup(2**63 + 12345, 3, {}, [None] * 3)
    for seat in (None, 0, 1, 2):
        view = GAME.view(state, seat)
        assert "rng" not in view
        assert "seed" not in view
        assert view["necromancers"][0] == {
            "seat": 0,
            "id": "necromancer-0",
            "card": "necromancer",
            "alive": True,
            "lives": 6,
            "printed": {"lives": 6},
            "skeletons": {
                "id": "skeletons-0",
                "card": "skeletons",
                "count": 6,
                "printed": {"count": 6},
            },
            "zombies": {"id": "zombies-0", "card": "zombies", "count": 6, "printed": {"count": 6}},
        }
    assert GAME.replay_view(state)["rng"] == state.rng
    identity = {"game": "necromancers", "ruleset": GAME.ruleset, "seat": 1}
    assert GAME.view(state, 1) == {**GAME.observe(state), **identity}
    assert GAME.secrets(state, 1) == [state.seed, state.rng]


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_bot_games_are_played_to_the_end(seats: int) -> None:
    for seed in range(5):
        state = GAME.setup(seed, seats, {}, [None] * seats)
        for step in range(1000):
            if GAME.outcome(state) is not None:
                break
            (seat,) = GAME.to_act(state)
            state, _ = GAME.apply(state, seat, GAME.bot_move(state, seat, step))
        outcome = GAME.outcome(state)
        assert outcome is not None
        assert sorted(s for group in outcome["ranking"] for s in group) == list(range(seats))
        assert outcome["winners"] == outcome["ranking"][0]


def test_bot_targets_the_weakest_enemy_and_cancels_the_most_damaging_die() -> None:
    state = duel(3)
    troops(state, 2, lives=2)
    assert GAME.bot_move(state, 0, 7) == {"type": "target", "seat": 2}
    state = resolving((1, 3))
    state.phase = "defend"
    assert GAME.bot_move(state, 1, 7) == {"type": "cancel", "die": 1}
