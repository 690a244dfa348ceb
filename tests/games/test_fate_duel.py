"""Fate duels (seed 003): one named test per rule sentence of the seed, with the sentence in its
docstring (docs/rules/fate-duel.md#a-duel-the-five-steps), then the crew game's rules
(docs/rules/fate-duel.md#the-crew-game-ours), views, the bot and the content.

Cards are put where a test needs them by rearranging a seat's own 54 cards in the state
(`stack`): the rules never see the difference from a shuffle that happened to fall that way.
"""

import copy
from typing import Any

import pytest

from service.games.fate_duel import FateDuelGame
from service.games.fate_duel.content import ContentError, load_ruleset
from service.games.fate_duel.state import State, face
from service.games.kernel.loadouts import LoadoutError
from service.games.kernel.protocol import Event, IllegalAction
from service.games.kernel.rng import SplitMix64
from tests.games.helpers import contains, random_answer

GAME = FateDuelGame()
RULES = GAME.rules
GREMIO, RESU = "gremio", "resurreccionistas"
COMISARIA, SARGENTO, GUARDIA, PERRO = 0, 1, 2, 3
# A public deal found offline by trying deals 1, 2, ... with seat 0 bringing the Gremio and
# seat 1 the Resurreccionistas, until seat 0 plays first, the first pulse is "Terrorífico 13",
# the top of seat 0's deck after the hand is the 4 of Crows and the 9 of Masks is in its hand.
# The worked-example tests check all of this themselves.
WORKED_EXAMPLE_DEAL = 511


def match(crews: tuple[str, ...] = (GREMIO, RESU), seed: int = 2**40 + 3, **options: Any) -> State:
    return GAME.setup(seed, len(crews), options, [{"crew": c} for c in crews])


def stack(state: State, seat: int, top: list[str], hand: list[str] | None = None) -> None:
    """Seat's deck starts with the faces `top`; its hand becomes `hand` (when given)."""
    own = state.decks[seat] + state.hands[seat]
    by_face = {face(c): c for c in own}
    hand_cards = state.hands[seat] if hand is None else [by_face[f] for f in hand]
    top_cards = [by_face[f] for f in top]
    assert not set(top_cards) & set(hand_cards)
    rest = [c for c in own if c not in top_cards and c not in hand_cards]
    state.decks[seat], state.hands[seat] = top_cards + rest, hand_cards


def pulse(state: State, hazard: str, first: int = 0) -> State:
    """The round's pulse is `hazard`, and `first` is to resolve its models first."""
    state.hazard, state.first = hazard, first
    seats = len(state.crews)
    state.queue = [(first + i) % seats for i in range(seats)]
    return state


def act(state: State, seat: int, /, **action: Any) -> tuple[State, list[Event]]:
    return GAME.apply(state, seat, dict(action))


def kinds(events: list[Event]) -> list[str]:
    return [e.kind for e in events]


def event(events: list[Event], kind: str) -> dict[str, Any]:
    return dict(next(e for e in events if e.kind == kind).data)


def asked(state: State, seat: int) -> str | None:
    prompt = GAME.prompt(state, seat)
    return None if prompt is None else prompt.kind


def faces(cards: list[Any]) -> list[str]:
    """The faces of instance ids, or of cards as views and events show them."""
    return [face(c) if isinstance(c, str) else c["card"] for c in cards]


def side(state: State, index: int = 0) -> Any:
    assert state.duel is not None
    return state.duel.sides[index]


def guardia_duel(top: list[str], hand: list[str], hazard: str = "terrorifico") -> State:
    """Seat 0's Guardia del Gremio (Wp 5, an esbirro) has flipped for `hazard`."""
    state = pulse(match(), hazard)
    stack(state, 0, top, hand)
    state, _ = act(state, 0, type="duel", model=GUARDIA)
    return state


def comisaria_duel(top: list[str], hand: list[str], hazard: str = "terrorifico") -> State:
    """Seat 0's Comisaria (a maestra, Wp 7) is asked about soulstones for `hazard`."""
    state = pulse(match(), hazard)
    stack(state, 0, top, hand)
    state, _ = act(state, 0, type="duel", model=COMISARIA)
    assert asked(state, 0) == "soulstones"
    return state


# --- the seed's rules, sentence by sentence --------------------------------------------


def test_a_simple_duel_flips_one_card_and_adds_the_attribute() -> None:
    """ "La miniatura volteará una carta y entonces añade el valor del atributo apropiado." """
    state = guardia_duel(["6r"], ["2c", "3c"])
    assert faces(side(state).flipped) == ["6r"]
    assert GAME.view(state, 0)["duel"]["sides"][0]["total"] == 5 + 6


def test_total_equal_to_the_tn_succeeds() -> None:
    """ "Si el total iguala o supera el TN la miniatura tiene éxito." (Wp 5 + 8 = TN 13)"""
    state = guardia_duel(["8r"], ["1c"])
    state, events = act(state, 0, type="keep")
    assert event(events, "duel_result")["won"] == [True]
    assert state.crews[0].wounds[GUARDIA] == RULES.crews[GREMIO].models[GUARDIA].wounds


def test_steps_run_in_the_seeds_order() -> None:
    """ "Secuencia del Duelo Simple: 1. Declarar el Uso de Piedras de Alma 2. Voltear una Carta
    del Destino y Añadir el Atributo 3. Elegir Burlar al Destino 4. Declarar un Disparador
    5. Determinar el Éxito" (Temple: Wp, Tomes, +2 at once)"""
    state = comisaria_duel(["3t"], ["9c"])
    state, events = act(state, 0, type="soulstones", uses=[])
    assert kinds(events)[:2] == ["soulstones", "flipped"] and asked(state, 0) == "cheat"
    state, events = act(state, 0, type="keep")
    assert kinds(events) == ["kept"] and asked(state, 0) == "trigger"
    state, events = act(state, 0, type="trigger", name="Temple")
    assert kinds(events)[:3] == ["trigger_declared", "trigger_resolved", "duel_result"]
    assert event(events, "duel_result")["totals"] == [7 + 3 + 2]


def test_soulstones_declared_before_flip() -> None:
    """ "debe declarar ahora cuántas Piedras de Alma va a gastar (si es que va a hacerlo) y cómo
    utilizará cada una de ellas antes de que ninguna carta sea volteada" """
    state = comisaria_duel(["5c", "12m"], ["1c"])
    assert side(state).flipped == [] and len(state.decks[0]) == 54 - 1
    prompt = GAME.prompt(state, 0)
    assert prompt is not None
    assert {"type": "soulstones", "uses": ["plus_flip", "add_one"]} in prompt.actions
    state, events = act(state, 0, type="soulstones", uses=["plus_flip", "add_one"])
    assert kinds(events)[:2] == ["soulstones", "flipped"]
    assert event(events, "soulstones") == {
        "seat": 0,
        "model": 0,
        "uses": ["plus_flip", "add_one"],
        "left": 1,
        "reason": "declared",
    }
    assert faces(side(state).flipped) == ["5c", "12m"]


def test_soulstone_uses_are_a_set_accepted_in_any_order() -> None:
    """How each stone is used is a declaration of uses, not a sequence: the uses in any order
    are the same answer and reach the same state."""
    state = comisaria_duel(["5c", "12m"], ["1c"])
    listed, listed_events = act(state, 0, type="soulstones", uses=["plus_flip", "add_one"])
    swapped, swapped_events = act(state, 0, type="soulstones", uses=["add_one", "plus_flip"])
    assert GAME.dump_state(swapped) == GAME.dump_state(listed)
    assert swapped_events == listed_events
    assert event(swapped_events, "soulstones")["uses"] == ["plus_flip", "add_one"]
    # Repeats count: three uses are not the two declared, whatever their order.
    with pytest.raises(IllegalAction):
        act(state, 0, type="soulstones", uses=["add_one", "add_one", "plus_flip"])


def test_only_masters_and_henchmen_may_use_soulstones() -> None:
    """ "El Guardia del Gremio no tiene la capacidad de Usar Piedras de Alma (dado que no es ni
    Maestro ni Compinche), de manera que no declara que vaya a usar ninguna." """
    state = pulse(match(), "terrorifico")
    state, events = act(state, 0, type="duel", model=GUARDIA)
    assert event(events, "soulstones")["uses"] == [] and asked(state, 0) != "soulstones"
    state, _ = act(pulse(match(), "terrorifico"), 0, type="duel", model=SARGENTO)
    assert asked(state, 0) == "soulstones"


def test_no_soulstones_left_means_no_declaration() -> None:
    """ "Si la miniatura es capaz de usar Piedras de Alma para potenciar sus duelos" (with none
    left in its crew it cannot)"""
    state = pulse(match(), "terrorifico")
    state.crews[0].soulstones = 0
    state, events = act(state, 0, type="duel", model=COMISARIA)
    assert event(events, "soulstones")["uses"] == [] and asked(state, 0) != "soulstones"


def test_the_controller_orders_its_models_duels() -> None:
    """ "su controlador resuelve los Duelos Simples en el orden que él decida" """
    state = pulse(match(), "terrorifico")
    prompt = GAME.prompt(state, 0)
    assert prompt is not None and prompt.kind == "order"
    assert [a["model"] for a in prompt.actions] == [0, 1, 2, 3]
    state, events = act(state, 0, type="duel", model=PERRO)
    assert event(events, "duel_started")["sides"][0]["model"] == PERRO


def test_each_duel_completes_before_the_next_begins() -> None:
    """ "completando un Duelo antes de iniciar otro." """
    state = guardia_duel(["6r"], ["2c"])
    assert asked(state, 0) == "cheat" and asked(state, 1) is None
    with pytest.raises(IllegalAction):
        act(state, 0, type="duel", model=PERRO)
    state, events = act(state, 0, type="keep")
    assert kinds(events)[-1] != "duel_started" and asked(state, 0) == "order"
    assert [a["model"] for a in GAME.prompt(state, 0).actions] == [0, 1, 3]


def test_first_player_resolves_first() -> None:
    """ "Si miniaturas de más de un jugador son afectadas, el Primer Jugador del Turno debe
    resolver sus efectos primero." """
    for first in (0, 1):
        state = pulse(match(), "terrorifico", first=first)
        assert GAME.to_act(state) == [first]
        while state.queue[:1] == [first]:
            seat = GAME.to_act(state)[0]
            assert seat == first
            state, _ = GAME.apply(state, seat, GAME.timeout_action(state, seat))
        everyone = list(range(len(state.crews[first].wounds)))
        assert state.tested[first] == everyone and state.tested[1 - first] == []


def test_the_controller_flips_from_its_own_deck_for_each_model() -> None:
    """ "El jugador que controla una Acción voltea para cada miniatura." """
    state = guardia_duel(["6r"], ["2c"])
    assert side(state).flipped[0].startswith("s0.") and len(state.decks[1]) == 54 - 6


def test_plus_flip_lets_the_controller_pick_any_card() -> None:
    """ "voltea una carta (más cualquier carta adicional debido a Modificadores del Destino), y
    entonces elige su carta activa" (a + flip: any of them)"""
    state = guardia_duel(["2c", "11t"], ["1c"], hazard="conjuro")
    prompt = GAME.prompt(state, 0)
    assert prompt is not None and prompt.kind == "choose"
    assert faces([a["card"] for a in prompt.actions]) == ["2c", "11t"]
    low = prompt.actions[0]["card"]
    state, events = GAME.apply(state, 0, prompt.actions[0])
    active = event(events, "active_card")
    assert active["card"] == {"id": low, "card": "2c"} and active["total"] == 7


def test_other_flipped_cards_are_discarded() -> None:
    """ "y entonces elige su carta activa y descarta cualquier otra posible carta." """
    state = guardia_duel(["2c", "11t"], ["1c"], hazard="conjuro")
    state, _ = act(state, 0, type="choose", card=side(state).flipped[1])
    assert faces(state.discards[0]) == ["2c"] and face(side(state).active) == "11t"


def test_negative_flip_forces_the_lowest() -> None:
    """Modificadores del Destino: a - flip takes the lowest card
    (docs/rules/fate-duel.md#fate-modifiers-and-the-jokers)."""
    state = pulse(match(), "derrumbe")
    stack(state, 0, ["12m", "3r"], ["1c"])
    state, events = act(state, 0, type="duel", model=GUARDIA)
    assert faces(event(events, "flipped")["cards"]) == ["12m", "3r"]
    assert face(side(state).active) == "3r" and faces(state.discards[0]) == ["12m"]


def test_black_joker_flipped_must_be_used() -> None:
    """A flipped Black Joker must be used, even on a + flip
    (docs/rules/fate-duel.md#fate-modifiers-and-the-jokers)."""
    state = pulse(match(), "conjuro")
    stack(state, 0, ["13m", "BJ"], ["1c"])
    state, events = act(state, 0, type="duel", model=GUARDIA)
    active = event(events, "active_card")
    assert (active["card"]["card"], active["total"], active["suits"]) == ("BJ", 5, [])
    assert faces(event(events, "discarded")["cards"]) == ["13m"]


def test_total_takes_the_active_cards_value_and_suit() -> None:
    """ "Añade el valor de la carta activa al del atributo apropiado (tanto el valor como su
    palo). Este el total actual del duelo" """
    state = guardia_duel(["4c"], ["1r"])
    seen = GAME.view(state, 0)["duel"]["sides"][0]
    assert (seen["total"], seen["suits"]) == (9, ["c"])


def test_red_joker_is_14_of_any_suit_and_black_joker_0_of_none() -> None:
    """The Red Joker is worth 14 and has every suit, the Black Joker 0 and none
    (docs/rules/fate-duel.md#fate-modifiers-and-the-jokers)."""
    assert RULES.value("RJ") == 14 and RULES.suits_of("RJ") == {"c", "m", "r", "t"}
    assert RULES.value("BJ") == 0 and RULES.suits_of("BJ") == frozenset()
    state = guardia_duel(["RJ"], ["1r"], hazard="explosivos")
    state, events = act(state, 0, type="keep")
    assert event(events, "duel_result")["won"] == [True]


def test_not_cheating_goes_straight_on_to_step_4() -> None:
    """ "Si la miniatura no quiere Burlar al Destino ignora el paso 3 y continúa directamente con
    el paso 4." """
    state = comisaria_duel(["3t"], ["13c"])
    state, _ = act(state, 0, type="soulstones", uses=[])
    state, events = act(state, 0, type="keep")
    assert kinds(events) == ["kept"] and asked(state, 0) == "trigger"
    assert faces(state.hands[0]) == ["13c"]


def test_cheated_card_replaces_the_total() -> None:
    """ "Cuando Burla al Destino, consecuentemente la miniatura genera un nuevo total del duelo,
    reemplazando el total del duelo antiguo con uno derivado de la carta burlada" """
    state = guardia_duel(["12t"], ["2m"])
    state, events = act(state, 0, type="cheat", card=state.hands[0][0])
    cheated = event(events, "cheated")
    assert (cheated["total"], cheated["suits"]) == (7, ["m"])
    assert faces(state.discards[0]) == ["12t", "2m"] and state.hands[0] == []
    assert event(events, "duel_result")["won"] == [False]


def test_no_cheating_on_negative_flip() -> None:
    """No cheating fate on a - flip (docs/rules/fate-duel.md#fate-modifiers-and-the-jokers)."""
    state = pulse(match(), "derrumbe")
    stack(state, 0, ["2c", "3r"], ["13m"])
    state, events = act(state, 0, type="duel", model=GUARDIA)
    assert event(events, "no_cheat")["reason"] == "negative_flip"
    assert asked(state, 0) != "cheat"


def test_a_plus_flip_stone_cancels_a_negative_flip_and_allows_cheating() -> None:
    """Modificadores del Destino: a + and a - flip cancel; without a - flip, cheating is open."""
    state = comisaria_duel(["2c"], ["13m"], hazard="derrumbe")
    state, events = act(state, 0, type="soulstones", uses=["plus_flip"])
    assert event(events, "flipped")["flip"] == 0 and asked(state, 0) == "cheat"


def test_no_cheating_when_black_joker_active() -> None:
    """No cheating fate when the Black Joker is the active card
    (docs/rules/fate-duel.md#fate-modifiers-and-the-jokers)."""
    state = pulse(match(), "terrorifico")
    stack(state, 0, ["BJ"], ["13m"])
    state, events = act(state, 0, type="duel", model=GUARDIA)
    assert event(events, "no_cheat")["reason"] == "black_joker"
    assert event(events, "duel_result")["won"] == [False]
    assert faces(state.hands[0]) == ["13m"]


def test_trigger_offered_only_when_the_total_has_its_suit() -> None:
    """ "Si el total del duelo de la miniatura cumple con los requisitos del Disparador, ésta
    puede declarar que va a utilizar dicho Disparador." (Temple needs Tomes)"""
    state = comisaria_duel(["3c"], ["2t"])
    state, _ = act(state, 0, type="soulstones", uses=[])
    state, _ = act(state, 0, type="keep")
    assert asked(state, 0) is None or asked(state, 0) != "trigger"
    state = comisaria_duel(["3c"], ["2t"])
    state, _ = act(state, 0, type="soulstones", uses=[])
    state, _ = act(state, 0, type="cheat", card=state.hands[0][0])
    assert GAME.prompt(state, 0).actions[1] == {"type": "trigger", "name": "Temple"}


def test_a_named_suit_soulstone_meets_a_trigger() -> None:
    """Soulstone uses are named: a stone that adds Tomes lets Temple be declared."""
    state = comisaria_duel(["3c"], ["1c"])
    state, _ = act(state, 0, type="soulstones", uses=["suit_t"])
    state, _ = act(state, 0, type="keep")
    assert asked(state, 0) == "trigger"


def test_immediate_trigger_resolves_at_once() -> None:
    """ "El efecto de un Disparador se resuelve inmediatamente a menos que se indique en su
    descripción que puede ser resuelto más tarde." (Temple +2: 7 + 4 + 2 = 13 makes TN 13)"""
    state = comisaria_duel(["4t"], ["1c"])
    state, _ = act(state, 0, type="soulstones", uses=[])
    state, _ = act(state, 0, type="keep")
    state, events = act(state, 0, type="trigger", name="Temple")
    assert kinds(events).index("trigger_resolved") < kinds(events).index("duel_result")
    assert event(events, "duel_result")["won"] == [True]


def opposed(
    attacker_top: list[str], defender_top: list[str], attack: str = "ml"
) -> tuple[State, list[Event]]:
    """Seat 0's Perro (Ml 5) attacks seat 1's Cadáver Andante (Df 3); neither may cheat."""
    state = match()
    state.phase, state.queue = "attack", [0, 1]
    stack(state, 0, attacker_top, [])
    stack(state, 1, defender_top, [])
    return act(state, 0, type="attack", model=PERRO, attack=attack, target_seat=1, target=2)


def test_after_success_trigger_resolves_only_on_success() -> None:
    """ "Tras tener éxito: Estos efectos se resuelven tras el Paso 5, y sólo si la miniatura gana
    el duelo." (Mordisco: Ml, Crows, 1 more damage)"""
    state, events = opposed(["9c"], ["2r"])
    state, events = act(state, 0, type="trigger", name="Mordisco")
    order = kinds(events)
    assert order.index("duel_result") < order.index("trigger_resolved")
    # 14 against 5: a margin of 9, moderate damage 2, then Mordisco's 1.
    assert [e.data["amount"] for e in events if e.kind == "wounded"] == [2, 1]


def test_after_failure_trigger_resolves_only_on_failure() -> None:
    """ "Tras fallar: Estos efectos se resuelven tras el Paso 5, y sólo si la miniatura pierde el
    duelo." (Ya está muerto: Df, Tomes, heals 1 on a failed defence)"""
    state, _ = opposed(["13r"], ["1t"])
    state.crews[1].wounds[2] = 6
    state, events = act(state, 1, type="trigger", name="Ya está muerto")
    assert event(events, "duel_result")["won"] == [True, False]
    assert kinds(events)[-2:] == ["trigger_resolved", "healed"] or "healed" in kinds(events)
    state, _ = opposed(["1r"], ["13t"])
    state, events = act(state, 1, type="trigger", name="Ya está muerto")
    assert event(events, "duel_result")["won"] == [False, True]
    assert "trigger_resolved" not in kinds(events)


def test_after_resolving_trigger_resolves_either_way() -> None:
    """ "Tras resolver: Estos efectos ocurren tras el Paso 5, independientemente del éxito o
    fallo." (Runa de cura: the Aprendiz's Wp trigger, Tomes, heals 1)"""
    for card, won in (("13t", True), ("1t", False)):
        state = pulse(match((RESU, "arcanistas")), "terrorifico", first=1)
        stack(state, 1, [card], ["2c"])
        state.crews[1].wounds[2] = 2
        state, _ = act(state, 1, type="duel", model=2)
        state, _ = act(state, 1, type="keep")
        state, events = act(state, 1, type="trigger", name="Runa de cura")
        assert event(events, "duel_result")["won"] == [won]
        assert "healed" in kinds(events)


def test_required_suit_counts_in_success() -> None:
    """ "Si el total del duelo de la miniatura iguala o supera el TN (y esto incluye cualquier
    palo requerido), la miniatura ha vencido el duelo" (Preparar explosivos: Sh 11 of Tomes)"""
    state = guardia_duel(["13c"], ["1c"], hazard="explosivos")
    state, events = act(state, 0, type="keep")
    assert event(events, "duel_result")["won"] == [False]
    state = guardia_duel(["6t"], ["1c"], hazard="explosivos")
    state, events = act(state, 0, type="keep")
    assert event(events, "duel_result")["won"] == [True]


def test_total_below_the_tn_loses_and_resolves_the_defeat() -> None:
    """ "Si el total del duelo de la miniatura es menor que el TN, la miniatura ha perdido el
    duelo y resuelve los efectos de la derrota." (Terrorífico costs 1 Wound)"""
    state = guardia_duel(["7r"], ["1c"])
    state, events = act(state, 0, type="keep")
    assert event(events, "duel_result")["won"] == [False]
    assert event(events, "wounded") == {
        "seat": 0,
        "model": 2,
        "amount": 1,
        "left": 5,
        "cause": "hazard",
    }


def test_cards_in_use_are_discarded_then_results_resolved() -> None:
    """ "Una vez que el éxito o fallo es determinado, las cartas en uso son descartadas, y
    entonces los resultados del éxito o derrota son resueltos." """
    state = guardia_duel(["7r"], ["1c"])
    state, events = act(state, 0, type="keep")
    order = kinds(events)
    assert order.index("duel_result") < order.index("discarded") < order.index("wounded")
    assert faces(state.discards[0]) == ["7r"] and state.duel is None


def test_attacks_are_ml_or_sh_duels_against_df() -> None:
    """ "cuando un Ataque enfrenta al Sh del Atacante contra la Df de un objetivo, el Atacante
    está realizando un Duelo de Sh, y el Defensor está realizando un Duelo de Df." """
    _state, events = opposed(["5r"], ["5r"], attack="sh")
    started = event(events, "duel_started")["sides"]
    assert [(s["attribute"], s["value"]) for s in started] == [("sh", 2), ("df", 3)]


def test_an_attack_may_target_any_model() -> None:
    """ "Si una regla no especifica si sólo afecta a miniaturas amigas o enemigas (por ejemplo
    para saber quién puede ser objetivo legal de un Ataque), entonces puede afectar a cualquier
    miniatura." A model of the attacker's own crew is a legal target; the attacker itself is
    not (ours: an opposed duel takes two models)."""
    state = match()
    state.phase, state.queue = "attack", [0, 1]
    prompt = GAME.prompt(state, 0)
    assert prompt is not None and {a["target_seat"] for a in prompt.actions} == {0, 1}
    # Four attackers, two attacks, the 3 enemy models and the 3 other models of its crew.
    assert len(prompt.actions) == 4 * 2 * (3 + 3)
    assert all((a["target_seat"], a["target"]) != (0, a["model"]) for a in prompt.actions)
    stack(state, 0, ["13r", "1c"], [])
    state, events = act(
        state, 0, type="attack", model=PERRO, attack="ml", target_seat=0, target=GUARDIA
    )
    started = event(events, "duel_started")["sides"]
    assert [(s["seat"], s["model"]) for s in started] == [(0, PERRO), (0, GUARDIA)]
    # Both sides flip from the controller's deck: the 13 for the Perro, the 1 for the Guardia.
    assert event(events, "duel_result")["won"] == [True, False]
    assert event(events, "wounded") == {
        "seat": 0, "model": GUARDIA, "amount": 3, "left": 3, "cause": "attack",
    }  # fmt: skip


def test_worked_example_guardia_del_gremio() -> None:
    """ "El Guardia del Gremio voltea una carta, el 4c. Añade su Wp 5 para un total actual del
    duelo de 9c. [...] elige Burlar al Destino, descartando el 4c, reemplazándolo por un 9m de
    su Mano. El total del duelo es ahora 5+9m=14m. [...] no tienen ningún Disparador de Wp.
    [...] El total del duelo del Guardia de 14m iguala o supera el TN 13 de Terrorífico, de
    manera que vence el duelo." """
    state = match(deal=WORKED_EXAMPLE_DEAL)
    assert (state.first, state.hazard) == (0, "terrorifico")
    hazard = RULES.hazards["terrorifico"]
    assert (hazard.attribute, hazard.tn, hazard.suit, hazard.flip) == ("wp", 13, None, 0)
    state, events = act(state, 0, type="duel", model=GUARDIA)
    assert event(events, "soulstones")["uses"] == []
    active = event(events, "active_card")
    assert (active["card"]["card"], active["total"], active["suits"]) == ("4c", 9, ["c"])
    nine = next(c for c in state.hands[0] if face(c) == "9m")
    state, events = act(state, 0, type="cheat", card=nine)
    cheated = event(events, "cheated")
    assert (cheated["replaced"]["card"], cheated["total"], cheated["suits"]) == ("4c", 14, ["m"])
    assert "trigger_declared" not in kinds(events)
    assert event(events, "duel_result")["won"] == [True] and "wounded" not in kinds(events)


# --- opposed duels and the crew game (ours) ---------------------------------------------


def test_opposed_duels_play_each_step_for_the_attacker_then_the_defender() -> None:
    state = match()
    state.phase, state.queue = "attack", [0, 1]
    stack(state, 0, ["5r"], ["1c"])
    stack(state, 1, ["6r"], ["2c"])
    state, events = act(
        state, 0, type="attack", model=SARGENTO, attack="ml", target_seat=1, target=0
    )
    assert asked(state, 0) == "soulstones"
    state, events = act(state, 0, type="soulstones", uses=[])
    assert "flipped" not in kinds(events) and asked(state, 1) == "soulstones"
    state, events = act(state, 1, type="soulstones", uses=[])
    flips = [e.data["seat"] for e in events if e.kind == "flipped"]
    assert flips == [0, 1] and asked(state, 0) == "cheat"
    # The attacker sees the defender's flipped card, never its hand.
    seen = GAME.view(state, 0)
    assert seen["duel"]["sides"][1]["active"]["card"] == "6r"
    assert seen["hands"][1] == {"count": 1, "cards": None}
    state, _ = act(state, 0, type="keep")
    assert asked(state, 1) == "cheat"


def test_an_opposed_tie_goes_to_the_defender() -> None:
    # Perro Ml 5 + 3 against Cadáver Df 3 + 5.
    _state, events = opposed(["3r"], ["5r"])
    assert event(events, "duel_result")["won"] == [False, True]
    assert "wounded" not in kinds(events)


@pytest.mark.parametrize(("card", "damage"), [("3r", 1), ("8r", 2), ("13r", 3)])
def test_damage_grows_with_the_margin(card: str, damage: int) -> None:
    # Perro's damage 1/2/3; Ml 5 + card against Df 3 + 1: margins 4, 9 and 14.
    _state, events = opposed([card], ["1r"])
    assert event(events, "wounded")["amount"] == damage


def test_the_discard_pile_is_reshuffled_when_the_deck_runs_out() -> None:
    state = guardia_duel(["7r"], ["1c"])
    state, _ = act(state, 0, type="keep")
    state.discards[0] += state.decks[0]
    state.decks[0] = []
    state, events = act(state, 0, type="duel", model=PERRO)
    assert kinds(events).index("reshuffled") < kinds(events).index("flipped")
    assert event(events, "reshuffled") == {"seat": 0, "cards": 54 - 1}
    assert side(state).flipped[0].startswith("s0.1:")


def test_the_deck_has_54_cards_and_the_hand_6() -> None:
    state = match()
    for seat in (0, 1):
        every = state.decks[seat] + state.hands[seat]
        assert sorted(faces(every)) == sorted(RULES.faces) and len(state.hands[seat]) == 6


def test_hands_are_drawn_back_to_six_and_the_first_player_rotates() -> None:
    state = match(rounds=3)
    first = state.first
    for _ in range(400):
        if state.round == 2:
            break
        seat = GAME.to_act(state)[0]
        state, _ = GAME.apply(state, seat, GAME.timeout_action(state, seat))
    assert state.first == 1 - first and [len(h) for h in state.hands] == [6, 6]


def test_a_crew_with_no_model_left_is_out_and_the_last_standing_wins() -> None:
    state, _ = opposed(["13r"], ["1r"])
    assert state.crews[1].wounds[2] == 7 - 3
    state = match()
    state.crews[1].wounds = [0, 0, 1]
    state.phase, state.queue = "attack", [0, 1]
    stack(state, 0, ["13r"], [])
    stack(state, 1, ["1r"], [])
    state, events = act(state, 0, type="attack", model=PERRO, attack="ml", target_seat=1, target=2)
    assert kinds(events)[-2:] == ["eliminated", "game_over"]
    assert GAME.outcome(state) == {"winners": [0], "ranking": [[0], [1]]}


def test_after_the_last_round_most_wounds_left_wins_and_ties_share() -> None:
    state = match(rounds=1)
    state.phase, state.queue = "attack", []
    state.crews[0].wounds = [1, 1, 1, 1]
    state.crews[1].wounds = [2, 1, 1]
    state.queue = [0]
    stack(state, 0, ["1r"], [])
    stack(state, 1, ["13r"], [])
    state, events = act(state, 0, type="attack", model=PERRO, attack="ml", target_seat=1, target=2)
    assert event(events, "duel_result")["won"] == [False, True]
    assert GAME.outcome(state) == {"winners": [0, 1], "ranking": [[0, 1]]}


def test_resigning_takes_the_crew_off_and_the_others_play_on() -> None:
    state = match((GREMIO, RESU, "arcanistas"))
    seat = GAME.to_act(state)[0]
    state, events = GAME.resign(state, seat)
    assert kinds(events)[:2] == ["resigned", "eliminated"] and GAME.outcome(state) is None
    assert seat not in GAME.to_act(state) and GAME.to_act(state)
    other = GAME.to_act(state)[0]
    state, _ = GAME.resign(state, other)
    assert GAME.outcome(state) is not None
    assert GAME.outcome(state)["ranking"][1:] == [[other], [seat]]


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_random_legal_play_reaches_the_end(seats: int) -> None:
    crews = ("gremio", "resurreccionistas", "arcanistas", "vecinos")[:seats]
    for seed in range(6):
        state = match(crews, seed=2**40 + seed)
        chooser = SplitMix64(seed)
        for _ in range(2000):
            if GAME.outcome(state) is not None:
                break
            seat = chooser.pick(GAME.to_act(state))
            prompt = GAME.prompt(state, seat)
            assert prompt is not None
            state, _ = GAME.apply(state, seat, random_answer(prompt, chooser))
        assert GAME.outcome(state) is not None


# --- views, hidden cards, the bot ---------------------------------------------------------


def test_a_seat_sees_its_hand_and_only_counts_of_other_hands_and_decks() -> None:
    state = guardia_duel(["7r"], ["1c", "2c"])
    mine, theirs, watcher = GAME.view(state, 0), GAME.view(state, 1), GAME.view(state, None)
    own = [{"id": c, "card": face(c)} for c in state.hands[0]]
    assert mine["hands"] == [{"count": 2, "cards": own}, {"count": 6, "cards": None}]
    assert theirs["hands"][0] == watcher["hands"][0] == {"count": 2, "cards": None}
    assert faces(theirs["hands"][1]["cards"]) == faces(state.hands[1])
    decks = [{"count": 51, "cards": None}, {"count": 48, "cards": None}]
    assert mine["decks"] == theirs["decks"] == watcher["decks"] == decks
    assert watcher["duel"]["sides"][0]["flipped"]["cards"] == [
        {"id": c, "card": face(c)} for c in side(state).flipped
    ]
    for card in state.hands[1]:
        assert not contains(mine, card)


def test_setup_events_show_the_crews_and_hide_every_card() -> None:
    state = match()
    for seat in (None, 0, 1):
        from service.games.kernel.protocol import event_for

        received = [event_for(e, seat) for e in GAME.setup_events(state)]
        for secret in GAME.secrets(state, seat):
            assert not contains(received, secret)
    sheets = next(e for e in GAME.setup_events(state) if e.kind == "crews").data["crews"]
    assert sheets[0]["models"][GUARDIA]["name"] == "Guardia del Gremio"


def hidden_twin(state: State, seat: int) -> State:
    """The same table for `seat`, with the other hand and every deck order changed."""
    twin = copy.deepcopy(state)
    other = 1 - seat
    twin.hands[other][0], twin.decks[other][0] = twin.decks[other][0], twin.hands[other][0]
    for deck in twin.decks:
        deck.reverse()
    twin.rng ^= 0xFFFF
    return twin


def test_the_bot_cannot_peek_at_hidden_cards_or_deck_orders() -> None:
    state = match()
    for _ in range(30):
        for seat in GAME.to_act(state):
            twin = hidden_twin(state, seat)
            assert GAME.view(twin, seat) == GAME.view(state, seat)
            for rng_seed in range(5):
                assert GAME.bot_move(twin, seat, rng_seed) == GAME.bot_move(state, seat, rng_seed)
        seat = GAME.to_act(state)[0]
        state, _ = GAME.apply(state, seat, GAME.bot_move(state, seat, 1))


def test_the_bot_cheats_when_a_card_in_hand_makes_the_tn() -> None:
    state = guardia_duel(["4c"], ["13c", "9m", "2r"])
    assert GAME.bot_move(state, 0, 0) == {"type": "cheat", "card": state.hands[0][1]}
    state = guardia_duel(["4c"], ["3c", "2r"])
    assert GAME.bot_move(state, 0, 0) == {"type": "keep"}
    state = guardia_duel(["9c"], ["13c"])
    assert GAME.bot_move(state, 0, 0) == {"type": "keep"}


def test_the_bot_spends_soulstones_when_short() -> None:
    state = comisaria_duel(["4c"], ["1c", "2r"])
    assert GAME.bot_move(state, 0, 0) == {"type": "soulstones", "uses": ["plus_flip"]}
    state = comisaria_duel(["4c"], ["1c", "12r"])
    assert GAME.bot_move(state, 0, 0) == {"type": "soulstones", "uses": []}


# --- loadouts and content ---------------------------------------------------------------


def test_a_loadout_is_a_crew_choice_and_a_bad_one_names_it() -> None:
    options = GAME.check_options(2, {})
    assert GAME.validate_loadout({"crew": "vecinos"}, options) == {"crew": "vecinos"}
    with pytest.raises(LoadoutError) as caught:
        GAME.validate_loadout({"crew": "piratas"}, options)
    assert caught.value.details == {
        "rule": "unknown_crew",
        "card": "piratas",
        "known": sorted(RULES.crews),
    }
    with pytest.raises(LoadoutError):
        GAME.validate_loadout({"deck": []}, options)
    for seed in range(20):
        assert GAME.validate_loadout(GAME.sample_loadout(seed, options), options)


def test_the_content_keeps_the_seeds_suits_and_enough_crews() -> None:
    symbols = {s.symbol: s for s in RULES.suits}
    assert (symbols["c"].english, symbols["m"].english) == ("Crows", "Masks")
    assert symbols["c"].from_seed and symbols["m"].from_seed
    assert len(RULES.faces) == 54 and len(RULES.crews) >= 3
    for crew in RULES.crews.values():
        assert 3 <= len(crew.models) <= 4
        assert [m.uses_soulstones for m in crew.models].count(True) >= 2


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('symbol = "t"', 'symbol = "c"', "differ"),
        ('rank = "esbirro"\nwp = 5', 'rank = "soldado"\nwp = 5', "rank"),
        (
            'timing = "inmediato", effect = "total"',
            'timing = "tras_fallar", effect = "total"',
            "inmediato",
        ),
        ("tn = 13", "tn = 0", "tn"),
    ],
)
def test_malformed_content_is_refused(old: str, new: str, message: str) -> None:
    from importlib import resources

    text = resources.files("service.games.fate_duel").joinpath("content.toml").read_text("utf-8")
    assert old in text
    with pytest.raises(ContentError, match=message):
        load_ruleset(text.replace(old, new, 1))
