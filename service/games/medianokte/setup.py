"""After the Naves are shuffled: the cuts, then the opening hands and the d10 roll-off for who
chooses the first player."""

from service.games.kernel.protocol import Event
from service.games.medianokte.state import DIE, State, draw, living, seat_rolls

HAND = 5


def cut_target(state: State, seat: int) -> int:
    """Whose Nave `seat` cuts: the next seat's ("el oponente lo alza"; ours for 3-4 seats)."""
    return (seat + 1) % len(state.players)


def cut(state: State, seat: int, at: int, events: list[Event]) -> None:
    """`seat` cuts the next Nave at `at` (the prompt's schema bounds it: 1..size-1)."""
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
        events.append(Event("roll_off", {"rolls": seat_rolls(rolls)}))
        best = max(rolls.values())
        rolling = [s for s in rolling if rolls[str(s)] == best]
        if len(rolling) == 1:
            break
    state.phase, state.chooser = "choose", rolling[0]
    events.append(Event("roll_off_won", {"seat": rolling[0]}))
