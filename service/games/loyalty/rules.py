"""The loyalty card game (seed 004, DESIGN §5.3): one game as pure functions of the state.

The rules, section by section, and every decision where the seed is silent, are in
docs/rules/loyalty.md; the comments here only point at them.
"""

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from service.games.kernel.hidden import Hidden
from service.games.kernel.prompts import Action, Prompt
from service.games.kernel.protocol import Event, IllegalAction, Outcome, match_legal
from service.games.kernel.rng import SplitMix64, one_way_seed
from service.games.loyalty.content import Content, Effect, card_of
from service.games.loyalty.state import PHASES, Side, State, Unit

LIFE = "life"


# --- setting up -----------------------------------------------------------------------------


def setup(
    content: Content, seed: int, mode: str, decks: Sequence[Sequence[str]], chooser: int | None
) -> State:
    """Shuffled decks, 5 cards each; who starts is drawn, or chosen by `chooser` (seed §5)."""
    rng = SplitMix64(seed)
    # A one-way tag: instance ids differ between games and give nothing of the seed away.
    tag = one_way_seed(seed, b"loyalty:ids") >> 32
    sides = []
    for seat, listed in enumerate(decks):
        deck = [f"{tag:08x}.{seat}-{i:02d}:{card}" for i, card in enumerate(listed)]
        rng.shuffle(deck)
        hand, deck = deck[: content.hand_size], deck[content.hand_size :]
        sides.append(Side(life=content.modes[mode].life, loyalty=0, deck=deck, hand=hand))
    first = rng.below(2)
    phase = "choose_first" if chooser is not None else "draw"
    state = State(content.ruleset, seed, rng.state, mode, chooser, first, first, 1, phase, sides)
    return state


def setup_events(state: State) -> list[Event]:
    events = []
    for seat, side in enumerate(state.sides):
        cards = side.deck + side.hand
        events.append(Event("shuffled", {"seat": seat, "deck": Hidden((), cards, len(cards))}))
        events += [Event("drew", {"seat": seat, "card": Hidden((seat,), c)}) for c in side.hand]
    if state.chooser is None:
        events.append(Event("starts", {"seat": state.first, "by": "draw"}))
        events.append(Event("turn_started", {"seat": state.first, "turn": 1}))
    else:
        events.append(Event("choose_first", {"seat": state.chooser}))
    return events


# --- what the cards in play are worth -----------------------------------------------------------


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


def _unit(side: Side, card: str) -> Unit | None:
    return next((u for u in side.units if u.card == card), None)


# --- prompts ----------------------------------------------------------------------------------


def prompt(content: Content, state: State, seat: int) -> Prompt | None:
    if state.phase == "over" or seat not in (0, 1):
        return None
    if state.phase == "choose_first":
        if seat != state.chooser:
            return None
        return Prompt("choose_first", [{"type": "first", "seat": s} for s in (0, 1)])
    if state.returning is not None:
        if seat != state.returning:
            return None
        units = state.sides[seat].units
        return Prompt("return", [{"type": "return", "card": u.card} for u in units])
    if state.responder is not None:
        if seat != state.responder:
            return None
        actions: list[Action] = [{"type": "pass"}, *_adventures(content, state, seat)]
        data = {"stack": copy.deepcopy(state.stack), "attack": copy.deepcopy(state.attack)}
        return Prompt("response", actions, _boost_params(state, seat), data)
    if seat != state.active:
        return None
    return _phase_prompt(content, state, seat)


def _phase_prompt(content: Content, state: State, seat: int) -> Prompt:
    side = state.sides[seat]
    phase = state.phase
    params = _boost_params(state, seat)
    actions: list[Action]
    if phase == "draw":
        # The seed's words: "Roba una carta", "Lanza 1 dado de 6".
        actions = [{"type": "draw", "cards": 1}] if side.deck else []
        actions.append({"type": "pass"})
    elif phase == "roll":
        actions = [{"type": "roll", "dice": 1}, {"type": "pass"}]
    else:
        actions = [{"type": "pass"}]
    if phase in ("play", "play_again"):
        for card in side.hand:
            info = content.cards[card_of(card)]
            if info.type in ("character", "mission") and info.cost <= side.loyalty:
                actions.append({"type": "play", "card": card})
    if phase == "arrange" and side.units:
        cards = [u.card for u in side.units]
        params["arrange"] = {
            "attack": {"type": "array", "items": {"enum": cards}, "uniqueItems": True}
        }
    if phase == "attack":
        actions += _attacks(state, seat)
    actions += _adventures(content, state, seat)
    actions += _effects(content, state, seat)
    return Prompt(phase, actions, params, {"turn": state.turn})


def _boost_params(state: State, seat: int) -> dict[str, dict[str, Any]]:
    """Paying loyalty for +1 attack or defence per counter, on one of your characters (§9)."""
    side = state.sides[seat]
    if side.loyalty < 1 or not side.units:
        return {}
    return {
        "boost": {
            "card": {"enum": [u.card for u in side.units]},
            "stat": {"enum": ["attack", "defence"]},
            "amount": {"type": "integer", "minimum": 1, "maximum": side.loyalty},
        }
    }


def _attacks(state: State, seat: int) -> list[Action]:
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


def _targets(content: Content, state: State, seat: int, effect: Effect) -> list[str] | None:
    """The legal targets of `effect` used by `seat`; None when it takes no target."""
    mine, theirs = state.sides[seat], state.sides[1 - seat]
    if effect.kind in ("boost_one", "return_both"):
        return [u.card for u in mine.units]
    if effect.kind == "destroy":
        return [u.card for u in theirs.units if stats(content, theirs, u)[1] <= effect.amount]
    if effect.kind == "destroy_posesion":
        return list(theirs.posesiones)
    return None


def _with_targets(base: Action, targets: list[str] | None) -> list[Action]:
    if targets is None:
        return [base]
    return [{**base, "target": t} for t in targets]


def _adventures(content: Content, state: State, seat: int) -> list[Action]:
    side = state.sides[seat]
    actions: list[Action] = []
    for card in side.hand:
        info = content.cards[card_of(card)]
        if info.type == "adventure" and info.cost <= side.loyalty:
            targets = _targets(content, state, seat, info.effect)
            actions += _with_targets({"type": "adventure", "card": card}, targets)
    return actions


def _effects(content: Content, state: State, seat: int) -> list[Action]:
    side = state.sides[seat]
    actions: list[Action] = []
    for unit in side.units:
        effect = content.cards[card_of(unit.card)].effect
        if not unit.used and effect.cost <= side.loyalty:
            targets = _targets(content, state, seat, effect)
            actions += _with_targets({"type": "effect", "card": unit.card}, targets)
    return actions


# --- applying an action -----------------------------------------------------------------------


def apply(content: Content, state: State, seat: int, action: Action) -> tuple[State, list[Event]]:
    asked = prompt(content, state, seat)
    if asked is None:
        raise IllegalAction(f"seat {seat} may not act now")
    new = copy.deepcopy(state)
    events: list[Event] = []
    kind = action.get("type") if isinstance(action, Mapping) else None
    if isinstance(kind, str) and kind in asked.params:
        if kind == "boost":
            _boost(content, new, seat, action, asked.params["boost"], events)
        else:
            _arrange(content, new, seat, action, events)
    else:
        chosen = match_legal(asked.actions, action)
        _answer(content, new, seat, asked.kind, chosen, events)
    _check_end(new, events)
    return new, events


def _answer(
    content: Content, state: State, seat: int, asked: str, chosen: Action, events: list[Event]
) -> None:
    kind = chosen["type"]
    if asked == "choose_first":
        state.first = state.active = chosen["seat"]
        state.phase = "draw"
        events.append(Event("starts", {"seat": state.first, "by": "choice", "chooser": seat}))
        events.append(Event("turn_started", {"seat": state.first, "turn": 1}))
    elif asked == "return":
        _return(state, seat, chosen["card"], events)
        state.returning = None
        _after_action(content, state, events)
    elif asked == "response":
        if kind == "pass":
            events.append(Event("passed", {"seat": seat, "phase": "response"}))
            _close_window(content, state, events)
        else:
            _play_adventure(content, state, seat, chosen, events)
            other = 1 - seat
            if state.sides[other].loyalty >= 1:
                state.responder = other
            else:
                _close_window(content, state, events)
    elif kind == "pass":
        events.append(Event("passed", {"seat": seat, "phase": state.phase}))
        _next_phase(content, state, events)
    elif kind == "draw":
        _draw(state, seat, 1, events)
        _next_phase(content, state, events)
    elif kind == "roll":
        rng = SplitMix64(state.rng)
        die = rng.die(content.die_faces)
        state.rng = rng.state
        state.sides[seat].loyalty += die
        loyalty = state.sides[seat].loyalty
        events.append(Event("rolled", {"seat": seat, "die": die, "loyalty": loyalty}))
        _next_phase(content, state, events)
    elif kind == "play":
        _play(content, state, seat, chosen["card"], events)
        _after_action(content, state, events)
    elif kind == "adventure":
        _play_adventure(content, state, seat, chosen, events)
        _after_action(content, state, events)
    elif kind == "effect":
        _use_effect(content, state, seat, chosen, events)
    else:
        _declare_attack(content, state, seat, chosen, events)


def _pay(side: Side, cost: int) -> None:
    side.loyalty -= cost


def _boost(
    content: Content,
    state: State,
    seat: int,
    action: Action,
    schema: Mapping[str, Any],
    events: list[Event],
) -> None:
    if set(action) != {"type", "card", "stat", "amount"}:
        raise IllegalAction('a boost is {"type": "boost", "card", "stat", "amount"}')
    amount = action["amount"]
    if action["card"] not in schema["card"]["enum"] or action["stat"] not in ("attack", "defence"):
        raise IllegalAction("boost one of your characters in play, its 'attack' or 'defence'")
    if type(amount) is not int or not 1 <= amount <= schema["amount"]["maximum"]:
        raise IllegalAction(f"boost 'amount' is 1 to {schema['amount']['maximum']} counters")
    side = state.sides[seat]
    unit = _unit(side, action["card"])
    assert unit is not None
    _pay(side, amount)
    _raise(unit, action["stat"], amount)
    events.append(Event("boosted", {"seat": seat, **_unit_view(content, side, unit)}))
    # A boost in a response window keeps the window; the active player's boost is an action.
    if state.responder is None:
        _after_action(content, state, events)


def _raise(unit: Unit, stat: str, amount: int) -> None:
    if stat == "attack":
        unit.attack_boost += amount
    else:
        unit.defence_boost += amount


def _arrange(
    content: Content, state: State, seat: int, action: Action, events: list[Event]
) -> None:
    side = state.sides[seat]
    chosen = action.get("attack")
    cards = [u.card for u in side.units]
    if (
        set(action) != {"type", "attack"}
        or not isinstance(chosen, list)
        or len(set(chosen)) != len(chosen)
        or not all(isinstance(c, str) and c in cards for c in chosen)
    ):
        raise IllegalAction("arrange 'attack' lists your characters in play that go to Attack")
    for unit in side.units:
        unit.zone = "attack" if unit.card in chosen else "defence"
    events.append(Event("arranged", {"seat": seat, "attack": sorted(chosen)}))
    # Arranging is the phase's action: it ends phase e) (ours), then the opponent may respond.
    _next_phase(content, state, events)
    _after_action(content, state, events)


# --- cards ------------------------------------------------------------------------------------


def _draw(state: State, seat: int, count: int, events: list[Event]) -> None:
    side = state.sides[seat]
    for _ in range(min(count, len(side.deck))):
        card = side.deck.pop(0)
        side.hand.append(card)
        events.append(Event("drew", {"seat": seat, "card": Hidden((seat,), card)}))


def _leave_hand(side: Side, card: str) -> None:
    side.hand.remove(card)
    if card in side.known:
        side.known.remove(card)


def _play(content: Content, state: State, seat: int, card: str, events: list[Event]) -> None:
    side = state.sides[seat]
    info = content.cards[card_of(card)]
    _pay(side, info.cost)
    _leave_hand(side, card)
    if info.type == "character":
        # A character enters the Defence zone; phase e) moves it (ours).
        side.units.append(Unit(card, "defence"))
        events.append(Event("played", {"seat": seat, "card": card, "zone": "defence"}))
        return
    events.append(Event("played", {"seat": seat, "card": card}))
    _resolve(content, state, seat, info.effect, None, None, events)
    side.graveyard.append(card)


def _play_adventure(
    content: Content, state: State, seat: int, chosen: Action, events: list[Event]
) -> None:
    side = state.sides[seat]
    info = content.cards[card_of(chosen["card"])]
    _pay(side, info.cost)
    _leave_hand(side, chosen["card"])
    entry = {"seat": seat, "card": chosen["card"], "target": chosen.get("target")}
    state.stack.append(entry)
    events.append(Event("adventure_played", dict(entry)))


def _use_effect(
    content: Content, state: State, seat: int, chosen: Action, events: list[Event]
) -> None:
    side = state.sides[seat]
    unit = _unit(side, chosen["card"])
    assert unit is not None
    effect = content.cards[card_of(unit.card)].effect
    _pay(side, effect.cost)
    unit.used = True
    events.append(Event("effect_used", {"seat": seat, "card": unit.card, "kind": effect.kind}))
    _resolve(content, state, seat, effect, unit, chosen.get("target"), events)
    if state.returning is None:
        _after_action(content, state, events)


def _return(state: State, seat: int, card: str, events: list[Event]) -> None:
    side = state.sides[seat]
    unit = _unit(side, card)
    assert unit is not None
    side.units.remove(unit)
    side.hand.append(card)
    side.known.append(card)
    events.append(Event("returned", {"seat": seat, "card": card}))


def _destroy(state: State, seat: int, card: str, events: list[Event]) -> None:
    side = state.sides[seat]
    unit = _unit(side, card)
    assert unit is not None
    side.units.remove(unit)
    side.graveyard.append(card)
    events.append(Event("destroyed", {"seat": seat, "card": card}))


def lose_life(state: State, seat: int, amount: int, events: list[Event]) -> None:
    side = state.sides[seat]
    side.life -= amount
    side.lost += amount
    events.append(Event("life_lost", {"seat": seat, "amount": amount, "life": side.life}))


def _resolve(
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
        _draw(state, seat, effect.amount, events)
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
            found = _unit(mine, target) if target is not None else None
            if found is None:
                return False
            units = [found]
        for unit in units:
            _raise(unit, effect.stat or "attack", effect.amount)
    elif kind == "destroy":
        found = _unit(theirs, target) if target is not None else None
        if found is None or stats(content, theirs, found)[1] > effect.amount:
            return False
        _destroy(state, 1 - seat, found.card, events)
    elif kind == "destroy_posesion":
        if target not in theirs.posesiones:
            return False
        theirs.posesiones.remove(target)
        theirs.graveyard.append(target)
        events.append(Event("destroyed", {"seat": 1 - seat, "card": target}))
    elif kind == "return_both":
        if target is not None and _unit(mine, target) is not None:
            _return(state, seat, target, events)
        if theirs.units:
            state.returning = 1 - seat
    return True


# --- response windows -------------------------------------------------------------------------


def _after_action(content: Content, state: State, events: list[Event]) -> None:
    """After an action of the active player, the opponent may respond (seed §6, Nota).

    A window opens only when the opponent has a loyalty counter: every answer costs one.
    """
    opponent = 1 - state.active
    if state.sides[opponent].loyalty >= 1 and state.phase != "over":
        state.responder = opponent
        events.append(Event("window", {"seat": opponent}))
    else:
        _close_window(content, state, events)


def _close_window(content: Content, state: State, events: list[Event]) -> None:
    """Resolve the adventures last in, first out, then the declared attack's damage."""
    state.responder = None
    while state.stack:
        entry = state.stack.pop()
        side = state.sides[entry["seat"]]
        info = content.cards[card_of(entry["card"])]
        if info.posesion:
            side.posesiones.append(entry["card"])
            events.append(Event("posesion", {"seat": entry["seat"], "card": entry["card"]}))
            continue
        done = _resolve(content, state, entry["seat"], info.effect, None, entry["target"], events)
        side.graveyard.append(entry["card"])
        events.append(Event("resolved" if done else "fizzled", dict(entry)))
    if state.attack is not None:
        attack, state.attack = state.attack, None
        damage(content, state, state.active, attack["attacker"], attack["target"], events)


# --- attacking and damage -----------------------------------------------------------------------


def _declare_attack(
    content: Content, state: State, seat: int, chosen: Action, events: list[Event]
) -> None:
    unit = _unit(state.sides[seat], chosen["attacker"])
    assert unit is not None
    unit.attacked = True
    state.attack = {"attacker": chosen["attacker"], "target": chosen["target"]}
    events.append(Event("attack", {"seat": seat, **state.attack}))
    _after_action(content, state, events)


def damage(
    content: Content, state: State, seat: int, attacker: str, target: str, events: list[Event]
) -> None:
    """Section 8, case by case: `seat`'s `attacker` attacks `target` (a card or "life")."""
    mine, theirs = state.sides[seat], state.sides[1 - seat]
    unit = _unit(mine, attacker)
    if unit is None or unit.zone != "attack":
        events.append(Event("attack_fizzled", {"seat": seat, "attacker": attacker}))
        return
    attack, defence = stats(content, mine, unit)
    if target == LIFE:
        lose_life(state, 1 - seat, attack, events)
        return
    other = _unit(theirs, target)
    if other is None:
        events.append(Event("attack_fizzled", {"seat": seat, "attacker": attacker}))
        return
    their_attack, their_defence = stats(content, theirs, other)
    if other.zone == "defence":
        if attack >= their_defence:
            _destroy(state, 1 - seat, target, events)
        else:
            lose_life(state, seat, their_defence - attack, events)
    elif attack > their_attack:
        _destroy(state, 1 - seat, target, events)
        # "the difference between your attack and the defence of the characters that took
        # part in that battle": both defences, and never less than nothing (ours).
        through = attack - (defence + their_defence)
        if through > 0:
            lose_life(state, 1 - seat, through, events)
    elif attack == their_attack:
        _destroy(state, 1 - seat, target, events)
        _destroy(state, seat, attacker, events)
    else:
        _destroy(state, seat, attacker, events)
        lose_life(state, seat, their_attack - attack, events)


# --- the turn -------------------------------------------------------------------------------


def _next_phase(content: Content, state: State, events: list[Event]) -> None:
    at = PHASES.index(state.phase)
    if at + 1 == len(PHASES):
        _end_turn(content, state, events)
        return
    state.phase = PHASES[at + 1]
    if state.phase == "attack" and state.turn == 1:
        # Seed §5: the starting player may not attack on its first turn.
        events.append(Event("phase_skipped", {"phase": "attack", "reason": "first_turn"}))
        state.phase = "play_again"


def _end_turn(content: Content, state: State, events: list[Event]) -> None:
    """i) end of the turn: boosts and once-per-turn marks wear off; j) the opponent's turn."""
    for side in state.sides:
        for unit in side.units:
            unit.attack_boost = unit.defence_boost = 0
            unit.attacked = unit.used = False
    events.append(Event("turn_ended", {"seat": state.active, "turn": state.turn}))
    if not any(side.deck for side in state.sides):
        _finish(state, _by_damage(state), "decks_out", events)
        return
    state.active = 1 - state.active
    state.turn += 1
    state.phase = "draw"
    events.append(Event("turn_started", {"seat": state.active, "turn": state.turn}))
    side = state.sides[state.active]
    for held in side.posesiones:
        effect = content.cards[card_of(held)].effect
        if effect.kind == "income":
            side.loyalty += effect.amount
            events.append(Event("income", {"seat": state.active, "card": held}))


# --- winning --------------------------------------------------------------------------------


def _by_damage(state: State) -> Outcome:
    """More damage done to the opponent's life wins; equal damage is a drawn game (ours)."""
    done = [state.sides[1].lost, state.sides[0].lost]
    if done[0] == done[1]:
        return {"winners": [0, 1], "ranking": [[0, 1]]}
    winner = 0 if done[0] > done[1] else 1
    return {"winners": [winner], "ranking": [[winner], [1 - winner]]}


def _check_end(state: State, events: list[Event]) -> None:
    if state.phase == "over":
        return
    for reason, beaten in (
        ("life", [s for s, side in enumerate(state.sides) if side.life <= 0]),
        ("no_cards", [s for s, side in enumerate(state.sides) if not side.hand and not side.deck]),
    ):
        if len(beaten) == 1:
            winner = 1 - beaten[0]
            _finish(state, {"winners": [winner], "ranking": [[winner], beaten]}, reason, events)
            return
        if beaten:
            _finish(state, _by_damage(state), reason, events)
            return


def _finish(state: State, outcome: Outcome, reason: str, events: list[Event]) -> None:
    state.result = outcome
    state.phase = "over"
    state.responder = state.returning = None
    events.append(Event("game_over", {**outcome, "reason": reason}))


def end(state: State, outcome: Outcome) -> State:
    new = copy.deepcopy(state)
    new.result, new.phase = outcome, "over"
    new.responder = new.returning = None
    return new


# --- seeing -----------------------------------------------------------------------------------


def _unit_view(content: Content, side: Side, unit: Unit) -> dict[str, Any]:
    attack, defence = stats(content, side, unit)
    return {
        "card": unit.card,
        "id": card_of(unit.card),
        "zone": unit.zone,
        "attack": attack,
        "defence": defence,
        "attacked": unit.attacked,
        "used": unit.used,
    }


def observe(content: Content, state: State) -> dict[str, Any]:
    sides = []
    for seat, side in enumerate(state.sides):
        units = [_unit_view(content, side, u) for u in side.units]
        sides.append(
            {
                "life": side.life,
                "loyalty": side.loyalty,
                "damage_taken": side.lost,
                "hand": Hidden((seat,), list(side.hand), shown=len(side.hand)),
                "known_in_hand": list(side.known),
                "deck": Hidden((), list(side.deck), shown=len(side.deck)),
                "attack_zone": [u for u in units if u["zone"] == "attack"],
                "defence_zone": [u for u in units if u["zone"] == "defence"],
                "posesiones": list(side.posesiones),
                "graveyard": list(side.graveyard),
            }
        )
    return {
        "mode": state.mode,
        "first": state.first,
        "chooser": state.chooser,
        "active": state.active,
        "turn": state.turn,
        "phase": state.phase,
        "sides": sides,
        "stack": copy.deepcopy(state.stack),
        "responder": state.responder,
        "attack": copy.deepcopy(state.attack),
        "returning": state.returning,
        "outcome": copy.deepcopy(state.result),
    }


def secrets(state: State, seat: int | None) -> list[Any]:
    orders = [list(side.deck) for side in state.sides if len(side.deck) > 1]
    in_decks = [c for side in state.sides for c in side.deck]
    in_hands = [
        c
        for s, side in enumerate(state.sides)
        if s != seat
        for c in side.hand
        if c not in side.known
    ]
    return [state.seed, state.rng, *orders, *in_decks, *in_hands]
