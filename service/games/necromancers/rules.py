"""Duelo de Nigromantes: the moves, as pure functions that change the state they are given.

A turn: the attacker picks a living enemy ("target"); two attack dice are rolled if he has
at least one skeleton and one zombie, else one; the target rolls one defence die, which
cancels one attack die it beats strictly; the attacker then resolves each remaining die
("resolve") with one of its face's options from faces.toml.

Where the seed is silent (ours; docs/rules/necromancers.md#where-the-seed-is-silent):
- Turn order: every seat rolls one die, in seat order; seats that tie re-roll among
  themselves, in seat order, until none tie; highest first. The rolls are kept in
  `order_rolls` and the "turn_order" event.
- A defence die that beats exactly one attack die cancels it at once (cancelling never
  helps the attacker). When it beats both and they show different faces, the defender
  chooses ("defend", the only decision by a seat other than the turn player); when both
  show the same face, the second die is cancelled, since the choice could not matter.
- The attacker resolves the remaining dice one at a time, in the order he chooses.
- A damage point aimed at a troop type with none left wounds the necromancer. Points are
  applied skeletons first, then zombies; the order cannot change the result.
- Revive and heal are legal only below the cap (nothing is wasted by choice).
- Damage needs a living target. If the target falls to the first die, the other die may
  only revive or heal; with neither legal it is lost ("die_lost").
- A necromancer at 0 lives is out: his remaining troops stay as they were but count for
  nothing; he is never a target and takes no turns. When one necromancer is left the match
  ends at once and any unresolved die is dropped. The ranking is the winner, then the
  others from the last to fall to the first.
- A necromancer who resigns falls at once (lives 0, ranked by the order of falling) and the
  others go on. If it was his turn, the turn passes. If he was the target, his defence
  choice is lost and the attacker's remaining dice may only revive or heal.
"""

from typing import Any

from service.games.kernel.protocol import Action, Event, Outcome
from service.games.necromancers.content import (
    ATTACK_DICE_OTHERWISE,
    ATTACK_DICE_WITH_BOTH_TROOPS,
    NECROMANCER,
    TROOPS,
    Ruleset,
)
from service.games.necromancers.state import Die, Necromancer, State


def roll_order(rules: Ruleset, state: State, seats: list[int]) -> list[int]:
    """Every seat in `seats` rolls, in seat order; tied seats roll again among themselves."""
    rolls = [[seat, state.die(rules.die_faces)] for seat in seats]
    state.order_rolls.append(rolls)
    order: list[int] = []
    for value in sorted({roll for _, roll in rolls}, reverse=True):
        tied = [seat for seat, roll in rolls if roll == value]
        order += tied if len(tied) == 1 else roll_order(rules, state, tied)
    return order


def to_act(state: State) -> list[int]:
    if state.phase == "over":
        return []
    if state.phase == "defend":
        assert state.target is not None
        return [state.target]
    return [state.current]


def _cap(rules: Ruleset, what: str) -> int:
    return rules.max_lives if what == NECROMANCER else rules.max_troops


def _splits(points: int, at: tuple[str, ...]) -> list[dict[str, int]]:
    """Every way to aim `points` at the troop types in `at`, most at skeletons first."""
    return [
        {"skeletons": s, "zombies": points - s}
        for s in range(points, -1, -1)
        if (s == 0 or "skeletons" in at) and (s == points or "zombies" in at)
    ]


def die_actions(rules: Ruleset, state: State, index: int) -> list[Action]:
    """The legal ways to resolve the pending die `index`."""
    assert state.target is not None
    target = state.necromancers[state.target]
    own = state.necromancers[state.current]
    actions: list[Action] = []
    for option in rules.faces[state.dice[index].face]:
        base: Action = {"type": "resolve", "die": index, "effect": option.effect}
        if option.effect == "damage":
            if target.alive:
                actions += [{**base, **split} for split in _splits(option.points, option.at)]
        else:
            actions += [
                {**base, "at": what} for what in option.at if own.amount(what) < _cap(rules, what)
            ]
    return actions


def attack(rules: Ruleset, state: State, target: int, events: list[Event]) -> None:
    state.target = target
    events.append(Event("target_chosen", {"seat": state.current, "target": target}))
    attacker = state.necromancers[state.current]
    both = attacker.skeletons > 0 and attacker.zombies > 0
    count = ATTACK_DICE_WITH_BOTH_TROOPS if both else ATTACK_DICE_OTHERWISE
    state.dice = [Die(state.die(rules.die_faces)) for _ in range(count)]
    faces = [die.face for die in state.dice]
    events.append(Event("attack_roll", {"seat": state.current, "dice": faces}))
    state.defence = state.die(rules.die_faces)
    events.append(Event("defence_roll", {"seat": target, "die": state.defence}))
    beaten = [i for i, face in enumerate(faces) if state.defence > face]
    if len(beaten) == 2 and faces[0] != faces[1]:
        state.phase = "defend"
        events.append(Event("phase", {"phase": "defend", "seat": target}))
        return
    if beaten:
        cancel(state, beaten[-1], events)
    go_on(rules, state, events)


def cancel(state: State, index: int, events: list[Event]) -> None:
    die = state.dice[index]
    die.status = "cancelled"
    events.append(Event("die_cancelled", {"seat": state.target, "die": index, "face": die.face}))


def go_on(rules: Ruleset, state: State, events: list[Event]) -> None:
    """Go on resolving; drop dice with no legal use; end the turn when no die is pending."""
    entering = state.phase != "resolve"
    state.phase = "resolve"
    for index, die in enumerate(state.dice):
        if die.status == "pending" and not die_actions(rules, state, index):
            die.status = "lost"
            events.append(
                Event("die_lost", {"seat": state.current, "die": index, "face": die.face})
            )
    if all(die.status != "pending" for die in state.dice):
        end_turn(state, events)
    elif entering:
        events.append(Event("phase", {"phase": "resolve", "seat": state.current}))


def _after(state: State, seat: int) -> int:
    """The next living seat after `seat` in turn order (`seat` itself may have fallen)."""
    start = state.order.index(seat)
    following = state.order[start + 1 :] + state.order[: start + 1]
    return next(s for s in following if state.necromancers[s].alive)


def end_turn(state: State, events: list[Event]) -> None:
    state.current = _after(state, state.current)
    state.turn += 1
    state.phase = "target"
    state.target = None
    state.dice = []
    state.defence = None
    events.append(Event("turn_start", {"seat": state.current, "turn": state.turn}))


def resolve(rules: Ruleset, state: State, action: Action, events: list[Event]) -> None:
    assert state.target is not None
    index: int = action["die"]
    die = state.dice[index]
    die.status = "resolved"
    effect: str = action["effect"]
    if effect == "damage":
        _damage(state, state.necromancers[state.target], action, events)
        return
    own = state.necromancers[state.current]
    what: str = action["at"]
    before = own.amount(what)
    points = next(o.points for o in rules.faces[die.face] if o.effect == effect)
    own.set_amount(what, min(before + points, _cap(rules, what)))
    data = {"seat": own.seat, "die": index, "face": die.face, "at": what}
    events.append(Event(effect, {**data, "amount": own.amount(what) - before}))


def _damage(state: State, target: Necromancer, action: Action, events: list[Event]) -> None:
    hits = {"skeletons": 0, "zombies": 0, NECROMANCER: 0}
    for troop in TROOPS:
        for _ in range(action[troop]):
            if not target.alive:
                break
            # A point aimed at an empty troop type wounds the necromancer instead.
            hit = troop if target.amount(troop) > 0 else NECROMANCER
            target.set_amount(hit, target.amount(hit) - 1)
            hits[hit] += 1
    aimed = {troop: action[troop] for troop in TROOPS}
    data: dict[str, Any] = {"seat": target.seat, "die": action["die"], "aimed": aimed}
    events.append(Event("damage", {**data, **hits}))
    if not target.alive:
        fall(state, target.seat, state.current, events)


def fall(state: State, seat: int, by: int | None, events: list[Event]) -> None:
    """`seat` is out (`by` None when he resigned); with one necromancer left the match ends."""
    state.eliminated.append(seat)
    events.append(Event("eliminated", {"seat": seat, "by": by}))
    if len(state.alive_seats()) == 1:
        state.phase = "over"
        result = outcome(state)
        assert result is not None
        events.append(Event("game_over", dict(result)))


def outcome(state: State) -> Outcome | None:
    if state.phase != "over":
        return None
    winner = state.alive_seats()[0]
    return {
        "winners": [winner],
        "ranking": [[winner], *([seat] for seat in reversed(state.eliminated))],
    }
