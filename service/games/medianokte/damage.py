"""Damage and what it leads to: a destroyed astrali to its owner's Vacío (an energy counter to
whoever destroyed it), a character whose damage reaches its life defeated."""

from service.games.kernel.protocol import Event
from service.games.medianokte.state import (
    MAX_ENERGY,
    Astrali,
    Hero,
    State,
    VacioCard,
    card_of,
    locate,
    max_life,
)


def hurt(state: State, target: str, damage: int, by: int | None, events: list[Event]) -> None:
    seat, record = locate(state, target)
    if damage <= 0:
        return
    record.damage += damage
    events.append(Event("damage", {"target": target, "damage": damage, "total": record.damage}))
    if isinstance(record, Hero):
        if record.damage >= max_life(state, seat):
            defeat(state, seat, "damage", events)
    elif record.damage >= card_of(target).life:
        _destroy(state, seat, record, by, events)


def _destroy(state: State, seat: int, record: Astrali, by: int | None, events: list[Event]) -> None:
    """A dead astrali goes to its owner's Vacío, keeping its position; whoever destroyed it
    puts an energy counter on his final action (never more than 3)."""
    state.players[seat].army.remove(record)
    owner = record.owner
    state.players[owner].vacio.append(VacioCard(record.id, record.position, owner))
    events.append(Event("astrali_destroyed", {"card": record.id, "by": by}))
    if by is not None and by != seat and not state.players[by].out:
        final = state.players[by].final
        if final.energy < MAX_ENERGY:
            final.energy += 1
        events.append(Event("energy", {"seat": by, "energy": final.energy}))


def defeat(state: State, seat: int, reason: str, events: list[Event]) -> None:
    player = state.players[seat]
    if player.out:
        return
    player.out = True
    state.fallen.append([seat, state.step])
    events.append(Event("defeated", {"seat": seat, "reason": reason}))
