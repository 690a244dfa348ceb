"""Why an answer of an offered type is none of the prompt's actions: the rule it breaks, with
the code docs/rules/fate-duel.md#refusals lists.

Every check reads the action as arbitrary JSON: a value of the wrong type is told as the rule
it misses (no such model, no such card), never raised on. An answer with missing or extra
fields says nothing here, and the kernel answers `not_offered`.
"""

from collections.abc import Callable, Mapping
from typing import Any

from service.games.fate_duel import duel
from service.games.fate_duel.catalogue import SUIT_USE, stone_uses
from service.games.fate_duel.content import ATTACKS, Ruleset
from service.games.fate_duel.state import Side, State, face
from service.games.kernel.prompts import Prompt
from service.games.kernel.protocol import Action, IllegalAction

Answer = Mapping[str, Any]
Refusal = IllegalAction | None

FIELDS = {
    "duel": {"type", "model"},
    "attack": {"type", "model", "attack", "target_seat", "target"},
    "soulstones": {"type", "uses"},
    "choose": {"type", "card"},
    "cheat": {"type", "card"},
    "trigger": {"type", "name"},
}


def refusal(rules: Ruleset, state: State, seat: int, asked: Prompt, action: Action) -> Refusal:
    kind = action.get("type")
    if kind not in FIELDS or set(action) != FIELDS[kind]:
        return None
    check: Callable[[Ruleset, State, int, Answer], Refusal] = {
        "duel": _order,
        "attack": _attack,
        "soulstones": _soulstones,
        "choose": _choose,
        "cheat": _cheat,
        "trigger": _trigger,
    }[kind]
    return check(rules, state, seat, action)


def _index(value: Any, size: int) -> int | None:
    return value if type(value) is int and 0 <= value < size else None


def _model(state: State, seat: int, value: Any, role: str) -> IllegalAction | int:
    wounds = state.crews[seat].wounds
    model = _index(value, len(wounds))
    if model is None:
        return IllegalAction(
            "no_such_model", f"{role}: seat {seat}'s crew has no model {value!r}", model=value
        )
    if wounds[model] == 0:
        return IllegalAction("model_dead", f"{role}: model {model} is dead", model=model)
    return model


def _order(rules: Ruleset, state: State, seat: int, action: Answer) -> Refusal:
    model = _model(state, seat, action["model"], "the pulse")
    if isinstance(model, IllegalAction):
        return model
    if model in state.tested[seat]:
        return IllegalAction(
            "already_tested", f"model {model} has already taken this round's pulse", model=model
        )
    return None


def _attack(rules: Ruleset, state: State, seat: int, action: Answer) -> Refusal:
    model = _model(state, seat, action["model"], "the attacker")
    if isinstance(model, IllegalAction):
        return model
    if action["attack"] not in ATTACKS:
        return IllegalAction(
            "no_such_attack",
            f"an attack is a duel of {' or '.join(ATTACKS)}, not {action['attack']!r}",
            attacks=list(ATTACKS),
        )
    target_seat = _index(action["target_seat"], len(state.crews))
    if target_seat is None:
        return IllegalAction(
            "no_such_target", f"there is no seat {action['target_seat']!r} to attack"
        )
    target = _model(state, target_seat, action["target"], "the target")
    if isinstance(target, IllegalAction):
        code = {"no_such_model": "no_such_target", "model_dead": "target_dead"}[target.code]
        return IllegalAction(code, str(target), **target.details)
    if (target_seat, target) == (seat, model):
        return IllegalAction("self_target", "a model may not attack itself", model=model)
    return None


def _side(state: State) -> Side | None:
    return None if state.duel is None else state.duel.sides[state.duel.turn]


def _soulstones(rules: Ruleset, state: State, seat: int, action: Answer) -> Refusal:
    uses = action["uses"]
    known = stone_uses(rules)
    if not isinstance(uses, list) or not all(isinstance(u, str) and u in known for u in uses):
        return IllegalAction(
            "no_such_use", f"soulstone uses are a list of {', '.join(known)}", uses=known
        )
    named = [u for u in uses if u.startswith(SUIT_USE)]
    if len(set(named)) != len(named):
        return IllegalAction("suit_named_twice", "naming the same suit twice adds nothing")
    if len(uses) > rules.stones_per_duel:
        return IllegalAction(
            "soulstone_cap",
            f"at most {rules.stones_per_duel} soulstones may be spent in one duel",
            most=rules.stones_per_duel,
        )
    left = state.crews[seat].soulstones
    if len(uses) > left:
        return IllegalAction(
            "not_enough_soulstones", f"the crew has {left} soulstones left", left=left
        )
    return None


def _choose(rules: Ruleset, state: State, seat: int, action: Answer) -> Refusal:
    side = _side(state)
    chosen = action["card"]
    if side is None or not isinstance(chosen, str) or chosen not in side.flipped:
        return IllegalAction("not_flipped", f"{chosen!r} is not one of the cards flipped")
    if any(face(c) == rules.black.id for c in side.flipped):
        return IllegalAction(
            "black_joker_flipped", "a flipped Black Joker is always the active card"
        )
    if duel.net_flip(side) < 0:
        return IllegalAction("must_take_lowest", "on a - flip the active card is the lowest")
    return None


def _cheat(rules: Ruleset, state: State, seat: int, action: Answer) -> Refusal:
    chosen = action["card"]
    if not isinstance(chosen, str) or chosen not in state.hands[seat]:
        return IllegalAction("not_in_hand", f"{chosen!r} is not a card in your hand")
    return None


def _trigger(rules: Ruleset, state: State, seat: int, action: Answer) -> Refusal:
    side = _side(state)
    if side is None or state.duel is None:
        return None
    name = action["name"]
    own = duel.spec(rules, state, side.seat, side.model).triggers
    trigger = next((t for t in own if t.name == name), None)
    if trigger is None:
        names = [t.name for t in own]
        return IllegalAction(
            "no_such_trigger", f"this model has no trigger {name!r}", triggers=names
        )
    if trigger.attribute != side.attribute:
        return IllegalAction(
            "wrong_attribute",
            f"{name} is for {trigger.attribute} duels, this is a {side.attribute} duel",
        )
    if trigger.suit not in duel.suits(rules, side):
        return IllegalAction(
            "suit_missing", f"{name} needs a total of suit {trigger.suit}", suit=trigger.suit
        )
    if trigger.effect == "damage" and state.duel.kind == "simple":
        return IllegalAction(
            "no_opposing_model", f"{name} wounds an opposing model; a simple duel has none"
        )
    return None
