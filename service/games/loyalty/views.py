"""What is seen of a game: the observation of the state, with each hand and deck hidden, and
the secrets a seat must not learn from it."""

import copy
from typing import Any

from service.games.kernel.hidden import Hidden
from service.games.loyalty.cards import stats
from service.games.loyalty.content import Content, card_of
from service.games.loyalty.state import Side, State, Unit


def unit_view(content: Content, side: Side, unit: Unit) -> dict[str, Any]:
    attack, defence = stats(content, side, unit)
    return {
        "card": unit.card,
        "id": card_of(unit.card),
        "zone": unit.zone,
        "attack": attack,
        "defence": defence,
        "attacked": unit.attacked,
        "used": unit.used,
    }


def observe(content: Content, state: State) -> dict[str, Any]:
    sides = []
    for seat, side in enumerate(state.sides):
        units = [unit_view(content, side, u) for u in side.units]
        sides.append(
            {
                "life": side.life,
                "loyalty": side.loyalty,
                "damage_taken": side.lost,
                "hand": Hidden((seat,), list(side.hand), shown=len(side.hand)),
                "known_in_hand": list(side.known),
                "deck": Hidden((), list(side.deck), shown=len(side.deck)),
                "attack_zone": [u for u in units if u["zone"] == "attack"],
                "defence_zone": [u for u in units if u["zone"] == "defence"],
                "posesiones": list(side.posesiones),
                "graveyard": list(side.graveyard),
            }
        )
    return {
        "mode": state.mode,
        "first": state.first,
        "chooser": state.chooser,
        "active": state.active,
        "turn": state.turn,
        "phase": state.phase,
        "sides": sides,
        "stack": copy.deepcopy(state.stack),
        "responder": state.responder,
        "attack": copy.deepcopy(state.attack),
        "returning": state.returning,
        "outcome": copy.deepcopy(state.result),
    }


def secrets(state: State, seat: int | None) -> list[Any]:
    orders = [list(side.deck) for side in state.sides if len(side.deck) > 1]
    in_decks = [c for side in state.sides for c in side.deck]
    in_hands = [
        c
        for s, side in enumerate(state.sides)
        if s != seat
        for c in side.hand
        if c not in side.known
    ]
    return [state.seed, state.rng, *orders, *in_decks, *in_hands]
