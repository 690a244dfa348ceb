"""Duelo de Nigromantes as a client meets it: the refusals and their codes
(docs/rules/necromancers.md#refusals), the view (docs/rules/necromancers.md#what-everyone-sees),
the catalogue (docs/rules/necromancers.md#catalogue) and the step events
(docs/rules/necromancers.md#turn-order)."""

import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from service.games.kernel.protocol import Event, IllegalAction
from service.games.kernel.views import view_schema
from service.games.necromancers import NecromancersGame
from service.games.necromancers.content import load_ruleset
from service.games.necromancers.state import Die, State
from tests.games.test_necromancers import GAME, act, damage, duel, resolving, troops

DOC = Path(__file__).resolve().parents[2] / "docs" / "rules" / "necromancers.md"
KERNEL_CODES = {
    "match_over",
    "not_asked",
    "not_seated",
    "not_an_action",
    "type_not_offered",
    "bad_param",
    "not_offered",
}


def three_way() -> State:
    """Seat 0 to choose a target among seats 1 and 2; seat 2 is out."""
    state = duel(3)
    troops(state, 2, lives=0)
    state.eliminated = [2]
    return state


def defending() -> State:
    """Seat 1's defence die beat both of seat 0's dice (1 and 3): seat 1 chooses."""
    state, _ = act(duel(dice=(1, 3, 6)), 0, type="target", seat=1)
    return state


def half_resolved() -> State:
    """Die 0 (a 1) is resolved; die 1 (a 4) is pending; seat 0 has 5 skeletons."""
    state = resolving((1, 4))
    troops(state, 0, skeletons=5)
    state.dice[0].status = "resolved"
    return state


def fallen_target() -> State:
    """The target fell to die 0; die 1 (a 6) may only heal seat 0, who lost a life."""
    state = resolving((3, 6), seats=3)
    troops(state, 0, lives=5)
    troops(state, 1, lives=0, skeletons=0, zombies=0)
    state.eliminated = [1]
    state.dice[0].status = "resolved"
    return state


def full_strength(faces: tuple[int, ...]) -> Callable[[], State]:
    return lambda: resolving(faces)


def resolve(die: Any = 0, **fields: Any) -> dict[str, Any]:
    return {"type": "resolve", "die": die, **fields}


# (what is refused, the state, the seat, the action, the code)
CASES: list[tuple[str, Callable[[], State], int, dict[str, Any], str]] = [
    ("seat out of the match", three_way, 0, {"type": "target", "seat": 3}, "no_such_seat"),
    ("negative seat", three_way, 0, {"type": "target", "seat": -1}, "no_such_seat"),
    # "elige a cuál de los otros nigromantes quiere atacar"
    ("himself", three_way, 0, {"type": "target", "seat": 0}, "cannot_target_self"),
    ("a fallen necromancer", three_way, 0, {"type": "target", "seat": 2}, "seat_eliminated"),
    ("seat as text", three_way, 0, {"type": "target", "seat": "1"}, "bad_param"),
    ("no seat", three_way, 0, {"type": "target"}, "bad_param"),
    ("extra field", three_way, 0, {"type": "target", "seat": 1, "die": 0}, "bad_param"),
    ("cancel a die not rolled", defending, 1, {"type": "cancel", "die": 2}, "no_such_die"),
    ("cancel die true", defending, 1, {"type": "cancel", "die": True}, "bad_param"),
    ("resolve a die not rolled", half_resolved, 0, resolve(5, effect="damage"), "no_such_die"),
    (
        "resolve a resolved die",
        half_resolved,
        0,
        damage(0, 1, 0),
        "die_not_pending",
    ),
    # "Números obtenido en los dados … 4 … Elegir entre: -Se hace un punto de daño a un
    # esqueleto enemigo -Se revive un esqueleto propio": no heal on a 4.
    (
        "heal on a 4",
        half_resolved,
        0,
        resolve(1, effect="heal", at="skeletons"),
        "effect_not_on_face",
    ),
    ("unknown effect", half_resolved, 0, resolve(1, effect="curse"), "effect_not_on_face"),
    ("effect as a number", half_resolved, 0, resolve(1, effect=1), "bad_param"),
    ("damage with at", half_resolved, 0, resolve(1, effect="damage", at="skeletons"), "bad_param"),
    ("revive with a split", half_resolved, 0, damage(1, 1, 0) | {"effect": "revive"}, "bad_param"),
    # "El resultado de los dos dados de ataque NO se suma"
    ("a 3 split as 4", full_strength((3,)), 0, damage(0, 2, 2), "bad_split"),
    ("a negative split", full_strength((2,)), 0, damage(0, 3, -1), "bad_split"),
    # "Se hace un punto de daño a un esqueleto enemigo": a 4 may not hit a zombie.
    ("a 4 at a zombie", half_resolved, 0, damage(1, 0, 1), "cannot_aim_at"),
    (
        "revive the necromancer",
        half_resolved,
        0,
        resolve(1, effect="revive", at="necromancer"),
        "cannot_aim_at",
    ),
    # "el nigromante tiene un máximo de 6 vidas"
    (
        "heal at six lives",
        full_strength((6,)),
        0,
        resolve(effect="heal", at="necromancer"),
        "at_cap",
    ),
    ("revive at six", full_strength((5,)), 0, resolve(effect="revive", at="zombies"), "at_cap"),
    ("damage a fallen target", fallen_target, 0, damage(1, 1, 0), "target_has_fallen"),
]


@pytest.mark.parametrize(
    ("state_of", "seat", "action", "code"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_every_refusal_names_its_rule(
    state_of: Callable[[], State], seat: int, action: dict[str, Any], code: str
) -> None:
    state = state_of()
    before = GAME.dump_state(state)
    with pytest.raises(IllegalAction) as refused:
        GAME.apply(state, seat, action)
    assert refused.value.code == code, refused.value.reason
    assert GAME.dump_state(state) == before


def test_refusals_say_what_helps_to_fix_the_action() -> None:
    with pytest.raises(IllegalAction) as refused:
        GAME.apply(half_resolved(), 0, resolve(1, effect="heal", at="skeletons"))
    assert refused.value.details == {"face": 4, "offered": ["damage", "revive"]}
    with pytest.raises(IllegalAction) as refused:
        GAME.apply(half_resolved(), 0, damage(0, 1, 0))
    assert refused.value.details == {"die": 0, "status": "resolved"}
    with pytest.raises(IllegalAction) as refused:
        GAME.apply(full_strength((6,))(), 0, resolve(effect="heal", at="necromancer"))
    assert refused.value.details == {"at": "necromancer", "cap": 6}
    with pytest.raises(IllegalAction) as refused:
        GAME.apply(three_way(), 0, {"type": "target", "seat": "1"})
    assert refused.value.details == {"field": "seat"}


def _documented_codes() -> set[str]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("\n## Refusals\n", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([a-z_]+)` \|", section, re.MULTILINE))


def test_the_refusals_table_lists_exactly_the_codes_the_game_answers() -> None:
    seen = {case[-1] for case in CASES}
    assert _documented_codes() == seen - KERNEL_CODES
    assert not _documented_codes() & KERNEL_CODES


def _junk(rng: random.Random) -> Any:
    return rng.choice([-1, 0, 1, 2, 3, 7, True, None, 1.0, "1", "skeletons", "damage", [], {}])


def _mutated(rng: random.Random, action: dict[str, Any]) -> dict[str, Any]:
    mutated = dict(action)
    for _ in range(rng.randint(1, 3)):
        roll = rng.random()
        fields = [key for key in mutated if key != "type"]
        if roll < 0.6 and fields:
            mutated[rng.choice(fields)] = _junk(rng)
        elif roll < 0.8 and fields:
            del mutated[rng.choice(fields)]
        else:
            mutated[rng.choice(["seat", "die", "effect", "at", "skeletons", "zombies", "x"])] = (
                _junk(rng)
            )
    return mutated


def test_any_refused_action_of_an_offered_type_names_a_rule() -> None:
    """Mutated actions never crash the refusal and never fall back on `not_offered`."""
    rng = random.Random(5)
    for seed in range(12):
        seats = 2 + seed % 3
        state = GAME.setup(seed, seats, {}, [None] * seats)
        for step in range(300):
            if GAME.outcome(state) is not None:
                break
            (seat,) = GAME.to_act(state)
            legal = GAME.legal_actions(state, seat)
            for _ in range(4):
                action = _mutated(rng, rng.choice(legal))
                try:
                    GAME.apply(state, seat, action)
                except IllegalAction as refused:
                    assert refused.code != "not_offered", (action, refused.reason)
                else:
                    assert action in legal
            state, _ = GAME.apply(state, seat, GAME.bot_move(state, seat, step))


# --- the view ------------------------------------------------------------------------------


def test_nothing_is_shown_before_it_is_decided() -> None:
    view = GAME.view(duel(), 0)
    assert view["phase"] == "target"
    assert view["target"] is None
    assert view["dice"] == []
    assert view["defence"] is None
    after, _ = act(duel(dice=(3, 2, 1)), 0, type="target", seat=1)
    view = GAME.view(after, None)
    assert view["target"] == 1
    assert view["dice"] == [
        {"id": "attack-0", "card": "face-3", "face": 3, "status": "pending"},
        {"id": "attack-1", "card": "face-2", "face": 2, "status": "pending"},
    ]
    assert view["defence"] == {"id": "defence", "card": "defence-die", "face": 1}


def test_current_values_beside_the_printed_ones() -> None:
    state = resolving((3,))
    troops(state, 1, lives=5, skeletons=1, zombies=4)
    after, _ = GAME.apply(state, 0, damage(0, 3, 0))
    seen = GAME.view(after, 1)["necromancers"][1]
    assert (seen["lives"], seen["printed"]["lives"]) == (3, 6)
    assert seen["skeletons"] == {
        "id": "skeletons-1",
        "card": "skeletons",
        "count": 0,
        "printed": {"count": 6},
    }
    assert seen["zombies"]["count"] == 4


def test_every_view_fits_the_published_schema_and_names_catalogued_things() -> None:
    validator = jsonschema.Draft202012Validator(view_schema(GAME.id, GAME.view_schema()))
    listed = {entry["id"] for entry in GAME.catalogue()["entries"]}
    state = GAME.setup(3, 4, {}, [None] * 4)
    for step in range(400):
        for seat in (0, 1, 2, 3, None):
            view = GAME.view(state, seat)
            validator.validate(view)
            named = {d["card"] for d in view["dice"]} | {n["card"] for n in view["necromancers"]}
            named |= {
                n[troop]["card"] for n in view["necromancers"] for troop in ("skeletons", "zombies")
            }
            assert named <= listed
        if not GAME.to_act(state):
            break
        (seat,) = GAME.to_act(state)
        for action in GAME.legal_actions(state, seat):
            # What a prompt aims at is a catalogue id too.
            assert action.get("at", "necromancer") in listed
        state, _ = GAME.apply(state, seat, GAME.bot_move(state, seat, step))
    assert GAME.outcome(state) is not None


# --- the catalogue ---------------------------------------------------------------------------


def test_the_catalogue_lists_the_pieces_the_dice_and_every_face() -> None:
    body = GAME.catalogue()
    entries = {entry["id"]: entry for entry in body["entries"]}
    assert sorted(entries) == sorted(
        ["necromancer", "skeletons", "zombies", "order-die", "attack-die", "defence-die"]
        + [f"face-{face}" for face in range(1, 7)]
    )
    # "Cada nigromante tiene 6 vidas, y delante de él ha levantado 6 zombies y 6 esqueletos …
    # Los zombies y esqueletos tienen una Herida cada uno."
    assert entries["necromancer"]["numbers"] == {"lives": 6, "max_lives": 6}
    assert entries["zombies"]["numbers"] == {"count": 6, "max": 6, "wounds": 1}
    assert entries["attack-die"]["numbers"] == {
        "faces": 6,
        "with_both_troop_types": 2,
        "otherwise": 1,
    }
    assert entries["face-4"]["effects"] == [
        {
            "kind": "damage",
            "option": 1,
            "amount": 1,
            "target": "enemy_skeletons",
            "at": ["skeletons"],
        },
        {
            "kind": "revive",
            "option": 2,
            "amount": 1,
            "target": "own_skeletons",
            "at": ["skeletons"],
        },
    ]
    assert entries["face-6"]["text"] == (
        "Option 1: deal 1 damage, each point at an enemy skeleton or zombie. "
        "Option 2: heal 1 of your skeletons, zombies or necromancer, up to the cap."
    )
    assert body["rules"]["attack_dice"] == {"with_both_troop_types": 2, "otherwise": 1}
    assert body["rules"]["max_lives"] == 6


def test_the_catalogue_is_written_from_the_face_table() -> None:
    text = (
        Path(__file__).resolve().parents[2] / "service/games/necromancers/faces.toml"
    ).read_text()
    changed = text.replace('ruleset = "necromancers-2026.12"', 'ruleset = "necromancers-test"')
    changed = changed.replace(
        'options = [{ effect = "damage", points = 2, at = ["skeletons", "zombies"] }]',
        'options = [{ effect = "damage", points = 2, at = ["zombies"] }]',
    )
    game = NecromancersGame(load_ruleset(changed))
    face = next(e for e in game.catalogue()["entries"] if e["id"] == "face-2")
    assert face["effects"][0]["at"] == ["zombies"]
    assert face["text"] == "Option 1: deal 2 damage, each point at an enemy zombie."


def test_the_catalogue_cannot_be_changed_by_its_reader() -> None:
    GAME.catalogue()["entries"].clear()
    assert GAME.catalogue()["entries"]


# --- step events -----------------------------------------------------------------------------


def test_a_step_that_asks_someone_is_announced() -> None:
    # "Si con el dado supera el resultado de ambos dados de ataque, puede elegir cuál de los
    # dos anula": the defender is asked, then the attacker resolves.
    state, events = act(duel(dice=(1, 3, 6)), 0, type="target", seat=1)
    assert events[-1] == Event("phase", {"phase": "defend", "seat": 1})
    state, events = act(state, 1, type="cancel", die=0)
    assert events[-1] == Event("phase", {"phase": "resolve", "seat": 0})
    state, events = GAME.apply(state, 0, damage(1, 3, 0))
    assert [e.kind for e in events] == ["damage", "turn_start"]


def test_a_resigning_defender_hands_the_step_to_the_attacker() -> None:
    state = duel(3, dice=(1, 4, 6))
    troops(state, 0, skeletons=5)
    state, _ = act(state, 0, type="target", seat=1)
    after, events = GAME.resign(state, 1)
    # The 1 only damages and is lost; the 4 may still revive a skeleton.
    assert [e.kind for e in events] == ["resigned", "eliminated", "die_lost", "phase"]
    assert events[-1].data == {"phase": "resolve", "seat": 0}
    assert after.dice == [Die(1, "lost"), Die(4, "pending")]
