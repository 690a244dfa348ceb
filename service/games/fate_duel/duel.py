"""A duel, step by step: the seed's five steps, each side's decisions as separate prompts
(a step with nothing to decide passes by itself, with its event).

1. Declare soulstones and how each is used, before any card is flipped (only a model that may
   use them, with soulstones left in its crew; otherwise the step passes with none).
2. Flip (at once: chance is no decision) one card, plus one per fate modifier; a + flip lets the
   controller pick the active card among the flipped, a - flip forces the lowest, a flipped
   Black Joker is always the active card; the others are discarded. The total is the
   attribute plus the active card (its value and its suit).
3. Cheat fate from the hand, or not (never on a - flip, never when the Black Joker is active):
   the cheated card replaces the active one, which is discarded, and gives the new total.
4. Declare one trigger of this duel's attribute whose suit the total has, or none.
5. Determine success (total >= TN including any required suit; in an opposed duel the higher
   total, ties to the defender), discard the cards in use, resolve the results, then the
   triggers "tras tener éxito", "tras fallar" and "tras resolver".

An opposed duel plays each of steps 1-4 for the attacker, then for the defender.
"""

import itertools
from typing import Any

from service.games.fate_duel import cards
from service.games.fate_duel.cards import shown, shown_all
from service.games.fate_duel.catalogue import ADD_ONE, PLUS_FLIP, SUIT_USE, stone_uses
from service.games.fate_duel.content import ModelSpec, Ruleset, Trigger
from service.games.fate_duel.state import Duel, Side, State, face
from service.games.kernel.prompts import Prompt
from service.games.kernel.protocol import Action, Event
from service.games.kernel.views import zone


def spec(rules: Ruleset, state: State, seat: int, model: int) -> ModelSpec:
    return rules.crews[state.crews[seat].crew].models[model]


def _side(rules: Ruleset, state: State, seat: int, model: int, attribute: str, flip: int) -> Side:
    model_spec = spec(rules, state, seat, model)
    return Side(
        seat=seat,
        model=model,
        attribute=attribute,
        value=model_spec.attributes[attribute],
        modifier=flip,
        may_use_stones=model_spec.uses_soulstones,
    )


def start_simple(
    rules: Ruleset, state: State, seat: int, model: int, hazard_id: str, events: list[Event]
) -> None:
    hazard = rules.hazards[hazard_id]
    side = _side(rules, state, seat, model, hazard.attribute, hazard.flip)
    state.duel = Duel(
        "simple", [side], 1, 0, tn=hazard.tn, suit=hazard.suit, hazard=hazard.id,
        wounds=hazard.wounds,
    )  # fmt: skip
    events.append(Event("duel_started", summary(rules, state.duel)))


def start_opposed(
    rules: Ruleset,
    state: State,
    attacker: tuple[int, int],
    attack: str,
    defender: tuple[int, int],
    events: list[Event],
) -> None:
    sides = [
        _side(rules, state, *attacker, attack, 0),
        _side(rules, state, *defender, "df", 0),
    ]
    state.duel = Duel("opposed", sides, 1, 0)
    events.append(Event("duel_started", summary(rules, state.duel)))


# --- totals ---------------------------------------------------------------------------


def net_flip(side: Side) -> int:
    """The fate modifier after soulstones: + and - flips cancel one for one."""
    return side.modifier + (side.stones or []).count(PLUS_FLIP)


def total(rules: Ruleset, side: Side) -> int | None:
    if side.active is None:
        return None
    stones = (side.stones or []).count(ADD_ONE)
    return side.value + rules.value(face(side.active)) + stones + side.bonus


def suits(rules: Ruleset, side: Side) -> list[str]:
    if side.active is None:
        return []
    named = {u[len(SUIT_USE) :] for u in side.stones or [] if u.startswith(SUIT_USE)}
    return sorted(rules.suits_of(face(side.active)) | named)


def summary(rules: Ruleset, duel: Duel) -> dict[str, Any]:
    """Everything public about the duel: flipped and cheated cards are face up. The same keys
    at every step; what is not decided yet is null (or empty)."""
    return {
        "kind": duel.kind,
        "step": duel.step,
        "turn": duel.turn,
        "tn": duel.tn,
        "suit": duel.suit,
        "hazard": duel.hazard,
        "sides": [
            {
                "seat": s.seat,
                "model": s.model,
                "attribute": s.attribute,
                "value": s.value,
                "flip": net_flip(s),
                "stones": s.stones,
                "flipped": zone(shown_all(s.flipped)),
                "active": None if s.active is None else shown(s.active),
                "cheated": s.cheated,
                "replaced": None if s.replaced is None else shown(s.replaced),
                "trigger": s.trigger,
                "total": total(rules, s),
                "suits": suits(rules, s),
            }
            for s in duel.sides
        ],
    }


# --- what the acting side is asked ----------------------------------------------------


def _stone_choices(rules: Ruleset, state: State, side: Side) -> list[list[str]]:
    most = min(rules.stones_per_duel, state.crews[side.seat].soulstones)
    uses = stone_uses(rules)
    choices: list[list[str]] = []
    for count in range(most + 1):
        for combo in itertools.combinations_with_replacement(uses, count):
            named = [u for u in combo if u.startswith(SUIT_USE)]
            # Naming the same suit twice adds nothing.
            if len(set(named)) == len(named):
                choices.append(list(combo))
    return choices


def _candidates(rules: Ruleset, side: Side) -> list[str]:
    """The flipped cards that may become the active card."""
    black = [c for c in side.flipped if face(c) == rules.black.id]
    if black:
        return black
    net = net_flip(side)
    if net > 0:
        return list(side.flipped)
    lowest = min(rules.value(face(c)) for c in side.flipped)
    return [c for c in side.flipped if rules.value(face(c)) == lowest]


def cheat_refusal(rules: Ruleset, state: State, side: Side) -> str | None:
    """Why the side may not cheat fate now, or None when it may."""
    if net_flip(side) < 0:
        return "negative_flip"
    if side.active is not None and face(side.active) == rules.black.id:
        return "black_joker"
    if not state.hands[side.seat]:
        return "empty_hand"
    return None


def eligible_triggers(rules: Ruleset, state: State, duel: Duel, side: Side) -> list[Trigger]:
    """The side's triggers for this duel's attribute whose suit the total has.

    A trigger that wounds the opposing model is offered only where there is one.
    """
    have = suits(rules, side)
    return [
        t
        for t in spec(rules, state, side.seat, side.model).triggers
        if t.attribute == side.attribute
        and t.suit in have
        and not (t.effect == "damage" and duel.kind == "simple")
    ]


def prompt(rules: Ruleset, state: State, seat: int) -> Prompt | None:
    duel = state.duel
    if duel is None or duel.step > 4:
        return None
    side = duel.sides[duel.turn]
    if side.seat != seat:
        return None
    asked = _asked(rules, state, duel, side)
    if asked is None:
        return None
    kind, actions = asked
    # The uses are a multiset: a client may list them in any order.
    unordered = ("uses",) if kind == "soulstones" else ()
    return Prompt(kind, actions, data={"duel": summary(rules, duel)}, unordered=unordered)


def _asked(rules: Ruleset, state: State, duel: Duel, side: Side) -> tuple[str, list[Action]] | None:
    if duel.step == 1:
        if side.stones is None and side.may_use_stones and state.crews[side.seat].soulstones:
            choices = _stone_choices(rules, state, side)
            return "soulstones", [{"type": "soulstones", "uses": c} for c in choices]
        return None
    if duel.step == 2:
        # The flip itself is chance, not a decision: `advance` makes it on reaching step 2.
        if side.flipped and side.active is None:
            return "choose", [{"type": "choose", "card": c} for c in _candidates(rules, side)]
        return None
    if duel.step == 3:
        if cheat_refusal(rules, state, side) is not None:
            return None
        cheats: list[Action] = [{"type": "cheat", "card": c} for c in state.hands[side.seat]]
        return "cheat", [{"type": "keep"}, *cheats]
    triggers = eligible_triggers(rules, state, duel, side)
    if not triggers:
        return None
    named: list[Action] = [{"type": "trigger", "name": t.name} for t in triggers]
    return "trigger", [{"type": "no_trigger"}, *named]


# --- answering ------------------------------------------------------------------------


def act(rules: Ruleset, state: State, action: Action, events: list[Event]) -> None:
    """Apply the acting side's (already legal) answer, then play on to the next question."""
    duel = state.duel
    assert duel is not None
    side = duel.sides[duel.turn]
    who = {"seat": side.seat, "model": side.model}
    kind = action["type"]
    if kind == "soulstones":
        _declare(state, side, list(action["uses"]), "declared", events)
    elif kind == "choose":
        _activate(rules, state, side, action["card"], events)
    elif kind == "keep":
        events.append(Event("kept", {**who, "total": total(rules, side)}))
    elif kind == "cheat":
        _cheat(rules, state, side, action["card"], events)
    elif kind == "no_trigger":
        events.append(Event("no_trigger", {**who, "reason": "declined"}))
    else:
        _trigger(rules, state, side, action["name"], events)
    _next_turn(duel)


def _declare(state: State, side: Side, uses: list[str], reason: str, events: list[Event]) -> None:
    side.stones = uses
    crew = state.crews[side.seat]
    crew.soulstones -= len(uses)
    data = {"seat": side.seat, "model": side.model, "uses": uses, "left": crew.soulstones}
    events.append(Event("soulstones", {**data, "reason": reason}))


def _flip(rules: Ruleset, state: State, side: Side, events: list[Event]) -> None:
    flipped = []
    for _ in range(1 + abs(net_flip(side))):
        card = cards.take(state, side.seat, events)
        if card is not None:
            flipped.append(card)
    side.flipped = flipped
    data = {
        "seat": side.seat,
        "model": side.model,
        "flip": net_flip(side),
        "cards": shown_all(flipped),
    }
    events.append(Event("flipped", data))
    candidates = _candidates(rules, side)
    if len(candidates) == 1:
        _activate(rules, state, side, candidates[0], events)


def _activate(rules: Ruleset, state: State, side: Side, card: str, events: list[Event]) -> None:
    side.active = card
    others = [c for c in side.flipped if c != card]
    data = {
        "seat": side.seat,
        "model": side.model,
        "card": shown(card),
        "total": total(rules, side),
        "suits": suits(rules, side),
    }
    events.append(Event("active_card", data))
    cards.discard(state, side.seat, others, events)


def _cheat(rules: Ruleset, state: State, side: Side, card: str, events: list[Event]) -> None:
    assert side.active is not None
    replaced = side.active
    state.hands[side.seat].remove(card)
    side.active, side.replaced, side.cheated = card, replaced, True
    data = {
        "seat": side.seat,
        "model": side.model,
        "card": shown(card),
        "replaced": shown(replaced),
        "total": total(rules, side),
        "suits": suits(rules, side),
    }
    events.append(Event("cheated", data))
    cards.discard(state, side.seat, [replaced], events)


def _trigger(rules: Ruleset, state: State, side: Side, name: str, events: list[Event]) -> None:
    side.trigger = name
    trigger = _named_trigger(rules, state, side, name)
    data: dict[str, Any] = {"seat": side.seat, "model": side.model, "name": name}
    events.append(Event("trigger_declared", {**data, "timing": trigger.timing}))
    if trigger.timing == "inmediato":
        side.bonus += trigger.amount
        events.append(Event("trigger_resolved", {**data, "total": total(rules, side)}))


def _named_trigger(rules: Ruleset, state: State, side: Side, name: str) -> Trigger:
    return next(t for t in spec(rules, state, side.seat, side.model).triggers if t.name == name)


def _next_turn(duel: Duel) -> None:
    duel.turn += 1
    if duel.turn == len(duel.sides):
        duel.step, duel.turn = duel.step + 1, 0


def advance(rules: Ruleset, state: State, events: list[Event]) -> bool:
    """Pass every step the acting side has nothing to decide in; True while the duel still
    asks something, False once step 5 is resolved and the duel is over."""
    while (duel := state.duel) is not None:
        if duel.step == 5:
            _determine(rules, state, duel, events)
            state.duel = None
            return False
        side = duel.sides[duel.turn]
        if duel.step == 2 and not side.flipped:
            _flip(rules, state, side, events)
        if _asked(rules, state, duel, side) is not None:
            return True
        _pass_step(rules, state, duel, side, events)
        _next_turn(duel)
    return False


def abandon(state: State, seat: int, events: list[Event]) -> None:
    """A duel `seat` takes part in ends with nothing of it resolved (its crew resigned)."""
    current = state.duel
    if current is not None and any(side.seat == seat for side in current.sides):
        close(state, "resigned", events)


def close(state: State, reason: str, events: list[Event]) -> None:
    """The open duel, if any, ends with nothing of it resolved: every card in use goes to its
    discard pile (before the active card is chosen every flipped card is in use; after, only
    the active one), so no half-resolved step outlives it."""
    current = state.duel
    if current is None:
        return
    for side in current.sides:
        in_use = list(side.flipped) if side.active is None else [side.active]
        cards.discard(state, side.seat, in_use, events)
    state.duel = None
    seats = sorted({side.seat for side in current.sides})
    events.append(Event("duel_abandoned", {"seats": seats, "reason": reason}))


def _pass_step(rules: Ruleset, state: State, duel: Duel, side: Side, events: list[Event]) -> None:
    who = {"seat": side.seat, "model": side.model}
    if duel.step == 1:
        reason = "cannot_use" if not side.may_use_stones else "none_left"
        _declare(state, side, [], reason, events)
    elif duel.step == 3:
        events.append(Event("no_cheat", {**who, "reason": cheat_refusal(rules, state, side)}))
    elif duel.step == 4:
        events.append(Event("no_trigger", {**who, "reason": "none_eligible"}))


# --- step 5 ---------------------------------------------------------------------------


def _determine(rules: Ruleset, state: State, duel: Duel, events: list[Event]) -> None:
    totals = [total(rules, s) or 0 for s in duel.sides]
    if duel.kind == "simple":
        side = duel.sides[0]
        assert duel.tn is not None
        won = [totals[0] >= duel.tn and (duel.suit is None or duel.suit in suits(rules, side))]
    else:
        # Ties go to the defender (ours).
        won = [totals[0] > totals[1], totals[0] <= totals[1]]
    result = {"kind": duel.kind, "totals": totals, "won": won, "tn": duel.tn, "suit": duel.suit}
    events.append(Event("duel_result", {**result, "sides": summary(rules, duel)["sides"]}))
    for side in duel.sides:
        cards.discard(state, side.seat, [side.active] if side.active else [], events)
    if duel.kind == "simple":
        if not won[0]:
            side = duel.sides[0]
            _wound(state, side.seat, side.model, duel.wounds, "hazard", events)
    elif won[0]:
        attacker, defender = duel.sides
        margin = totals[0] - totals[1]
        weak, moderate, severe = spec(rules, state, attacker.seat, attacker.model).damage
        damage = (
            severe
            if margin >= rules.severe_margin
            else moderate
            if margin >= rules.moderate_margin
            else weak
        )
        _wound(state, defender.seat, defender.model, damage, "attack", events)
    for index, side in enumerate(duel.sides):
        if side.trigger is not None:
            _after(rules, state, duel, index, won[index], events)


def _after(
    rules: Ruleset, state: State, duel: Duel, index: int, won: bool, events: list[Event]
) -> None:
    side = duel.sides[index]
    assert side.trigger is not None
    trigger = _named_trigger(rules, state, side, side.trigger)
    if trigger.timing == "inmediato":
        return  # resolved at step 4
    data = {"seat": side.seat, "model": side.model, "name": trigger.name}
    reason = _not_applying(state, duel, index, trigger, won)
    if reason is not None:
        events.append(Event("trigger_not_applied", {**data, "reason": reason}))
        return
    events.append(Event("trigger_resolved", data))
    if trigger.effect == "damage":
        other = duel.sides[1 - index]
        _wound(state, other.seat, other.model, trigger.amount, "trigger", events)
    else:
        _heal(rules, state, side.seat, side.model, trigger.amount, events)


def _not_applying(state: State, duel: Duel, index: int, trigger: Trigger, won: bool) -> str | None:
    """Why a trigger declared at step 4 does nothing after step 5, or None when it applies."""
    if trigger.timing == "tras_tener_exito" and not won:
        return "duel_lost"
    if trigger.timing == "tras_fallar" and won:
        return "duel_won"
    side = duel.sides[index]
    if trigger.effect == "damage":
        other = duel.sides[1 - index]
        return None if state.crews[other.seat].wounds[other.model] else "target_dead"
    # A model killed in this duel stays dead (ours).
    return None if state.crews[side.seat].wounds[side.model] else "model_dead"


def _wound(
    state: State, seat: int, model: int, amount: int, cause: str, events: list[Event]
) -> None:
    crew = state.crews[seat]
    if crew.wounds[model] == 0:
        return
    crew.wounds[model] = max(0, crew.wounds[model] - amount)
    data = {"seat": seat, "model": model, "amount": amount, "left": crew.wounds[model]}
    events.append(Event("wounded", {**data, "cause": cause}))
    if crew.wounds[model] == 0:
        events.append(Event("model_killed", {"seat": seat, "model": model}))


def _heal(
    rules: Ruleset, state: State, seat: int, model: int, amount: int, events: list[Event]
) -> None:
    crew = state.crews[seat]
    most = spec(rules, state, seat, model).wounds
    healed = min(most, crew.wounds[model] + amount) - crew.wounds[model]
    crew.wounds[model] += healed
    events.append(
        Event(
            "healed", {"seat": seat, "model": model, "amount": healed, "left": crew.wounds[model]}
        )
    )
