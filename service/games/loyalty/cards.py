"""The cards of a side: what a character in play is worth and how it is shown, and the moves of
cards between deck, hand, play and graveyard, with the loyalty they cost and the life a side
loses."""

from typing import Any

from service.games.kernel.hidden import Hidden
from service.games.kernel.protocol import Event
from service.games.loyalty.content import Content, card_of
from service.games.loyalty.state import Side, State, Unit


def stats(content: Content, side: Side, unit: Unit) -> tuple[int, int]:
    """Attack and defence now: printed, plus boosts, plus the side's POSESIÓN auras."""
    card = content.cards[card_of(unit.card)]
    attack, defence = card.attack + unit.attack_boost, card.defence + unit.defence_boost
    for held in side.posesiones:
        effect = content.cards[card_of(held)].effect
        if effect.kind == "aura":
            attack += effect.amount if effect.stat == "attack" else 0
            defence += effect.amount if effect.stat == "defence" else 0
    return attack, defence


def ref(instance: str) -> dict[str, str]:
    """A card as views and events name it: its instance `id` and its catalogue id `card`."""
    return {"id": instance, "card": card_of(instance)}


def unit_view(content: Content, side: Side, unit: Unit) -> dict[str, Any]:
    """A character in play as everyone sees it: its attack and defence now, and as printed."""
    attack, defence = stats(content, side, unit)
    printed = content.cards[card_of(unit.card)]
    return {
        **ref(unit.card),
        "attack": attack,
        "defence": defence,
        "printed": {"attack": printed.attack, "defence": printed.defence},
        "attacked": unit.attacked,
        "used": unit.used,
    }


def find_unit(side: Side, card: str) -> Unit | None:
    return next((u for u in side.units if u.card == card), None)


def raise_stat(unit: Unit, stat: str, amount: int) -> None:
    if stat == "attack":
        unit.attack_boost += amount
    else:
        unit.defence_boost += amount


def pay(side: Side, cost: int) -> None:
    side.loyalty -= cost


def draw(state: State, seat: int, count: int, events: list[Event]) -> None:
    side = state.sides[seat]
    for _ in range(min(count, len(side.deck))):
        card = side.deck.pop(0)
        side.hand.append(card)
        events.append(Event("drew", {"seat": seat, "card": Hidden((seat,), ref(card))}))


def leave_hand(side: Side, card: str) -> None:
    side.hand.remove(card)
    if card in side.known:
        side.known.remove(card)


def return_to_hand(state: State, seat: int, card: str, events: list[Event]) -> None:
    side = state.sides[seat]
    unit = find_unit(side, card)
    assert unit is not None
    side.units.remove(unit)
    side.hand.append(card)
    side.known.append(card)
    events.append(Event("returned", {"seat": seat, **ref(card)}))


def destroy(state: State, seat: int, card: str, events: list[Event]) -> None:
    side = state.sides[seat]
    unit = find_unit(side, card)
    assert unit is not None
    side.units.remove(unit)
    side.graveyard.append(card)
    events.append(Event("destroyed", {"seat": seat, **ref(card)}))


def lose_life(state: State, seat: int, amount: int, events: list[Event]) -> None:
    side = state.sides[seat]
    side.life -= amount
    side.lost += amount
    events.append(Event("life_lost", {"seat": seat, "amount": amount, "life": side.life}))
