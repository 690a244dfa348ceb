"""Why an action of a type the prompt offers is none of its actions: one code per rule it
breaks (docs/rules/loyalty.md#refusals). The kernel has already refused what is not an
action, a type not offered, and a `boost` or `arrange` outside its schema."""

from collections.abc import Callable, Mapping
from typing import Any

from service.games.kernel.protocol import IllegalAction
from service.games.loyalty.cards import find_unit
from service.games.loyalty.combat import LIFE
from service.games.loyalty.content import Content, Effect, card_of
from service.games.loyalty.effects import legal_targets
from service.games.loyalty.state import State

# Each enumerated action type: the fields it needs, and those it may have.
FIELDS: Mapping[str, tuple[frozenset[str], frozenset[str]]] = {
    "first": (frozenset({"seat"}), frozenset()),
    "return": (frozenset({"card"}), frozenset()),
    "pass": (frozenset(), frozenset()),
    "draw": (frozenset({"cards"}), frozenset()),
    "roll": (frozenset({"dice"}), frozenset()),
    "play": (frozenset({"card"}), frozenset()),
    "adventure": (frozenset({"card"}), frozenset({"target"})),
    "effect": (frozenset({"card"}), frozenset({"target"})),
    "attack": (frozenset({"attacker", "target"}), frozenset()),
}


def refusal(
    content: Content, state: State, seat: int, action: Mapping[str, Any]
) -> IllegalAction | None:
    """The rule `action` breaks for `seat`, or None when there is none to name."""
    kind = action["type"]
    if kind not in FIELDS:
        return None
    needed, optional = FIELDS[kind]
    for name in sorted(needed - set(action)):
        return IllegalAction("bad_param", f"{kind!r} needs {name!r}", field=name)
    for name in sorted(set(action) - needed - optional - {"type"}):
        return IllegalAction("bad_param", f"{kind!r} takes no {name!r}", field=name)
    return _RULES[kind](content, state, seat, action)


def _first(
    content: Content, state: State, seat: int, action: Mapping[str, Any]
) -> IllegalAction | None:
    return IllegalAction("no_such_seat", "the player who starts is seat 0 or seat 1")


def _one(field: str) -> Callable[[Content, State, int, Mapping[str, Any]], IllegalAction]:
    """The seed's "Roba una carta", "Lanza 1 dado": one card, one die, never more."""

    def refuse(
        content: Content, state: State, seat: int, action: Mapping[str, Any]
    ) -> IllegalAction:
        return IllegalAction("bad_param", f"{action['type']!r} takes {field!r}: 1", field=field)

    return refuse


def _return(content: Content, state: State, seat: int, action: Mapping[str, Any]) -> IllegalAction:
    return _not_in_play(action["card"])


def _play(
    content: Content, state: State, seat: int, action: Mapping[str, Any]
) -> IllegalAction | None:
    side = state.sides[seat]
    card = action["card"]
    if card not in side.hand:
        return _not_in_hand(card)
    info = content.cards[card_of(card)]
    if info.type == "adventure":
        return IllegalAction(
            "not_playable",
            f"{info.name} is an adventure: play it with 'adventure', not 'play'",
            card=card,
        )
    return _cannot_pay(info.name, info.cost, side.loyalty, card)


def _adventure(
    content: Content, state: State, seat: int, action: Mapping[str, Any]
) -> IllegalAction | None:
    side = state.sides[seat]
    card = action["card"]
    if card not in side.hand:
        return _not_in_hand(card)
    info = content.cards[card_of(card)]
    if info.type != "adventure":
        return IllegalAction(
            "not_an_adventure", f"{info.name} is a {info.type}: play it with 'play'", card=card
        )
    return _cannot_pay(info.name, info.cost, side.loyalty, card) or _target(
        content, state, seat, info.effect, action
    )


def _effect(
    content: Content, state: State, seat: int, action: Mapping[str, Any]
) -> IllegalAction | None:
    side = state.sides[seat]
    card = action["card"]
    unit = find_unit(side, card) if isinstance(card, str) else None
    if unit is None:
        return _not_in_play(card)
    info = content.cards[card_of(card)]
    if unit.used:
        return IllegalAction(
            "already_used", f"{info.name} has used its effect this turn", card=card
        )
    return _cannot_pay(info.name, info.effect.cost, side.loyalty, card) or _target(
        content, state, seat, info.effect, action
    )


def _attack(
    content: Content, state: State, seat: int, action: Mapping[str, Any]
) -> IllegalAction | None:
    attacker, target = action["attacker"], action["target"]
    unit = find_unit(state.sides[seat], attacker) if isinstance(attacker, str) else None
    if unit is None:
        return _not_in_play(attacker)
    if unit.zone != "attack":
        return IllegalAction(
            "not_in_attack_zone", "only characters in your Attack zone attack", card=attacker
        )
    if unit.attacked:
        return IllegalAction(
            "already_attacked", "that character has attacked this turn", card=attacker
        )
    theirs = state.sides[1 - seat]
    if target == LIFE and any(u.zone == "defence" for u in theirs.units):
        return IllegalAction(
            "life_defended",
            "your opponent has characters in Defence: attack one of them, not the life",
        )
    if target != LIFE and target not in [u.card for u in theirs.units]:
        return IllegalAction(
            "no_such_target", "attack an opposing character in play, or 'life'", target=target
        )
    return None


def _target(
    content: Content, state: State, seat: int, effect: Effect, action: Mapping[str, Any]
) -> IllegalAction | None:
    targets = legal_targets(content, state, seat, effect)
    if targets is None:
        return IllegalAction("bad_param", "that effect takes no 'target'", field="target")
    if action.get("target") not in targets:
        return IllegalAction(
            "no_such_target",
            "name a legal 'target': " + (", ".join(targets) or "there is none now"),
            targets=targets,
        )
    return None


def _not_in_hand(card: Any) -> IllegalAction:
    return IllegalAction("not_in_hand", "that card is not in your hand", card=card)


def _not_in_play(card: Any) -> IllegalAction:
    return IllegalAction("not_in_play", "that is not one of your characters in play", card=card)


def _cannot_pay(name: str, cost: int, loyalty: int, card: str) -> IllegalAction | None:
    if cost <= loyalty:
        return None
    return IllegalAction(
        "cannot_pay",
        f"{name} costs {cost} loyalty counters and you have {loyalty}",
        card=card,
        cost=cost,
        loyalty=loyalty,
    )


_RULES: Mapping[str, Callable[[Content, State, int, Mapping[str, Any]], IllegalAction | None]] = {
    "first": _first,
    "return": _return,
    "pass": lambda *_: None,
    "draw": _one("cards"),
    "roll": _one("dice"),
    "play": _play,
    "adventure": _adventure,
    "effect": _effect,
    "attack": _attack,
}
