"""Why an action of an offered type is not among the prompt's actions: one code per rule it
breaks (docs/rules/necromancers.md#refusals).

Actions arrive as any JSON a client sent, so every field's type is checked before it is used;
None means no rule explains the refusal and the kernel's `not_offered` stands.
"""

from collections.abc import Mapping
from typing import Any

from service.games.kernel.protocol import IllegalAction
from service.games.necromancers.content import NECROMANCER, TROOPS, Ruleset
from service.games.necromancers.state import State

_TYPE_WORDS = {int: "an integer", str: "a string"}


def refusal(rules: Ruleset, state: State, action: Mapping[str, Any]) -> IllegalAction | None:
    kind = action.get("type")
    if kind == "target":
        return _fields(action, {"seat": int}) or _target(state, action["seat"])
    if kind == "cancel":
        return _fields(action, {"die": int}) or _die(state, action["die"])
    if kind == "resolve":
        return _resolve(rules, state, action)
    return None


def _fields(action: Mapping[str, Any], fields: Mapping[str, type]) -> IllegalAction | None:
    """`bad_param` naming the first field unknown, missing or of the wrong type."""
    kind = action["type"]
    for name in action:
        if name != "type" and name not in fields:
            takes = ", ".join(repr(field) for field in fields)
            return IllegalAction("bad_param", f"{kind!r} takes {takes}, not {name!r}", field=name)
    return _typed(action, fields)


def _typed(action: Mapping[str, Any], fields: Mapping[str, type]) -> IllegalAction | None:
    """`bad_param` naming the first of `fields` missing or of the wrong type."""
    kind = action["type"]
    for name, expected in fields.items():
        if name not in action:
            return IllegalAction("bad_param", f"{kind!r} needs {name!r}", field=name)
        # Exact types: JSON true is no integer.
        if type(action[name]) is not expected:
            words = _TYPE_WORDS[expected]
            return IllegalAction("bad_param", f"{kind!r} {name!r} must be {words}", field=name)
    return None


def _target(state: State, seat: int) -> IllegalAction | None:
    if not 0 <= seat < len(state.necromancers):
        return IllegalAction(
            "no_such_seat",
            f"there is no seat {seat} in this match of {len(state.necromancers)}",
            seat=seat,
        )
    if seat == state.current:
        return IllegalAction("cannot_target_self", "you must attack another necromancer")
    if not state.necromancers[seat].alive:
        return IllegalAction(
            "seat_eliminated", f"the necromancer of seat {seat} is already out", seat=seat
        )
    return None


def _die(state: State, index: int) -> IllegalAction | None:
    if not 0 <= index < len(state.dice):
        return IllegalAction(
            "no_such_die",
            f"there is no attack die {index}; this attack rolled {len(state.dice)}",
            die=index,
        )
    status = state.dice[index].status
    if status != "pending":
        return IllegalAction(
            "die_not_pending", f"attack die {index} is already {status}", die=index, status=status
        )
    return None


def _resolve(rules: Ruleset, state: State, action: Mapping[str, Any]) -> IllegalAction | None:
    head = {"die": int, "effect": str}
    # The die and the effect first: they decide which other fields the action takes.
    refused = _typed(action, head) or _die(state, action["die"])
    if refused is not None:
        return refused
    index: int = action["die"]
    face = state.dice[index].face
    effect: str = action["effect"]
    option = next((o for o in rules.faces[face] if o.effect == effect), None)
    if option is None:
        offered = [o.effect for o in rules.faces[face]]
        return IllegalAction(
            "effect_not_on_face",
            f"face {face} offers {' or '.join(offered)}, not {effect!r}",
            face=face,
            offered=offered,
        )
    if effect == "damage":
        refused = _fields(action, {**head, "skeletons": int, "zombies": int})
        return refused or _damage(state, face, option.points, option.at, action)
    refused = _fields(action, {**head, "at": str})
    return refused or _raise(rules, state, face, effect, option.at, action["at"])


def _damage(
    state: State, face: int, points: int, at: tuple[str, ...], action: Mapping[str, Any]
) -> IllegalAction | None:
    assert state.target is not None
    if not state.necromancers[state.target].alive:
        return IllegalAction(
            "target_has_fallen", "your target has fallen: this die may only revive or heal"
        )
    split = {troop: action[troop] for troop in TROOPS}
    if min(split.values()) < 0 or sum(split.values()) != points:
        return IllegalAction(
            "bad_split",
            f"face {face} deals {points}: skeletons and zombies must be at least 0 and add "
            f"up to {points}",
            points=points,
        )
    wrong = [troop for troop in TROOPS if split[troop] > 0 and troop not in at]
    if wrong:
        return IllegalAction(
            "cannot_aim_at",
            f"face {face} may only aim its damage at {' or '.join(at)}, not {wrong[0]}",
            at=list(at),
        )
    return None


def _raise(
    rules: Ruleset, state: State, face: int, effect: str, at: tuple[str, ...], what: str
) -> IllegalAction | None:
    if what not in at:
        return IllegalAction(
            "cannot_aim_at",
            f"face {face} may only {effect} your {' or '.join(at)}, not {what!r}",
            at=list(at),
        )
    cap = rules.max_lives if what == NECROMANCER else rules.max_troops
    if state.necromancers[state.current].amount(what) < cap:
        return None
    if what == NECROMANCER:
        reason = f"your necromancer already has {cap} lives, the most he may have"
    else:
        reason = f"you already have {cap} {what}, the most you may have"
    return IllegalAction("at_cap", reason, at=what, cap=cap)
