"""The crew game around the duels (ours; docs/rules/fate-duel.md#the-crew-game-ours): the
moves, as pure functions that change the state they are given.

Setup: each seat's Fate deck is shuffled (seat order), the first player is drawn, the first
pulse's hazard is drawn, then every seat draws its control hand (seat order).

A round: the pulse (every living model takes the hazard's simple duel: the seats in turn order
from the round's first player, each resolving all its models' duels, in the order it
chooses, one duel completed before the next), then each seat in turn order makes one opposed
duel (one of its models attacks any other living model, its crew's own too, with Ml or Sh
against the target's Df). Then
every standing seat draws back up to its hand size, the first player passes to the next
standing seat, and the next round's hazard is drawn.

A crew with no living model is out; the last crew standing wins at once. After the last round
the crews standing are ranked by the Wounds they have left (ties share a place), above the
crews that fell, the last to fall first.
"""

from typing import Any

from service.games.fate_duel import cards, duel
from service.games.fate_duel.content import ModelSpec, Ruleset
from service.games.fate_duel.state import State
from service.games.kernel.protocol import Event
from service.games.kernel.views import zone


def _draw_hazard(rules: Ruleset, state: State) -> str:
    return state.pick(sorted(rules.hazards))


def deal(rules: Ruleset, state: State) -> None:
    """The shuffles and draws of setting up, on a new match with no cards dealt yet."""
    seats = len(state.crews)
    state.decks = [cards.new_deck(rules, state, seat) for seat in range(seats)]
    state.first = state.below(seats)
    state.hazard = _draw_hazard(rules, state)
    for seat in range(seats):
        cards.draw(state, seat, rules.hand_size, [])
    state.queue = _turn_order(state)


def round_started(rules: Ruleset, state: State) -> Event:
    """The event that opens a round: its number, first player and pulse."""
    hazard = pulse_view(rules, state)
    return Event("round_started", {"round": state.round, "first": state.first, "pulse": hazard})


def pulse_view(rules: Ruleset, state: State) -> dict[str, Any]:
    """This round's pulse: the hazard (its catalogue id under "card") and its numbers."""
    h = rules.hazards[state.hazard]
    return {
        "id": f"pulse.{state.round}",
        "card": h.id,
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


def pending(state: State, seat: int) -> list[int]:
    """Seat's living models that have not taken this round's pulse."""
    return [m for m in state.crews[seat].alive() if m not in state.tested[seat]]


def targets(state: State, seat: int, model: int) -> list[tuple[int, int]]:
    """Whom seat's `model` may attack, as (seat, model): any other living model, its own crew's
    too. "Si una regla no especifica si sólo afecta a miniaturas amigas o enemigas (por ejemplo
    para saber quién puede ser objetivo legal de un Ataque), entonces puede afectar a cualquier
    miniatura." A model does not attack itself (ours: an opposed duel takes two models)."""
    return [
        (s, m) for s in state.standing() for m in state.crews[s].alive() if (s, m) != (seat, model)
    ]


def start_pulse_duel(
    rules: Ruleset, state: State, seat: int, model: int, events: list[Event]
) -> None:
    """Seat's `model` takes this round's pulse."""
    state.tested[seat].append(model)
    duel.start_simple(rules, state, seat, model, state.hazard, events)


def play_on(rules: Ruleset, state: State, events: list[Event]) -> None:
    """Play on until some seat is asked something or the match is over."""
    while state.phase != "over":
        if state.duel is not None:
            if duel.advance(rules, state, events):
                return
            check_fallen(state, events)
            continue
        state.queue = [s for s in state.queue if state.crews[s].alive()]
        if state.phase == "pulse":
            if not state.queue:
                state.phase = "attack"
                state.queue = _turn_order(state)
                events.append(Event("attacks_started", {"round": state.round}))
                continue
            seat = state.queue[0]
            waiting = pending(state, seat)
            if not waiting:
                state.queue.pop(0)
            elif len(waiting) == 1:
                # One model left: there is no order to choose.
                start_pulse_duel(rules, state, seat, waiting[0], events)
            else:
                return
        elif state.queue:
            return
        else:
            _end_round(rules, state, events)


def check_fallen(state: State, events: list[Event]) -> None:
    """Crews left with no living model are out; with one crew standing or none, the end."""
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
    events.append(round_started(rules, state))


def _finish(state: State, events: list[Event]) -> None:
    # A crew that resigned may end the match while others duel: that duel closes unresolved.
    duel.close(state, "match_over", events)
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
    wounds = [sum(crew.wounds) for crew in state.crews]
    events.append(Event("game_over", {**state.result, "wounds": wounds}))


def crew_view(rules: Ruleset, state: State, seat: int) -> dict[str, Any]:
    """A crew on the table: its sheet (every model's rank, damage lines, triggers) and what the
    match changed (soulstones, Wounds), each beside its printed value."""
    crew = state.crews[seat]
    spec = rules.crews[crew.crew]
    models = [
        {
            "id": f"s{seat}.m{i}",
            **_model_sheet(m, i),
            **dict(m.attributes),
            "wounds": crew.wounds[i],
            "damage_taken": m.wounds - crew.wounds[i],
            "alive": crew.wounds[i] > 0,
            "tested": i in state.tested[seat],
            "printed": {**dict(m.attributes), "wounds": m.wounds},
        }
        for i, m in enumerate(spec.models)
    ]
    return {
        "seat": seat,
        "crew": spec.id,
        "name": spec.name,
        "soulstones": crew.soulstones,
        "printed": {"soulstones": spec.soulstones},
        "standing": bool(crew.alive()),
        "models": zone(models),
    }


def _model_sheet(m: ModelSpec, index: int) -> dict[str, Any]:
    return {
        "card": m.id,
        "index": index,
        "name": m.name,
        "rank": m.rank,
        "soulstones": m.uses_soulstones,
        "attack_damage": list(m.damage),
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


def crew_sheet(rules: Ruleset, seat: int, crew_id: str) -> dict[str, Any]:
    """A crew as the content gives it: every model's rank, attributes, Wounds, damage, triggers."""
    spec = rules.crews[crew_id]
    return {
        "seat": seat,
        "crew": spec.id,
        "name": spec.name,
        "soulstones": spec.soulstones,
        "models": [
            {**_model_sheet(m, i), **dict(m.attributes), "wounds": m.wounds}
            for i, m in enumerate(spec.models)
        ],
    }
