"""Why an answer of an offered type is none of the prompt's actions: the rule it breaks, with
the codes of docs/rules/medianokte.md#refusals.

The prompt's enumerated actions are the legal ones; this only explains a miss, field by field
in the order a player reads an action: the card, then the target, then the picks. It reads
only what the seat may see (its hand, the cards in play, the Vacíos), so a refusal never tells
whether an id names a card in someone's hand or Nave. It never raises: what it cannot explain
it leaves to the kernel's `not_offered`.
"""

from collections.abc import Mapping
from typing import Any

from service.games.kernel.prompts import Action, Prompt
from service.games.kernel.protocol import IllegalAction, same_json
from service.games.medianokte.content import Card
from service.games.medianokte.state import MAX_ENERGY, Astrali, Placed, State, card_of

# The zones everyone sees, where an id may be looked up without giving anything away.
_PUBLIC = ("character", "actions", "final", "army", "discardables", "permanents", "vacio")


def refusal(state: State, seat: int, asked: Prompt, action: Action) -> IllegalAction | None:
    if asked.kind == "choose_first":
        return _first(state, action)
    if asked.kind != "activation":
        return None
    kind = action["type"]
    if kind in ("explore", "end"):
        return _extra(action, {"type"})
    key = "with" if kind == "attack" else "card"
    source = action.get(key)
    if kind == "play":
        refused = _playable(state, seat, source)
    elif kind == "use":
        refused = _usable(state, seat, source)
    else:
        refused = _attacker(state, seat, source)
    if refused is not None:
        return refused
    candidates = [a for a in asked.actions if a["type"] == kind and a.get(key) == source]
    if not candidates:
        return IllegalAction(
            "no_target_available", "That card has no legal target now.", card=source
        )
    return _fields(state, seat, card_of(str(source)), action, candidates)


def _first(state: State, action: Action) -> IllegalAction | None:
    extra = _extra(action, {"type", "seat"})
    if extra is not None:
        return extra
    if "seat" not in action:
        return IllegalAction("bad_param", "Say which seat plays first.", field="seat")
    chosen = action["seat"]
    if type(chosen) is not int or not 0 <= chosen < len(state.players):
        return IllegalAction("no_such_seat", f"There is no seat {chosen!r} at this table.")
    if state.players[chosen].out:
        return IllegalAction("seat_out", f"Seat {chosen} is out of the match.", seat=chosen)
    return None


def _extra(action: Mapping[str, Any], allowed: set[str]) -> IllegalAction | None:
    extra = sorted(str(key) for key in action if key not in allowed)
    if not extra:
        return None
    return IllegalAction("bad_param", f"This action takes no {extra[0]!r}.", field=extra[0])


# --- the card an action uses -------------------------------------------------------------


def _place(state: State, instance: Any) -> tuple[int, str] | None:
    """Who controls the card `instance` names and in which public zone, or None."""
    if not isinstance(instance, str):
        return None
    for seat, player in enumerate(state.players):
        zones = {
            "character": [player.hero.id],
            "actions": [s.id for s in player.slots],
            "final": [player.final.id],
            "army": [a.id for a in player.army],
            "discardables": [d.id for d in player.discardables],
            "permanents": [o.id for o in player.permanents],
            "vacio": [v.id for v in player.vacio],
        }
        for name in _PUBLIC:
            if instance in zones[name]:
                return seat, name
    return None


def _elsewhere(state: State, seat: int, instance: Any) -> IllegalAction | None:
    """The refusal for a card that is not where the action needs it; None when it is one of
    the seat's cards in play, which the action cannot do anything with."""
    if isinstance(instance, str) and instance in state.players[seat].hand:
        return IllegalAction("not_in_play", "Play that card from your hand first.", card=instance)
    place = _place(state, instance)
    if place is None:
        return IllegalAction("no_such_card", f"No card {instance!r} is in play.", card=instance)
    if place[0] != seat:
        return IllegalAction("not_your_card", "That card is another player's.", card=instance)
    if place[1] == "vacio":
        return IllegalAction("not_in_play", "That card is in your Vacío.", card=instance)
    return None


def _playable(state: State, seat: int, instance: Any) -> IllegalAction | None:
    if isinstance(instance, str) and instance in state.players[seat].hand:
        return None
    return IllegalAction("not_in_hand", "That card is not in your hand.", card=instance)


def _usable(state: State, seat: int, instance: Any) -> IllegalAction | None:
    me = state.players[seat]
    if any(d.id == instance for d in me.discardables):
        return None
    if instance == me.slots[2].id:
        if me.slots[2].position != "upright":
            return IllegalAction(
                "source_tired", "Your assistance is used only while it is upright.", card=instance
            )
        return None
    if instance == me.final.id:
        if me.final.energy < MAX_ENERGY:
            message = (
                f"The final action needs {MAX_ENERGY} energy counters; it has {me.final.energy}."
            )
            return IllegalAction("final_action_not_charged", message, card=instance)
        return None
    refused = _elsewhere(state, seat, instance)
    if refused is not None:
        return refused
    message = "Only a discardable object, the assistance and the final action are used; "
    return IllegalAction("cannot_use", message + "weapons and astralis attack.", card=instance)


def _attacker(state: State, seat: int, instance: Any) -> IllegalAction | None:
    me = state.players[seat]
    weapons = [o for o in me.permanents if card_of(o.id).kind == "weapon"]
    sources: list[Placed | Astrali] = [*me.slots[:2], *weapons, *me.army]
    for source in sources:
        if source.id == instance:
            if source.position != "upright":
                message = f"That card is {source.position}: only upright cards attack."
                return IllegalAction("source_tired", message, card=instance)
            return None
    refused = _elsewhere(state, seat, instance)
    if refused is not None:
        return refused
    message = "Only weapons and astralis attack; the final action and the rest are used."
    return IllegalAction("cannot_attack", message, card=instance)


# --- what the card is aimed at -----------------------------------------------------------


def _fields(
    state: State, seat: int, card: Card, action: Action, candidates: list[Action]
) -> IllegalAction | None:
    extra = _extra(action, {key for candidate in candidates for key in candidate})
    if extra is not None:
        return extra
    aimed = candidates
    if any("target" in candidate for candidate in candidates):
        if "target" not in action:
            message = "Choose a target for this action."
            return IllegalAction("bad_param", message, field="target")
        aimed = [c for c in candidates if same_json(c.get("target"), action["target"])]
        if not aimed:
            return _bad_target(state, seat, card, action["target"])
    if any("picks" in candidate for candidate in aimed):
        if "picks" not in action:
            message = "Choose which of the character's weapons and assistance to tire."
            return IllegalAction("bad_param", message, field="picks")
        n = len(aimed[0]["picks"])
        message = f"Picks are {n} different weapons or assistance of the target character."
        return IllegalAction("bad_picks", message, field="picks")
    if "picks" in action:
        return IllegalAction("bad_param", "picks are only for tiring a character", field="picks")
    return None


def _bad_target(state: State, seat: int, card: Card, target: Any) -> IllegalAction:
    place = _place(state, target)
    if place is None or place[1] not in ("character", "army", "vacio"):
        return IllegalAction(
            "no_such_target", f"There is no character or astrali {target!r} in play."
        )
    owner, zone = place
    if state.players[owner].out:
        return IllegalAction(
            "no_such_target", f"Seat {owner} is out: its cards cannot be targeted."
        )
    attack = card.attack
    defended = zone != "vacio" and any(a.position == "upright" for a in state.players[owner].army)
    if attack is not None and attack.range == "melee" and owner != seat and defended:
        message = "A melee attack must hit one of the upright astralis defending that player."
        return IllegalAction("must_target_upright", message, target=target)
    rule = card.target if attack is None else f"{attack.range}_attack"
    return IllegalAction(
        "wrong_target", f"{card.name} cannot be aimed at that card.", target=target, rule=rule
    )
