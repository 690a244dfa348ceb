"""The crew game around the duels (DESIGN §5.4, ours), as pure functions of the state.

Setup: each seat's Fate deck is shuffled (seat order), the first player is drawn, the first
pulse's hazard is drawn, then every seat draws its control hand (seat order).

A round: the pulse (every living model takes the hazard's simple duel: the seats in turn order
from the round's first player, each resolving all its models' duels, in the order it
chooses, one duel completed before the next), then each seat in turn order makes one opposed
duel (one of its models attacks an enemy model with Ml or Sh against the target's Df). Then
every standing seat draws back up to its hand size, the first player passes to the next
standing seat, and the next round's hazard is drawn.

A crew with no living model is out; the last crew standing wins at once. After the last round
the crews standing are ranked by the Wounds they have left (ties share a place), above the
crews that fell, the last to fall first.
"""

import copy
from typing import Any

from service.games.fate_duel import cards, duel
from service.games.fate_duel.content import ATTACKS, Ruleset
from service.games.fate_duel.state import Crew, State
from service.games.kernel.hidden import Hidden
from service.games.kernel.prompts import Prompt
from service.games.kernel.protocol import Action, Event, IllegalAction, Outcome, match_legal
from service.games.kernel.rng import SplitMix64


def _draw_hazard(rules: Ruleset, state: State) -> str:
    rng = SplitMix64(state.rng)
    hazard = rng.pick(sorted(rules.hazards))
    state.rng = rng.state
    return hazard


def setup(rules: Ruleset, seed: int, root: int, rounds: int, crews: list[str]) -> State:
    """A new match; `root` seeds every shuffle and pulse (the match seed, or a public deal)."""
    seats = len(crews)
    state = State(
        ruleset=rules.id,
        seed=seed,
        rng=root,
        rounds=rounds,
        crews=[
            Crew(c, rules.crews[c].soulstones, [m.wounds for m in rules.crews[c].models])
            for c in crews
        ],
        decks=[],
        hands=[[] for _ in crews],
        discards=[[] for _ in crews],
        passes=[0] * seats,
        round=1,
        first=0,
        phase="pulse",
        hazard="",
        queue=[],
        tested=[[] for _ in crews],
        duel=None,
        eliminated=[],
        result=None,
    )
    state.decks = [cards.new_deck(rules, state, seat) for seat in range(seats)]
    rng = SplitMix64(state.rng)
    state.first = rng.below(seats)
    state.rng = rng.state
    state.hazard = _draw_hazard(rules, state)
    for seat in range(seats):
        cards.draw(state, seat, rules.hand_size, [])
    state.queue = _turn_order(state)
    return state


def setup_events(rules: Ruleset, state: State) -> list[Event]:
    """What setting up did, rebuilt from the state it gave (nothing has been played yet)."""
    events = [
        # The order before the hand was drawn from its top: the hand, then the deck.
        Event("shuffled", {"seat": s, "deck": Hidden((), [*h, *d], shown=len(h) + len(d))})
        for s, (d, h) in enumerate(zip(state.decks, state.hands, strict=True))
    ]
    events += [
        Event("drew", {"seat": s, "cards": Hidden((s,), list(h), shown=len(h))})
        for s, h in enumerate(state.hands)
    ]
    crews = [crew_sheet(rules, s, crew.crew) for s, crew in enumerate(state.crews)]
    events.append(Event("crews", {"crews": crews}))
    events.append(Event("first_player", {"seat": state.first}))
    events.append(_round_started(rules, state))
    return events


def _round_started(rules: Ruleset, state: State) -> Event:
    hazard = hazard_view(rules, state.hazard)
    return Event("round_started", {"round": state.round, "first": state.first, "pulse": hazard})


def hazard_view(rules: Ruleset, hazard_id: str) -> dict[str, Any]:
    h = rules.hazards[hazard_id]
    return {
        "id": h.id,
        "name": h.name,
        "attribute": h.attribute,
        "tn": h.tn,
        "suit": h.suit,
        "flip": h.flip,
        "wounds": h.wounds,
    }


def _turn_order(state: State) -> list[int]:
    """Standing seats in turn order, from the round's first player."""
    seats = len(state.crews)
    order = [(state.first + i) % seats for i in range(seats)]
    return [s for s in order if state.crews[s].alive()]


def _pending(state: State, seat: int) -> list[int]:
    """Seat's living models that have not taken this round's pulse."""
    return [m for m in state.crews[seat].alive() if m not in state.tested[seat]]


def _enemies(state: State, seat: int) -> list[tuple[int, int]]:
    return [(s, m) for s in state.standing() if s != seat for m in state.crews[s].alive()]


def prompt(rules: Ruleset, state: State, seat: int) -> Prompt | None:
    if state.phase == "over":
        return None
    if state.duel is not None:
        return duel.prompt(rules, state, seat)
    if not state.queue or state.queue[0] != seat:
        return None
    data = {"round": state.round, "pulse": hazard_view(rules, state.hazard)}
    if state.phase == "pulse":
        order: list[Action] = [{"type": "duel", "model": m} for m in _pending(state, seat)]
        return Prompt("order", order, data=data)
    attacks: list[Action] = [
        {"type": "attack", "model": m, "attack": a, "target_seat": ts, "target": tm}
        for m in state.crews[seat].alive()
        for a in ATTACKS
        for ts, tm in _enemies(state, seat)
    ]
    return Prompt("attack", attacks, data=data)


def to_act(rules: Ruleset, state: State) -> list[int]:
    return [s for s in range(len(state.crews)) if prompt(rules, state, s) is not None]


def apply(rules: Ruleset, state: State, seat: int, action: Action) -> tuple[State, list[Event]]:
    if state.phase == "over":
        raise IllegalAction("the match is over")
    asked = prompt(rules, state, seat) if seat in range(len(state.crews)) else None
    if asked is None:
        raise IllegalAction(f"seat {seat} may not act now; waiting for {to_act(rules, state)}")
    chosen = match_legal(asked.actions, action)
    new = copy.deepcopy(state)
    events: list[Event] = []
    if new.duel is not None:
        duel.act(rules, new, chosen, events)
    elif chosen["type"] == "duel":
        _start_pulse_duel(rules, new, seat, chosen["model"], events)
    else:
        new.queue.pop(0)
        target = (chosen["target_seat"], chosen["target"])
        duel.start_opposed(rules, new, (seat, chosen["model"]), chosen["attack"], target, events)
    _continue(rules, new, events)
    return new, events


def _start_pulse_duel(
    rules: Ruleset, state: State, seat: int, model: int, events: list[Event]
) -> None:
    state.tested[seat].append(model)
    duel.start_simple(rules, state, seat, model, state.hazard, events)


def _continue(rules: Ruleset, state: State, events: list[Event]) -> None:
    """Play on until some seat is asked something or the match is over."""
    while state.phase != "over":
        if state.duel is not None:
            if duel.advance(rules, state, events):
                return
            _check_fallen(state, events)
            continue
        state.queue = [s for s in state.queue if state.crews[s].alive()]
        if state.phase == "pulse":
            if not state.queue:
                state.phase = "attack"
                state.queue = _turn_order(state)
                events.append(Event("attacks_started", {"round": state.round}))
                continue
            seat = state.queue[0]
            pending = _pending(state, seat)
            if not pending:
                state.queue.pop(0)
            elif len(pending) == 1:
                # One model left: there is no order to choose.
                _start_pulse_duel(rules, state, seat, pending[0], events)
            else:
                return
        elif state.queue:
            return
        else:
            _end_round(rules, state, events)


def _check_fallen(state: State, events: list[Event]) -> None:
    out = {s for group in state.eliminated for s in group}
    fallen = [s for s in range(len(state.crews)) if s not in out and not state.crews[s].alive()]
    if fallen:
        state.eliminated.append(fallen)
        events.append(Event("eliminated", {"seats": fallen}))
    if len(state.standing()) <= 1:
        _finish(state, events)


def _end_round(rules: Ruleset, state: State, events: list[Event]) -> None:
    events.append(Event("round_over", {"round": state.round}))
    if state.round >= state.rounds:
        _finish(state, events)
        return
    for seat in state.standing():
        missing = rules.hand_size - len(state.hands[seat])
        if missing > 0:
            cards.draw(state, seat, missing, events)
    state.round += 1
    seats = len(state.crews)
    state.first = next(
        s
        for s in ((state.first + i) % seats for i in range(1, seats + 1))
        if state.crews[s].alive()
    )
    state.hazard = _draw_hazard(rules, state)
    state.tested = [[] for _ in state.crews]
    state.phase = "pulse"
    state.queue = _turn_order(state)
    events.append(_round_started(rules, state))


def _finish(state: State, events: list[Event]) -> None:
    standing = state.standing()
    left = {s: sum(state.crews[s].wounds) for s in standing}
    ranking = [
        [s for s in standing if left[s] == amount]
        for amount in sorted(set(left.values()), reverse=True)
    ]
    ranking += [list(group) for group in reversed(state.eliminated)]
    state.result = {"winners": list(ranking[0]), "ranking": ranking}
    state.phase = "over"
    state.queue = []
    events.append(Event("game_over", {**state.result, "wounds": left}))


def resign(rules: Ruleset, state: State, seat: int) -> tuple[State, list[Event]]:
    """The seat's crew leaves the table at once; the others play on (ours).

    A duel it takes part in is abandoned: its cards in use go to their discard piles and
    nothing of it is resolved.
    """
    if state.phase == "over":
        raise IllegalAction("the match is over")
    if seat not in state.standing():
        raise IllegalAction(f"seat {seat} is not in the match")
    new = copy.deepcopy(state)
    events = [Event("resigned", {"seat": seat})]
    new.crews[seat].wounds = [0] * len(new.crews[seat].wounds)
    current = new.duel
    if current is not None and any(side.seat == seat for side in current.sides):
        for side in current.sides:
            # Before the active card is chosen every flipped card is in use; after, only it.
            in_use = list(side.flipped) if side.active is None else [side.active]
            cards.discard(new, side.seat, in_use, events)
        new.duel = None
        events.append(Event("duel_abandoned", {"seat": seat}))
    _check_fallen(new, events)
    _continue(rules, new, events)
    return new, events


def outcome(state: State) -> Outcome | None:
    return state.result


def observe(rules: Ruleset, state: State) -> dict[str, Any]:
    """The table: own hand to its seat, every other hand and every deck only as a count."""
    return {
        "ruleset": state.ruleset,
        "round": state.round,
        "rounds": state.rounds,
        "first": state.first,
        "phase": state.phase,
        "pulse": hazard_view(rules, state.hazard),
        "queue": list(state.queue),
        "crews": [_crew_view(rules, state, seat) for seat in range(len(state.crews))],
        "hands": [Hidden((s,), list(h), shown=len(h)) for s, h in enumerate(state.hands)],
        "decks": [Hidden((), list(d), shown=len(d)) for d in state.decks],
        "discards": [list(d) for d in state.discards],
        "duel": None if state.duel is None else duel.summary(rules, state.duel),
        "eliminated": [list(g) for g in state.eliminated],
        "outcome": state.result,
    }


def _crew_view(rules: Ruleset, state: State, seat: int) -> dict[str, Any]:
    """What changes during the match; the crew's sheet is in the "crews" setup event."""
    crew = state.crews[seat]
    spec = rules.crews[crew.crew]
    return {
        "crew": crew.crew,
        "soulstones": crew.soulstones,
        "models": [
            {
                "name": m.name,
                **dict(m.attributes),
                "wounds": crew.wounds[i],
                "tested": i in state.tested[seat],
            }
            for i, m in enumerate(spec.models)
        ],
    }


def crew_sheet(rules: Ruleset, seat: int, crew_id: str) -> dict[str, Any]:
    """A crew as the content gives it: every model's rank, attributes, Wounds, damage, triggers."""
    spec = rules.crews[crew_id]
    return {
        "seat": seat,
        "crew": spec.id,
        "name": spec.name,
        "soulstones": spec.soulstones,
        "models": [
            {
                "index": i,
                "name": m.name,
                "rank": m.rank,
                "soulstones": m.uses_soulstones,
                **dict(m.attributes),
                "wounds": m.wounds,
                "damage": list(m.damage),
                "triggers": [
                    {
                        "name": t.name,
                        "attribute": t.attribute,
                        "suit": t.suit,
                        "timing": t.timing,
                        "effect": t.effect,
                        "amount": t.amount,
                    }
                    for t in m.triggers
                ],
            }
            for i, m in enumerate(spec.models)
        ],
    }
