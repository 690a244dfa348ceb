"""Combat: which attacks a seat may declare, and what an attack does when it lands
(docs/rules/loyalty.md#7-como-atacar, docs/rules/loyalty.md#8-calculo-de-daños)."""

from service.games.kernel.prompts import Action
from service.games.kernel.protocol import Event
from service.games.loyalty.cards import destroy, find_unit, lose_life, stats
from service.games.loyalty.content import Content
from service.games.loyalty.state import State

LIFE = "life"


def attacks(state: State, seat: int) -> list[Action]:
    opponent = state.sides[1 - seat]
    targets = [u.card for u in opponent.units]
    if not any(u.zone == "defence" for u in opponent.units):
        targets.append(LIFE)
    return [
        {"type": "attack", "attacker": u.card, "target": t}
        for u in state.sides[seat].units
        if u.zone == "attack" and not u.attacked
        for t in targets
    ]


def damage(
    content: Content, state: State, seat: int, attacker: str, target: str, events: list[Event]
) -> None:
    """Section 8, case by case: `seat`'s `attacker` attacks `target` (a card or "life")."""
    mine, theirs = state.sides[seat], state.sides[1 - seat]
    unit = find_unit(mine, attacker)
    if unit is None or unit.zone != "attack":
        events.append(Event("attack_fizzled", {"seat": seat, "attacker": attacker}))
        return
    attack, defence = stats(content, mine, unit)
    if target == LIFE:
        lose_life(state, 1 - seat, attack, events)
        return
    other = find_unit(theirs, target)
    if other is None:
        events.append(Event("attack_fizzled", {"seat": seat, "attacker": attacker}))
        return
    their_attack, their_defence = stats(content, theirs, other)
    if other.zone == "defence":
        if attack >= their_defence:
            destroy(state, 1 - seat, target, events)
        else:
            lose_life(state, seat, their_defence - attack, events)
    elif attack > their_attack:
        destroy(state, 1 - seat, target, events)
        # "the difference between your attack and the defence of the characters that took
        # part in that battle": both defences, and never less than nothing (ours).
        through = attack - (defence + their_defence)
        if through > 0:
            lose_life(state, 1 - seat, through, events)
    elif attack == their_attack:
        destroy(state, 1 - seat, target, events)
        destroy(state, seat, attacker, events)
    else:
        destroy(state, seat, attacker, events)
        lose_life(state, seat, their_attack - attack, events)
