"""The loyalty card game (seed 004): one test per rule of the seed, its sentence quoted.

Tables are set honestly: a test builds a game by `setup`, then puts the characters, counters
and phase it needs into the state, and plays through `apply` as a client would.
"""

import itertools
from importlib import resources
from typing import Any

import pytest

from service.games.kernel.content import ContentError
from service.games.kernel.loadouts import LoadoutError
from service.games.kernel.protocol import Action, Event, GameError, IllegalAction
from service.games.kernel.rng import SplitMix64
from service.games.loyalty import LoyaltyGame, LoyaltyGameLeg
from service.games.loyalty.cards import stats
from service.games.loyalty.content import CONTENT, MODES, load_content
from service.games.loyalty.state import State, Unit
from service.games.registry import get_game
from tests.games.helpers import random_answer

LEG = LoyaltyGameLeg()
MATCH = LoyaltyGame()


def kinds(events: list[Event]) -> list[str]:
    return [e.kind for e in events]


def table(mode: str = "legion", seed: int = 1, active: int = 0, phase: str = "play") -> State:
    """A fresh game with the ready decks, `active` to act in `phase`, nobody's first turn."""
    options = {"mode": mode}
    loadouts = [LEG.sample_loadout(0, options), LEG.sample_loadout(1, options)]
    state = LEG.setup(seed, 2, options, loadouts)
    state.active, state.phase, state.turn = active, phase, 3
    return state


def put(state: State, seat: int, card: str, zone: str = "defence") -> str:
    """A character of id `card` in play for `seat`; returns its instance id."""
    instance = f"t.{seat}-{sum(len(s.units) for s in state.sides)}:{card}"
    state.sides[seat].units.append(Unit(instance, zone))
    return instance


def in_hand(state: State, seat: int, card: str) -> str:
    instance = f"h.{seat}-{len(state.sides[seat].hand)}:{card}"
    state.sides[seat].hand.append(instance)
    return instance


def zone_of(state: State, seat: int, instance: str) -> str | None:
    return next((u.zone for u in state.sides[seat].units if u.card == instance), None)


def act(state: State, seat: int, action: Action) -> tuple[State, list[Event]]:
    return LEG.apply(state, seat, action)


def attack_now(state: State, attacker: str, target: str) -> tuple[State, list[Event]]:
    """Seat 0 attacks, the opponent has no counters (no window): damage at once."""
    state.phase = "attack"
    state.sides[1].loyalty = 0
    return act(state, 0, {"type": "attack", "attacker": attacker, "target": target})


def rng_rolling(face: int) -> int:
    """A generator state whose next d6 is `face`."""
    return next(s for s in itertools.count() if SplitMix64(s).die(6) == face)


# --- content -------------------------------------------------------------------------------


def test_reednor_is_exactly_as_the_seed_describes_him() -> None:
    """ "Juego a Reednor, me cuesta 2 contadores de Lealtad para que entre en juego, tiene 2 de
    Poder de Ataque (espadas) y 2 de Poder de Defensa (escudo), también tiene un efecto que
    vale 2 contadores de lealtad que hace que yo y mi oponente subamos a la mano a un
    personaje en juego." """
    reednor = CONTENT.cards["reednor"]
    assert (reednor.cost, reednor.attack, reednor.defence) == (2, 2, 2)
    assert (reednor.effect.kind, reednor.effect.cost) == ("return_both", 2)


def test_the_content_has_two_factions_per_alignment_and_every_kind_of_card() -> None:
    """ "(escudo azul - Alianza, escudo verde - Neutral, escudo rojo - Themoria)" """
    assert list(CONTENT.alignments) == ["alianza", "neutral", "themoria"]
    assert all(len(factions) >= 2 for factions in CONTENT.alignments.values())
    types = {c.type for c in CONTENT.cards.values()}
    assert types == {"character", "mission", "adventure"}
    adventures = [c for c in CONTENT.cards.values() if c.type == "adventure"]
    assert {c.posesion for c in adventures} == {True, False}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("alignment", ["alianza", "neutral", "themoria"])
def test_every_mode_offers_a_legal_ready_deck_per_alignment(mode: str, alignment: str) -> None:
    options = {"mode": mode}
    loadout = LEG.validate_loadout({"ready": alignment}, options)
    assert LEG.validate_loadout(loadout, options) == loadout
    assert len(loadout["deck"]) == CONTENT.deck_size


def test_malformed_content_is_refused_at_load() -> None:
    text = CONTENT_TEXT.replace('faction = "orden_alba"', 'faction = "nadie"', 1)
    with pytest.raises(ContentError, match="unknown faction"):
        load_content(text)
    with pytest.raises(ContentError, match="needs a stat"):
        load_content(CONTENT_TEXT.replace(', stat = "defence" }', " }", 1))


CONTENT_TEXT = resources.files("service.games.loyalty").joinpath("cards.toml").read_text("utf-8")


# --- modes and deck rules -------------------------------------------------------------------


@pytest.mark.parametrize(("mode", "life"), [("escaramuza", 25), ("conquista", 20), ("legion", 30)])
def test_each_mode_sets_the_starting_life(mode: str, life: int) -> None:
    """ "ESCARAMUZA ... cada jugador tiene 25 puntos de vida", "CONQUISTA ... 20 puntos de
    vida", "LEGION ... cada jugador tendrá 30 puntos de vida." """
    state = table(mode)
    assert [side.life for side in state.sides] == [life, life]


def test_at_most_four_copies_of_a_card() -> None:
    """ "solo se permiten 4 hasta copias de cada carta." """
    deck = ["reednor"] * 5 + LEG.content.ready_deck("legion", "alianza")[5:]
    with pytest.raises(LoadoutError) as caught:
        LEG.validate_loadout({"deck": deck}, {"mode": "legion"})
    assert caught.value.code == "too_many_copies"
    assert caught.value.details["card"] == "reednor"


def test_escaramuza_decks_hold_characters_of_one_alignment() -> None:
    """ "ESCARAMUZA, en este modo solo se arma barajas con personajes que sean del mismo
    Alineamiento" """
    deck = CONTENT.ready_deck("escaramuza", "alianza")
    deck[-1] = "verdugo"  # a Themoria character among Alianza ones
    with pytest.raises(LoadoutError) as caught:
        LEG.validate_loadout({"deck": deck}, {"mode": "escaramuza"})
    assert (caught.value.code, caught.value.details["card"]) == ("one_alignment", "verdugo")
    # Both Alianza factions together are fine in Escaramuza.
    mixed = ["reednor"] * 4 + ["novicia_alba"] * 4 + CONTENT.ready_deck("escaramuza", "alianza")[8:]
    assert LEG.validate_loadout({"deck": mixed}, {"mode": "escaramuza"})["deck"] == mixed


def test_conquista_decks_hold_characters_of_one_faction() -> None:
    """ "CONQUISTA, cada baraja deberá estar con personajes que sea de la misma Facción" """
    deck = CONTENT.ready_deck("conquista", "alianza")
    deck[-1] = "novicia_alba"  # Alianza, but of another faction
    with pytest.raises(LoadoutError) as caught:
        LEG.validate_loadout({"deck": deck}, {"mode": "conquista"})
    assert (caught.value.code, caught.value.details["card"]) == ("one_faction", "novicia_alba")


def refusal(deck: list[str], mode: str) -> LoadoutError:
    with pytest.raises(LoadoutError) as caught:
        LEG.validate_loadout({"deck": deck}, {"mode": mode})
    return caught.value


def test_one_alignment_names_the_odd_card_also_when_it_is_listed_first() -> None:
    """The mode's rule is broken by the card outside the alignment most characters share, not
    by the eleven that agree with each other: it is named wherever it stands in the list."""
    deck = CONTENT.ready_deck("escaramuza", "alianza")
    deck[0] = "verdugo"  # one Themoria character, listed first, among eleven Alianza ones
    refused = refusal(deck, "escaramuza")
    assert refused.code == "one_alignment"
    assert refused.details == {
        "rule": "one_alignment",
        "card": "verdugo",
        "alignment": "themoria",
        "expected": "alianza",
        "mode": "escaramuza",
        "counts": {"themoria": 1, "alianza": 11},
    }
    assert "'verdugo' is themoria; 11 of the 12 characters are alianza" in refused.message


def test_one_faction_names_the_odd_card_also_when_it_is_listed_first() -> None:
    deck = CONTENT.ready_deck("conquista", "alianza")
    deck[0] = "novicia_alba"  # Orden del Alba, listed first, among Guardia de Velmar
    refused = refusal(deck, "conquista")
    assert (refused.code, refused.details["card"]) == ("one_faction", "novicia_alba")
    assert (refused.details["faction"], refused.details["expected"]) == (
        "orden_alba",
        "guardia_velmar",
    )


def test_one_alignment_with_no_majority_keeps_the_first_listed_and_says_so() -> None:
    """Six Themoria then six Alianza characters: neither is the odd one out, so the first
    listed alignment is kept and the first character outside it is named."""
    themoria = ["verdugo", "senor_ceniza", "soldado_ceniza"] * 2
    deck = themoria + CONTENT.ready_deck("escaramuza", "alianza")[6:]
    refused = refusal(deck, "escaramuza")
    assert (refused.details["card"], refused.details["expected"]) == ("novicia_alba", "themoria")
    assert refused.details["counts"] == {"themoria": 6, "alianza": 6}
    assert "no alignment holds most of them" in refused.message


@pytest.mark.parametrize("ready", [["alianza"], {"alianza": 1}, 1, None])
def test_a_ready_deck_of_an_alignment_that_is_not_a_name_is_unknown_alignment(ready: Any) -> None:
    """`ready` must name an alignment: a list or an object is refused as unknown, not looked
    up as a key (it was a TypeError, a 500 over HTTP)."""
    with pytest.raises(LoadoutError) as caught:
        LEG.validate_loadout({"ready": ready}, {"mode": "legion"})
    assert caught.value.code == "unknown_alignment"


def test_legion_decks_may_mix_any_faction_or_alignment() -> None:
    """ "LEGION, para este modo las barajas podrán tener personajes de cualquier Facción o
    Alineamiento" """
    deck = ["reednor", "buhonero", "verdugo", "acolito"] * 4 + ["rayo"] * 4
    assert LEG.validate_loadout({"deck": deck}, {"mode": "legion"})["deck"] == deck


def test_both_seats_play_the_creators_mode() -> None:
    with pytest.raises(LoadoutError) as caught:
        LEG.validate_loadout({"mode": "legion", "ready": "neutral"}, {"mode": "conquista"})
    assert caught.value.code == "mode_mismatch"
    assert LEG.validate_loadout({"ready": "neutral"}, {"mode": "conquista"})["mode"] == "conquista"


# --- setup ----------------------------------------------------------------------------------


def test_who_starts_is_drawn_and_each_draws_five() -> None:
    """ "Antes de comenzar la partida se sortea quien inicia la partida, cada jugador roba 5
    cartas de su baraja" """
    starters = set()
    for seed in range(12):
        state = table(seed=seed)
        assert [len(s.hand) for s in state.sides] == [5, 5]
        assert [len(s.deck) for s in state.sides] == [15, 15]
        fresh = LEG.setup(
            seed, 2, {"mode": "legion"}, [LEG.sample_loadout(0, {"mode": "legion"})] * 2
        )
        assert fresh.active == fresh.first and fresh.phase == "draw"
        starters.add(fresh.first)
    assert starters == {0, 1}


def test_the_starting_player_may_not_attack_on_its_first_turn() -> None:
    """ "el jugador que comienza el juego no puede atacar ese turno ya que el oponente no
    tendría con que defender" """
    state = table(phase="arrange")
    state.turn = 1
    state.sides[1].loyalty = 0
    mine = put(state, 0, "verdugo")
    state, events = act(state, 0, {"type": "arrange", "attack": [mine]})
    assert "phase_skipped" in kinds(events) and state.phase == "play_again"
    # The other player's first turn (turn 2) has its attack phase.
    state, _ = act(state, 0, {"type": "pass"})
    assert state.active == 1 and state.turn == 2
    for _ in range(4):
        state, _ = act(state, 1, {"type": "pass"})
    assert state.phase == "attack"


# --- phases ---------------------------------------------------------------------------------


def test_the_phases_come_in_the_seeds_order() -> None:
    """ "a)Comienzo del turno. b)Roba una carta de tu baraja. c)Lanza 1 dado de 6 ... d)Juega
    cartas de personaje y o carta de misión. e)Organiza tus personajes ... f)Ataca ...
    g)Calculo de daños. h)Juega cartas de personaje y o carta de misión. i)Final del turno.
    j)Comienzo del turno oponente." """
    state = table(phase="draw")
    seen = []
    while state.active == 0:
        seen.append(state.phase)
        prompt = LEG.prompt(state, 0)
        assert prompt is not None
        state, events = act(state, 0, prompt.actions[0])
    assert seen == ["draw", "roll", "play", "arrange", "attack", "play_again"]
    assert kinds(events)[-3:] == ["turn_ended", "turn_started", "phase"]
    assert (state.active, state.phase) == (1, "draw")


def test_a_passed_phase_is_lost_until_the_next_turn() -> None:
    """ "si un jugador pasa alguna de esas fases no podrá recuperarla hasta su siguiente
    turno." """
    state = table(phase="draw")
    hand = len(state.sides[0].hand)
    state, _ = act(state, 0, {"type": "pass"})
    assert state.phase == "roll"
    for _ in range(5):
        prompt = LEG.prompt(state, 0)
        assert prompt is not None and {"type": "draw", "cards": 1} not in prompt.actions
        with pytest.raises(IllegalAction):
            act(state, 0, {"type": "draw", "cards": 1})
        state, _ = act(state, 0, {"type": "pass"})
    assert len(state.sides[0].hand) == hand and state.active == 1


def test_the_roll_gains_as_many_loyalty_counters_as_the_die_shows() -> None:
    """ "Lanza 1 dado de 6 y recolecta contadores de Lealtad igual al resultado del dado" """
    state = table(phase="roll")
    state.sides[0].loyalty = 2
    state.rng = rng_rolling(5)
    state, events = act(state, 0, {"type": "roll", "dice": 1})
    assert state.sides[0].loyalty == 7
    assert events[0] == Event("rolled", {"seat": 0, "die": 5, "loyalty": 7})


def test_a_character_enters_play_paying_its_loyalty_cost() -> None:
    """ "Cuando un personaje entra en juego paga contadores de lealtad igual al costo de
    lealtad de ese personaje" """
    state = table()
    card = in_hand(state, 0, "reednor")
    state.sides[0].loyalty = 1
    with pytest.raises(IllegalAction):
        act(state, 0, {"type": "play", "card": card})
    state.sides[0].loyalty = 3
    state.sides[1].loyalty = 0
    state, _ = act(state, 0, {"type": "play", "card": card})
    assert state.sides[0].loyalty == 1 and zone_of(state, 0, card) == "defence"


def test_there_is_no_limit_of_cards_in_hand_or_characters_in_play() -> None:
    """ "No existe límite de cartas en mano, ni de cartas de personajes en el campo de juego" """
    state = table(phase="draw")
    for _ in range(30):
        put(state, 0, "buhonero")
    state.sides[0].hand += [f"x.0-{i}:rayo" for i in range(20)]
    state, _ = act(state, 0, {"type": "draw", "cards": 1})
    assert len(state.sides[0].hand) == 26 and len(state.sides[0].units) == 30


def test_arranging_moves_characters_between_attack_and_defence() -> None:
    """ "e)Organiza tus personajes, mueve y coloca personajes en las distintas Zonas del tablero
    (Ataque o Defensa)" """
    state = table(phase="arrange")
    a, b = put(state, 0, "verdugo"), put(state, 0, "druida_musgo", "attack")
    state.sides[1].loyalty = 0
    state, _ = act(state, 0, {"type": "arrange", "attack": [a]})
    assert (zone_of(state, 0, a), zone_of(state, 0, b)) == ("attack", "defence")
    assert state.phase == "attack"


@pytest.mark.parametrize("attack", [[["x"]], [{}], [[]], [1, 1], ["x", "x"], "x", None])
def test_an_arrange_listing_anything_but_my_characters_once_is_refused(attack: Any) -> None:
    """A list or an object among the characters sent to Attack is refused as a bad `attack`
    parameter, before the rules build the set of them (it was a TypeError, a 500 over HTTP)."""
    state = table(phase="arrange")
    mine = put(state, 0, "verdugo")
    for sent in (attack, [mine, *attack] if isinstance(attack, list) else attack):
        with pytest.raises(IllegalAction) as caught:
            act(state, 0, {"type": "arrange", "attack": sent})
        assert (caught.value.code, caught.value.details) == ("bad_param", {"field": "attack"})


# --- loyalty spending -----------------------------------------------------------------------


def test_each_loyalty_counter_paid_gives_plus_one_until_the_end_of_the_turn() -> None:
    """ "Se puede pagar contadores de lealtad para aumentar valores del poder de ataque o poder
    de defensa de un personaje, durante cualquier turno ... por cada contador de lealtad que
    pagas gana +1 en cualquiera de esos valores." """
    state = table(phase="play_again")
    mine = put(state, 0, "reednor")
    state.sides[0].loyalty = 4
    state.sides[1].loyalty = 0
    state, _ = act(state, 0, {"type": "boost", "card": mine, "stat": "attack", "amount": 3})
    unit = state.sides[0].units[0]
    assert stats(CONTENT, state.sides[0], unit) == (5, 2) and state.sides[0].loyalty == 1
    with pytest.raises(IllegalAction) as caught:
        act(state, 0, {"type": "boost", "card": mine, "stat": "defence", "amount": 2})
    assert (caught.value.code, caught.value.details) == ("bad_param", {"field": "amount"})
    state, _ = act(state, 0, {"type": "pass"})
    assert stats(CONTENT, state.sides[0], state.sides[0].units[0]) == (2, 2)


def test_the_opponent_may_boost_in_a_response_window_during_my_turn() -> None:
    """ "durante cualquier turno siempre y cuando tengas contadores de lealtad disponibles" """
    state = table(phase="attack")
    mine = put(state, 0, "verdugo", "attack")  # 4 attack
    theirs = put(state, 1, "druida_musgo")  # 4 defence
    state.sides[1].loyalty = 1
    state, _ = act(state, 0, {"type": "attack", "attacker": mine, "target": theirs})
    response = LEG.prompt(state, 1)
    assert LEG.to_act(state) == [1] and response is not None and response.kind == "response"
    state, _ = act(state, 1, {"type": "boost", "card": theirs, "stat": "defence", "amount": 1})
    state, _ = act(state, 1, {"type": "pass"})
    # 4 attack against 5 defence: both stay, the attacker's owner loses 1.
    assert zone_of(state, 1, theirs) == "defence" and state.sides[0].life == 29


def test_reednors_effect_returns_a_character_of_each_player_to_hand() -> None:
    """ "tiene un efecto que vale 2 contadores de lealtad que hace que yo y mi oponente subamos
    a la mano a un personaje en juego." """
    state = table()
    reednor, other = put(state, 0, "reednor"), put(state, 0, "buhonero")
    theirs = put(state, 1, "verdugo")
    state.sides[0].loyalty, state.sides[1].loyalty = 2, 0
    state, _ = act(state, 0, {"type": "effect", "card": reednor, "target": other})
    assert other in state.sides[0].hand and state.sides[0].loyalty == 0
    assert LEG.to_act(state) == [1]
    state, _ = act(state, 1, {"type": "return", "card": theirs})
    assert theirs in state.sides[1].hand and not state.sides[1].units
    assert LEG.to_act(state) == [0]


# --- adventures -----------------------------------------------------------------------------


def test_after_an_action_the_opponent_may_answer_with_an_adventure_and_i_may_answer_back() -> None:
    """ "Durante cualquier turno tuyo o del oponente puede jugar cartas de Aventura, siempre y
    cuando puedas pagar su costo de lealtad para jugarla" """
    state = table(phase="attack")
    mine = put(state, 0, "verdugo", "attack")  # 4/2
    theirs = put(state, 1, "soldado_ceniza", "attack")  # 2/1
    wall = in_hand(state, 1, "muro_escudos")
    fury = in_hand(state, 0, "furia")
    state.sides[0].loyalty = state.sides[1].loyalty = 1
    state, _ = act(state, 0, {"type": "attack", "attacker": mine, "target": theirs})
    response = LEG.prompt(state, 1)
    assert response is not None and response.kind == "response"
    assert {"type": "adventure", "card": wall, "target": theirs} in response.actions
    # Not enough loyalty for Emboscada: not offered.
    state, _ = act(state, 1, {"type": "adventure", "card": wall, "target": theirs})
    assert LEG.to_act(state) == [0]
    state, events = act(state, 0, {"type": "adventure", "card": fury, "target": mine})
    # Last in, first out: Furia, then Muro de Escudos, then the damage: 6 > 2 destroys.
    resolved = [e.data["id"] for e in events if e.kind == "resolved"]
    assert resolved == [fury, wall]
    assert zone_of(state, 1, theirs) is None
    assert state.sides[0].graveyard[-1] == fury and state.sides[1].graveyard[-2:] == [wall, theirs]


def test_no_window_opens_for_an_opponent_without_counters() -> None:
    state = table()
    card = in_hand(state, 0, "buhonero")
    state.sides[0].loyalty, state.sides[1].loyalty = 1, 0
    state, events = act(state, 0, {"type": "play", "card": card})
    assert "window" not in kinds(events) and LEG.to_act(state) == [0]


def test_an_adventure_whose_target_has_gone_fizzles_into_the_graveyard() -> None:
    state = table(phase="attack")
    mine = put(state, 0, "senor_ceniza", "attack")
    theirs = put(state, 1, "buhonero", "attack")
    wall = in_hand(state, 1, "muro_escudos")
    state.sides[1].loyalty, state.sides[0].loyalty = 1, 0
    state, _ = act(state, 0, {"type": "attack", "attacker": mine, "target": theirs})
    state, _ = act(state, 1, {"type": "adventure", "card": wall, "target": theirs})
    # The wall resolves first (+3 defence: 6 - (3 + 4) gives nothing), then the attack.
    assert zone_of(state, 1, theirs) is None and state.sides[1].life == 30
    state = table()
    theirs = put(state, 1, "buhonero")
    ambush = in_hand(state, 0, "emboscada")
    state.sides[0].loyalty, state.sides[1].loyalty = 3, 0
    state.stack = [{"seat": 0, "card": ambush, "target": "gone"}]
    state.sides[0].hand.remove(ambush)
    state.responder = 1
    state, events = act(state, 1, {"type": "pass"})
    assert "fizzled" in kinds(events) and state.sides[0].graveyard == [ambush]


def test_a_posesion_of_income_pays_at_the_start_of_each_of_its_owners_turns() -> None:
    state = table(phase="play_again", active=1)
    state.sides[0].posesiones = ["p.0-1:altar_lealtad"]
    state.sides[0].loyalty = 0
    state, events = act(state, 1, {"type": "pass"})
    assert state.active == 0 and state.sides[0].loyalty == 1 and "income" in kinds(events)


def test_a_played_adventure_goes_to_the_graveyard_unless_it_says_posesion() -> None:
    """ "una vez que juegas una carta de aventura es enviada al cementerio, salvo que diga
    POSESIÓN se queda en juego hasta que sea destruida." """
    state = table()
    banner, bolt = in_hand(state, 0, "estandarte"), in_hand(state, 0, "rayo")
    guard = put(state, 0, "reednor")
    state.sides[0].loyalty, state.sides[1].loyalty = 5, 0
    state, _ = act(state, 0, {"type": "adventure", "card": banner})
    state, _ = act(state, 0, {"type": "adventure", "card": bolt})
    assert state.sides[0].posesiones == [banner] and state.sides[0].graveyard == [bolt]
    assert stats(CONTENT, state.sides[0], state.sides[0].units[0]) == (2, 3)
    assert state.sides[1].life == 28
    # It stays over the turns, until destroyed.
    state.active, state.phase = 1, "play"
    exorcism = in_hand(state, 1, "exorcismo")
    state.sides[1].loyalty, state.sides[0].loyalty = 2, 0
    state, _ = act(state, 1, {"type": "adventure", "card": exorcism, "target": banner})
    assert state.sides[0].posesiones == [] and banner in state.sides[0].graveyard
    assert guard in [u.card for u in state.sides[0].units]


# --- damage, section 8 ----------------------------------------------------------------------


def test_damage_defence_zone_attack_meets_defence_destroys_without_life_damage() -> None:
    """ "Si el ataque de tu personaje supera o iguala la defensa del personaje oponente,
    destruye a ese personaje oponente, pero el oponente no recibe daño a sus puntos de vida." """
    state = table()
    mine, theirs = put(state, 0, "reednor", "attack"), put(state, 1, "escudero_velmar")  # 2 vs 2
    state, _ = attack_now(state, mine, theirs)
    assert zone_of(state, 1, theirs) is None and zone_of(state, 0, mine) == "attack"
    assert [s.life for s in state.sides] == [30, 30]


def test_damage_defence_zone_attack_below_defence_costs_the_attacker_the_difference() -> None:
    """ "Si el ataque de tu personaje es inferior a la defensa del personaje oponente, ambos
    personajes siguen en juego, pero reduces la diferencia entre el poder de defensa oponente
    y tu poder de ataque de tus puntos de vida." """
    state = table()
    mine, theirs = put(state, 0, "buhonero", "attack"), put(state, 1, "oso_guardian")  # 1 vs 5
    state, _ = attack_now(state, mine, theirs)
    assert zone_of(state, 0, mine) == "attack" and zone_of(state, 1, theirs) == "defence"
    assert [s.life for s in state.sides] == [26, 30]


def test_damage_attack_zone_higher_attack_destroys_and_hits_life_past_both_defences() -> None:
    """ "Si el ataque de tu personaje es superior al ataque del personaje oponente, destruye a
    ese personaje y haz daño a los puntos de vida oponente igual a la diferencia entre tu
    ataque y la defensa de los personajes que participaron de esa batalla." """
    state = table()
    mine = put(state, 0, "senor_ceniza", "attack")  # 6/3
    theirs = put(state, 1, "buhonero", "attack")  # 1/1
    put(state, 1, "oso_guardian")  # a defender elsewhere does not take part
    state, _ = attack_now(state, mine, theirs)
    assert zone_of(state, 1, theirs) is None and zone_of(state, 0, mine) == "attack"
    # 6 - (3 + 1) = 2: the defences of the two characters that fought.
    assert [s.life for s in state.sides] == [30, 28]
    # When the defences cover the attack, nothing goes through (never negative).
    state = table()
    mine, theirs = put(state, 0, "verdugo", "attack"), put(state, 1, "reednor", "attack")
    state, _ = attack_now(state, mine, theirs)  # 4 > 2, 4 - (2 + 2) = 0
    assert zone_of(state, 1, theirs) is None and [s.life for s in state.sides] == [30, 30]


def test_damage_attack_zone_equal_attack_destroys_both() -> None:
    """ "Si el ataque de tu personaje es igual al ataque del personaje oponente, ambos
    personajes se destruyen." """
    state = table()
    mine, theirs = put(state, 0, "reednor", "attack"), put(state, 1, "rastreador", "attack")
    state, events = attack_now(state, mine, theirs)
    assert kinds(events).count("destroyed") == 2 and not state.sides[0].units
    assert not state.sides[1].units and [s.life for s in state.sides] == [30, 30]


def test_damage_attack_zone_lower_attack_destroys_the_attacker_and_costs_the_difference() -> None:
    """ "Si el ataque de tu personaje es inferior al ataque del personaje oponente, tu
    personaje se destruye y recibes daño a tus puntos de vida igual a la diferencia entre el
    ataque oponente y tu ataque." """
    state = table()
    mine, theirs = put(state, 0, "buhonero", "attack"), put(state, 1, "senor_ceniza", "attack")
    state, _ = attack_now(state, mine, theirs)
    assert zone_of(state, 0, mine) is None and zone_of(state, 1, theirs) == "attack"
    assert [s.life for s in state.sides] == [25, 30]


def test_damage_direct_attack_when_the_opponent_has_no_defence() -> None:
    """ "Cuando mi personaje ataca y el oponente no tiene personajes en su Zona de Defensa, el
    oponente recibe daño a sus puntos de vida igual al poder ataque de mi personaje." """
    state = table()
    mine = put(state, 0, "verdugo", "attack")
    put(state, 1, "buhonero", "attack")
    state, _ = attack_now(state, mine, "life")
    assert [s.life for s in state.sides] == [30, 26]


def test_no_direct_attack_while_the_opponent_has_a_defender() -> None:
    """ "Por lo tanto si un oponente tiene personajes en su Zona de Defensa oponente no podrá
    recibir daño directo del ataque de un personaje ya que tiene personajes que lo
    defiendan" """
    state = table(phase="attack")
    mine = put(state, 0, "verdugo", "attack")
    guard = put(state, 1, "buhonero")
    prompt = LEG.prompt(state, 0)
    assert prompt is not None
    targets = {a["target"] for a in prompt.actions if a["type"] == "attack"}
    assert targets == {guard}
    with pytest.raises(IllegalAction):
        act(state, 0, {"type": "attack", "attacker": mine, "target": "life"})


def test_a_character_may_attack_either_zone() -> None:
    """ "puede decidir si atacar a los personajes del oponente en zona de ataque o en zona de
    defensa" """
    state = table(phase="attack")
    mine = put(state, 0, "verdugo", "attack")
    a, d = put(state, 1, "buhonero", "attack"), put(state, 1, "acolito")
    prompt = LEG.prompt(state, 0)
    assert prompt is not None
    assert {x["target"] for x in prompt.actions if x["type"] == "attack"} == {a, d}
    assert all(x["attacker"] == mine for x in prompt.actions if x["type"] == "attack")


# --- winning ----------------------------------------------------------------------------------


def test_reducing_the_opponents_life_to_zero_wins() -> None:
    """ "ganara aquel jugador que reduzca a cero los puntos de vida del oponente" """
    state = table()
    mine = put(state, 0, "verdugo", "attack")
    state.sides[1].life = 4
    state, events = attack_now(state, mine, "life")
    assert LEG.outcome(state) == {"winners": [0], "ranking": [[0], [1]]}
    assert events[-1].data["reason"] == "life" and LEG.to_act(state) == []


def test_leaving_the_opponent_without_cards_in_hand_and_deck_wins() -> None:
    """ "o deje a su oponente sin cartas en mano y baraja" """
    state = table()
    state.sides[0].deck, state.sides[0].hand = [], []
    last = in_hand(state, 0, "rayo")
    state.sides[0].loyalty, state.sides[1].loyalty = 2, 0
    state, events = act(state, 0, {"type": "adventure", "card": last})
    assert LEG.outcome(state) == {"winners": [1], "ranking": [[1], [0]]}
    assert events[-1].data["reason"] == "no_cards"


def test_when_both_decks_run_out_more_damage_dealt_wins() -> None:
    """ "en casos especiales en que a ambos se les acabe la baraja, ganara aquel que mas daño
    haya hecho a los puntos de vida oponentes." """
    state = table(phase="play_again")
    for side in state.sides:
        side.deck = []
    state.sides[0].lost, state.sides[1].lost = 3, 7
    state, events = act(state, 0, {"type": "pass"})
    assert LEG.outcome(state) == {"winners": [0], "ranking": [[0], [1]]}
    assert events[-1].data["reason"] == "decks_out"
    state = table(phase="play_again")
    for side in state.sides:
        side.deck = []
    state, _ = act(state, 0, {"type": "pass"})
    assert LEG.outcome(state) == {"winners": [0, 1], "ranking": [[0, 1]]}


# --- best of 3 ------------------------------------------------------------------------------


def test_a_match_is_best_of_three_and_the_loser_chooses_who_starts_the_next() -> None:
    """ "Cada partida se juega a 2 de 3" """
    assert get_game("loyalty").id == "loyalty" and MATCH.best_of == 3
    options = MATCH.check_options(2, {})
    match = MATCH.setup(9, 2, options, [MATCH.sample_loadout(s, options) for s in (0, 1)])
    match.inner.phase = "play_again"
    for side in match.inner.sides:
        side.deck = []
    match.inner.sides[0].lost = 0
    match.inner.sides[1].lost = 5  # seat 0 did more damage: seat 0 wins game 1
    match.inner.active = 0
    match, events = MATCH.apply(match, 0, {"type": "pass"})
    assert match.score == [1, 0] and match.leg == 2
    assert "choose_first" in kinds(events)
    assert MATCH.to_act(match) == [1]
    prompt = MATCH.prompt(match, 1)
    assert prompt is not None and prompt.kind == "choose_first"
    match, events = MATCH.apply(match, 1, {"type": "first", "seat": 0})
    assert match.inner.active == 0 and match.inner.phase == "draw"
    view = MATCH.view(match, 0)
    assert (view["best_of"], view["leg"], view["score"]) == (3, 2, [1, 0])


def test_after_a_drawn_game_the_start_is_drawn_again_and_clients_cannot_name_a_chooser() -> None:
    options = {"mode": "legion"}
    assert LEG.next_leg_options(options, [{"winners": [1], "ranking": [[1], [0]]}]) == {
        "mode": "legion",
        "chooser": 0,
    }
    drawn = {"winners": [0, 1], "ranking": [[0, 1]]}
    assert LEG.next_leg_options({**options, "chooser": 0}, [drawn]) == options
    with pytest.raises(GameError):
        MATCH.check_options(2, {"chooser": 0})


# --- views and bots --------------------------------------------------------------------------


def test_a_seat_sees_its_hand_the_other_hand_size_and_deck_sizes_only() -> None:
    state = table()
    view = LEG.view(state, 0)
    hand = [{"id": c, "card": c.rsplit(":", 1)[1]} for c in state.sides[0].hand]
    assert view["sides"][0]["hand"] == {"count": 5, "cards": hand}
    assert view["sides"][1]["hand"] == {"count": 5, "cards": None}
    assert [s["deck"] for s in view["sides"]] == [{"count": 15, "cards": None}] * 2
    assert LEG.view(state, None)["sides"][0]["hand"] == {"count": 5, "cards": None}
    assert all(s["life"] == 30 and s["loyalty"] == 0 for s in view["sides"]) and "rng" not in view


def test_the_bot_attacks_life_rather_than_a_stronger_defender() -> None:
    state = table(phase="attack")
    mine = put(state, 0, "verdugo", "attack")
    put(state, 1, "oso_guardian", "attack")
    prompt = LEG.prompt(state, 0)
    assert prompt is not None
    assert LEG.bot_move(state, 0, 1) == {"type": "attack", "attacker": mine, "target": "life"}
    state = table(phase="attack")
    put(state, 0, "buhonero", "attack")
    put(state, 1, "oso_guardian")
    # Every attack would cost it: it passes.
    assert LEG.bot_move(state, 0, 1) == {"type": "pass"}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("seed", [3, 17])
def test_random_legal_play_ends_a_whole_best_of_three(mode: str, seed: int) -> None:
    options = MATCH.check_options(2, {"mode": mode})
    loadouts = [MATCH.sample_loadout(seed + s, options) for s in (0, 1)]
    match = MATCH.setup(seed, 2, options, loadouts)
    chooser = SplitMix64(seed)
    for _ in range(20000):
        if MATCH.outcome(match) is not None:
            break
        seat = chooser.pick(MATCH.to_act(match))
        prompt = MATCH.prompt(match, seat)
        assert prompt is not None
        match, _ = MATCH.apply(match, seat, random_answer(prompt, chooser))
    outcome: Any = MATCH.outcome(match)
    assert outcome is not None
    assert max(match.score) == 2 or match.leg == 3
    assert all(leg["final"]["mode"] == mode for leg in match.legs)
