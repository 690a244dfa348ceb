"""The loyalty card game (seed 004, DESIGN §5.3): applying an action to one game's state.

An action is checked against the seat's prompt, carried out on a copy of the state, and then
the end of the game is checked. The rules, section by section, and every decision where the
seed is silent, are in docs/rules/loyalty.md; the comments in this package only point at them.
"""

import copy
from collections.abc import Mapping

from service.games.kernel.prompts import Action
from service.games.kernel.protocol import Event, IllegalAction, match_legal
from service.games.loyalty.actions import answer, arrange, boost
from service.games.loyalty.content import Content
from service.games.loyalty.prompts import prompt
from service.games.loyalty.state import State
from service.games.loyalty.winning import check_end


def apply(content: Content, state: State, seat: int, action: Action) -> tuple[State, list[Event]]:
    asked = prompt(content, state, seat)
    if asked is None:
        raise IllegalAction(f"seat {seat} may not act now")
    new = copy.deepcopy(state)
    events: list[Event] = []
    kind = action.get("type") if isinstance(action, Mapping) else None
    if isinstance(kind, str) and kind in asked.params:
        if kind == "boost":
            boost(content, new, seat, action, asked.params["boost"], events)
        else:
            arrange(content, new, seat, action, events)
    else:
        chosen = match_legal(asked.actions, action)
        answer(content, new, seat, asked.kind, chosen, events)
    check_end(new, events)
    return new, events
