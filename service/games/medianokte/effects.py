"""Card effects: drawing, energy, raising from a Vacío, damage, tiring and readying, healing,
and the statuses (bleeding, poison, euphoria) with their cleansing."""

from service.games.kernel.prompts import Action
from service.games.kernel.protocol import Event
from service.games.medianokte.content import POSITIONS, Card, Effect
from service.games.medianokte.damage import defeat, hurt
from service.games.medianokte.state import (
    MAX_ENERGY,
    Astrali,
    Hero,
    State,
    armour,
    draw,
    locate,
    present,
    tire,
)
from service.games.medianokte.targets import raisable


def apply_effects(state: State, seat: int, card: Card, action: Action, events: list[Event]) -> None:
    target = action.get("target", state.players[seat].hero.id)
    for effect in card.effects:
        if effect.do in ("raise", "raise_all", "draw", "energy") or present(state, target):
            apply_effect(state, seat, effect, target, action.get("picks"), events)


def apply_effect(
    state: State,
    seat: int,
    effect: Effect,
    target: str,
    picks: list[str] | None,
    events: list[Event],
) -> None:
    """One effect of a card (or of an attack that hit) on its target."""
    me = state.players[seat]
    do = effect.do
    if do == "draw":
        for _ in range(effect.n):
            draw(state, seat, events)
        return
    if do == "energy":
        me.final.energy = min(MAX_ENERGY, me.final.energy + effect.n)
        events.append(Event("energy", {"seat": seat, "energy": me.final.energy}))
        return
    if do in ("raise", "raise_all"):
        _raise(state, seat, target, do == "raise_all", events)
        return
    owner, record = locate(state, target)
    if do == "damage":
        hurt(state, target, effect.n, seat, events)
        return
    if do == "tire":
        if isinstance(record, Astrali):
            tire(record, effect.position)
        else:
            slots = state.players[owner].slots
            if picks is None:
                # An area attack that tires characters: their first actions not yet that tired.
                rank = POSITIONS.index(effect.position)
                tireable = [s for s in slots if POSITIONS.index(s.position) < rank]
                picks = [s.id for s in tireable[: effect.n]]
            for slot in slots:
                if slot.id in picks:
                    tire(slot, effect.position)
        events.append(Event("tired", {"target": target, "picks": picks, "to": effect.position}))
        return
    if do == "ready":
        if isinstance(record, Astrali):
            record.position = "upright"
        else:
            for slot in state.players[owner].slots[:2]:
                slot.position = "upright"
        events.append(Event("readied", {"target": target}))
        return
    if do == "heal":
        record.damage = max(0, record.damage - effect.n)
    elif do == "cleanse":
        record.poison, record.bleed = 0, None
    elif do == "bleed":
        # At most one bleeding token; its placer is who destroys an astrali it kills.
        if record.bleed is None:
            record.bleed = seat
    elif do == "poison":
        record.poison += effect.n
    elif do == "euphoria":
        record.euphoria = True
    events.append(Event("status", {"target": target, "effect": do, "n": effect.n}))
    if do == "poison" and isinstance(record, Hero) and armour(state, target) <= 0:
        defeat(state, owner, "poison", events)


def _raise(state: State, seat: int, target: str, every: bool, events: list[Event]) -> None:
    """The Nigromante: enemy astralis leave a Vacío for your army, with no counter left on
    them (poison, bleeding, euphoria, damage) and in the position they had."""
    for player in state.players:
        for record in raisable(player, seat):
            if record.id == target or (every and player.hero.id == target):
                player.vacio.remove(record)
                raised = Astrali(id=record.id, position=record.position, owner=record.owner)
                state.players[seat].army.append(raised)
                events.append(Event("raised", {"seat": seat, "card": record.id}))
