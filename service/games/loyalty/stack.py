"""Response windows and the stack (docs/rules/loyalty.md#nota-adventures-and-the-response-window):
after each action of the active player the opponent may answer with adventures, each answer open
to an answer in turn; when both are done the adventures resolve last in, first out, then the
declared attack lands."""

from service.games.kernel.prompts import Action
from service.games.kernel.protocol import Event
from service.games.loyalty.cards import leave_hand, pay
from service.games.loyalty.combat import damage
from service.games.loyalty.content import Content, card_of
from service.games.loyalty.effects import resolve
from service.games.loyalty.state import State


def play_adventure(
    content: Content, state: State, seat: int, chosen: Action, events: list[Event]
) -> None:
    side = state.sides[seat]
    info = content.cards[card_of(chosen["card"])]
    pay(side, info.cost)
    leave_hand(side, chosen["card"])
    entry = {"seat": seat, "card": chosen["card"], "target": chosen.get("target")}
    state.stack.append(entry)
    events.append(Event("adventure_played", dict(entry)))


def respond(content: Content, state: State, seat: int, chosen: Action, events: list[Event]) -> None:
    """The responder's answer: a pass closes the window, an adventure hands it to the other."""
    if chosen["type"] == "pass":
        events.append(Event("passed", {"seat": seat, "phase": "response"}))
        _close_window(content, state, events)
    else:
        play_adventure(content, state, seat, chosen, events)
        other = 1 - seat
        if state.sides[other].loyalty >= 1:
            state.responder = other
        else:
            _close_window(content, state, events)


def after_action(content: Content, state: State, events: list[Event]) -> None:
    """After an action of the active player, the opponent may respond.

    A window opens only when the opponent has a loyalty counter: every answer costs one.
    """
    opponent = 1 - state.active
    if state.sides[opponent].loyalty >= 1 and state.phase != "over":
        state.responder = opponent
        events.append(Event("window", {"seat": opponent}))
    else:
        _close_window(content, state, events)


def _close_window(content: Content, state: State, events: list[Event]) -> None:
    """Resolve the adventures last in, first out, then the declared attack's damage."""
    state.responder = None
    while state.stack:
        entry = state.stack.pop()
        side = state.sides[entry["seat"]]
        info = content.cards[card_of(entry["card"])]
        if info.posesion:
            side.posesiones.append(entry["card"])
            events.append(Event("posesion", {"seat": entry["seat"], "card": entry["card"]}))
            continue
        done = resolve(content, state, entry["seat"], info.effect, None, entry["target"], events)
        side.graveyard.append(entry["card"])
        events.append(Event("resolved" if done else "fizzled", dict(entry)))
    if state.attack is not None:
        attack, state.attack = state.attack, None
        damage(content, state, state.active, attack.attacker, attack.target, events)
