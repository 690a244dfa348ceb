"""What a seat may do: the legal actions and the boost and arrange parameters of the active
player's phase prompt and of the opponent's response window."""

from typing import Any

import msgspec

from service.games.kernel.prompts import Action, Prompt
from service.games.loyalty.combat import attacks
from service.games.loyalty.content import Content, card_of
from service.games.loyalty.effects import legal_targets
from service.games.loyalty.stack import adventure_actions, stack_entry, with_targets
from service.games.loyalty.state import State


def phase_prompt(content: Content, state: State, seat: int) -> Prompt:
    """The active player's prompt in the phase the game is in."""
    side = state.sides[seat]
    phase = state.phase
    params = boost_params(state, seat)
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
            "attack": {
                "type": "array",
                "items": {"type": "string", "enum": cards},
                "uniqueItems": True,
            }
        }
    if phase == "attack":
        actions += attacks(state, seat)
    actions += adventure_actions(content, state, seat)
    actions += _effects(content, state, seat)
    return Prompt(phase, actions, params, {"turn": state.turn})


def response_prompt(content: Content, state: State, seat: int) -> Prompt:
    """The responder's window: pass, answer with an adventure, or buy boosts."""
    actions: list[Action] = [{"type": "pass"}, *adventure_actions(content, state, seat)]
    attack = None if state.attack is None else msgspec.structs.asdict(state.attack)
    data = {"stack": [stack_entry(entry) for entry in state.stack], "attack": attack}
    return Prompt("response", actions, boost_params(state, seat), data)


def boost_params(state: State, seat: int) -> dict[str, dict[str, Any]]:
    """Paying loyalty for +1 attack or defence per counter, on one of your characters
    (docs/rules/loyalty.md#9-aumento-de-poder-de-ataque-y-defensa)."""
    side = state.sides[seat]
    if side.loyalty < 1 or not side.units:
        return {}
    return {
        "boost": {
            "card": {"type": "string", "enum": [u.card for u in side.units]},
            "stat": {"type": "string", "enum": ["attack", "defence"]},
            "amount": {"type": "integer", "minimum": 1, "maximum": side.loyalty},
        }
    }


def _effects(content: Content, state: State, seat: int) -> list[Action]:
    side = state.sides[seat]
    actions: list[Action] = []
    for unit in side.units:
        effect = content.cards[card_of(unit.card)].effect
        if not unit.used and effect.cost <= side.loyalty:
            targets = legal_targets(content, state, seat, effect)
            actions += with_targets({"type": "effect", "card": unit.card}, targets)
    return actions
