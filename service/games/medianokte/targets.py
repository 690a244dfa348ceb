"""Who a card or an attack may be aimed at: each target kind's choices, the actions tiring a
character may pick, and an attack's range (melee, ranged, area)."""

import itertools
from collections.abc import Iterator
from typing import Any

from service.games.medianokte.content import Attack, Card, Effect
from service.games.medianokte.state import (
    Player,
    State,
    VacioCard,
    card_of,
    enemies,
    is_hero,
    locate,
)


def _targets_of(state: State, seat: int, target: str) -> list[str]:
    """Every choice for one card target kind (`None`-free: "self" has one empty choice)."""
    me = state.players[seat]
    foes = [state.players[e] for e in enemies(state, seat)]
    if target == "ally":
        return [me.hero.id, *(a.id for a in me.army)]
    if target == "ally_astrali":
        return [a.id for a in me.army]
    if target == "enemy":
        return [t for p in foes for t in [p.hero.id, *(a.id for a in p.army)]]
    if target == "enemy_character":
        return [p.hero.id for p in foes]
    if target == "enemy_astrali":
        return [a.id for p in foes for a in p.army]
    if target == "vacio_astrali":
        return [r.id for p in state.players for r in raisable(p, seat)]
    if target == "enemy_vacio":
        others = [p for s, p in enumerate(state.players) if s != seat]
        return [p.hero.id for p in others if raisable(p, seat)]
    raise ValueError(target)


def raisable(player: Player, seat: int) -> list[VacioCard]:
    """The astralis in `player`'s Vacío that are enemies of `seat` (the Nigromante's FAQ)."""
    return [r for r in player.vacio if card_of(r.id).kind == "astrali" and r.owner != seat]


def card_choices(state: State, seat: int, card: Card) -> list[dict[str, Any]]:
    """The target (and, for tiring a character, which of its actions) for a card's effects."""
    if card.target == "self":
        return [{}]
    tire = next((e for e in card.effects if e.do == "tire"), None)
    options: list[dict[str, Any]] = []
    for target in _targets_of(state, seat, card.target):
        if tire is not None and is_hero(state, target):
            options += [
                {"target": target, "picks": picks} for picks in tire_picks(state, target, tire)
            ]
        else:
            options.append({"target": target})
    return options


def tire_picks(state: State, hero: str, tire: Effect) -> Iterator[list[str]]:
    """The FAQ: tiring a character's actions picks among its weapons and its assistance, never
    its final action; n actions are n of those three (all of them when n is 3 or more)."""
    seat, _ = locate(state, hero)
    slots = [s.id for s in state.players[seat].slots]
    for combo in itertools.combinations(slots, min(tire.n, len(slots))):
        yield list(combo)


def attack_targets(state: State, seat: int, attack: Attack) -> list[str] | None:
    """Who an attack may be aimed at; None for an area attack, which hits every enemy."""
    if attack.range == "area":
        return None
    targets = []
    for foe in enemies(state, seat):
        player = state.players[foe]
        upright = [a.id for a in player.army if a.position == "upright"]
        if attack.range == "melee" and upright:
            # Melee must hit an upright defender while one exists; only with none upright
            # may it pick any target, the player included.
            targets += upright
        else:
            targets += [player.hero.id, *(a.id for a in player.army)]
    return targets


def area_targets(state: State, seat: int) -> list[str]:
    """Every enemy on the table: each living enemy's character and astralis."""
    return [t for foe in enemies(state, seat) for t in _targets_of(state, foe, "ally")]
