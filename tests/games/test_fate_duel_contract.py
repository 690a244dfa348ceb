"""Fate duels for a client: the catalogue, the view's shape, every refusal with its code
(docs/rules/fate-duel.md#refusals, checked against the doc's table both ways), the events of
steps that pass by themselves and of triggers that do not apply, and a finished match with no
duel left open."""

import contextlib
import re
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from service.games.fate_duel import FateDuelGame
from service.games.fate_duel.content import load_ruleset
from service.games.fate_duel.state import State, face
from service.games.kernel.protocol import IllegalAction, rebuild
from service.games.kernel.rng import SplitMix64
from tests.games.test_fate_duel import (
    COMISARIA,
    GAME,
    GREMIO,
    GUARDIA,
    PERRO,
    RESU,
    RULES,
    SARGENTO,
    act,
    comisaria_duel,
    event,
    guardia_duel,
    kinds,
    match,
    opposed,
    pulse,
    stack,
)

DOC = Path(__file__).resolve().parents[2] / "docs" / "rules" / "fate-duel.md"


def content_with(old: str, new: str) -> FateDuelGame:
    """The game under the shipped content with one edit."""
    text = resources.files("service.games.fate_duel").joinpath("content.toml").read_text("utf-8")
    assert old in text
    return FateDuelGame(load_ruleset(text.replace(old, new, 1)))


# --- the catalogue ----------------------------------------------------------------------


def test_the_catalogue_lists_every_card_crew_model_hazard_and_soulstone_use() -> None:
    entries = {e["id"]: e for e in GAME.catalogue()["entries"]}
    assert {f for f in RULES.faces} <= entries.keys()
    assert entries["9m"]["numbers"] == {"value": 9} and entries["9m"]["family"] == "m"
    assert entries["RJ"]["effects"] == [{"kind": "fate", "amount": 14, "suits": "every_suit"}]
    assert [e["kind"] for e in entries["BJ"]["effects"]] == ["fate", "must_use", "no_cheat"]
    guardia = entries["guardia-del-gremio"]
    assert guardia["numbers"] == {
        "wp": 5, "df": 4, "sh": 5, "ml": 4, "wounds": 6,
        "damage_weak": 1, "damage_moderate": 2, "damage_severe": 4,
    }  # fmt: skip
    assert guardia["family"] == GREMIO
    trigger = guardia["effects"][-1]
    assert trigger == {
        "kind": "trigger_heal", "name": "Cerrar filas", "attribute": "df", "suit": "r",
        "amount": 1, "target": "this_model", "timing": "tras_resolver",
    }  # fmt: skip
    assert "After resolving: trigger Cerrar filas" in guardia["text"]
    assert entries[GREMIO]["numbers"] == {"soulstones": 3, "models": 4}
    assert entries["derrumbe"]["numbers"] == {"tn": 12, "flip": -1, "wounds": 2}
    assert entries["suit_t"]["numbers"] == {"cost": 1, "most": 1}
    assert entries["plus_flip"]["numbers"] == {"cost": 1, "most": RULES.stones_per_duel}
    rules = GAME.catalogue()["rules"]
    assert (rules["deck"], rules["hand_size"], rules["stones_per_duel"]) == (54, 6, 2)


def test_the_catalogue_is_written_from_the_content() -> None:
    game = content_with("tn = 13", "tn = 14")
    entries = {e["id"]: e for e in game.catalogue()["entries"]}
    assert entries["terrorifico"]["numbers"]["tn"] == 14
    assert "TN 14" in entries["terrorifico"]["text"]


def test_two_models_of_one_name_are_refused_at_load() -> None:
    from service.games.fate_duel.content import ContentError

    with pytest.raises(ContentError, match="model names"):
        content_with('name = "Perro del Gremio"', 'name = "Guardia del Gremio"')


# --- the view ---------------------------------------------------------------------------


def test_models_show_their_values_now_and_printed_and_the_damage_taken() -> None:
    state, _ = opposed(["13r"], ["1r"])
    cadaver = GAME.view(state, 0)["crews"][1]["models"]["cards"][2]
    assert (cadaver["id"], cadaver["card"]) == ("s1.m2", "cadaver-andante")
    assert (cadaver["wounds"], cadaver["damage_taken"], cadaver["printed"]["wounds"]) == (4, 3, 7)
    assert cadaver["df"] == cadaver["printed"]["df"] == 3
    assert cadaver["alive"] and cadaver["rank"] == "esbirro"
    crew = GAME.view(state, 1)["crews"][1]
    assert (crew["crew"], crew["soulstones"], crew["printed"]) == (RESU, 4, {"soulstones": 4})


def test_the_duel_has_the_same_keys_at_every_step() -> None:
    state = comisaria_duel(["3t"], ["9c"])
    seen = [GAME.view(state, 0)["duel"]]
    for action in ({"type": "soulstones", "uses": []}, {"type": "keep"}):
        state, _ = GAME.apply(state, 0, action)
        seen.append(GAME.view(state, 0)["duel"])
    assert [d["step"] for d in seen] == [1, 3, 4]
    assert seen[0]["sides"][0]["active"] is None and seen[0]["sides"][0]["stones"] is None
    for duel in seen:
        assert duel.keys() == seen[0].keys()
        assert duel["sides"][0].keys() == seen[0]["sides"][0].keys()


def test_every_seat_is_an_integer_in_the_game_over_event() -> None:
    state = match(rounds=1)
    state.phase, state.queue = "attack", [0]
    stack(state, 0, ["1r"], [])
    stack(state, 1, ["13c"], [])
    _, events = act(state, 0, type="attack", model=PERRO, attack="ml", target_seat=1, target=2)
    assert event(events, "game_over")["wounds"] == [10 + 8 + 6 + 5, 10 + 8 + 7]


# --- refusals ---------------------------------------------------------------------------


def attack_phase() -> State:
    state = match()
    state.phase, state.queue = "attack", [0, 1]
    return state


def perro_tested() -> State:
    state = pulse(match(), "terrorifico")
    state.tested[0] = [PERRO]
    return state


def dead_guardia(state: State) -> State:
    state.crews[0].wounds[GUARDIA] = 0
    return state


def stones_left(count: int) -> State:
    state = comisaria_duel(["5c"], ["1c"])
    state.crews[0].soulstones = count
    return state


def minus_two() -> tuple[FateDuelGame, State]:
    """A ruleset whose Derrumbe is a -2 flip: three cards, the lowest taken."""
    game = content_with("flip = -1", "flip = -2")
    state = game.setup(2**40 + 3, 2, {}, [{"crew": GREMIO}, {"crew": RESU}])
    state.hazard, state.first, state.queue = "derrumbe", 0, [0, 1]
    stack(state, 0, ["3r", "3c", "9m"], ["1c"])
    state, _ = game.apply(state, 0, {"type": "duel", "model": GUARDIA})
    return game, state


def wp_disparo(top: str) -> tuple[FateDuelGame, State]:
    """A ruleset whose Disparo certero is a Wp trigger of Crows: the Comisaria in a Wp pulse,
    at step 4 with Temple offered."""
    game = content_with('attribute = "sh", suit = "c"', 'attribute = "wp", suit = "c"')
    state = game.setup(2**40 + 3, 2, {}, [{"crew": GREMIO}, {"crew": RESU}])
    state.hazard, state.first, state.queue = "terrorifico", 0, [0, 1]
    stack(state, 0, [top], [])
    state, _ = game.apply(state, 0, {"type": "duel", "model": COMISARIA})
    state, _ = game.apply(state, 0, {"type": "soulstones", "uses": []})
    return game, state


def shipped(make: Callable[[], State]) -> Callable[[], tuple[FateDuelGame, State]]:
    return lambda: (GAME, make())


def flipped_card(state: State, index: int = 0) -> str:
    assert state.duel is not None
    return state.duel.sides[0].flipped[index]


# (name, state, seat, action or a function of the state giving it, code)
REFUSALS: list[tuple[str, Callable[[], tuple[FateDuelGame, State]], Any, str]] = [
    ("order, no model 9", shipped(perro_tested), {"type": "duel", "model": 9}, "no_such_model"),
    ("order, a string", shipped(perro_tested), {"type": "duel", "model": "2"}, "no_such_model"),
    ("order, true", shipped(perro_tested), {"type": "duel", "model": True}, "no_such_model"),
    ("order, tested", shipped(perro_tested), {"type": "duel", "model": PERRO}, "already_tested"),
    (
        "order, dead",
        shipped(lambda: dead_guardia(perro_tested())),
        {"type": "duel", "model": GUARDIA},
        "model_dead",
    ),
    (
        "attack, no attacker",
        shipped(attack_phase),
        {"type": "attack", "model": 4, "attack": "ml", "target_seat": 1, "target": 0},
        "no_such_model",
    ),
    (
        "attack, dead attacker",
        shipped(lambda: dead_guardia(attack_phase())),
        {"type": "attack", "model": GUARDIA, "attack": "ml", "target_seat": 1, "target": 0},
        "model_dead",
    ),
    (
        "attack, a Wp attack",
        shipped(attack_phase),
        {"type": "attack", "model": 0, "attack": "wp", "target_seat": 1, "target": 0},
        "no_such_attack",
    ),
    (
        "attack, no seat 5",
        shipped(attack_phase),
        {"type": "attack", "model": 0, "attack": "ml", "target_seat": 5, "target": 0},
        "no_such_target",
    ),
    (
        "attack, no target 3 in a crew of 3",
        shipped(attack_phase),
        {"type": "attack", "model": 0, "attack": "ml", "target_seat": 1, "target": 3},
        "no_such_target",
    ),
    (
        "attack, a dead target",
        shipped(lambda: dead_guardia(attack_phase())),
        {"type": "attack", "model": 0, "attack": "sh", "target_seat": 0, "target": GUARDIA},
        "target_dead",
    ),
    (
        "attack, itself",
        shipped(attack_phase),
        {"type": "attack", "model": 1, "attack": "ml", "target_seat": 0, "target": 1},
        "self_target",
    ),
    (
        "soulstones, an unknown use",
        shipped(lambda: stones_left(3)),
        {"type": "soulstones", "uses": ["add_two"]},
        "no_such_use",
    ),
    (
        "soulstones, not a list",
        shipped(lambda: stones_left(3)),
        {"type": "soulstones", "uses": "add_one"},
        "no_such_use",
    ),
    (
        "soulstones, one suit twice",
        shipped(lambda: stones_left(3)),
        {"type": "soulstones", "uses": ["suit_c", "suit_c"]},
        "suit_named_twice",
    ),
    (
        "soulstones, over the cap",
        shipped(lambda: stones_left(3)),
        {"type": "soulstones", "uses": ["add_one", "add_one", "plus_flip"]},
        "soulstone_cap",
    ),
    (
        "soulstones, more than the crew has",
        shipped(lambda: stones_left(1)),
        {"type": "soulstones", "uses": ["add_one", "plus_flip"]},
        "not_enough_soulstones",
    ),
    (
        "choose, a card not flipped",
        shipped(lambda: guardia_duel(["2c", "11t"], ["1c"], hazard="conjuro")),
        lambda s: {"type": "choose", "card": s.hands[0][0]},
        "not_flipped",
    ),
    (
        "choose, not the lowest on a - flip",
        minus_two,
        lambda s: {"type": "choose", "card": flipped_card(s, 2)},
        "must_take_lowest",
    ),
    (
        "cheat, a card of the other hand",
        shipped(lambda: guardia_duel(["6r"], ["2c"])),
        lambda s: {"type": "cheat", "card": s.hands[1][0]},
        "not_in_hand",
    ),
    (
        "cheat, the flipped card",
        shipped(lambda: guardia_duel(["6r"], ["2c"])),
        lambda s: {"type": "cheat", "card": flipped_card(s)},
        "not_in_hand",
    ),
    (
        "cheat, a number",
        shipped(lambda: guardia_duel(["6r"], ["2c"])),
        {"type": "cheat", "card": 7},
        "not_in_hand",
    ),
    (
        "trigger, not the model's",
        lambda: wp_disparo("3t"),
        {"type": "trigger", "name": "Mordisco"},
        "no_such_trigger",
    ),
    (
        "trigger, of another attribute",
        shipped(lambda: temple_offered()),
        {"type": "trigger", "name": "Disparo certero"},
        "wrong_attribute",
    ),
    (
        "trigger, its suit missing",
        lambda: wp_disparo("3t"),
        {"type": "trigger", "name": "Disparo certero"},
        "suit_missing",
    ),
    (
        "trigger, wounds in a simple duel",
        lambda: wp_disparo("RJ"),
        {"type": "trigger", "name": "Disparo certero"},
        "no_opposing_model",
    ),
]


def temple_offered() -> State:
    state = comisaria_duel(["3t"], [])
    state, _ = act(state, 0, type="soulstones", uses=[])
    return state


def refused(make: Callable[[], tuple[FateDuelGame, State]], action: Any) -> IllegalAction:
    game, state = make()
    sent = action(state) if callable(action) else action
    before = game.dump_state(state)
    seat = game.to_act(state)[0]
    with pytest.raises(IllegalAction) as caught:
        game.apply(state, seat, sent)
    assert game.dump_state(state) == before
    return caught.value


@pytest.mark.parametrize(
    ("make", "action", "code"), [r[1:] for r in REFUSALS], ids=[r[0] for r in REFUSALS]
)
def test_each_refusal_names_the_rule_it_breaks(
    make: Callable[[], tuple[FateDuelGame, State]], action: Any, code: str
) -> None:
    error = refused(make, action)
    assert error.code == code, str(error)
    assert str(error)


def test_the_minus_two_case_picks_a_card_flipped_and_not_the_lowest() -> None:
    game, state = minus_two()
    assert state.duel is not None
    flipped = [face(c) for c in state.duel.sides[0].flipped]
    assert flipped == ["3r", "3c", "9m"]
    prompt = game.prompt(state, 0)
    assert prompt is not None and [face(a["card"]) for a in prompt.actions] == ["3r", "3c"]
    nine = state.duel.sides[0].flipped[2]
    with pytest.raises(IllegalAction) as caught:
        game.apply(state, 0, {"type": "choose", "card": nine})
    assert caught.value.code == "must_take_lowest"


def test_an_answer_with_extra_fields_is_not_offered() -> None:
    state = guardia_duel(["6r"], ["2c"])
    with pytest.raises(IllegalAction) as caught:
        GAME.apply(state, 0, {"type": "keep", "please": True})
    assert caught.value.code == "not_offered"


@pytest.mark.parametrize(
    "junk",
    [None, [], {}, 1.5, "x", -1, 2**70, [[1]], {"a": [None]}, True],
)
def test_a_refusal_never_raises_on_arbitrary_json(junk: Any) -> None:
    states = [
        perro_tested(),
        attack_phase(),
        stones_left(3),
        temple_offered(),
        guardia_duel(["6r"], ["2c"]),
        guardia_duel(["2c", "11t"], ["1c"], hazard="conjuro"),
    ]
    for state in states:
        seat = GAME.to_act(state)[0]
        prompt = GAME.prompt(state, seat)
        assert prompt is not None
        for offered in prompt.actions:
            for field in set(offered) - {"type"}:
                with contextlib.suppress(IllegalAction):
                    GAME.apply(state, seat, {**offered, field: junk})


def doc_codes() -> set[str]:
    section = DOC.read_text("utf-8").split("## Refusals", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([a-z_]+)` \|", section, re.MULTILINE))


def test_the_docs_refusal_table_lists_exactly_the_codes_the_tests_produce() -> None:
    produced = {code for *_, code in REFUSALS}
    assert doc_codes() == produced


# --- events of steps that pass, triggers that do not apply, the end -------------------------


def test_a_step_4_with_no_trigger_to_declare_passes_with_its_event() -> None:
    """Each step with nothing to decide passes by itself, with its event (ours)."""
    state = guardia_duel(["7r"], ["1c"])
    _, events = act(state, 0, type="keep")
    assert kinds(events)[:3] == ["kept", "no_trigger", "duel_result"]
    assert event(events, "no_trigger") == {"seat": 0, "model": GUARDIA, "reason": "none_eligible"}


def test_declining_a_trigger_says_so() -> None:
    state = temple_offered()
    _, events = act(state, 0, type="no_trigger")
    assert event(events, "no_trigger")["reason"] == "declined"


def test_a_step_1_that_passes_says_why() -> None:
    state = pulse(match(), "terrorifico")
    _, events = act(state, 0, type="duel", model=GUARDIA)
    assert event(events, "soulstones")["reason"] == "cannot_use"
    state = pulse(match(), "terrorifico")
    state.crews[0].soulstones = 0
    _, events = act(state, 0, type="duel", model=SARGENTO)
    assert event(events, "soulstones")["reason"] == "none_left"


def test_an_after_success_trigger_of_a_lost_duel_says_it_did_not_apply() -> None:
    """ "Tras tener éxito: Estos efectos se resuelven tras el Paso 5, y sólo si la miniatura gana
    el duelo." A declared trigger that does not apply leaves its event, with the reason."""
    state, _ = opposed(["1c"], ["13r"])
    _, events = act(state, 0, type="trigger", name="Mordisco")
    assert event(events, "duel_result")["won"] == [False, True]
    assert event(events, "trigger_not_applied") == {
        "seat": 0, "model": PERRO, "name": "Mordisco", "reason": "duel_lost",
    }  # fmt: skip
    assert "trigger_resolved" not in kinds(events)


def test_an_after_failure_trigger_of_a_won_duel_says_it_did_not_apply() -> None:
    """ "Tras fallar: Estos efectos se resuelven tras el Paso 5, y sólo si la miniatura pierde el
    duelo." """
    state, _ = opposed(["1r"], ["13t"])
    _, events = act(state, 1, type="trigger", name="Ya está muerto")
    assert event(events, "trigger_not_applied")["reason"] == "duel_won"


def test_a_trigger_whose_model_or_target_died_says_it_did_not_apply() -> None:
    # The Perro's attack kills the Cadáver: Mordisco has nobody left to bite.
    state = match()
    state.phase, state.queue = "attack", [0, 1]
    state.crews[1].wounds = [10, 8, 1]
    stack(state, 0, ["9c"], [])
    stack(state, 1, ["2r"], [])
    state, _ = act(state, 0, type="attack", model=PERRO, attack="ml", target_seat=1, target=2)
    _, events = act(state, 0, type="trigger", name="Mordisco")
    assert event(events, "trigger_not_applied")["reason"] == "target_dead"
    # The Cadáver loses its defence and dies: Ya está muerto heals nobody (ours).
    state = match()
    state.phase, state.queue = "attack", [0, 1]
    state.crews[1].wounds = [10, 8, 1]
    stack(state, 0, ["13r"], [])
    stack(state, 1, ["1t"], [])
    state, _ = act(state, 0, type="attack", model=PERRO, attack="ml", target_seat=1, target=2)
    _, events = act(state, 1, type="trigger", name="Ya está muerto")
    assert event(events, "trigger_not_applied")["reason"] == "model_dead"
    assert "healed" not in kinds(events)


def test_a_resignation_that_ends_the_match_closes_the_open_duel() -> None:
    """A finished match shows no half-resolved step: the duel of the crew still standing closes
    unresolved and its card in use goes to its discard pile (ours)."""
    state = pulse(match(), "terrorifico", first=1)
    stack(state, 1, ["5r"], ["1c"])
    state, _ = act(state, 1, type="duel", model=2)
    assert state.duel is not None and GAME.prompt(state, 1) is not None
    active = state.duel.sides[0].active
    state, events = GAME.resign(state, 0)
    assert GAME.outcome(state) == {"winners": [1], "ranking": [[1], [0]]}
    assert state.duel is None and GAME.view(state, 1)["duel"] is None
    assert active in state.discards[1]
    order = kinds(events)
    assert order.index("duel_abandoned") < order.index("game_over")
    assert event(events, "duel_abandoned") == {"seats": [1], "reason": "match_over"}


def test_a_resigning_crew_in_the_duel_abandons_it() -> None:
    state = guardia_duel(["6r"], ["2c"])
    state, events = GAME.resign(state, 0)
    assert event(events, "duel_abandoned") == {"seats": [0], "reason": "resigned"}
    assert state.duel is None


# --- replays ------------------------------------------------------------------------------


def test_a_match_that_attacked_only_enemies_still_rebuilds_from_its_log() -> None:
    """Before attacks could target any model, the prompt offered enemy targets only: such a
    log holds only actions still offered, and rebuilds to the same state."""
    seed = 2**40 + 11
    state = match(seed=seed)
    chooser = SplitMix64(5)
    log: list[tuple[int, dict[str, Any]]] = []
    while GAME.outcome(state) is None:
        seat = GAME.to_act(state)[0]
        prompt = GAME.prompt(state, seat)
        assert prompt is not None
        offered = [a for a in prompt.actions if a.get("target_seat", -1) != seat]
        action = chooser.pick(offered)
        log.append((seat, action))
        state, _ = GAME.apply(state, seat, action)
    crews = [{"crew": GREMIO}, {"crew": RESU}]
    rebuilt = rebuild(GAME, seed, 2, GAME.check_options(2, {}), crews, log)
    assert GAME.dump_state(rebuilt) == GAME.dump_state(state)
