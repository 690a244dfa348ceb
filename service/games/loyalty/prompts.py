"""What a seat may do now: its prompt, with the legal actions and the boost and arrange
parameters, or None when it is not this seat's move."""

import copy
from typing import Any

from service.games.kernel.prompts import Action, Prompt
from service.games.loyalty.combat import attacks
from service.games.loyalty.content import Content, card_of
from service.games.loyalty.effects import legal_targets
from service.games.loyalty.state import State


def prompt(content: Content, state: State, seat: int) -> Prompt | None:
    if state.phase == "over" or seat not in (0, 1):
        return None
    if state.phase == "choose_first":
        if seat != state.chooser:
            return None
        return Prompt("choose_first", [{"type": "first", "seat": s} for s in (0, 1)])
    if state.returning is not None:
        if seat != state.returning:
            return None
        units = state.sides[seat].units
        return Prompt("return", [{"type": "return", "card": u.card} for u in units])
    if state.responder is not None:
        if seat != state.responder:
            return None
        actions: list[Action] = [{"type": "pass"}, *_adventures(content, state, seat)]
        data = {"stack": copy.deepcopy(state.stack), "attack": copy.deepcopy(state.attack)}
        return Prompt("response", actions, _boost_params(state, seat), data)
    if seat != state.active:
        return None
    return _phase_prompt(content, state, seat)


def _phase_prompt(content: Content, state: State, seat: int) -> Prompt:
    side = state.sides[seat]
    phase = state.phase
    params = _boost_params(state, seat)
    actions: list[Action]
    if phase == "draw":
        # The seed's words: "Roba una carta", "Lanza 1 dado de 6".
        actions = [{"type": "draw", "cards": 1}] if side.deck else []
        actions.append({"type": "pass"})
    elif phase == "roll":
        actions = [{"type": "roll", "dice": 1}, {"type": "pass"}]
    else:
        actions = [{"type": "pass"}]
    if phase in ("play", "play_again"):
        for card in side.hand:
            info = content.cards[card_of(card)]
            if info.type in ("character", "mission") and info.cost <= side.loyalty:
                actions.append({"type": "play", "card": card})
    if phase == "arrange" and side.units:
        cards = [u.card for u in side.units]
        params["arrange"] = {
            "attack": {"type": "array", "items": {"enum": cards}, "uniqueItems": True}
        }
    if phase == "attack":
        actions += attacks(state, seat)
    actions += _adventures(content, state, seat)
    actions += _effects(content, state, seat)
    return Prompt(phase, actions, params, {"turn": state.turn})


def _boost_params(state: State, seat: int) -> dict[str, dict[str, Any]]:
    """Paying loyalty for +1 attack or defence per counter, on one of your characters (§9)."""
    side = state.sides[seat]
    if side.loyalty < 1 or not side.units:
        return {}
    return {
        "boost": {
            "card": {"enum": [u.card for u in side.units]},
            "stat": {"enum": ["attack", "defence"]},
            "amount": {"type": "integer", "minimum": 1, "maximum": side.loyalty},
        }
    }


def _with_targets(base: Action, targets: list[str] | None) -> list[Action]:
    if targets is None:
        return [base]
    return [{**base, "target": t} for t in targets]


def _adventures(content: Content, state: State, seat: int) -> list[Action]:
    side = state.sides[seat]
    actions: list[Action] = []
    for card in side.hand:
        info = content.cards[card_of(card)]
        if info.type == "adventure" and info.cost <= side.loyalty:
            targets = legal_targets(content, state, seat, info.effect)
            actions += _with_targets({"type": "adventure", "card": card}, targets)
    return actions


def _effects(content: Content, state: State, seat: int) -> list[Action]:
    side = state.sides[seat]
    actions: list[Action] = []
    for unit in side.units:
        effect = content.cards[card_of(unit.card)].effect
        if not unit.used and effect.cost <= side.loyalty:
            targets = legal_targets(content, state, seat, effect)
            actions += _with_targets({"type": "effect", "card": unit.card}, targets)
    return actions
