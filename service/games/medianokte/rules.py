"""The rules of Medianokte's duel mode (seed 000) behind the protocol: who is asked what
(`prompt`), an answer applied (`apply`), a seat resigning (`resign`).

`apply` and `resign` work on a copy of the state and raise `IllegalAction` before changing
anything. The rules themselves: setting up in `setup`, the legal activations in
`activations`, a turn carried out in `turn`, with `attacks`, `effects` and `damage` under it,
the choices of targets in `targets`, the state and its lookups in `state`.
"""

import copy

from service.games.kernel.prompts import Action, Prompt
from service.games.kernel.protocol import Event, IllegalAction, match_legal
from service.games.medianokte.activations import activations
from service.games.medianokte.damage import defeat
from service.games.medianokte.setup import after_cuts, cut, cut_position, cut_target
from service.games.medianokte.state import State, living
from service.games.medianokte.turn import (
    ACTIVATIONS,
    activate,
    end_turn,
    finish_if_over,
    start_turn,
)


def prompt(state: State, seat: int) -> Prompt | None:
    if not 0 <= seat < len(state["players"]) or state["players"][seat]["out"]:
        return None
    phase = state["phase"]
    if phase == "cut" and not state["cut"][seat]:
        nave = state["players"][cut_target(state, seat)]["nave"]
        at = {"type": "integer", "minimum": 1, "maximum": len(nave) - 1}
        return Prompt("cut", [], {"cut": {"at": at}}, {"nave": cut_target(state, seat)})
    if phase == "choose" and seat == state["chooser"]:
        actions: list[Action] = [{"type": "first", "seat": s} for s in living(state)]
        return Prompt("choose_first", actions, data={"rolls": state["rolls"]})
    if phase == "turn" and seat == state["turn"]:
        left = ACTIVATIONS - state["used"]
        return Prompt("activation", activations(state, seat), data={"activations_left": left})
    return None


def apply(state: State, seat: int, action: Action) -> tuple[State, list[Event]]:
    asked = prompt(state, seat) if isinstance(seat, int) else None
    if asked is None:
        raise IllegalAction(f"seat {seat} may not act now")
    new = copy.deepcopy(state)
    new["step"] += 1
    events: list[Event] = []
    if asked.kind == "cut":
        maximum = asked.params["cut"]["at"]["maximum"]
        cut(new, seat, cut_position(action, maximum), events)
    elif asked.kind == "choose_first":
        chosen = match_legal(asked.actions, action)
        new["first"] = chosen["seat"]
        events.append(Event("first_player", {"chooser": seat, "seat": chosen["seat"]}))
        start_turn(new, chosen["seat"], events)
    else:
        activate(new, seat, match_legal(asked.actions, action), events)
    return new, events


def resign(state: State, seat: int) -> tuple[State, list[Event]]:
    """The seat is out; the others play on, and with one left standing it wins (ours)."""
    if state["result"] is not None:
        raise IllegalAction("the match is over")
    if not 0 <= seat < len(state["players"]) or state["players"][seat]["out"]:
        raise IllegalAction(f"seat {seat} is not playing")
    new = copy.deepcopy(state)
    new["step"] += 1
    events = [Event("resigned", {"seat": seat})]
    defeat(new, seat, "resigned", events)
    if finish_if_over(new, events):
        return new, events
    if new["phase"] == "cut":
        after_cuts(new, events)
    elif new["phase"] == "choose" and new["chooser"] == seat:
        # The chooser is gone: the next seat still playing starts (ours).
        seats = len(new["players"])
        following = next(s for s in ((seat + k) % seats for k in range(1, seats)) if
                         not new["players"][s]["out"])  # fmt: skip
        new["first"] = following
        start_turn(new, following, events)
    elif new["phase"] == "turn" and new["turn"] == seat:
        end_turn(new, seat, events)
    return new, events
