"""The loyalty game as a client meets it: its catalogue, its view, why an action is refused,
the answers that lose at once, the response window's events and the `auto_pass` preference.

Tables are set as in test_loyalty.py: a game by `setup`, then the state a test needs.
"""

import re
from collections.abc import Callable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from service.games.kernel.catalogue import catalogue_schema
from service.games.kernel.prompts import Prompt
from service.games.kernel.protocol import Event, IllegalAction, rebuild
from service.games.loyalty import LoyaltyGame, LoyaltyGameLeg
from service.games.loyalty.content import CONTENT, load_content
from service.games.loyalty.state import PHASES, State
from tests.games.test_loyalty import act, in_hand, kinds, put, table

LEG = LoyaltyGameLeg()
MATCH = LoyaltyGame()
RULES_DOC = Path(__file__).parents[2] / "docs" / "rules" / "loyalty.md"
KERNEL_CODES = {"bad_param", "not_offered", "type_not_offered", "not_an_action", "not_asked"}


def refused(state: State, seat: int, action: Any) -> IllegalAction:
    with pytest.raises(IllegalAction) as caught:
        act(state, seat, action)
    return caught.value


def of(events: list[Event], kind: str) -> list[Mapping[str, Any]]:
    return [e.data for e in events if e.kind == kind]


def hand_of(state: State, seat: int, *cards: str) -> list[str]:
    """`seat`'s hand made of exactly `cards`; their instance ids."""
    state.sides[seat].hand = []
    return [in_hand(state, seat, card) for card in cards]


# --- the catalogue ------------------------------------------------------------------------


def test_the_catalogue_lists_every_card_with_its_printed_numbers_and_its_effect() -> None:
    """Reednor as the seed prints him: "me cuesta 2 contadores de Lealtad ..., tiene 2 de Poder
    de Ataque (espadas) y 2 de Poder de Defensa (escudo), también tiene un efecto que vale 2
    contadores de lealtad que hace que yo y mi oponente subamos a la mano a un personaje"."""
    body = LEG.catalogue()
    entries = {e["id"]: e for e in body["entries"]}
    assert set(entries) == set(CONTENT.cards)
    reednor = entries["reednor"]
    assert (reednor["kind"], reednor["family"]) == ("character", "guardia_velmar")
    assert reednor["numbers"] == {"cost": 2, "attack": 2, "defence": 2}
    assert reednor["effects"] == [
        {
            "kind": "return_both",
            "amount": 1,
            "target": "own_character_then_theirs",
            "timing": "own_turn",
            "cost": {"loyalty": 2},
        }
    ]
    assert "pay 2 loyalty" in reednor["text"] and "returns one of theirs" in reednor["text"]
    assert entries["emboscada"]["effects"][0]["target"] == "opposing_character_of_defence_at_most"
    assert "defence 2 or less" in entries["emboscada"]["text"]
    assert entries["estandarte"]["family"] == "posesion"
    assert entries["rayo"]["family"] is None and entries["rayo"]["numbers"] == {"cost": 2}
    document = {**body, "game": "loyalty", "ruleset": LEG.ruleset, "rulesets": [LEG.ruleset]}
    jsonschema.validate(document, catalogue_schema("loyalty", body))


def test_the_catalogue_is_built_from_the_content_file() -> None:
    text = resources.files("service.games.loyalty").joinpath("cards.toml").read_text("utf-8")
    changed = text.replace("cost = 2\nattack = 2\ndefence = 2", "cost = 3\nattack = 2\ndefence = 2")
    entries = {e["id"]: e for e in LoyaltyGameLeg(load_content(changed)).catalogue()["entries"]}
    assert entries["reednor"]["numbers"]["cost"] == 3


def test_the_catalogue_rules_hold_the_game_wide_numbers() -> None:
    """ "Lanza 1 dado de 6", "cada jugador roba 5 cartas", and each mode's life."""
    rules = LEG.catalogue()["rules"]
    assert rules["die"] == {"count": 1, "faces": 6} and rules["hand_size"] == 5
    assert {m["id"]: m["life"] for m in rules["modes"]} == {
        "escaramuza": 25,
        "conquista": 20,
        "legion": 30,
    }
    assert rules["alignments"][0] == {"id": "alianza", "factions": ["guardia_velmar", "orden_alba"]}
    assert (rules["deck_size"], rules["max_copies"], rules["best_of"]) == (20, 4, 3)


def test_the_loadout_schema_lists_each_card_id_with_its_kind_and_family() -> None:
    deck = LEG.loadout_schema()["properties"]["deck"]
    items = {i["const"]: i for i in deck["items"]["oneOf"]}
    assert set(items) == set(CONTENT.cards)
    assert items["reednor"]["description"] == "character, guardia_velmar"
    assert items["estandarte"]["description"] == "adventure, posesion"
    assert items["rayo"]["description"] == "adventure"
    assert "/v1/content/loyalty" in deck["description"]


# --- the view -----------------------------------------------------------------------------


def test_a_character_shows_its_values_now_and_as_printed() -> None:
    state = table(phase="play_again")
    mine = put(state, 0, "reednor", "attack")
    state.sides[0].loyalty, state.sides[1].loyalty = 3, 0
    state, _ = act(state, 0, {"type": "boost", "card": mine, "stat": "attack", "amount": 3})
    for seat in (0, 1, None):
        (shown,) = LEG.view(state, seat)["sides"][0]["attack_zone"]["cards"]
        assert shown == {
            "id": mine,
            "card": "reednor",
            "attack": 5,
            "defence": 2,
            "printed": {"attack": 2, "defence": 2},
            "attacked": False,
            "used": False,
        }


def test_who_starts_is_not_shown_before_it_is_chosen() -> None:
    options = {"mode": "legion", "chooser": 1}
    loadouts = [LEG.sample_loadout(s, options) for s in (0, 1)]
    state = LEG.setup(4, 2, options, loadouts)
    view = LEG.view(state, 0)
    assert (view["phase"], view["first"], view["active"], view["chooser"]) == (
        "choose_first",
        None,
        None,
        1,
    )
    state, events = act(state, 1, {"type": "first", "seat": 0})
    view = LEG.view(state, 1)
    assert (view["first"], view["active"]) == (0, 0)
    assert of(events, "phase") == [{"seat": 0, "phase": "draw", "turn": 1}]


def test_a_card_returned_to_a_hand_is_shown_to_both_seats() -> None:
    state = table()
    reednor, other = put(state, 0, "reednor"), put(state, 0, "buhonero")
    state.sides[0].loyalty, state.sides[1].loyalty = 2, 0
    state, events = act(state, 0, {"type": "effect", "card": reednor, "target": other})
    assert of(events, "returned") == [{"seat": 0, "id": other, "card": "buhonero"}]
    seen = LEG.view(state, 1)["sides"][0]
    assert seen["known_in_hand"] == [{"id": other, "card": "buhonero"}]
    assert seen["hand"]["cards"] is None


def test_the_stack_names_each_adventure_by_instance_and_catalogue_id() -> None:
    state = table(phase="attack")
    mine = put(state, 0, "verdugo", "attack")
    theirs = put(state, 1, "soldado_ceniza", "attack")
    (wall,) = hand_of(state, 1, "muro_escudos")
    state.sides[0].loyalty, state.sides[1].loyalty = 1, 1
    state, _ = act(state, 0, {"type": "attack", "attacker": mine, "target": theirs})
    state, _ = act(state, 1, {"type": "adventure", "card": wall, "target": theirs})
    expected = {"seat": 1, "id": wall, "card": "muro_escudos", "target": theirs}
    assert LEG.view(state, 0)["stack"] == [expected]
    prompt = LEG.prompt(state, 0)
    assert prompt is not None and prompt.data["stack"] == [expected]


# --- refusals -----------------------------------------------------------------------------


def _choose_first() -> State:
    options = {"mode": "legion", "chooser": 1}
    return LEG.setup(4, 2, options, [LEG.sample_loadout(s, options) for s in (0, 1)])


def _playing(*cards: str, loyalty: int = 2) -> tuple[State, list[str]]:
    state = table()
    held = hand_of(state, 0, *cards)
    state.sides[0].loyalty = loyalty
    return state, held


def _not_in_hand() -> tuple[State, int, Any]:
    state, _ = _playing("buhonero")
    return state, 0, {"type": "play", "card": "h.0-9:reednor"}


def _not_playable() -> tuple[State, int, Any]:
    state, (_, bolt) = _playing("buhonero", "rayo")
    return state, 0, {"type": "play", "card": bolt}


def _cannot_pay() -> tuple[State, int, Any]:
    state, (_, lord) = _playing("buhonero", "senor_ceniza")
    return state, 0, {"type": "play", "card": lord}


def _not_an_adventure() -> tuple[State, int, Any]:
    state, (_, pedlar) = _playing("rayo", "buhonero")
    return state, 0, {"type": "adventure", "card": pedlar}


def _no_such_target() -> tuple[State, int, Any]:
    state, (fury,) = _playing("furia")
    put(state, 0, "buhonero")
    theirs = put(state, 1, "verdugo")
    return state, 0, {"type": "adventure", "card": fury, "target": theirs}


def _effects(loyalty: int = 2) -> State:
    state = table()
    put(state, 0, "buhonero")  # draw, for 2
    state.sides[0].loyalty = loyalty
    return state


def _not_in_play() -> tuple[State, int, Any]:
    return _effects(), 0, {"type": "effect", "card": "t.1-9:buhonero"}


def _already_used() -> tuple[State, int, Any]:
    state = _effects()
    used = put(state, 0, "capitana_ilsa")
    state.sides[0].units[-1].used = True
    return state, 0, {"type": "effect", "card": used}


def _effect_cannot_pay() -> tuple[State, int, Any]:
    state = _effects()
    prophet = put(state, 0, "profeta_oscuro")  # draw 2, for 3
    return state, 0, {"type": "effect", "card": prophet}


def _attacks() -> tuple[State, str]:
    state = table(phase="attack")
    mine = put(state, 0, "verdugo", "attack")
    return state, mine


def _not_in_attack_zone() -> tuple[State, int, Any]:
    state, _ = _attacks()
    guard = put(state, 0, "oso_guardian")
    put(state, 1, "buhonero", "attack")
    return state, 0, {"type": "attack", "attacker": guard, "target": "life"}


def _already_attacked() -> tuple[State, int, Any]:
    state, _ = _attacks()
    tired = put(state, 0, "soldado_ceniza", "attack")
    state.sides[0].units[-1].attacked = True
    return state, 0, {"type": "attack", "attacker": tired, "target": "life"}


def _life_defended() -> tuple[State, int, Any]:
    state, mine = _attacks()
    put(state, 1, "buhonero")
    return state, 0, {"type": "attack", "attacker": mine, "target": "life"}


def _attack_no_such_target() -> tuple[State, int, Any]:
    state, mine = _attacks()
    return state, 0, {"type": "attack", "attacker": mine, "target": mine}


def _no_such_seat() -> tuple[State, int, Any]:
    return _choose_first(), 1, {"type": "first", "seat": 2}


def _return_not_in_play() -> tuple[State, int, Any]:
    state = table()
    put(state, 1, "verdugo")
    state.returning = 1
    return state, 1, {"type": "return", "card": "t.0-0:verdugo"}


def _two_cards() -> tuple[State, int, Any]:
    return table(phase="draw"), 0, {"type": "draw", "cards": 2}


def _pass_with_a_card() -> tuple[State, int, Any]:
    return table(phase="draw"), 0, {"type": "pass", "card": "x"}


CASES: dict[str, tuple[Callable[[], tuple[State, int, Any]], str]] = {
    "a seat that is not at the table starts": (_no_such_seat, "no_such_seat"),
    "playing a card from another hand": (_not_in_hand, "not_in_hand"),
    "playing an adventure as a character": (_not_playable, "not_playable"),
    "a character it cannot pay for": (_cannot_pay, "cannot_pay"),
    "a character as an adventure": (_not_an_adventure, "not_an_adventure"),
    "Furia on an opposing character": (_no_such_target, "no_such_target"),
    "the effect of an opposing character": (_not_in_play, "not_in_play"),
    "an effect used twice in a turn": (_already_used, "already_used"),
    "an effect it cannot pay for": (_effect_cannot_pay, "cannot_pay"),
    "an attack from the Defence zone": (_not_in_attack_zone, "not_in_attack_zone"),
    "a character attacking twice": (_already_attacked, "already_attacked"),
    "the life behind a defender": (_life_defended, "life_defended"),
    "an attack on one's own character": (_attack_no_such_target, "no_such_target"),
    "returning the opponent's character": (_return_not_in_play, "not_in_play"),
    "drawing two cards": (_two_cards, "bad_param"),
    "a pass with a card": (_pass_with_a_card, "bad_param"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_a_refusal_names_the_rule_the_action_breaks(case: str) -> None:
    build, code = CASES[case]
    state, seat, action = build()
    assert LEG.prompt(state, seat) is not None
    before = LEG.dump_state(state)
    refusal = refused(state, seat, action)
    assert refusal.code == code, refusal.reason
    assert refusal.reason and LEG.dump_state(state) == before


def test_the_rules_doc_lists_every_refusal_code_the_tests_see_and_no_other() -> None:
    """docs/rules/loyalty.md#refusals: one row per code the rules answer."""
    text = RULES_DOC.read_text("utf-8")
    section = text.split("## Refusals", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| `([a-z_]+)` \|", section, flags=re.MULTILINE))
    seen = {code for _, code in CASES.values()}
    assert listed == seen - KERNEL_CODES


GARBAGE: list[Any] = [None, -1, 7, 1.5, True, "", "x", [], ["x"], {}, {"a": 1}]


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_any_json_in_an_offered_action_is_refused_never_raised_on(case: str) -> None:
    state, seat, _ = CASES[case][0]()
    prompt = LEG.prompt(state, seat)
    assert prompt is not None
    kinds_offered = {a["type"]: a for a in prompt.actions}
    for offered in kinds_offered.values():
        for field in [*offered, "target", "other"]:
            if field == "type":
                continue
            for value in GARBAGE:
                with pytest.raises(IllegalAction):
                    act(state, seat, {**offered, field: value})


# --- answers that lose at once --------------------------------------------------------------


def _last_card(card: str, loyalty: int) -> tuple[State, str]:
    state = table()
    state.sides[0].deck = []
    (last,) = hand_of(state, 0, card)
    state.sides[0].loyalty = loyalty
    return state, last


def test_playing_the_last_card_with_an_empty_deck_is_flagged_as_losing() -> None:
    """ "ganara aquel jugador que ... deje a su oponente sin cartas en mano y baraja" """
    state, last = _last_card("buhonero", 1)
    prompt = LEG.prompt(state, 0)
    assert prompt is not None
    play = {"type": "play", "card": last}
    assert [prompt.actions[i] for i in prompt.loses] == [play]
    wire = prompt.as_dict()["actions"]
    assert {**play, "loses": True} in wire and {"type": "pass"} in wire
    assert LEG.bot_move(state, 0, 1) == {"type": "pass"}
    # The flag may be sent back: it is the server's word, not part of the action.
    state, events = act(state, 0, {**play, "loses": True})
    assert LEG.outcome(state) == {"winners": [1], "ranking": [[1], [0]]}
    assert events[-1].data["reason"] == "no_cards"


def test_a_last_card_that_takes_the_last_life_first_is_not_flagged() -> None:
    state, last = _last_card("asedio", 3)
    state.sides[1].life = 2
    prompt = LEG.prompt(state, 0)
    assert prompt is not None and prompt.loses == ()
    state, _ = act(state, 0, {"type": "play", "card": last})
    assert LEG.outcome(state) == {"winners": [0], "ranking": [[0], [1]]}


def test_nothing_is_flagged_while_the_deck_holds_cards() -> None:
    state = table()
    hand_of(state, 0, "buhonero")
    state.sides[0].loyalty = 1
    prompt = LEG.prompt(state, 0)
    assert prompt is not None and prompt.loses == ()


# --- the response window's events ------------------------------------------------------------


def test_a_window_event_is_sent_when_the_window_opens_moves_and_closes() -> None:
    """The window moving back to the active player is an event too."""
    state = table(phase="attack")
    mine = put(state, 0, "verdugo", "attack")
    theirs = put(state, 1, "soldado_ceniza", "attack")
    (wall,) = hand_of(state, 1, "muro_escudos")
    (fury,) = hand_of(state, 0, "furia")
    state.sides[0].loyalty = state.sides[1].loyalty = 1
    state, events = act(state, 0, {"type": "attack", "attacker": mine, "target": theirs})
    assert of(events, "window") == [{"seat": 1, "change": "opened", "auto_passed": False}]
    state.sides[1].loyalty = 2
    state, events = act(state, 1, {"type": "adventure", "card": wall, "target": theirs})
    assert of(events, "window") == [{"seat": 0, "change": "moved", "auto_passed": False}]
    state, events = act(state, 0, {"type": "adventure", "card": fury, "target": mine})
    assert of(events, "window") == [{"seat": 1, "change": "moved", "auto_passed": False}]
    state, events = act(state, 1, {"type": "pass"})
    assert of(events, "passed") == [{"seat": 1, "phase": "response", "auto": False}]
    assert of(events, "window") == [{"seat": None, "change": "closed", "auto_passed": False}]
    assert kinds(events).index("window") < kinds(events).index("resolved")


def test_every_phase_begins_with_an_event() -> None:
    """ "a)Comienzo del turno. b)Roba una carta ... h)Juega cartas de personaje" """
    state = table(phase="draw")
    state.sides[1].loyalty = 0
    seen: list[str] = []
    while state.active == 0:
        prompt = LEG.prompt(state, 0)
        assert prompt is not None
        state, events = act(state, 0, prompt.actions[0])
        seen += [e["phase"] for e in of(events, "phase")]
    assert seen == [*PHASES[1:], "draw"]
    assert of(events, "phase")[-1] == {"seat": 1, "phase": "draw", "turn": 4}


# --- the auto_pass preference ---------------------------------------------------------------


def test_the_preference_is_auto_pass_off_by_default() -> None:
    assert LEG.preferences_schema() == {
        "auto_pass": {
            "type": "bool",
            "default": False,
            "description": "pass every response window in which you cannot pay for any adventure",
        }
    }
    assert MATCH.preferences_schema() == LEG.preferences_schema()
    state, events = LEG.prefer(table(), 1, {})
    assert state.auto_pass == [False, False]
    assert events == [Event("preferences", {"seat": 1, "auto_pass": False}, visible_to=(1,))]
    with pytest.raises(IllegalAction) as caught:
        LEG.prefer(table(), 1, {"auto_pass": "yes"})
    assert caught.value.code == "bad_param"


def _played_character(auto_pass: bool, answer: str | None) -> tuple[State, list[Event]]:
    """Seat 0 plays a character; seat 1, with a counter, holds `answer` in hand."""
    state = table()
    (pedlar,) = hand_of(state, 0, "buhonero")
    hand_of(state, 1, *([answer] if answer else []), "verdugo")
    state.sides[0].loyalty, state.sides[1].loyalty = 1, 2
    state, _ = LEG.prefer(state, 1, {"auto_pass": auto_pass})
    return act(state, 0, {"type": "play", "card": pedlar})


def test_a_window_the_seat_cannot_answer_is_passed_for_it_when_it_asked() -> None:
    state, events = _played_character(True, None)
    assert of(events, "window") == [
        {"seat": 1, "change": "opened", "auto_passed": True},
        {"seat": None, "change": "closed", "auto_passed": False},
    ]
    assert of(events, "passed") == [{"seat": 1, "phase": "response", "auto": True}]
    assert LEG.to_act(state) == [0] and state.responder is None


@pytest.mark.parametrize(("auto_pass", "answer"), [(True, "rayo"), (False, None)])
def test_a_seat_is_asked_when_it_can_pay_for_an_adventure_or_did_not_ask(
    auto_pass: bool, answer: str | None
) -> None:
    state, events = _played_character(auto_pass, answer)
    assert of(events, "window") == [{"seat": 1, "change": "opened", "auto_passed": False}]
    assert LEG.to_act(state) == [1]


def test_setting_the_preference_while_holding_a_window_passes_it_at_once() -> None:
    state, _ = _played_character(False, None)
    state, events = LEG.prefer(state, 1, {"auto_pass": True})
    assert kinds(events)[:3] == ["preferences", "passed", "window"]
    assert of(events, "passed") == [{"seat": 1, "phase": "response", "auto": True}]
    assert LEG.to_act(state) == [0]


def test_a_seat_passed_for_loses_no_later_than_its_own_pass_would_have() -> None:
    """The last card played with an empty deck loses at once, whether or not the opponent's
    window is then passed for it (else its Rayo would resolve and win)."""
    state, last = _last_card("rayo", 2)
    state.sides[1].life, state.sides[1].loyalty = 2, 1
    hand_of(state, 1, "verdugo")
    prompt = LEG.prompt(state, 0)
    assert prompt is not None and [prompt.actions[i] for i in prompt.loses] == [
        {"type": "adventure", "card": last}
    ]
    for auto_pass in (False, True):
        trial, _ = LEG.prefer(state, 1, {"auto_pass": auto_pass})
        trial, events = act(trial, 0, {"type": "adventure", "card": last})
        assert LEG.outcome(trial) == {"winners": [1], "ranking": [[1], [0]]}
        assert events[-1].data["reason"] == "no_cards" and trial.sides[1].life == 2


def test_a_timer_passes_a_window_and_the_windows_it_opens_follow_the_preference() -> None:
    state = table()
    reednor, other = put(state, 0, "reednor"), put(state, 0, "buhonero")
    theirs = put(state, 1, "verdugo")
    hand_of(state, 1, "verdugo")
    state.sides[0].loyalty, state.sides[1].loyalty = 2, 1
    state, _ = LEG.prefer(state, 1, {"auto_pass": True})
    state, _ = act(state, 0, {"type": "effect", "card": reednor, "target": other})
    # Seat 1's timer runs out on the return prompt; then the window opened for it is passed.
    timeout = LEG.timeout_action(state, 1)
    assert timeout == {"type": "return", "card": theirs}
    state, events = LEG.apply(state, 1, timeout)
    assert of(events, "passed") == [{"seat": 1, "phase": "response", "auto": True}]
    assert LEG.to_act(state) == [0]
    # A window's own timer passes it.
    state, _ = _played_character(False, "rayo")
    assert LEG.timeout_action(state, 1) == {"type": "pass"}


def test_the_preference_holds_for_the_next_games_of_the_match_and_replays() -> None:
    options = MATCH.check_options(2, {})
    loadouts = [MATCH.sample_loadout(s, options) for s in (0, 1)]
    match = MATCH.setup(9, 2, options, loadouts)
    match, _ = MATCH.prefer(match, 1, {"auto_pass": True})
    assert match.inner.auto_pass == [False, True]
    assert MATCH.view(match, 1)["inner"]["sides"][1]["auto_pass"] is True
    assert MATCH.view(match, 0)["inner"]["sides"][1]["auto_pass"] is None
    log: list[tuple[int, dict[str, Any]]] = [(1, {"type": "$prefer", "auto_pass": True})]
    for step in range(3000):
        if match.leg == 2 or MATCH.outcome(match) is not None:
            break
        seat = MATCH.to_act(match)[0]
        action = MATCH.bot_move(match, seat, step)
        log.append((seat, action))
        match, _ = MATCH.apply(match, seat, action)
    assert match.leg == 2 and match.inner.auto_pass == [False, True]
    again = rebuild(MATCH, 9, 2, options, loadouts, log)
    assert MATCH.dump_state(again) == MATCH.dump_state(match)


def test_a_game_stored_before_preferences_existed_still_loads() -> None:
    stored = LEG.dump_state(table())
    del stored["auto_pass"]
    assert LEG.load_state(stored).auto_pass == [False, False]


def test_a_wire_prompt_rebuilds_for_the_bot() -> None:
    """A client builds the prompt from its wire form (with `loses` on the actions) and the bot
    still avoids the losing answer."""
    state, _ = _last_card("buhonero", 1)
    prompt = LEG.prompt(state, 0)
    assert prompt is not None
    wire = prompt.as_dict()
    seen = LEG.bot_action(LEG.view(state, 0), Prompt(**wire), 1)
    assert seen == {"type": "pass"}
