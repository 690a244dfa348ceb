"""Card effects: which targets an effect may take, and carrying it out when it resolves."""

from service.games.kernel.protocol import Event
from service.games.loyalty.cards import (
    destroy,
    draw,
    find_unit,
    lose_life,
    raise_stat,
    ref,
    return_to_hand,
    stats,
)
from service.games.loyalty.content import Content, Effect
from service.games.loyalty.state import State, Unit


def legal_targets(content: Content, state: State, seat: int, effect: Effect) -> list[str] | None:
    """The legal targets of `effect` used by `seat`; None when it takes no target."""
    mine, theirs = state.sides[seat], state.sides[1 - seat]
    if effect.kind in ("boost_one", "return_both"):
        return [u.card for u in mine.units]
    if effect.kind == "destroy":
        return [u.card for u in theirs.units if stats(content, theirs, u)[1] <= effect.amount]
    if effect.kind == "destroy_posesion":
        return list(theirs.posesiones)
    return None


def resolve(
    content: Content,
    state: State,
    seat: int,
    effect: Effect,
    source: Unit | None,
    target: str | None,
    events: list[Event],
) -> bool:
    """Carry out `effect` for `seat`; False when its target has gone (it fizzles)."""
    mine, theirs = state.sides[seat], state.sides[1 - seat]
    kind = effect.kind
    if kind == "draw":
        draw(state, seat, effect.amount, events)
    elif kind == "loyalty":
        mine.loyalty += effect.amount
    elif kind == "damage":
        lose_life(state, 1 - seat, effect.amount, events)
    elif kind in ("boost_self", "boost_all", "boost_one"):
        if kind == "boost_self":
            units = [source] if source is not None else []
        elif kind == "boost_all":
            units = list(mine.units)
        else:
            found = find_unit(mine, target) if target is not None else None
            if found is None:
                return False
            units = [found]
        for unit in units:
            raise_stat(unit, effect.stat or "attack", effect.amount)
    elif kind == "destroy":
        found = find_unit(theirs, target) if target is not None else None
        if found is None or stats(content, theirs, found)[1] > effect.amount:
            return False
        destroy(state, 1 - seat, found.card, events)
    elif kind == "destroy_posesion":
        if target not in theirs.posesiones:
            return False
        theirs.posesiones.remove(target)
        theirs.graveyard.append(target)
        events.append(Event("destroyed", {"seat": 1 - seat, **ref(target)}))
    elif kind == "return_both":
        if target is not None and find_unit(mine, target) is not None:
            return_to_hand(state, seat, target, events)
        if theirs.units:
            state.returning = 1 - seat
    return True
