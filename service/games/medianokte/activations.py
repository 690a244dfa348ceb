"""The turn player's legal activations, each with its targets enumerated: playing a card,
attacking, using an object, the assistance or the final action, exploring, ending the turn."""

from service.games.kernel.prompts import Action
from service.games.medianokte.content import Attack
from service.games.medianokte.state import MAX_ENERGY, Astrali, Placed, State, card_of, is_hero
from service.games.medianokte.targets import area_targets, attack_targets, card_choices, tire_picks


def activations(state: State, seat: int) -> list[Action]:
    """Every legal activation of the turn player, with its targets enumerated."""
    me = state.players[seat]
    actions: list[Action] = []
    for instance in me.hand:
        card = card_of(instance)
        if card.kind == "event":
            actions += [
                {"type": "play", "card": instance, **c} for c in card_choices(state, seat, card)
            ]
        else:
            actions.append({"type": "play", "card": instance})
    weapons = [o for o in me.permanents if card_of(o.id).kind == "weapon"]
    sources: list[Placed | Astrali] = [*me.slots[:2], *weapons, *me.army]
    for source in sources:
        attack = card_of(source.id).attack
        if source.position == "upright" and attack is not None:
            actions += _attack_actions(state, seat, "attack", "with", source.id, attack)
    for item in me.discardables:
        card = card_of(item.id)
        actions += [{"type": "use", "card": item.id, **c} for c in card_choices(state, seat, card)]
    assistance = me.slots[2]
    if assistance.position == "upright":
        card = card_of(assistance.id)
        choices = card_choices(state, seat, card)
        actions += [{"type": "use", "card": assistance.id, **c} for c in choices]
    final = me.final
    if final.energy >= MAX_ENERGY:
        card = card_of(final.id)
        if card.attack is not None:
            actions += _attack_actions(state, seat, "use", "card", final.id, card.attack)
        else:
            choices = card_choices(state, seat, card)
            actions += [{"type": "use", "card": final.id, **c} for c in choices]
    if state.used == 0:
        actions.append({"type": "explore"})
    else:
        actions.append({"type": "end"})
    return actions


def _attack_actions(
    state: State, seat: int, kind: str, key: str, source: str, attack: Attack
) -> list[Action]:
    targets = attack_targets(state, seat, attack)
    if targets is None:
        return [{"type": kind, key: source}] if area_targets(state, seat) else []
    tire = next((e for e in attack.effects if e.do == "tire"), None)
    actions: list[Action] = []
    for target in targets:
        if tire is not None and is_hero(state, target):
            # Should it hit, the attacker chooses which of the character's actions it tires.
            actions += [
                {"type": kind, key: source, "target": target, "picks": picks}
                for picks in tire_picks(state, target, tire)
            ]
        else:
            actions.append({"type": kind, key: source, "target": target})
    return actions
