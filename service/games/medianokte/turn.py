"""A turn carried out: its three activations (playing a card, attacking, using a card),
exploring, bleeding at the end of the turn, the next seat, and the end of the match."""

from service.games.kernel.prompts import Action
from service.games.kernel.protocol import Event, Outcome
from service.games.medianokte.attacks import make_attack
from service.games.medianokte.damage import defeat, hurt
from service.games.medianokte.effects import apply_effects
from service.games.medianokte.state import (
    Astrali,
    Discardable,
    Placed,
    State,
    VacioCard,
    card_of,
    draw,
    following,
    living,
    present,
    tire,
)

EXPLORE_DRAW = 2
ACTIVATIONS = 3


def start_turn(state: State, seat: int, events: list[Event]) -> None:
    state.phase, state.turn, state.used = "turn", seat, 0
    events.append(Event("turn_start", {"seat": seat}))


def activate(state: State, seat: int, action: Action, events: list[Event]) -> None:
    kind = action["type"]
    if kind == "explore":
        _explore(state, seat, events)
        return
    if kind == "end":
        end_turn(state, seat, events, "end")
        return
    state.used += 1
    if kind == "play":
        _play(state, seat, action, events)
    elif kind == "attack":
        source = _source(state, seat, action["with"])
        card = card_of(action["with"])
        tire(source, "exhausted" if card.cost == "exhaust" else "turned")
        assert card.attack is not None
        holder = source if isinstance(source, Astrali) else state.players[seat].hero
        make_attack(state, seat, action["with"], card.attack, holder, action, events)
    else:
        _use(state, seat, action, events)
    if finish_if_over(state, events):
        return
    if state.used >= ACTIVATIONS:
        end_turn(state, seat, events, "activations")


def _source(state: State, seat: int, instance: str) -> Placed | Astrali:
    for record in state.players[seat].in_play():
        if record.id == instance:
            return record
    raise KeyError(instance)


def _play(state: State, seat: int, action: Action, events: list[Event]) -> None:
    me = state.players[seat]
    instance = action["card"]
    me.hand.remove(instance)
    card = card_of(instance)
    events.append(Event("played", {"seat": seat, "card": instance}))
    if card.kind == "astrali":
        me.army.append(Astrali(id=instance, position="upright", owner=seat))
    elif card.kind == "discardable":
        me.discardables.append(Discardable(instance))
    elif card.kind in ("permanent", "weapon"):
        me.permanents.append(Placed(instance, "upright"))
    else:
        # An event's effect happens at once, as part of the same activation; then the Vacío.
        apply_effects(state, seat, card, action, events)
        me.vacio.append(VacioCard(instance, "upright", seat))


def _use(state: State, seat: int, action: Action, events: list[Event]) -> None:
    me = state.players[seat]
    instance = action["card"]
    card = card_of(instance)
    events.append(Event("used", {"seat": seat, "card": instance}))
    if card.kind == "discardable":
        me.discardables = [d for d in me.discardables if d.id != instance]
        apply_effects(state, seat, card, action, events)
        me.vacio.append(VacioCard(instance, "upright", seat))
    elif card.kind == "assistance":
        tire(me.slots[2], "exhausted" if card.cost == "exhaust" else "turned")
        apply_effects(state, seat, card, action, events)
    else:
        # The final action: every energy counter comes off; it is never turned or exhausted.
        me.final.energy = 0
        if card.attack is not None:
            make_attack(state, seat, instance, card.attack, me.hero, action, events)
        else:
            apply_effects(state, seat, card, action, events)


def _explore(state: State, seat: int, events: list[Event]) -> None:
    """Draw 2 and rest every card in play; exploring an empty Nave loses the match."""
    me = state.players[seat]
    events.append(Event("explored", {"seat": seat, "nave": len(me.nave)}))
    if not me.nave:
        defeat(state, seat, "empty_nave", events)
    else:
        for _ in range(EXPLORE_DRAW):
            draw(state, seat, events)
        for record in me.in_play():
            if record.position == "turned":
                record.position = "upright"
            elif record.position == "exhausted":
                record.position = "turned"
    if not finish_if_over(state, events):
        end_turn(state, seat, events, "explored")


def end_turn(state: State, seat: int, events: list[Event], reason: str) -> None:
    """The turn ends (`reason`: "end", "activations", "explored" or "resigned"); bleeding
    hurts its bearers at the end of their controller's turn; then the next seat."""
    unused = ACTIVATIONS - state.used
    events.append(Event("turn_ended", {"seat": seat, "reason": reason, "unused": unused}))
    me = state.players[seat]
    if not me.out:
        for record in [me.hero, *me.army]:
            if record.bleed is not None and present(state, record.id):
                by = record.bleed if record is not me.hero else None
                events.append(Event("bleeding", {"target": record.id}))
                hurt(state, record.id, 1, by, events)
    if finish_if_over(state, events):
        return
    start_turn(state, following(state, seat), events)


def finish_if_over(state: State, events: list[Event]) -> bool:
    standing = living(state)
    if len(standing) > 1:
        return False
    if state.result is None:
        state.phase = "over"
        outcome = ranking(state)
        state.result = outcome
        events.append(Event("game_over", dict(outcome)))
    return True


def ranking(state: State) -> Outcome:
    """The last one standing first; the fallen after, the later the better, together when they
    fell to the same action."""
    groups: list[list[int]] = [living(state)] if living(state) else []
    by_step: dict[int, list[int]] = {}
    for seat, step in state.fallen:
        by_step.setdefault(step, []).append(seat)
    groups += [sorted(by_step[step]) for step in sorted(by_step, reverse=True)]
    return {"winners": list(groups[0]), "ranking": groups}
