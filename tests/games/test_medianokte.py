"""Medianokte: Exploración, duel mode: one named test per rule sentence of seed 000.

Each rule test quotes its sentence of the seed in its docstring. Dice are controlled
honestly: a test asks for the generator state whose next rolls are the faces it wants
(found by searching SplitMix64 seeds) and puts it in the match state. Cards are put in
hands and armies directly, with instance ids of the same form as the Nave's.
"""

import itertools
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.games.kernel.loadouts import LoadoutError
from service.games.kernel.protocol import Action, Event, IllegalAction
from service.games.kernel.rng import SplitMix64
from service.games.medianokte import MedianokteGame
from service.games.medianokte.attacks import MAGIC_DIE
from service.games.medianokte.content import (
    CONTENT,
    ContentError,
    Position,
    load_content,
    parse_content,
    random_nave,
)
from service.games.medianokte.state import Astrali, Placed, State, VacioCard
from tests.games.helpers import random_answer

GAME = MedianokteGame()
OPTIONS = GAME.check_options(2, {})


def d10s(*faces: int) -> int:
    """A generator state whose next d10 rolls are `faces`."""
    for seed in itertools.count():
        rng = SplitMix64(seed)
        if all(rng.die(10) == face for face in faces):
            return seed
    raise AssertionError("unreachable")


def magic(face: int) -> int:
    """A generator state whose next magic-die roll shows `face` (the first such face)."""
    index = MAGIC_DIE.index(face)
    return next(s for s in itertools.count() if SplitMix64(s).below(len(MAGIC_DIE)) == index)


def loadout(character: str, seed: int = 0) -> dict[str, Any]:
    return {"character": character, "nave": random_nave(seed)}


def table(*characters: str, first: int = 0) -> State:
    """A match past its setup: Naves cut, hands drawn, `first` to play with 3 activations;
    hands emptied, so each test gives the cards it needs."""
    chars = characters or ("guerrera", "cazador")
    state = GAME.setup(1, len(chars), {}, [loadout(c, i) for i, c in enumerate(chars)])
    for seat in range(len(chars)):
        state, _ = GAME.apply(state, seat, {"type": "cut", "at": 1})
    state, _ = GAME.apply(state, state.chooser, {"type": "first", "seat": first})
    for player in state.players:
        player.hand = []
    return state


_ids = itertools.count()


def give(state: State, seat: int, card: str) -> str:
    instance = f"s{seat}.t{next(_ids)}:{card}"
    state.players[seat].hand.append(instance)
    return instance


def field(state: State, seat: int, card: str, position: Position = "upright") -> str:
    instance = f"s{seat}.t{next(_ids)}:{card}"
    state.players[seat].army.append(Astrali(id=instance, position=position, owner=seat))
    return instance


def hero(state: State, seat: int) -> str:
    return state.players[seat].hero.id


def slot(state: State, seat: int, index: int) -> Placed:
    return state.players[seat].slots[index]


def army(state: State, seat: int, instance: str) -> Astrali:
    return next(a for a in state.players[seat].army if a.id == instance)


def legal(state: State, seat: int = 0) -> list[Action]:
    return GAME.legal_actions(state, seat)


def act(state: State, action: Action, seat: int = 0) -> tuple[State, list[Event]]:
    return GAME.apply(state, seat, action)


def targets_of(state: State, source: str, seat: int = 0) -> set[str]:
    return {
        a["target"]
        for a in legal(state, seat)
        if a["type"] == "attack" and a["with"] == source and "target" in a
    }


def kinds(events: list[Event]) -> list[str]:
    return [e.kind for e in events]


def vacio(state: State, seat: int) -> list[str]:
    return [v.id for v in state.players[seat].vacio]


# --- content ---------------------------------------------------------------------------


def test_the_card_list_has_enough_of_every_kind() -> None:
    kinds_ = [c.kind for c in CONTENT.cards.values()]
    assert len(CONTENT.characters) >= 4
    assert kinds_.count("astrali") >= 25
    assert sum(kinds_.count(k) for k in ("permanent", "discardable", "weapon")) >= 20
    assert kinds_.count("event") >= 20
    signs = {c.sign for c in CONTENT.cards.values() if c.kind == "event"}
    assert signs == {"positive", "negative", "neutral"}
    assert {"ritual_de_afinidad", "pergamino_de_konfusion"} <= set(CONTENT.cards)


def test_content_that_breaks_a_rule_stops_the_import() -> None:
    good = load_content()
    assert good.cards.keys() == CONTENT.cards.keys()
    bad_card = {"card": [{"id": "x", "name": "X", "kind": "astrali", "text": "t", "life": 0}]}
    with pytest.raises(ContentError, match="life"):
        parse_content({"a.toml": bad_card})
    ranged = {"type": "basic", "dice": 1, "range": "ranged"}
    astrali = {"id": "x", "name": "X", "kind": "astrali", "text": "t", "life": 1, "armour": 1}
    with pytest.raises(ContentError, match="range follows"):
        parse_content({"a.toml": {"card": [{**astrali, "attack": ranged}]}})
    heal_enemy = {
        "id": "x", "name": "X", "kind": "event", "sign": "negative", "text": "t",
        "target": "enemy", "effects": [{"do": "heal", "n": 1}],
    }  # fmt: skip
    with pytest.raises(ContentError, match="heal cannot be aimed at enemy"):
        parse_content({"a.toml": {"card": [heal_enemy]}})


def test_every_character_has_its_five_cards_sharing_its_icon() -> None:
    """Para jugar al Modo duelo de Medianokte: Exploración necesitas elegir un personaje y su
    set de cartas básicas (comparten el icono en la esquina superior derecha)..."""
    for character in CONTENT.characters.values():
        cards = [CONTENT.cards[c] for c in character.cards]
        assert [c.kind for c in cards] == ["character_weapon"] * 2 + ["assistance", "final"]
        assert {c.icon for c in cards} == {character.icon}
        assert all(c.attack is not None for c in cards[:2])
        assert set(character.stats) == {"fuerza", "destreza", "voluntad"}


@given(seed=st.integers(0, 2**64 - 1))
@settings(max_examples=100)
def test_the_random_nave_builder_makes_a_legal_nave_for_every_seed(seed: int) -> None:
    """...y una Nave (mazo de 30 cartas) este puede ser preparado al azar o confeccionado por
    el jugador de acuerdo a su estrategia."""
    loadout_ = GAME.sample_loadout(seed, OPTIONS)
    assert GAME.validate_loadout(loadout_, OPTIONS) == loadout_
    by_seed = GAME.validate_loadout({"character": "nigromante", "random_nave": seed}, OPTIONS)
    assert by_seed["nave"] == random_nave(seed)


def test_at_least_four_legal_naves_can_be_built() -> None:
    naves = {tuple(random_nave(seed)) for seed in range(4)}
    assert len(naves) == 4
    for nave in naves:
        GAME.validate_loadout({"character": "guerrera", "nave": list(nave)}, OPTIONS)


# --- the loadout ------------------------------------------------------------------------


def test_a_nave_is_exactly_ten_events_ten_astralis_ten_objects() -> None:
    """La nave siempre esta compuesta por 10 cartas de evento (entre negativos y positivos),
    10 cartas de astrali y 10 cartas de objetos (entre permanentes, descartables y armas)."""
    nave = random_nave(3)
    extra_astrali = next(c for c in CONTENT.nave_cards("astrali") if c not in nave)
    lopsided = [c for c in nave if CONTENT.cards[c].kind != "event"][:1] + nave[1:]
    lopsided[0] = extra_astrali
    with pytest.raises(LoadoutError) as caught:
        GAME.validate_loadout({"character": "guerrera", "nave": lopsided}, OPTIONS)
    assert caught.value.code == "nave_composition"
    assert caught.value.details["family"] == "event"
    with pytest.raises(LoadoutError) as short:
        GAME.validate_loadout({"character": "guerrera", "nave": nave[:29]}, OPTIONS)
    assert short.value.code == "nave_size"


@pytest.mark.parametrize(
    ("card", "rule"),
    [
        ("tregua", "neutral_event_banned"),
        ("marea_astral", "neutral_event_banned"),
        ("ritual_de_afinidad", "banned_in_duel"),
        ("pergamino_de_konfusion", "banned_in_duel"),
    ],
)
def test_neutral_events_ritual_de_afinidad_and_pergamino_de_konfusion_are_banned(
    card: str, rule: str
) -> None:
    """En el modo duelo todas los eventos neutrales están vetados al igual que el evento
    “Ritual de afinidad” y el objeto “Pergamino de konfusión”."""
    nave = random_nave(5)
    same = next(
        i for i, c in enumerate(nave) if CONTENT.cards[c].family == CONTENT.cards[card].family
    )
    nave[same] = card
    with pytest.raises(LoadoutError) as caught:
        GAME.validate_loadout({"character": "cazador", "nave": nave}, OPTIONS)
    assert caught.value.code == rule
    assert caught.value.details == {"rule": rule, "card": card}
    assert CONTENT.cards[card].name in caught.value.message


NAVE = random_nave(1)


@pytest.mark.parametrize(
    ("loadout_", "rule", "card"),
    [
        ({"character": "nadie", "random_nave": 1}, "unknown_character", "nadie"),
        ({"character": "cazador", "nave": ["espadon", *NAVE[1:]]}, "not_a_nave_card", "espadon"),
        ({"character": "cazador", "nave": ["x", *NAVE[1:]]}, "unknown_card", "x"),
        ({"character": "cazador", "nave": [NAVE[1]] * 3 + NAVE[3:]}, "too_many_copies", NAVE[1]),
        ({"character": "cazador"}, "malformed", None),
    ],
)  # fmt: skip
def test_loadout_refusals_name_the_card_and_the_rule(
    loadout_: dict[str, Any], rule: str, card: str | None
) -> None:
    with pytest.raises(LoadoutError) as caught:
        GAME.validate_loadout(loadout_, OPTIONS)
    assert caught.value.code == rule
    assert caught.value.details.get("card") == card


# --- setup ------------------------------------------------------------------------------


def test_each_shuffles_and_the_opponent_cuts() -> None:
    """Luego cada jugador baraja su nave y el oponente lo alza."""
    state = GAME.setup(9, 2, {}, [loadout("guerrera", 0), loadout("cazador", 1)])
    assert state.players[0].nave != [f"s0.{i}:{c}" for i, c in enumerate(random_nave(0))]
    assert GAME.to_act(state) == [0, 1]
    asked = GAME.prompt(state, 0)
    assert asked is not None and asked.kind == "cut" and asked.data == {"nave": 1}
    assert asked.params["cut"]["at"] == {"type": "integer", "minimum": 1, "maximum": 29}
    before = list(state.players[1].nave)
    state, events = GAME.apply(state, 0, {"type": "cut", "at": 7})
    assert state.players[1].nave == before[7:] + before[:7]
    assert events == [Event("cut", {"seat": 0, "nave": 1, "at": 7})]
    assert GAME.to_act(state) == [1]
    with pytest.raises(IllegalAction) as caught:
        GAME.apply(state, 1, {"type": "cut", "at": 30})
    assert (caught.value.code, caught.value.details) == ("bad_param", {"field": "at"})


def test_characters_laid_out_and_each_draws_five() -> None:
    """Entonces posiciona las cartas del Personaje elegido y la Nave como muestra la imagen
    superior y cada jugador roba 5 cartas."""
    state = GAME.setup(
        9, 3, {}, [loadout(c, i) for i, c in enumerate(("guerrera", "cazador", "nigromante"))]
    )
    for seat in range(3):
        state, _ = GAME.apply(state, seat, {"type": "cut", "at": 2})
    for player in state.players:
        assert len(player.hand) == 5 and len(player.nave) == 25
        assert [s.position for s in player.slots] == ["upright"] * 3
    view = GAME.view(state, 0)["players"][2]
    assert view["actions"]["cards"][2]["card"] == "animar_a_los_kaidos"
    assert view["final"] == {"id": "s2:repartir_semillas", "card": "repartir_semillas", "energy": 0}


def test_the_d10_roll_off_winner_chooses_who_plays_first() -> None:
    """Finalmente ambos lanzan un dado de 10 caras y el que saque el numero superior elige
    quien será el primero en jugar."""
    state = GAME.setup(9, 2, {}, [loadout("guerrera", 0), loadout("cazador", 1)])
    state, _ = GAME.apply(state, 0, {"type": "cut", "at": 1})
    state.rng = d10s(4, 4, 3, 8)  # a tie first, re-rolled (ours)
    state, events = GAME.apply(state, 1, {"type": "cut", "at": 1})
    rolls = [e.data["rolls"] for e in events if e.kind == "roll_off"]
    assert rolls == [
        [{"seat": 0, "roll": 4}, {"seat": 1, "roll": 4}],
        [{"seat": 0, "roll": 3}, {"seat": 1, "roll": 8}],
    ]
    assert GAME.to_act(state) == [1]
    asked = GAME.prompt(state, 1)
    assert asked is not None and asked.kind == "choose_first"
    assert asked.actions == [{"type": "first", "seat": 0}, {"type": "first", "seat": 1}]
    state, _ = GAME.apply(state, 1, {"type": "first", "seat": 0})
    assert GAME.to_act(state) == [0] and state.used == 0


def test_the_zones_are_the_seeds() -> None:
    """Nave: Es donde se ubica el mazo de juego. Vacío: Es donde van los astralis muertos, los
    objetos al ser descartados y los eventos despues de cumplir su efecto. Zona de ejercito: Es
    donde se ubican los astralis bajo tu control. ... Zona de personaje: Es donde se ubican las
    5 cartas de personaje con las que inicias el juego."""
    state = table()
    bat = field(state, 1, "murcielago_astral")
    vial = give(state, 0, "frasco_de_acido")
    bolt = give(state, 0, "rayo_fulminante")
    state, _ = act(state, {"type": "play", "card": vial})
    state, _ = act(state, {"type": "use", "card": vial, "target": hero(state, 1)})
    state, _ = act(state, {"type": "play", "card": bolt, "target": bat})
    assert vacio(state, 0) == [vial, bolt] and vacio(state, 1) == [bat]
    view = GAME.view(state, 0)["players"][0]
    zones = {"nave", "vacio", "army", "discardables", "permanents", "character", "actions"}
    assert zones <= set(view)
    cards = [view["character"], *view["actions"]["cards"], view["final"]]
    assert [c["card"] for c in cards] == [
        "guerrera", "espadon", "escudo_de_puas", "grito_de_guerra", "tajo_del_alba"
    ]  # fmt: skip


# --- the turn ---------------------------------------------------------------------------


def test_no_untap_and_no_draw_at_the_start_of_a_turn() -> None:
    """...no hay fases de turno como tal, sino una gran fase principal en la que tienen lugar
    las acciones, de hecho no se “enderezan” las cartas, ni se roba cada turno cartas del mazo."""
    state = table()
    slot(state, 1, 0).position = "turned"
    wolf = field(state, 1, "lobo_de_niebla", "exhausted")
    nave = len(state.players[1].nave)
    state, _ = act(state, {"type": "end"} if state.used else {"type": "explore"})
    assert GAME.to_act(state) == [1]
    assert slot(state, 1, 0).position == "turned"
    assert army(state, 1, wolf).position == "exhausted"
    assert len(state.players[1].nave) == nave and state.players[1].hand == []


def test_three_activations_in_any_order_even_repeated() -> None:
    """En su turno un jugador tiene 3 activaciones que pueden ser usadas indistintamente,
    incluso repitiéndolas, y en cualquier orden..."""
    state = table()
    cards = [give(state, 0, "lobo_de_niebla") for _ in range(4)]
    for played, card in enumerate(cards[:3], start=1):
        asked = GAME.prompt(state, 0)
        assert asked is not None and asked.data == {"activations_left": 4 - played}
        state, _ = act(state, {"type": "play", "card": card})
    assert len(state.players[0].army) == 3
    assert GAME.to_act(state) == [1]


def test_play_a_card_from_hand() -> None:
    """-jugar una carta de su mano. ... esta puede ser un Astrali, un Objeto (ya sea permanente,
    descartable o un arma) o un Evento (positivo o negativo)."""
    state = table()
    cards = {
        k: give(state, 0, c)
        for k, c in [("a", "oso_de_ceniza"), ("p", "cota_de_mallas"), ("d", "antidoto")]
    }
    for card in cards.values():
        state, _ = act(state, {"type": "play", "card": card})
    me = state.players[0]
    assert [a.id for a in me.army] == [cards["a"]]
    assert [o.id for o in me.permanents] == [cards["p"]]
    assert [d.id for d in me.discardables] == [cards["d"]]


def test_zones_objects_go_to_their_zones_and_permanents_keep_their_effect() -> None:
    """Objetos (permanentes): Es donde se ubican los objetos permanentes cuyos efectos se
    mantienen en el tiempo."""
    state = table()
    mail = give(state, 0, "cota_de_mallas")
    heart = give(state, 0, "corazon_de_roble")
    state, _ = act(state, {"type": "play", "card": mail})
    state, _ = act(state, {"type": "play", "card": heart})
    view = GAME.view(state, 1)["players"][0]["character"]
    assert (view["armour"], view["life"]) == (7, 19)
    assert (view["printed"]["armour"], view["printed"]["life"]) == (6, 16)


def test_discardables_wait_in_their_zone_until_activated_then_the_vacio() -> None:
    """Activar un objeto descartable en juego: Usando una activación puedes activar un
    descartable que hayas bajado previamente, el objeto hace su efecto y va al vacío."""
    state = table()
    state.players[0].hero.damage = 5
    potion = give(state, 0, "pocion_de_vida")
    state, _ = act(state, {"type": "play", "card": potion})
    assert state.players[0].hero.damage == 5
    use = {"type": "use", "card": potion, "target": hero(state, 0)}
    assert use in legal(state)
    state, _ = act(state, use)
    assert state.players[0].hero.damage == 2
    assert state.players[0].discardables == [] and vacio(state, 0) == [potion]


def test_an_event_acts_at_once_then_goes_to_the_vacio() -> None:
    """Al jugar un Evento su efecto se activa inmediatamente (como parte de la misma
    activación) y entonces va al vacío."""
    state = table()
    bolt = give(state, 0, "rayo_fulminante")
    state, events = act(state, {"type": "play", "card": bolt, "target": hero(state, 1)})
    assert state.players[1].hero.damage == 2
    assert vacio(state, 0) == [bolt] and state.used == 1
    assert kinds(events) == ["played", "damage"]


def test_picks_are_a_set_accepted_in_any_order() -> None:
    """Which of a character's actions a tiring hits is a choice of actions, not a sequence:
    `picks` in any order are the same answer and reach the same state."""
    state = table()
    ambush = give(state, 0, "emboscada")
    ids = [s.id for s in state.players[1].slots]
    play = {"type": "play", "card": ambush, "target": hero(state, 1)}
    listed, listed_events = act(state, {**play, "picks": [ids[0], ids[2]]})
    swapped, swapped_events = act(state, {**play, "picks": [ids[2], ids[0]]})
    assert GAME.dump_state(swapped) == GAME.dump_state(listed)
    assert swapped_events == listed_events
    # Repeats count: the same action twice is not two actions.
    with pytest.raises(IllegalAction) as caught:
        act(state, {**play, "picks": [ids[0], ids[0]]})
    assert caught.value.code == "bad_picks"


def test_the_player_of_an_event_chooses_its_targets() -> None:
    """En el caso de que el evento haga objetivo a alguien o algo es el jugador que lo juega
    quien escoge. Por ejemplo si el evento agota acciones del personaje oponente, es el jugador
    que la jugo quien elige cuales agotar o si pone desangramiento o euforia el jugador elige a
    que personaje o astrali pone el estado."""
    state = table()
    ambush = give(state, 0, "emboscada")
    wolf = field(state, 1, "lobo_de_niebla")
    plays = [a for a in legal(state) if a.get("card") == ambush]
    picks = [a["picks"] for a in plays if a["target"] == hero(state, 1)]
    ids = [s.id for s in state.players[1].slots]
    assert picks == [[ids[0], ids[1]], [ids[0], ids[2]], [ids[1], ids[2]]]
    assert {"type": "play", "card": ambush, "target": wolf} in plays
    state, _ = act(
        state, {"type": "play", "card": ambush, "target": hero(state, 1), "picks": [ids[0], ids[2]]}
    )
    assert [s.position for s in state.players[1].slots] == [
        "exhausted",
        "upright",
        "exhausted",
    ]
    blessing = give(state, 0, "exaltacion")
    mine = field(state, 0, "oso_de_ceniza")
    euphoria = {a.get("target") for a in legal(state) if a.get("card") == blessing}
    assert euphoria == {hero(state, 0), mine}


def test_astralis_can_attack_the_turn_they_are_played() -> None:
    """Una de las opciones disponibles del jugador como activación es atacar con una de sus
    armas enderezadas o un astrali en su zona de ejercito que este enderezado (En este juego no
    hay mareo de invocación)."""
    state = table()
    wolf = give(state, 0, "lobo_de_niebla")
    state, _ = act(state, {"type": "play", "card": wolf})
    assert {"type": "attack", "with": wolf, "target": hero(state, 1)} in legal(state)


def test_the_basic_actions_are_the_character_cards() -> None:
    """-Usar una de las acciones básicas (una de las 5 cartas iniciales)."""
    state = table()
    state.players[0].final.energy = 3
    me = state.players[0]
    used = {a.get("with") or a.get("card") for a in legal(state) if a["type"] in ("attack", "use")}
    assert used == {*(s.id for s in me.slots), me.final.id}
    assert me.hero.id not in used


def test_only_upright_astralis_and_weapons_attack() -> None:
    """-Atacar con un astrali enderezado o una de sus armas enderezadas(Esto ultimo también
    cuenta como usar una de sus acciones básicas)."""
    state = table()
    field(state, 0, "lobo_de_niebla", "turned")
    slot(state, 0, 0).position = "turned"
    attackers = {a["with"] for a in legal(state) if a["type"] == "attack"}
    assert attackers == {slot(state, 0, 1).id}


def test_attacking_turns_an_astrali_and_turns_or_exhausts_a_weapon_as_it_says() -> None:
    """Para poder atacar debes girar (90*) o agotar (180*) la carta dependiendo de lo que diga
    si es un arma, o siempre girándose si es un astrali el que ataca."""
    state = table()
    wolf = field(state, 0, "lobo_de_niebla")
    espadon, escudo = slot(state, 0, 0).id, slot(state, 0, 1).id
    for source in (wolf, espadon, escudo):
        state, _ = act(state, {"type": "attack", "with": source, "target": hero(state, 1)})
    assert army(state, 0, wolf).position == "turned"
    assert slot(state, 0, 0).position == "exhausted"  # Espadón: "Agota"
    assert slot(state, 0, 1).position == "turned"  # Escudo de púas: "Gira"


def test_three_ranges_and_three_attack_types() -> None:
    """Existen 3 rangos de ataque Cuerpo a Cuerpo, Distancia y Área ... Existen 3 tipos de
    ataque: básicos, con dado mágico o especiales."""
    attacks = [c.attack for c in CONTENT.cards.values() if c.attack is not None]
    assert {a.range for a in attacks} == {"melee", "ranged", "area"}
    assert {a.type for a in attacks} == {"basic", "magic", "special"}


def test_astralis_attack_in_melee_except_special_ones_at_range() -> None:
    """Considera que todos los astralis atacan cuerpo a cuerpo, exceptuando los que tienen
    ataques especiales (un asterisco en el valor de ataque) que lo hacen a distancia."""
    for card in CONTENT.cards.values():
        if card.kind == "astrali":
            assert card.attack is not None
            assert card.attack.range == ("ranged" if card.attack.type == "special" else "melee")
    state = table()
    spider = field(state, 0, "arana_de_cristal")
    guard = field(state, 1, "golem_de_piedra")
    assert targets_of(state, spider) == {hero(state, 1), guard}


def test_melee_must_attack_an_upright_defender_while_one_exists() -> None:
    """Cuerpo a cuerpo (CAC): Las armas cuerpo a cuerpo pueden atacar al jugador enemigo solo
    si no hay astralis preparados (enderezados) defendiéndolo, en el caso contrario deben
    atacar a alguno de dichos astralis..."""
    state = table()
    guard = field(state, 1, "golem_de_piedra")
    assert targets_of(state, slot(state, 0, 0).id) == {guard}


def test_melee_may_not_attack_a_turned_or_exhausted_astrali_while_an_upright_one_exists() -> None:
    """...tampoco pueden atacar a astralis girados o agotados si hay otros preparados..."""
    state = table()
    upright = field(state, 1, "golem_de_piedra")
    field(state, 1, "lobo_de_niebla", "turned")
    field(state, 1, "oso_de_ceniza", "exhausted")
    assert targets_of(state, slot(state, 0, 0).id) == {upright}


def test_melee_with_no_upright_astrali_may_pick_any_target_the_player_included() -> None:
    """...en el caso de que solo haya astralis que no estén preparados, el atacante elige
    cualquier objetivo como blanco (incluyendo al jugador enemigo)."""
    state = table()
    turned = field(state, 1, "lobo_de_niebla", "turned")
    exhausted = field(state, 1, "oso_de_ceniza", "exhausted")
    assert targets_of(state, slot(state, 0, 0).id) == {turned, exhausted, hero(state, 1)}


def test_melee_with_no_astrali_at_all_attacks_the_player() -> None:
    """Las armas cuerpo a cuerpo pueden atacar al jugador enemigo solo si no hay astralis
    preparados (enderezados) defendiéndolo..."""
    state = table()
    assert targets_of(state, slot(state, 0, 0).id) == {hero(state, 1)}


def test_melee_defenders_count_per_enemy_player() -> None:
    """(ours) With several enemies, each one's upright astralis defend him only."""
    state = table("guerrera", "cazador", "hechicera")
    guard = field(state, 1, "golem_de_piedra")
    assert targets_of(state, slot(state, 0, 0).id) == {guard, hero(state, 2)}


def test_ranged_attacks_any_target() -> None:
    """Distancia (DIS): Las armas a distancia pueden atacar a cualquier objetivo independiente
    de si hay astralis preparados o no."""
    state = table("cazador", "guerrera")
    guard = field(state, 1, "golem_de_piedra")
    turned = field(state, 1, "lobo_de_niebla", "turned")
    assert targets_of(state, slot(state, 0, 0).id) == {guard, turned, hero(state, 1)}


def test_area_attacks_every_enemy_astrali_and_character() -> None:
    """Área: Las armas de área atacan a todos los enemigos en la mesa, tanto astralis como
    personajes de los jugadores."""
    state = table("guerrera", "cazador", "hechicera")
    state.players[0].final.energy = 3
    guard = field(state, 1, "golem_de_piedra")
    mine = field(state, 0, "lobo_de_niebla")
    final = state.players[0].final.id
    assert {"type": "use", "card": final} in legal(state)
    state.rng = d10s(10, 10, 10)
    state, events = act(state, {"type": "use", "card": final})
    hit = [r["target"] for e in events if e.kind == "attack" for r in e.data["results"]]
    assert hit == [hero(state, 1), guard, hero(state, 2)]
    assert army(state, 0, mine).damage == 0


def test_basic_attack_compares_each_die_with_the_armour() -> None:
    """Ataques básicos (un numero en el diamante de ataque): Lanza una cantidad de dados de 10
    caras igual al valor en el diamante de ataque ... luego compara cada dado POR SEPARADO con
    la armadura del blanco, por cada dado que iguale o supere la armadura haz 1 daño."""
    state = table()  # the Cazador's armour is 5
    state.rng = d10s(5, 4, 9)
    state, events = act(
        state, {"type": "attack", "with": slot(state, 0, 0).id, "target": hero(state, 1)}
    )
    attack = next(e for e in events if e.kind == "attack")
    assert attack.data["dice"] == [5, 4, 9]
    assert state.players[1].hero.damage == 2


def test_euphoria_adds_a_die_to_basic_attacks() -> None:
    """...-si tienes el estado euforia suma un dado-... Euforia, es un estado positivo, pon una
    ficha de euforia sobre la carta para marcarlo, cada vez que el personaje haga un ataque
    básico suma un dado."""
    state = table()
    state.players[0].hero.euphoria = True
    state.rng = d10s(1, 1, 1, 7)
    state, events = act(
        state, {"type": "attack", "with": slot(state, 0, 0).id, "target": hero(state, 1)}
    )
    assert next(e for e in events if e.kind == "attack").data["dice"] == [1, 1, 1, 7]
    assert state.players[1].hero.damage == 1


def test_euphoria_is_one_token_at_most() -> None:
    """Un mismo personaje no puede tener más de una ficha de euforia sobre sí."""
    state = table()
    for _ in range(2):
        cheer = give(state, 0, "exaltacion")
        state, _ = act(state, {"type": "play", "card": cheer, "target": hero(state, 0)})
    assert state.players[0].hero.euphoria is True
    state.rng = d10s(1, 1, 1, 1, 1)
    state, events = act(
        state, {"type": "attack", "with": slot(state, 0, 0).id, "target": hero(state, 1)}
    )
    assert len(next(e for e in events if e.kind == "attack").data["dice"]) == 4


@pytest.mark.parametrize("face", sorted(set(MAGIC_DIE)))
def test_magic_die_damage_is_the_face_shown(face: int) -> None:
    """Ataques con dados mágicos (una M en el diamante de ataque): Lanza 1 dado mágico y haz
    daño igual al numero mostrado en el dado, es decir 1,2,3 o nada."""
    assert sorted(MAGIC_DIE) == [0, 0, 1, 1, 2, 3]
    state = table("hechicera", "guerrera")
    state.rng = magic(face)
    state, events = act(
        state, {"type": "attack", "with": slot(state, 0, 0).id, "target": hero(state, 1)}
    )
    assert next(e for e in events if e.kind == "attack").data["magic"] == face
    assert state.players[1].hero.damage == face


@pytest.mark.parametrize(("die", "hits"), [(5, False), (6, True)])
def test_special_attack_succeeds_only_when_strictly_higher(die: int, hits: bool) -> None:
    """Ataques especiales (un asterisco en el diamante de ataque): Lanza UN SOLO dado de 10 caras
    y haz una prueba de característica (fuerza, destreza o voluntad) si el resultado del dado es
    más alto que la característica el ataque tiene éxito. La mayoría de estos ataques tienen
    efectos además del daño."""
    state = table("cazador", "hechicera")  # Dagas envenenadas test destreza: hers is 5
    state.rng = d10s(die)
    daggers = slot(state, 0, 1).id
    state, events = act(state, {"type": "attack", "with": daggers, "target": hero(state, 1)})
    assert next(e for e in events if e.kind == "attack").data["die"] == die
    target = state.players[1].hero
    assert (target.damage, target.poison) == ((1, 1) if hits else (0, 0))


def test_a_special_attack_on_an_astrali_tests_its_armour() -> None:
    """(ours) An astrali has no characteristics: a special attack tests its armour."""
    state = table("hechicera", "guerrera")
    guard = field(state, 1, "golem_de_piedra")  # armour 6
    state.rng = d10s(6)
    state, _ = act(state, {"type": "attack", "with": slot(state, 0, 1).id, "target": guard})
    assert army(state, 1, guard).damage == 0


def test_a_destroyed_astrali_goes_to_the_vacio_and_gives_an_energy_counter() -> None:
    """Cuando un astrali tiene sobre si tanto daño como su valor de vida es derrotado y va al
    vacío, además el jugador que lo destruyo pone un contador de energía sobre su acción final."""
    state = table()
    bat = field(state, 1, "murcielago_astral")  # life 2
    bolt = give(state, 0, "rayo_fulminante")
    state, events = act(state, {"type": "play", "card": bolt, "target": bat})
    assert state.players[1].army == [] and bat in vacio(state, 1)
    assert state.players[0].final.energy == 1
    assert "astrali_destroyed" in kinds(events)


def test_energy_counters_never_exceed_three() -> None:
    """(La acción final nunca puede tener más de 3 contadores encima)."""
    state = table()
    state.players[0].final.energy = 3
    bat = field(state, 1, "murcielago_astral")
    state, _ = act(
        state, {"type": "play", "card": give(state, 0, "rayo_fulminante"), "target": bat}
    )
    assert state.players[0].final.energy == 3
    spark = give(state, 0, "chispa_de_poder")
    state, _ = act(state, {"type": "play", "card": spark})
    assert state.players[0].final.energy == 3


def test_a_character_with_damage_equal_to_life_loses() -> None:
    """Si un personaje tiene sobre si tanto daño como su valor de vida el jugador que lo
    controla es derrotado."""
    state = table()
    state.players[1].hero.damage = 11  # the Cazador's life is 13
    state, events = act(
        state, {"type": "play", "card": give(state, 0, "rayo_fulminante"), "target": hero(state, 1)}
    )
    assert "defeated" in kinds(events)
    assert GAME.outcome(state) == {"winners": [0], "ranking": [[0], [1]]}
    assert GAME.to_act(state) == []


def test_the_assistance_turns_or_exhausts_as_it_says() -> None:
    """Usar la asistencia: Usando una activación puedes usar tu asistencia (girándola o
    agotándola según lo indique)."""
    state = table("cazador", "guerrera")
    trap = slot(state, 0, 2).id
    wolf = field(state, 1, "lobo_de_niebla")
    state, _ = act(state, {"type": "use", "card": trap, "target": wolf})
    assert slot(state, 0, 2).position == "turned" and army(state, 1, wolf).position == "turned"
    assert not [a for a in legal(state) if a.get("card") == trap]
    state = table("guerrera", "cazador")
    cry = slot(state, 0, 2).id
    state, _ = act(state, {"type": "use", "card": cry, "target": hero(state, 0)})
    assert slot(state, 0, 2).position == "exhausted"


def test_the_final_action_needs_three_counters_and_removes_them() -> None:
    """Usar la acción final: Cuando esta carta tenga 3 contadores encima esta lista para usar
    su arrollador poder, puedes usarla gastando una activación y retirando todos los contadores
    de energía que tenga."""
    state = table("barbaro", "cazador")
    final = state.players[0].final
    final.energy = 2
    assert not [a for a in legal(state) if a.get("card") == final.id]
    final.energy = 3
    uses = [a for a in legal(state) if a.get("card") == final.id]
    assert uses and all(a["target"] == hero(state, 1) for a in uses)
    state, _ = act(state, uses[0])
    assert state.players[0].final.energy == 0 and state.used == 1
    assert state.players[1].hero.damage == 4


def test_explore_draws_two_and_rests_the_cards_in_play() -> None:
    """En tu turno tambien puedes pasar las 3 activaciones y declarar que exploras cuando hagas
    esto roba 2 cartas de la Nave y descansa tus cartas en juego (endereza las giradas y gira
    las agotadas). Luego el turno pasa al siguiente jugador."""
    state = table()
    wolf = field(state, 0, "lobo_de_niebla", "turned")
    bear = field(state, 0, "oso_de_ceniza", "exhausted")
    slot(state, 0, 0).position = "exhausted"
    slot(state, 0, 2).position = "turned"
    top = state.players[0].nave[:2]
    state, _ = act(state, {"type": "explore"})
    assert state.players[0].hand == top
    assert army(state, 0, wolf).position == "upright"
    assert army(state, 0, bear).position == "turned"
    assert [s.position for s in state.players[0].slots] == ["turned", "upright", "upright"]
    assert GAME.to_act(state) == [1] and state.used == 0


def test_leave_one_or_two_activations_unused_but_never_pass_all_three_without_exploring() -> None:
    """El jugador tiene la opción de no utilizar 1 o 2 activaciones, o bien no usar las 3 y
    explorar, El jugador no puede por ningún motivo pasar las 3 activaciones y no explorar."""
    state = table()
    assert {"type": "end"} not in legal(state) and {"type": "explore"} in legal(state)
    with pytest.raises(IllegalAction) as caught:
        act(state, {"type": "end"})
    assert caught.value.code == "type_not_offered" and "end" not in caught.value.details["offered"]
    state, _ = act(state, {"type": "play", "card": give(state, 0, "lobo_de_niebla")})
    assert {"type": "end"} in legal(state) and {"type": "explore"} not in legal(state)
    state, events = act(state, {"type": "end"})
    assert events[0] == Event("turn_ended", {"seat": 0, "reason": "end", "unused": 2})
    assert GAME.to_act(state) == [1]


def test_then_the_turn_passes_to_the_next_player() -> None:
    """Una vez ha realizado esto el turno pasa al siguiente jugador."""
    state = table("guerrera", "cazador", "hechicera", first=1)
    order = []
    for _ in range(4):
        order.append(state.turn)
        state, _ = act(state, {"type": "explore"}, seat=state.turn)
    assert order == [1, 2, 0, 1]


def test_statuses_come_from_events_and_from_attacks() -> None:
    """Producto de algunos eventos o ataques enemigos puedes recibir uno de los tres estados de
    Medianokte: Exploración."""
    state = table()
    state.rng = d10s(9)
    spikes = slot(state, 0, 1).id  # Escudo de púas: bleeding when it hurts
    state, _ = act(state, {"type": "attack", "with": spikes, "target": hero(state, 1)})
    assert state.players[1].hero.bleed == 0
    fog = give(state, 0, "niebla_toxica")
    state, _ = act(state, {"type": "play", "card": fog, "target": hero(state, 1)})
    assert state.players[1].hero.poison == 1


def test_bleeding_hurts_at_the_end_of_its_bearers_turn_one_token_at_most() -> None:
    """Desangramiento, es un estado que causa daño recurrente, pon una ficha de desangramiento
    sobre la carta para marcarlo, al final de cada turno del personaje o astrali que lo tenga
    causa 1 daño.. Una misma carta no puede tener más de una ficha de desangramiento sobre sí."""
    state = table()
    for _ in range(2):
        state, _ = act(
            state,
            {
                "type": "play",
                "card": give(state, 0, "maldicion_de_sangre"),
                "target": hero(state, 1),
            },
        )
    assert state.players[1].hero.damage == 0
    state, _ = act(state, {"type": "end"})  # the end of seat 0's turn: not the bearer's
    assert state.players[1].hero.damage == 0
    state, events = act(state, {"type": "explore"}, seat=1)
    assert state.players[1].hero.damage == 1 and "bleeding" in kinds(events)


def test_an_astrali_killed_by_bleeding_gives_the_energy_to_who_made_it_bleed() -> None:
    """(ours) The player who put the bleeding token is the one who destroyed the astrali."""
    state = table()
    bat = field(state, 1, "murcielago_astral")
    army(state, 1, bat).damage = 1
    state, _ = act(
        state, {"type": "play", "card": give(state, 0, "maldicion_de_sangre"), "target": bat}
    )
    state, _ = act(state, {"type": "end"})
    state, _ = act(state, {"type": "explore"}, seat=1)
    assert bat in vacio(state, 1) and state.players[0].final.energy == 1


def test_poison_lowers_armour_by_one_per_token_any_number() -> None:
    """Envenenado, es un estado que representa los ácidos que corroen la armadura y debilitan
    las defensas, por cada ficha de veneno que la carta tenga sobre sí, disminuye en 1 su
    armadura. Una misma carta puede tener cualquier cantidad de fichas de veneno sobre sí."""
    state = table()
    guard = field(state, 1, "golem_de_piedra")  # armour 6
    for _ in range(3):
        state, _ = act(
            state, {"type": "play", "card": give(state, 0, "niebla_toxica"), "target": guard}
        )
    assert army(state, 1, guard).poison == 3
    seen = GAME.view(state, 1)["players"][1]["army"]["cards"][0]
    assert (seen["armour"], seen["printed"]["armour"]) == (3, 6)


def test_poison_taking_armour_to_zero_defeats_the_player() -> None:
    """...un jugador pierde ... Cuando su armadura llega a 0 producto del veneno..."""
    state = table()  # the Cazador's armour is 5
    state.players[1].hero.poison = 3
    acid = give(state, 0, "lluvia_acida")
    state, events = act(state, {"type": "play", "card": acid, "target": hero(state, 1)})
    assert [e.data for e in events if e.kind == "defeated"] == [{"seat": 1, "reason": "poison"}]
    assert GAME.outcome(state) == {"winners": [0], "ranking": [[0], [1]]}


def test_exploring_an_empty_nave_defeats() -> None:
    """...o por ultimo cuando al explorar no quedan cartas en su mazo."""
    state = table("guerrera", "cazador", "hechicera")
    state.players[0].nave = []
    state, events = act(state, {"type": "explore"})
    assert [e.data for e in events if e.kind == "defeated"] == [{"seat": 0, "reason": "empty_nave"}]
    assert GAME.outcome(state) is None and GAME.to_act(state) == [1]


def test_the_last_player_standing_wins() -> None:
    """El ultimo jugador en quedar en pie es el ganador."""
    state = table("guerrera", "cazador", "hechicera")
    state.players[2].hero.damage = 11
    state, _ = act(
        state, {"type": "play", "card": give(state, 0, "rayo_fulminante"), "target": hero(state, 2)}
    )
    assert GAME.outcome(state) is None
    assert hero(state, 2) not in {a.get("target") for a in legal(state)}
    state.players[1].hero.damage = 11
    state, _ = act(
        state, {"type": "play", "card": give(state, 0, "rayo_fulminante"), "target": hero(state, 1)}
    )
    assert GAME.outcome(state) == {"winners": [0], "ranking": [[0], [1], [2]]}


# --- the FAQ ----------------------------------------------------------------------------


def test_tiring_an_action_picks_a_weapon_or_the_assistance_never_the_final_action() -> None:
    """¿A que se refieren algunos eventos o astralis cuando dicen gira o agota una acción? Las
    acciones son las 4 cartas que tiene el jugador además de su personaje, ten en cuenta que la
    acción final no puede girarse ni agotarse así que si un evento o enemigo te obliga a cansar
    una acción debe ser o una de tus armas o tu asistencia."""
    state = table()
    disarm = give(state, 0, "desarme")
    picks = [a["picks"] for a in legal(state) if a.get("card") == disarm]
    assert picks == [[s.id] for s in state.players[1].slots]
    assert all(state.players[1].final.id not in p for p in picks)
    assert "position" not in msgspec.to_builtins(state.players[1].final)


def test_cards_that_tire_actions_tire_an_astrali_but_n_actions_of_a_player_are_his_cards() -> None:
    """¿Las cartas que agotan o giran acciones tienen efecto sobre los astralis? Si, ... pueden
    ser usados sobre los astralis y en ese caso lo giran o agotan según corresponda. ¡Pero! si
    una carta agota o gira un numero de acciones de un jugador se refiere a los dos armas y
    asistencia, ya que si se le juega al personaje enemigo no se esta eligiendo al astrali como
    blanco."""
    state = table()
    wolf = field(state, 1, "lobo_de_niebla")
    ambush = give(state, 0, "emboscada")  # "Agota ... dos acciones"
    state, _ = act(state, {"type": "play", "card": ambush, "target": wolf})
    assert army(state, 1, wolf).position == "exhausted"
    assert [s.position for s in state.players[1].slots] == ["upright"] * 3
    ambush = give(state, 0, "emboscada")
    ids = [s.id for s in state.players[1].slots][:2]
    state, _ = act(state, {"type": "play", "card": ambush, "target": hero(state, 1), "picks": ids})
    assert [s.position for s in state.players[1].slots] == [
        "exhausted",
        "exhausted",
        "upright",
    ]


def test_cards_that_tire_astralis_tire_one_action_of_a_character() -> None:
    """¿Las cartas que agotan o giran astralis tienen efecto sobre los personajes? Si, las
    cartas que agotan o giran astralis pueden ser usadas contra los personajes, en este caso
    giran o agotan una de sus acciones según corresponda (una de sus armas o asistencia)."""
    state = table("cazador", "guerrera")
    trap = slot(state, 0, 2).id  # "gira un astrali enemigo o una acción"
    target = slot(state, 1, 2).id
    state, _ = act(
        state, {"type": "use", "card": trap, "target": hero(state, 1), "picks": [target]}
    )
    assert [s.position for s in state.players[1].slots] == ["upright", "upright", "turned"]
    state = table("cazador", "guerrera")
    imp = field(state, 0, "duende_burlon")  # an astrali whose special attack turns the target
    shield = slot(state, 1, 1).id
    picks = [a["picks"] for a in legal(state) if a.get("with") == imp]
    assert picks == [[s.id] for s in state.players[1].slots]
    state.rng = d10s(10)
    attack = {"type": "attack", "with": imp, "target": hero(state, 1), "picks": [shield]}
    state, _ = act(state, attack)
    assert [s.position for s in state.players[1].slots] == ["upright", "turned", "upright"]


def test_the_jefe_final_is_the_enemy_character() -> None:
    """¿Cómo funcionan las cartas que hacen referencia al Jefe Final en este modo? Cada vez que
    se haga mención al Jefe Final se considera que se refiere al Personaje Enemigo."""
    assert "Jefe Final" in CONTENT.cards["juicio_del_jefe"].text
    state = table("guerrera", "cazador", "hechicera")
    field(state, 1, "lobo_de_niebla")
    judgement = give(state, 0, "juicio_del_jefe")
    aimed = {a["target"] for a in legal(state) if a.get("card") == judgement}
    assert aimed == {hero(state, 1), hero(state, 2)}


def test_the_nigromante_raises_enemy_astralis_without_counters_in_their_position() -> None:
    """Dudas sobre el Nigromante Tanto “Animar a los Kaidos” como “Repartir Semillas” funcionan
    de la misma manera en este modo: Los astralis a resucitar deben ser enemigos y pasan a formar
    parte de tu ejercito, ningún contador (veneno, desangramiento, euforia o daño) permanece en
    esta transición, pero el astrali mantiene su posición (enderezado, girado o agotado)."""
    state = table("nigromante", "guerrera")
    wolf = field(state, 1, "lobo_de_niebla", "turned")  # life 3
    counters = army(state, 1, wolf)
    counters.damage, counters.poison, counters.bleed, counters.euphoria = 1, 2, 0, True
    bear = field(state, 1, "oso_de_ceniza", "exhausted")  # life 5
    army(state, 1, bear).damage = 2
    state, _ = act(
        state, {"type": "play", "card": give(state, 0, "rayo_fulminante"), "target": wolf}
    )
    state, _ = act(state, {"type": "play", "card": give(state, 0, "derrumbe"), "target": bear})
    assert vacio(state, 1) == [wolf, bear]
    own = field(state, 0, "kaido_menor")
    state.players[0].army = []
    state.players[0].vacio.append(VacioCard(id=own, position="upright", owner=0))
    state.used = 0  # a fresh turn, for the two resurrections
    kaidos = slot(state, 0, 2).id
    raisable = {a["target"] for a in legal(state) if a.get("card") == kaidos}
    assert raisable == {wolf, bear}  # never one's own astrali
    state, _ = act(state, {"type": "use", "card": kaidos, "target": wolf})
    assert msgspec.to_builtins(army(state, 0, wolf)) == {
        "id": wolf, "position": "turned", "damage": 0, "bleed": None, "poison": 0,
        "euphoria": False, "owner": 1,
    }  # fmt: skip
    state.players[0].final.energy = 3
    seeds = state.players[0].final.id
    assert {a.get("target") for a in legal(state) if a.get("card") == seeds} == {hero(state, 1)}
    state, _ = act(state, {"type": "use", "card": seeds, "target": hero(state, 1)})
    assert army(state, 0, bear).position == "exhausted" and army(state, 0, bear).damage == 0
    assert vacio(state, 1) == []


# --- whole matches ----------------------------------------------------------------------


@pytest.mark.parametrize("seats", [2, 3, 4])
@given(seed=st.integers(0, 2**64 - 1), chooser=st.integers(0, 2**64 - 1))
@settings(max_examples=15, deadline=None)
def test_random_legal_play_with_random_naves_reaches_the_end(
    seats: int, seed: int, chooser: int
) -> None:
    rng = SplitMix64(chooser)
    loadouts = [GAME.sample_loadout(rng.next(), OPTIONS) for _ in range(seats)]
    state = GAME.setup(seed, seats, {}, loadouts)
    for _ in range(3000):
        if GAME.outcome(state) is not None:
            break
        seat = rng.pick(GAME.to_act(state))
        asked = GAME.prompt(state, seat)
        assert asked is not None
        state, _ = GAME.apply(state, seat, random_answer(asked, rng))
    outcome = GAME.outcome(state)
    assert outcome is not None and len(outcome["winners"]) == 1
    assert sorted(s for group in outcome["ranking"] for s in group) == list(range(seats))


def test_views_show_own_hand_and_only_sizes_of_other_hands_and_naves() -> None:
    state = table()
    give(state, 0, "lobo_de_niebla")
    (card,) = state.players[0].hand
    mine = GAME.view(state, 0)["players"]
    assert mine[0]["hand"] == {"count": 1, "cards": [{"id": card, "card": "lobo_de_niebla"}]}
    assert mine[1]["hand"] == {"count": 0, "cards": None}
    assert mine[0]["nave"] == {"count": len(state.players[0].nave), "cards": None}
    assert GAME.view(state, None)["players"][0]["hand"] == {"count": 1, "cards": None}


def test_resigning_in_a_three_seat_match_lets_the_others_play_on() -> None:
    state = table("guerrera", "cazador", "hechicera")
    state, events = GAME.resign(state, 0)
    assert kinds(events) == ["resigned", "defeated", "turn_ended", "turn_start"]
    assert GAME.to_act(state) == [1] and GAME.outcome(state) is None
    state, _ = GAME.resign(state, 2)
    assert GAME.outcome(state) == {"winners": [1], "ranking": [[1], [2], [0]]}
