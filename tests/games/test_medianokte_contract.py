"""Medianokte's side of the client contract: the catalogue, the loadout schema a JSON Schema
client can check a Nave with, the view's shape, an event for every end of a turn, and a named
reason for every refused action (docs/rules/medianokte.md#refusals)."""

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.games.kernel.protocol import Event, IllegalAction
from service.games.kernel.rng import SplitMix64
from service.games.medianokte.content import CONTENT, random_nave
from service.games.medianokte.state import State
from tests.games.test_medianokte import GAME, act, d10s, field, give, hero, loadout, slot, table

CATALOGUE = {entry["id"]: entry for entry in GAME.catalogue()["entries"]}
DOC = Path(__file__).parents[2] / "docs" / "rules" / "medianokte.md"


# --- the catalogue --------------------------------------------------------------------------


def test_the_catalogue_lists_every_character_card_and_the_magic_die() -> None:
    assert set(CATALOGUE) == {*CONTENT.cards, *CONTENT.characters, "magic_die"}
    assert CATALOGUE["magic_die"]["numbers"]["faces"] == [0, 0, 1, 1, 2, 3]
    assert GAME.catalogue()["rules"]["magic_die"] == [0, 0, 1, 1, 2, 3]


def test_a_character_entry_prints_its_sheet_and_the_rules_name_its_cards() -> None:
    nigromante = CATALOGUE["nigromante"]
    assert nigromante["numbers"] == {
        "life": 14, "armour": 5, "fuerza": 4, "destreza": 5, "voluntad": 7
    }  # fmt: skip
    sheets = {c["character"]: c for c in GAME.catalogue()["rules"]["characters"]}
    assert sheets["nigromante"] == {
        "character": "nigromante",
        "weapons": ["guadana_de_hueso", "lamento_de_ultratumba"],
        "assistance": "animar_a_los_kaidos",
        "final": "repartir_semillas",
    }


def test_card_effects_are_the_content_data() -> None:
    espadon = CATALOGUE["espadon"]  # Agota: ataque básico cuerpo a cuerpo de 3 dados.
    assert espadon["numbers"] == {"dice": 3}
    assert espadon["effects"] == [
        {"kind": "basic_attack", "range": "melee", "target": "melee_target", "dice": 3,
         "timing": "exhaust"}
    ]  # fmt: skip
    assert espadon["text"].startswith("Exhaust this card: melee basic attack")
    terremoto = CATALOGUE["terremoto"]
    assert terremoto["numbers"] == {"energy": 3}
    assert terremoto["effects"][0] == {
        "kind": "damage", "target": "enemy_character", "amount": 4, "cost": {"energy": 3}
    }  # fmt: skip
    spider = CATALOGUE["arana_de_cristal"]
    assert spider["numbers"] == {"life": 3, "armour": 4, "damage": 1}
    assert spider["effects"][1] == {
        "kind": "poison", "target": "hit", "amount": 1, "timing": "on_hit"
    }  # fmt: skip
    assert CATALOGUE["capa_de_sombras"]["numbers"] == {"armour_bonus": 1, "life_bonus": 1}


def test_the_catalogue_family_is_the_nave_third() -> None:
    families = {CATALOGUE[c]["family"] for c in CONTENT.nave_cards("object", legal=False)}
    assert families == {"object"}
    assert CATALOGUE["tregua"]["family"] == "event"
    assert CATALOGUE["lobo_de_niebla"]["family"] == "astrali"
    assert CATALOGUE["espadon"]["family"] == "character"


# --- the loadout schema ---------------------------------------------------------------------


def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(GAME.loadout_schema())


def test_the_loadout_schema_lists_only_legal_cards_each_with_its_family() -> None:
    """En el modo duelo todas los eventos neutrales están vetados al igual que el evento
    “Ritual de afinidad” y el objeto “Pergamino de konfusión”."""
    nave = GAME.loadout_schema()["properties"]["nave"]
    listed = set(nave["items"]["enum"])
    assert not listed & {"tregua", "marea_astral", "eclipse", "ritual_de_afinidad",
                         "pergamino_de_konfusion"}  # fmt: skip
    assert listed == {c for f in ("event", "astrali", "object") for c in CONTENT.nave_cards(f)}
    assert nave["x-family"] == {card: CATALOGUE[card]["family"] for card in listed}
    per_family = {part["title"]: set(part["contains"]["enum"]) for part in nave["allOf"]}
    assert per_family == {
        family: {c for c in listed if CATALOGUE[c]["family"] == family}
        for family in ("event", "astrali", "object")
    }


def test_a_json_schema_client_can_check_the_ten_ten_ten_rule() -> None:
    """La nave siempre esta compuesta por 10 cartas de evento (entre negativos y positivos),
    10 cartas de astrali y 10 cartas de objetos (entre permanentes, descartables y armas)."""
    nave = random_nave(4)
    assert _validator().is_valid({"character": "cazador", "nave": nave})
    spare = next(c for c in CONTENT.nave_cards("astrali") if c not in nave)
    lopsided = [spare if CATALOGUE[c]["family"] == "event" else c for c in nave[:1]] + nave[1:]
    assert CATALOGUE[nave[0]]["family"] == "event"
    assert not _validator().is_valid({"character": "cazador", "nave": lopsided})
    banned = ["tregua", *nave[1:]]
    assert not _validator().is_valid({"character": "cazador", "nave": banned})


# --- the view --------------------------------------------------------------------------------


def _choosing(seats: int = 2) -> State:
    state = GAME.setup(3, seats, {}, [loadout("guerrera", s) for s in range(seats)])
    for seat in range(seats):
        state, _ = GAME.apply(state, seat, {"type": "cut", "at": 1})
    return state


def test_nothing_is_shown_before_it_is_decided() -> None:
    state = GAME.setup(3, 2, {}, [loadout("guerrera", 0), loadout("cazador", 1)])
    seen = GAME.view(state, 0)
    assert (seen["chooser"], seen["first"], seen["turn"], seen["rolls"]) == (None, None, None, [])
    state = _choosing()
    seen = GAME.view(state, 0)
    assert seen["chooser"] == state.chooser and seen["first"] is None and seen["turn"] is None
    assert all(type(r["seat"]) is int for rolls in seen["rolls"] for r in rolls)
    asked = GAME.prompt(state, state.chooser)
    assert asked is not None and asked.data["rolls"] == seen["rolls"]


def test_the_character_shows_current_and_printed_values() -> None:
    state = table()
    give(state, 0, "cota_de_mallas")
    state, _ = act(state, {"type": "play", "card": state.players[0].hand[0]})
    sheet = GAME.view(state, None)["players"][0]["character"]
    assert sheet["card"] == "guerrera"
    assert (sheet["armour"], sheet["printed"]["armour"]) == (7, 6)
    assert sheet["stats"] == sheet["printed"]["stats"] == {
        "fuerza": 7, "destreza": 4, "voluntad": 5
    }  # fmt: skip


# --- events ----------------------------------------------------------------------------------


def _turn_ended(events: list[Event]) -> list[dict[str, Any]]:
    return [dict(e.data) for e in events if e.kind == "turn_ended"]


def test_every_way_a_turn_ends_says_turn_ended() -> None:
    """Una vez ha realizado esto el turno pasa al siguiente jugador."""
    state = table()
    state, events = act(state, {"type": "explore"})
    assert _turn_ended(events) == [{"seat": 0, "reason": "explored", "unused": 3}]
    for _ in range(3):
        state, events = act(state, {"type": "play", "card": give(state, 1, "kaido_menor")}, 1)
    assert _turn_ended(events) == [{"seat": 1, "reason": "activations", "unused": 0}]
    assert [e.kind for e in events][-2:] == ["turn_ended", "turn_start"]
    state, events = act(state, {"type": "play", "card": give(state, 0, "kaido_menor")})
    state, events = act(state, {"type": "end"})
    assert _turn_ended(events) == [{"seat": 0, "reason": "end", "unused": 2}]
    state = table("guerrera", "cazador", "hechicera")
    state, events = GAME.resign(state, 0)
    assert _turn_ended(events) == [{"seat": 0, "reason": "resigned", "unused": 3}]


def test_a_resigning_chooser_hands_the_first_turn_on_with_first_player() -> None:
    state = _choosing(3)
    chooser = state.chooser
    assert chooser is not None
    state, events = GAME.resign(state, chooser)
    following = (chooser + 1) % 3
    assert [e for e in events if e.kind == "first_player"] == [
        Event("first_player", {"chooser": None, "seat": following})
    ]
    assert GAME.to_act(state) == [following]


def _digit_keys(tree: Any) -> Iterator[str]:
    if isinstance(tree, dict):
        yield from (key for key in tree if re.fullmatch(r"\d+", str(key)))
        for value in tree.values():
            yield from _digit_keys(value)
    elif isinstance(tree, list):
        for item in tree:
            yield from _digit_keys(item)


@pytest.mark.parametrize("seats", [2, 3])
def test_no_event_or_view_keys_anything_by_seat_strings(seats: int) -> None:
    rng = SplitMix64(seats)
    loadouts = [GAME.sample_loadout(rng.next(), {}) for _ in range(seats)]
    state = GAME.setup(5, seats, {}, loadouts)
    everything: list[Any] = [e.as_dict() for e in GAME.setup_events(state)]
    for step in range(2000):
        if GAME.outcome(state) is not None:
            break
        seat = GAME.to_act(state)[0]
        state, events = GAME.apply(state, seat, GAME.bot_move(state, seat, step))
        everything += [e.as_dict() for e in events]
        everything.append(GAME.view(state, seat))
    assert GAME.outcome(state) is not None
    assert {e["kind"] for e in everything if "kind" in e} >= {"roll_off", "turn_ended", "game_over"}
    assert list(_digit_keys(everything)) == []


# --- refusals --------------------------------------------------------------------------------

Case = Callable[[], tuple[State, int, dict[str, Any]]]


def _not_in_hand() -> tuple[State, int, dict[str, Any]]:
    state = table()
    give(state, 0, "kaido_menor")  # so that playing is offered at all
    return state, 0, {"type": "play", "card": "s0.t0:lobo_de_niebla"}


def _not_in_play() -> tuple[State, int, dict[str, Any]]:
    state = table()
    return state, 0, {"type": "use", "card": give(state, 0, "pocion_de_vida")}


def _no_such_card() -> tuple[State, int, dict[str, Any]]:
    return table(), 0, {"type": "attack", "with": ["espadon"], "target": "s1:cazador"}


def _not_your_card() -> tuple[State, int, dict[str, Any]]:
    state = table()
    return state, 0, {"type": "attack", "with": slot(state, 1, 0).id, "target": hero(state, 1)}


def _cannot_attack() -> tuple[State, int, dict[str, Any]]:
    state = table()
    return state, 0, {"type": "attack", "with": slot(state, 0, 2).id, "target": hero(state, 1)}


def _cannot_use() -> tuple[State, int, dict[str, Any]]:
    state = table()
    return state, 0, {"type": "use", "card": slot(state, 0, 0).id}


def _source_tired() -> tuple[State, int, dict[str, Any]]:
    state = table()
    slot(state, 0, 0).position = "turned"
    return state, 0, {"type": "attack", "with": slot(state, 0, 0).id, "target": hero(state, 1)}


def _assistance_tired() -> tuple[State, int, dict[str, Any]]:
    state = table()
    slot(state, 0, 2).position = "exhausted"
    state.players[0].final.energy = 3  # so that using is offered at all
    return state, 0, {"type": "use", "card": slot(state, 0, 2).id, "target": hero(state, 0)}


def _final_action_not_charged() -> tuple[State, int, dict[str, Any]]:
    state = table()
    state.players[0].final.energy = 2
    return state, 0, {"type": "use", "card": state.players[0].final.id}


def _no_target_available() -> tuple[State, int, dict[str, Any]]:
    state = table()  # no enemy astrali for "Haz 3 daño a un astrali enemigo"
    give(state, 0, "kaido_menor")
    return state, 0, {"type": "play", "card": give(state, 0, "derrumbe"), "target": "s1:cazador"}


def _missing_target() -> tuple[State, int, dict[str, Any]]:
    state = table()
    return state, 0, {"type": "play", "card": give(state, 0, "rayo_fulminante")}


def _missing_picks() -> tuple[State, int, dict[str, Any]]:
    state = table()
    return state, 0, {"type": "play", "card": give(state, 0, "desarme"), "target": hero(state, 1)}


def _unexpected_target() -> tuple[State, int, dict[str, Any]]:
    state = table()
    return state, 0, {"type": "play", "card": give(state, 0, "kaido_menor"), "target": "x"}


def _unexpected_on_explore() -> tuple[State, int, dict[str, Any]]:
    return table(), 0, {"type": "explore", "draw": 3}


def _no_such_target() -> tuple[State, int, dict[str, Any]]:
    state = table()
    return state, 0, {"type": "play", "card": give(state, 0, "rayo_fulminante"), "target": 7}


def _defeated_target() -> tuple[State, int, dict[str, Any]]:
    state = table("guerrera", "cazador", "hechicera")
    state, _ = GAME.resign(state, 2)
    bolt = give(state, 0, "rayo_fulminante")
    return state, 0, {"type": "play", "card": bolt, "target": hero(state, 2)}


def _wrong_target() -> tuple[State, int, dict[str, Any]]:
    state = table()
    return state, 0, {"type": "play", "card": give(state, 0, "rayo_fulminante"),
                      "target": hero(state, 0)}  # fmt: skip


def _must_target_upright() -> tuple[State, int, dict[str, Any]]:
    state = table()
    field(state, 1, "golem_de_piedra")
    return state, 0, {"type": "attack", "with": slot(state, 0, 0).id, "target": hero(state, 1)}


def _bad_picks() -> tuple[State, int, dict[str, Any]]:
    state = table()
    ambush = give(state, 0, "emboscada")  # two actions
    picks = [slot(state, 1, 0).id]
    return state, 0, {"type": "play", "card": ambush, "target": hero(state, 1), "picks": picks}


def _no_such_seat() -> tuple[State, int, dict[str, Any]]:
    state = _choosing()
    assert state.chooser is not None
    return state, state.chooser, {"type": "first", "seat": 2}


def _seat_out() -> tuple[State, int, dict[str, Any]]:
    state = GAME.setup(3, 3, {}, [loadout("guerrera", s) for s in range(3)])
    state, _ = GAME.resign(state, 2)
    for seat in range(2):
        state, _ = GAME.apply(state, seat, {"type": "cut", "at": 1})
    assert state.chooser is not None
    return state, state.chooser, {"type": "first", "seat": 2}


REFUSALS: list[tuple[Case, str]] = [
    (_not_in_hand, "not_in_hand"),
    (_not_in_play, "not_in_play"),
    (_no_such_card, "no_such_card"),
    (_not_your_card, "not_your_card"),
    (_cannot_attack, "cannot_attack"),
    (_cannot_use, "cannot_use"),
    (_source_tired, "source_tired"),
    (_assistance_tired, "source_tired"),
    (_final_action_not_charged, "final_action_not_charged"),
    (_no_target_available, "no_target_available"),
    (_missing_target, "bad_param"),
    (_missing_picks, "bad_param"),
    (_unexpected_target, "bad_param"),
    (_unexpected_on_explore, "bad_param"),
    (_no_such_target, "no_such_target"),
    (_defeated_target, "no_such_target"),
    (_wrong_target, "wrong_target"),
    (_must_target_upright, "must_target_upright"),
    (_bad_picks, "bad_picks"),
    (_no_such_seat, "no_such_seat"),
    (_seat_out, "seat_out"),
]


@pytest.mark.parametrize(("case", "code"), REFUSALS, ids=lambda x: getattr(x, "__name__", x))
def test_every_refusal_names_its_rule(case: Case, code: str) -> None:
    state, seat, action = case()
    with pytest.raises(IllegalAction) as caught:
        GAME.apply(state, seat, action)
    assert caught.value.code == code
    message = caught.value.args[0]
    assert message[0].isupper() and message.endswith(".") and len(message) > 20


def test_melee_against_a_defended_player_is_must_target_upright() -> None:
    """Cuerpo a cuerpo (CAC): Las armas cuerpo a cuerpo pueden atacar al jugador enemigo solo
    si no hay astralis preparados (enderezados) defendiéndolo, en el caso contrario deben
    atacar a alguno de dichos astralis..."""
    state, seat, action = _must_target_upright()
    with pytest.raises(IllegalAction) as caught:
        GAME.apply(state, seat, action)
    assert caught.value.details == {"target": hero(state, 1)}


def _documented_codes() -> set[str]:
    section = DOC.read_text(encoding="utf-8").split("\n## Refusals\n", 1)[1].split("\n## ")[0]
    return set(re.findall(r"^\| `([a-z_]+)` \|", section, flags=re.MULTILINE))


def test_the_refusals_table_lists_exactly_the_codes_the_tests_see() -> None:
    # The kernel's codes are listed once, in docs/architecture.md#refusals.
    assert _documented_codes() == {code for _, code in REFUSALS} - {"bad_param"}


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=6,
)
FIELDS = st.sampled_from(["card", "with", "target", "picks", "seat", "x"])


@given(
    kind=st.sampled_from(["play", "attack", "use", "explore", "end"]),
    fields=st.dictionaries(FIELDS, JSON | st.sampled_from(["s1:cazador", "s0:espadon"])),
)
@settings(max_examples=300, deadline=None)
def test_any_json_answer_is_played_or_refused_with_a_code(
    kind: str, fields: dict[str, Any]
) -> None:
    state = table()
    field(state, 1, "lobo_de_niebla")
    give(state, 0, "emboscada")
    state.rng = d10s(1, 1, 1)
    try:
        GAME.apply(state, 0, {"type": kind, **fields})
    except IllegalAction as refused:
        assert re.fullmatch(r"[a-z_]+", refused.code)
