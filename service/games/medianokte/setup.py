"""After the Naves are shuffled: the cuts, then the opening hands and the d10 roll-off for who
chooses the first player."""

from service.games.kernel.prompts import Action
from service.games.kernel.protocol import Event, IllegalAction
from service.games.medianokte.state import DIE, State, draw, living

HAND = 5


def cut_target(state: State, seat: int) -> int:
    """Whose Nave `seat` cuts: the next seat's ("el oponente lo alza"; ours for 3-4 seats)."""
    return (seat + 1) % len(state.players)


def cut_position(action: Action, maximum: int) -> int:
    """Where a cut action cuts, checked: 1..`maximum`, the Nave's size less one."""
    if set(action) != {"type", "at"}:
        raise IllegalAction('a cut is {"type": "cut", "at": n}')
    at = action["at"]
    if type(at) is not int or not 1 <= at <= maximum:
        raise IllegalAction(f"cut position 'at' must be an integer from 1 to {maximum}")
    return at


def cut(state: State, seat: int, at: int, events: list[Event]) -> None:
    target = cut_target(state, seat)
    player = state.players[target]
    player.nave = player.nave[at:] + player.nave[:at]
    state.cut[seat] = True
    events.append(Event("cut", {"seat": seat, "nave": target, "at": at}))
    after_cuts(state, events)


def after_cuts(state: State, events: list[Event]) -> None:
    """Once every living seat has cut: each draws 5, then the d10 roll-off."""
    if not all(state.cut[s] for s in living(state)):
        return
    for seat in living(state):
        for _ in range(HAND):
            draw(state, seat, events)
    rolling = living(state)
    while True:
        rolls = {str(s): state.die(DIE) for s in rolling}
        state.rolls.append(rolls)
        events.append(Event("roll_off", {"rolls": rolls}))
        best = max(rolls.values())
        rolling = [s for s in rolling if rolls[str(s)] == best]
        if len(rolling) == 1:
            break
    state.phase, state.chooser = "choose", rolling[0]
    events.append(Event("roll_off_won", {"seat": rolling[0]}))
