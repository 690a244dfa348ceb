"""What each action does once it is legal: the answer to a prompt, a boost
(docs/rules/loyalty.md#9-aumento-de-poder-de-ataque-y-defensa), arranging the zones, and the
active player's roll, plays, effects and declared attacks."""

from service.games.kernel.prompts import Action
from service.games.kernel.protocol import Event
from service.games.loyalty.cards import (
    draw,
    find_unit,
    leave_hand,
    pay,
    raise_stat,
    ref,
    return_to_hand,
    unit_view,
)
from service.games.loyalty.content import Content, card_of
from service.games.loyalty.effects import resolve
from service.games.loyalty.opening import choose_first
from service.games.loyalty.stack import after_action, play_adventure, respond
from service.games.loyalty.state import Attack, State, Unit
from service.games.loyalty.turn import next_phase


def answer(
    content: Content, state: State, seat: int, asked: str, chosen: Action, events: list[Event]
) -> None:
    """Carry out `chosen`, one of the legal actions of the prompt of kind `asked`."""
    kind = chosen["type"]
    if asked == "choose_first":
        choose_first(state, seat, chosen["seat"], events)
    elif asked == "return":
        return_to_hand(state, seat, chosen["card"], events)
        state.returning = None
        after_action(content, state, events)
    elif asked == "response":
        respond(content, state, seat, chosen, events)
    elif kind == "pass":
        events.append(Event("passed", {"seat": seat, "phase": state.phase}))
        next_phase(content, state, events)
    elif kind == "draw":
        draw(state, seat, 1, events)
        next_phase(content, state, events)
    elif kind == "roll":
        _roll(content, state, seat, events)
        next_phase(content, state, events)
    elif kind == "play":
        _play(content, state, seat, chosen["card"], events)
        after_action(content, state, events)
    elif kind == "adventure":
        play_adventure(content, state, seat, chosen, events)
        after_action(content, state, events)
    elif kind == "effect":
        _use_effect(content, state, seat, chosen, events)
    else:
        _declare_attack(content, state, seat, chosen, events)


def boost(content: Content, state: State, seat: int, action: Action, events: list[Event]) -> None:
    """Pay counters for +1 each; the kernel has checked the card, stat and amount against the
    prompt's `boost` schema (one of the seat's characters, at most its counters)."""
    side = state.sides[seat]
    unit = find_unit(side, action["card"])
    assert unit is not None
    pay(side, action["amount"])
    raise_stat(unit, action["stat"], action["amount"])
    events.append(Event("boosted", {"seat": seat, **unit_view(content, side, unit)}))
    # A boost in a response window keeps the window; the active player's boost is an action.
    if state.responder is None:
        after_action(content, state, events)


def arrange(content: Content, state: State, seat: int, action: Action, events: list[Event]) -> None:
    """Send the listed characters to Attack and the rest to Defence; the kernel has checked the
    list against the prompt's `arrange` schema (the seat's characters, each at most once)."""
    chosen = action["attack"]
    for unit in state.sides[seat].units:
        unit.zone = "attack" if unit.card in chosen else "defence"
    events.append(Event("arranged", {"seat": seat, "attack": sorted(chosen)}))
    # Arranging is the phase's action: it ends phase e) (ours), then the opponent may respond.
    next_phase(content, state, events)
    after_action(content, state, events)


def _roll(content: Content, state: State, seat: int, events: list[Event]) -> None:
    die = state.die(content.die_faces)
    state.sides[seat].loyalty += die
    loyalty = state.sides[seat].loyalty
    events.append(Event("rolled", {"seat": seat, "die": die, "loyalty": loyalty}))


def _play(content: Content, state: State, seat: int, card: str, events: list[Event]) -> None:
    side = state.sides[seat]
    info = content.cards[card_of(card)]
    pay(side, info.cost)
    leave_hand(side, card)
    if info.type == "character":
        # A character enters the Defence zone; phase e) moves it (ours).
        side.units.append(Unit(card, "defence"))
        events.append(Event("played", {"seat": seat, **ref(card), "zone": "defence"}))
        return
    events.append(Event("played", {"seat": seat, **ref(card), "zone": None}))
    resolve(content, state, seat, info.effect, None, None, events)
    side.graveyard.append(card)


def _use_effect(
    content: Content, state: State, seat: int, chosen: Action, events: list[Event]
) -> None:
    side = state.sides[seat]
    unit = find_unit(side, chosen["card"])
    assert unit is not None
    effect = content.cards[card_of(unit.card)].effect
    pay(side, effect.cost)
    unit.used = True
    events.append(Event("effect_used", {"seat": seat, **ref(unit.card), "kind": effect.kind}))
    resolve(content, state, seat, effect, unit, chosen.get("target"), events)
    if state.returning is None:
        after_action(content, state, events)


def _declare_attack(
    content: Content, state: State, seat: int, chosen: Action, events: list[Event]
) -> None:
    unit = find_unit(state.sides[seat], chosen["attacker"])
    assert unit is not None
    unit.attacked = True
    state.attack = Attack(chosen["attacker"], chosen["target"])
    events.append(
        Event("attack", {"seat": seat, "attacker": chosen["attacker"], "target": chosen["target"]})
    )
    after_action(content, state, events)
