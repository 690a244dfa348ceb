"""Response windows and the stack (docs/rules/loyalty.md#nota-adventures-and-the-response-window):
after each action of the active player the opponent may answer with adventures, each answer open
to an answer in turn; when both are done the adventures resolve last in, first out, then the
declared attack lands. A seat that asked to `auto_pass` is not asked when it has no adventure
to play (docs/rules/loyalty.md#seat-preferences)."""

from typing import Any

from service.games.kernel.prompts import Action
from service.games.kernel.protocol import Event
from service.games.loyalty.cards import leave_hand, pay, ref
from service.games.loyalty.combat import damage
from service.games.loyalty.content import Content, card_of
from service.games.loyalty.effects import legal_targets, resolve
from service.games.loyalty.state import State
from service.games.loyalty.winning import check_end


def with_targets(base: Action, targets: list[str] | None) -> list[Action]:
    """`base` once per legal target, or as it is when the effect takes none."""
    if targets is None:
        return [base]
    return [{**base, "target": t} for t in targets]


def adventure_actions(content: Content, state: State, seat: int) -> list[Action]:
    """The adventures `seat` can pay for, one action per legal target."""
    side = state.sides[seat]
    actions: list[Action] = []
    for card in side.hand:
        info = content.cards[card_of(card)]
        if info.type == "adventure" and info.cost <= side.loyalty:
            targets = legal_targets(content, state, seat, info.effect)
            actions += with_targets({"type": "adventure", "card": card}, targets)
    return actions


def stack_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """An adventure on the stack as views and events show it."""
    return {"seat": entry["seat"], **ref(entry["card"]), "target": entry["target"]}


def play_adventure(
    content: Content, state: State, seat: int, chosen: Action, events: list[Event]
) -> None:
    side = state.sides[seat]
    info = content.cards[card_of(chosen["card"])]
    pay(side, info.cost)
    leave_hand(side, chosen["card"])
    entry = {"seat": seat, "card": chosen["card"], "target": chosen.get("target")}
    state.stack.append(entry)
    events.append(Event("adventure_played", stack_entry(entry)))


def respond(content: Content, state: State, seat: int, chosen: Action, events: list[Event]) -> None:
    """The responder's answer: a pass closes the window, an adventure hands it to the other."""
    if chosen["type"] == "pass":
        _pass(content, state, seat, False, events)
        return
    play_adventure(content, state, seat, chosen, events)
    other = 1 - seat
    if state.sides[other].loyalty >= 1:
        _open(content, state, other, "moved", events)
    else:
        _close_window(content, state, events)


def after_action(content: Content, state: State, events: list[Event]) -> None:
    """After an action of the active player, the opponent may respond.

    A window opens only when the opponent has a loyalty counter: every answer costs one.
    """
    opponent = 1 - state.active
    if state.sides[opponent].loyalty >= 1 and state.phase != "over":
        _open(content, state, opponent, "opened", events)
    else:
        _close_window(content, state, events)


def auto_passes(content: Content, state: State, seat: int) -> bool:
    """Whether `seat`'s preference passes a window it holds now: it has no adventure to play."""
    return state.auto_pass[seat] and not adventure_actions(content, state, seat)


def auto_pass(content: Content, state: State, seat: int, events: list[Event]) -> None:
    """Pass the window `seat` holds for it. The game is first checked as it is after any step,
    so that passing for a seat ends no game later than its own pass would have."""
    check_end(state, events)
    if state.phase != "over":
        _pass(content, state, seat, True, events)


def _open(content: Content, state: State, seat: int, change: str, events: list[Event]) -> None:
    state.responder = seat
    auto = auto_passes(content, state, seat)
    events.append(Event("window", {"seat": seat, "change": change, "auto_passed": auto}))
    if auto:
        auto_pass(content, state, seat, events)


def _pass(content: Content, state: State, seat: int, auto: bool, events: list[Event]) -> None:
    events.append(Event("passed", {"seat": seat, "phase": "response", "auto": auto}))
    _close_window(content, state, events)


def _close_window(content: Content, state: State, events: list[Event]) -> None:
    """Resolve the adventures last in, first out, then the declared attack's damage."""
    if state.responder is not None:
        events.append(Event("window", {"seat": None, "change": "closed", "auto_passed": False}))
    state.responder = None
    while state.stack:
        entry = state.stack.pop()
        side = state.sides[entry["seat"]]
        info = content.cards[card_of(entry["card"])]
        if info.posesion:
            side.posesiones.append(entry["card"])
            events.append(Event("posesion", {"seat": entry["seat"], **ref(entry["card"])}))
            continue
        done = resolve(content, state, entry["seat"], info.effect, None, entry["target"], events)
        side.graveyard.append(entry["card"])
        events.append(Event("resolved" if done else "fizzled", stack_entry(entry)))
    if state.attack is not None:
        attack, state.attack = state.attack, None
        damage(content, state, state.active, attack.attacker, attack.target, events)
