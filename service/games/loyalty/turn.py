"""The phases of a turn in order (docs/rules/loyalty.md#6-fases-de-un-turno-the-phases), and
the end of a turn: boosts wear off, the game ends when both decks are out, else the other seat's
turn starts with its POSESIÓN income."""

from service.games.kernel.protocol import Event
from service.games.loyalty.cards import ref
from service.games.loyalty.content import Content, card_of
from service.games.loyalty.state import PHASES, State
from service.games.loyalty.winning import by_damage, finish


def next_phase(content: Content, state: State, events: list[Event]) -> None:
    at = PHASES.index(state.phase)
    if at + 1 == len(PHASES):
        _end_turn(content, state, events)
        return
    state.phase = PHASES[at + 1]
    if state.phase == "attack" and state.turn == 1:
        # The starting player may not attack on its first turn
        # (docs/rules/loyalty.md#5-comenzando-a-jugar-setup).
        events.append(Event("phase_skipped", {"phase": "attack", "reason": "first_turn"}))
        state.phase = "play_again"
    events.append(phase_event(state))


def phase_event(state: State) -> Event:
    """The phase the active player is asked in now begins."""
    return Event("phase", {"seat": state.active, "phase": state.phase, "turn": state.turn})


def _end_turn(content: Content, state: State, events: list[Event]) -> None:
    """i) end of the turn: boosts and once-per-turn marks wear off; j) the opponent's turn."""
    for side in state.sides:
        for unit in side.units:
            unit.attack_boost = unit.defence_boost = 0
            unit.attacked = unit.used = False
    events.append(Event("turn_ended", {"seat": state.active, "turn": state.turn}))
    if not any(side.deck for side in state.sides):
        finish(state, by_damage(state), "decks_out", events)
        return
    state.active = 1 - state.active
    state.turn += 1
    state.phase = "draw"
    events.append(Event("turn_started", {"seat": state.active, "turn": state.turn}))
    side = state.sides[state.active]
    for held in side.posesiones:
        effect = content.cards[card_of(held)].effect
        if effect.kind == "income":
            side.loyalty += effect.amount
            events.append(Event("income", {"seat": state.active, **ref(held)}))
    events.append(phase_event(state))
