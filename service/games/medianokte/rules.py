"""The rules of Medianokte's duel mode (seed 000), on a JSON-able state.

The state is a dict (see `new_state`): it is its own dump, so replays and the cache agree
by construction. Every card in play is a record with an instance id: a Nave card's is
"s<seat>.<index>:<card>", a character card's "s<seat>:<card>"; targets and the cards an
action uses are named by those ids. `apply` works on a copy and raises `IllegalAction`
before changing anything.
"""

import copy
import itertools
from collections.abc import Iterator
from typing import Any

from service.games.kernel.hidden import Hidden
from service.games.kernel.prompts import Action, Prompt
from service.games.kernel.protocol import Event, IllegalAction, Outcome, match_legal
from service.games.kernel.rng import SplitMix64
from service.games.medianokte.content import CONTENT, POSITIONS, Attack, Card, Effect

State = dict[str, Any]
Record = dict[str, Any]

HAND = 5
EXPLORE_DRAW = 2
ACTIVATIONS = 3
MAX_ENERGY = 3
DIE = 10
MAGIC_DIE = (0, 0, 1, 1, 2, 3)  # DESIGN §5.2


def card_of(instance: str) -> Card:
    """The card an instance id names."""
    return CONTENT.cards[instance.rsplit(":", 1)[-1]]


# --- setting up -----------------------------------------------------------------------


def new_state(seed: int, loadouts: list[Any]) -> State:
    """Naves shuffled, characters laid out; the cuts come next (the seed's order)."""
    rng = SplitMix64(seed)
    players = []
    for seat, loadout in enumerate(loadouts):
        character = CONTENT.characters[loadout["character"]]
        nave = [f"s{seat}.{i}:{card}" for i, card in enumerate(loadout["nave"])]
        rng.shuffle(nave)
        slots = [character.weapons[0], character.weapons[1], character.assistance]
        players.append(
            {
                "character": character.id,
                "hero": {
                    "id": f"s{seat}:{character.id}",
                    "damage": 0,
                    "bleed": None,
                    "poison": 0,
                    "euphoria": False,
                },
                "slots": [{"id": f"s{seat}:{c}", "position": "upright"} for c in slots],
                "final": {"id": f"s{seat}:{character.final}", "energy": 0},
                "army": [],
                "discardables": [],
                "permanents": [],
                "hand": [],
                "nave": nave,
                "vacio": [],
                "out": False,
            }
        )
    return {
        "seed": seed,
        "rng": rng.state,
        "phase": "cut",
        "cut": [False] * len(loadouts),
        "rolls": [],
        "chooser": None,
        "first": None,
        "turn": 0,
        "used": 0,
        "step": 0,
        "fallen": [],
        "result": None,
        "players": players,
    }


def cut_target(state: State, seat: int) -> int:
    """Whose Nave `seat` cuts: the next seat's ("el oponente lo alza"; ours for 3-4 seats)."""
    return (seat + 1) % len(state["players"])


# --- looking things up ----------------------------------------------------------------


def living(state: State) -> list[int]:
    return [s for s, p in enumerate(state["players"]) if not p["out"]]


def enemies(state: State, seat: int) -> list[int]:
    return [s for s in living(state) if s != seat]


def hero_card(state: State, seat: int) -> Any:
    return CONTENT.characters[state["players"][seat]["character"]]


def max_life(state: State, seat: int) -> int:
    player = state["players"][seat]
    bonus = sum(card_of(o["id"]).life_bonus for o in player["permanents"])
    return int(hero_card(state, seat).life) + bonus


def armour(state: State, target: str) -> int:
    """The target's armour now: printed, plus permanent objects, minus one per poison token."""
    kind, seat, record = locate(state, target)
    if kind == "hero":
        player = state["players"][seat]
        bonus = sum(card_of(o["id"]).armour_bonus for o in player["permanents"])
        return int(hero_card(state, seat).armour) + bonus - int(record["poison"])
    return max(0, card_of(target).armour - int(record["poison"]))


def locate(state: State, target: str) -> tuple[str, int, Record]:
    """("hero" | "astrali", controller, record) of a character or an astrali in an army."""
    for seat, player in enumerate(state["players"]):
        if player["hero"]["id"] == target:
            return "hero", seat, player["hero"]
        for record in player["army"]:
            if record["id"] == target:
                return "astrali", seat, record
    raise KeyError(target)


def _targets_of(state: State, seat: int, target: str) -> list[str]:
    """Every choice for one card target kind (`None`-free: "self" has one empty choice)."""
    me = state["players"][seat]
    foes = [state["players"][e] for e in enemies(state, seat)]
    if target == "ally":
        return [me["hero"]["id"], *(a["id"] for a in me["army"])]
    if target == "ally_astrali":
        return [a["id"] for a in me["army"]]
    if target == "enemy":
        return [t for p in foes for t in [p["hero"]["id"], *(a["id"] for a in p["army"])]]
    if target == "enemy_character":
        return [p["hero"]["id"] for p in foes]
    if target == "enemy_astrali":
        return [a["id"] for p in foes for a in p["army"]]
    if target == "vacio_astrali":
        return [r["id"] for s, p in enumerate(state["players"]) for r in _raisable(p, seat)]
    if target == "enemy_vacio":
        others = [p for s, p in enumerate(state["players"]) if s != seat]
        return [p["hero"]["id"] for p in others if _raisable(p, seat)]
    raise ValueError(target)


def _raisable(player: Record, seat: int) -> list[Record]:
    """The astralis in `player`'s Vacío that are enemies of `seat` (the Nigromante's FAQ)."""
    return [r for r in player["vacio"] if card_of(r["id"]).kind == "astrali" and r["owner"] != seat]


def _choices(state: State, seat: int, card: Card) -> list[dict[str, Any]]:
    """The target (and, for tiring a character, which of its actions) for a card's effects."""
    if card.target == "self":
        return [{}]
    tire = next((e for e in card.effects if e.do == "tire"), None)
    options: list[dict[str, Any]] = []
    for target in _targets_of(state, seat, card.target):
        if tire is not None and locate(state, target)[0] == "hero":
            options += [{"target": target, "picks": picks} for picks in _picks(state, target, tire)]
        else:
            options.append({"target": target})
    return options


def _picks(state: State, hero: str, tire: Effect) -> Iterator[list[str]]:
    """The FAQ: tiring a character's actions picks among its weapons and its assistance, never
    its final action; n actions are n of those three (all of them when n is 3 or more)."""
    _, seat, _ = locate(state, hero)
    slots = [s["id"] for s in state["players"][seat]["slots"]]
    for combo in itertools.combinations(slots, min(tire.n, len(slots))):
        yield list(combo)


def attack_targets(state: State, seat: int, attack: Attack) -> list[str] | None:
    """Who an attack may be aimed at; None for an area attack, which hits every enemy."""
    if attack.range == "area":
        return None
    targets = []
    for foe in enemies(state, seat):
        player = state["players"][foe]
        upright = [a["id"] for a in player["army"] if a["position"] == "upright"]
        if attack.range == "melee" and upright:
            # Melee must hit an upright defender while one exists; only with none upright
            # may it pick any target, the player included.
            targets += upright
        else:
            targets += [player["hero"]["id"], *(a["id"] for a in player["army"])]
    return targets


def area_targets(state: State, seat: int) -> list[str]:
    """Every enemy on the table: each living enemy's character and astralis."""
    return [t for foe in enemies(state, seat) for t in _targets_of(state, foe, "ally")]


# --- prompts --------------------------------------------------------------------------


def prompt(state: State, seat: int) -> Prompt | None:
    if not 0 <= seat < len(state["players"]) or state["players"][seat]["out"]:
        return None
    phase = state["phase"]
    if phase == "cut" and not state["cut"][seat]:
        nave = state["players"][cut_target(state, seat)]["nave"]
        at = {"type": "integer", "minimum": 1, "maximum": len(nave) - 1}
        return Prompt("cut", [], {"cut": {"at": at}}, {"nave": cut_target(state, seat)})
    if phase == "choose" and seat == state["chooser"]:
        actions: list[Action] = [{"type": "first", "seat": s} for s in living(state)]
        return Prompt("choose_first", actions, data={"rolls": state["rolls"]})
    if phase == "turn" and seat == state["turn"]:
        left = ACTIVATIONS - state["used"]
        return Prompt("activation", activations(state, seat), data={"activations_left": left})
    return None


def activations(state: State, seat: int) -> list[Action]:
    """Every legal activation of the turn player, with its targets enumerated."""
    me = state["players"][seat]
    actions: list[Action] = []
    for instance in me["hand"]:
        card = card_of(instance)
        if card.kind == "event":
            actions += [
                {"type": "play", "card": instance, **c} for c in _choices(state, seat, card)
            ]
        else:
            actions.append({"type": "play", "card": instance})
    weapons = [o for o in me["permanents"] if card_of(o["id"]).kind == "weapon"]
    for source in [*me["slots"][:2], *weapons, *me["army"]]:
        attack = card_of(source["id"]).attack
        if source["position"] == "upright" and attack is not None:
            actions += _attack_actions(state, seat, "attack", "with", source["id"], attack)
    for item in me["discardables"]:
        card = card_of(item["id"])
        actions += [{"type": "use", "card": item["id"], **c} for c in _choices(state, seat, card)]
    assistance = me["slots"][2]
    if assistance["position"] == "upright":
        card = card_of(assistance["id"])
        choices = _choices(state, seat, card)
        actions += [{"type": "use", "card": assistance["id"], **c} for c in choices]
    final = me["final"]
    if final["energy"] >= MAX_ENERGY:
        card = card_of(final["id"])
        if card.attack is not None:
            actions += _attack_actions(state, seat, "use", "card", final["id"], card.attack)
        else:
            choices = _choices(state, seat, card)
            actions += [{"type": "use", "card": final["id"], **c} for c in choices]
    if state["used"] == 0:
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
        if tire is not None and locate(state, target)[0] == "hero":
            # Should it hit, the attacker chooses which of the character's actions it tires.
            actions += [
                {"type": kind, key: source, "target": target, "picks": picks}
                for picks in _picks(state, target, tire)
            ]
        else:
            actions.append({"type": kind, key: source, "target": target})
    return actions


# --- applying -------------------------------------------------------------------------


def apply(state: State, seat: int, action: Action) -> tuple[State, list[Event]]:
    asked = prompt(state, seat) if isinstance(seat, int) else None
    if asked is None:
        raise IllegalAction(f"seat {seat} may not act now")
    new = copy.deepcopy(state)
    new["step"] += 1
    events: list[Event] = []
    if asked.kind == "cut":
        maximum = asked.params["cut"]["at"]["maximum"]
        _cut(new, seat, _cut_position(action, maximum), events)
    elif asked.kind == "choose_first":
        chosen = match_legal(asked.actions, action)
        new["first"] = chosen["seat"]
        events.append(Event("first_player", {"chooser": seat, "seat": chosen["seat"]}))
        _start_turn(new, chosen["seat"], events)
    else:
        _activate(new, seat, match_legal(asked.actions, action), events)
    return new, events


def _cut_position(action: Any, maximum: int) -> int:
    if not isinstance(action, dict) or set(action) != {"type", "at"} or action["type"] != "cut":
        raise IllegalAction('a cut is {"type": "cut", "at": n}')
    at = action["at"]
    if type(at) is not int or not 1 <= at <= maximum:
        raise IllegalAction(f"cut position 'at' must be an integer from 1 to {maximum}")
    return at


def _cut(state: State, seat: int, at: int, events: list[Event]) -> None:
    target = cut_target(state, seat)
    nave = state["players"][target]["nave"]
    state["players"][target]["nave"] = nave[at:] + nave[:at]
    state["cut"][seat] = True
    events.append(Event("cut", {"seat": seat, "nave": target, "at": at}))
    _after_cuts(state, events)


def _after_cuts(state: State, events: list[Event]) -> None:
    """Once every living seat has cut: each draws 5, then the d10 roll-off."""
    if not all(state["cut"][s] for s in living(state)):
        return
    for seat in living(state):
        for _ in range(HAND):
            _draw(state, seat, events)
    rng = SplitMix64(state["rng"])
    rolling = living(state)
    while True:
        rolls = {str(s): rng.die(DIE) for s in rolling}
        state["rolls"].append(rolls)
        events.append(Event("roll_off", {"rolls": rolls}))
        best = max(rolls.values())
        rolling = [s for s in rolling if rolls[str(s)] == best]
        if len(rolling) == 1:
            break
    state["rng"] = rng.state
    state["phase"], state["chooser"] = "choose", rolling[0]
    events.append(Event("roll_off_won", {"seat": rolling[0]}))


def _draw(state: State, seat: int, events: list[Event]) -> None:
    """The Nave's top card to the hand, seen by its drawer only; nothing from an empty Nave."""
    player = state["players"][seat]
    if player["nave"]:
        card = player["nave"].pop(0)
        player["hand"].append(card)
        events.append(Event("drew", {"seat": seat, "card": Hidden((seat,), card)}))


def _start_turn(state: State, seat: int, events: list[Event]) -> None:
    state["phase"], state["turn"], state["used"] = "turn", seat, 0
    events.append(Event("turn_start", {"seat": seat}))


def _activate(state: State, seat: int, action: Action, events: list[Event]) -> None:
    kind = action["type"]
    if kind == "explore":
        _explore(state, seat, events)
        return
    if kind == "end":
        events.append(Event("turn_ended", {"seat": seat, "unused": ACTIVATIONS - state["used"]}))
        _end_turn(state, seat, events)
        return
    state["used"] += 1
    if kind == "play":
        _play(state, seat, action, events)
    elif kind == "attack":
        source = _source(state, seat, action["with"])
        card = card_of(action["with"])
        _tire(source, "exhausted" if card.cost == "exhaust" else "turned")
        assert card.attack is not None
        holder = source if card.kind == "astrali" else state["players"][seat]["hero"]
        _attack(state, seat, action["with"], card.attack, holder, action, events)
    else:
        _use(state, seat, action, events)
    if _finish_if_over(state, events):
        return
    if state["used"] >= ACTIVATIONS:
        _end_turn(state, seat, events)


def _source(state: State, seat: int, instance: str) -> Record:
    me = state["players"][seat]
    for record in [*me["slots"], *me["permanents"], *me["army"]]:
        if record["id"] == instance:
            found: Record = record
            return found
    raise KeyError(instance)


def _play(state: State, seat: int, action: Action, events: list[Event]) -> None:
    me = state["players"][seat]
    instance = action["card"]
    me["hand"].remove(instance)
    card = card_of(instance)
    events.append(Event("played", {"seat": seat, "card": instance}))
    if card.kind == "astrali":
        me["army"].append(astrali_record(instance, "upright", seat))
    elif card.kind == "discardable":
        me["discardables"].append({"id": instance})
    elif card.kind in ("permanent", "weapon"):
        me["permanents"].append({"id": instance, "position": "upright"})
    else:
        # An event's effect happens at once, as part of the same activation; then the Vacío.
        _effects(state, seat, card, action, events)
        me["vacio"].append({"id": instance, "position": "upright", "owner": seat})


def astrali_record(instance: str, position: str, owner: int) -> Record:
    return {
        "id": instance,
        "position": position,
        "damage": 0,
        "bleed": None,
        "poison": 0,
        "euphoria": False,
        "owner": owner,
    }


def _use(state: State, seat: int, action: Action, events: list[Event]) -> None:
    me = state["players"][seat]
    instance = action["card"]
    card = card_of(instance)
    events.append(Event("used", {"seat": seat, "card": instance}))
    if card.kind == "discardable":
        me["discardables"] = [d for d in me["discardables"] if d["id"] != instance]
        _effects(state, seat, card, action, events)
        me["vacio"].append({"id": instance, "position": "upright", "owner": seat})
    elif card.kind == "assistance":
        _tire(me["slots"][2], "exhausted" if card.cost == "exhaust" else "turned")
        _effects(state, seat, card, action, events)
    else:
        # The final action: every energy counter comes off; it is never turned or exhausted.
        me["final"]["energy"] = 0
        if card.attack is not None:
            _attack(state, seat, instance, card.attack, me["hero"], action, events)
        else:
            _effects(state, seat, card, action, events)


def _tire(record: Record, position: str) -> None:
    """Turn or exhaust a card; tiring never brings a card back up (exhausted stays so)."""
    if POSITIONS.index(position) > POSITIONS.index(record["position"]):
        record["position"] = position


# --- attacks, damage and statuses -----------------------------------------------------


def _attack(
    state: State,
    seat: int,
    source: str,
    attack: Attack,
    holder: Record,
    action: Action,
    events: list[Event],
) -> None:
    """One attack: a single roll, compared with each target separately."""
    target, picks = action.get("target"), action.get("picks")
    rng = SplitMix64(state["rng"])
    targets = area_targets(state, seat) if target is None else [target]
    roll: dict[str, Any] = {}
    if attack.type == "basic":
        # Euphoria on the attacker adds one die to a basic attack.
        dice = attack.dice + (1 if holder["euphoria"] else 0)
        roll["dice"] = [rng.die(DIE) for _ in range(dice)]
    elif attack.type == "magic":
        roll["magic"] = rng.pick(MAGIC_DIE)
    else:
        roll["die"] = rng.die(DIE)
    state["rng"] = rng.state
    results: list[dict[str, Any]] = []
    for aimed in targets:
        damage, hit = _resolve(state, attack, roll, aimed)
        results.append({"target": aimed, "damage": damage, "hit": hit})
    events.append(Event("attack", {"seat": seat, "with": source, **roll, "results": results}))
    for result in results:
        if result["hit"]:
            _hurt(state, result["target"], result["damage"], seat, events)
            if _present(state, result["target"]):
                for effect in attack.effects:
                    _effect(state, seat, effect, result["target"], picks, events)


def _resolve(state: State, attack: Attack, roll: dict[str, Any], target: str) -> tuple[int, bool]:
    """(damage, whether it hit) of one roll against one target."""
    if attack.type == "basic":
        # Each die separately against the armour: 1 damage per die that meets or beats it.
        damage = sum(1 for die in roll["dice"] if die >= armour(state, target))
        return damage, damage > 0
    if attack.type == "magic":
        return int(roll["magic"]), roll["magic"] > 0
    # A characteristic test: success only when the die is strictly higher.
    success = bool(roll["die"] > characteristic(state, target, attack.stat))
    return (attack.damage if success else 0), success


def characteristic(state: State, target: str, stat: str) -> int:
    """A character's fuerza, destreza or voluntad; an astrali has none, so a special attack
    tests its armour (ours)."""
    kind, seat, _ = locate(state, target)
    if kind == "hero":
        return int(hero_card(state, seat).stats[stat])
    return armour(state, target)


def _present(state: State, target: str) -> bool:
    try:
        _, seat, _ = locate(state, target)
    except KeyError:
        return False
    return not state["players"][seat]["out"]


def _hurt(state: State, target: str, damage: int, by: int | None, events: list[Event]) -> None:
    kind, seat, record = locate(state, target)
    if damage <= 0:
        return
    record["damage"] += damage
    events.append(Event("damage", {"target": target, "damage": damage, "total": record["damage"]}))
    if kind == "hero":
        if record["damage"] >= max_life(state, seat):
            _defeat(state, seat, "damage", events)
    elif record["damage"] >= card_of(target).life:
        _destroy(state, seat, record, by, events)


def _destroy(state: State, seat: int, record: Record, by: int | None, events: list[Event]) -> None:
    """A dead astrali goes to its owner's Vacío, keeping its position; whoever destroyed it
    puts an energy counter on his final action (never more than 3)."""
    state["players"][seat]["army"].remove(record)
    owner = record["owner"]
    state["players"][owner]["vacio"].append(
        {"id": record["id"], "position": record["position"], "owner": owner}
    )
    events.append(Event("astrali_destroyed", {"card": record["id"], "by": by}))
    if by is not None and by != seat and not state["players"][by]["out"]:
        final = state["players"][by]["final"]
        if final["energy"] < MAX_ENERGY:
            final["energy"] += 1
        events.append(Event("energy", {"seat": by, "energy": final["energy"]}))


def _defeat(state: State, seat: int, reason: str, events: list[Event]) -> None:
    player = state["players"][seat]
    if player["out"]:
        return
    player["out"] = True
    state["fallen"].append([seat, state["step"]])
    events.append(Event("defeated", {"seat": seat, "reason": reason}))


def _effects(state: State, seat: int, card: Card, action: Action, events: list[Event]) -> None:
    target = action.get("target", state["players"][seat]["hero"]["id"])
    for effect in card.effects:
        if effect.do in ("raise", "raise_all", "draw", "energy") or _present(state, target):
            _effect(state, seat, effect, target, action.get("picks"), events)


def _effect(
    state: State,
    seat: int,
    effect: Effect,
    target: str,
    picks: list[str] | None,
    events: list[Event],
) -> None:
    """One effect of a card (or of an attack that hit) on its target."""
    me = state["players"][seat]
    do = effect.do
    if do == "draw":
        for _ in range(effect.n):
            _draw(state, seat, events)
        return
    if do == "energy":
        me["final"]["energy"] = min(MAX_ENERGY, me["final"]["energy"] + effect.n)
        events.append(Event("energy", {"seat": seat, "energy": me["final"]["energy"]}))
        return
    if do in ("raise", "raise_all"):
        _raise(state, seat, target, do == "raise_all", events)
        return
    kind, owner, record = locate(state, target)
    if do == "damage":
        _hurt(state, target, effect.n, seat, events)
        return
    if do == "tire":
        if kind == "astrali":
            _tire(record, effect.position)
        else:
            slots = state["players"][owner]["slots"]
            if picks is None:
                # An area attack that tires characters: their first actions not yet that tired.
                rank = POSITIONS.index(effect.position)
                tireable = [s for s in slots if POSITIONS.index(s["position"]) < rank]
                picks = [s["id"] for s in tireable[: effect.n]]
            for slot in slots:
                if slot["id"] in picks:
                    _tire(slot, effect.position)
        events.append(Event("tired", {"target": target, "picks": picks, "to": effect.position}))
        return
    if do == "ready":
        if kind == "astrali":
            record["position"] = "upright"
        else:
            for slot in state["players"][owner]["slots"][:2]:
                slot["position"] = "upright"
        events.append(Event("readied", {"target": target}))
        return
    if do == "heal":
        record["damage"] = max(0, record["damage"] - effect.n)
    elif do == "cleanse":
        record["poison"], record["bleed"] = 0, None
    elif do == "bleed":
        # At most one bleeding token; its placer is who destroys an astrali it kills.
        if record["bleed"] is None:
            record["bleed"] = seat
    elif do == "poison":
        record["poison"] += effect.n
    elif do == "euphoria":
        record["euphoria"] = True
    events.append(Event("status", {"target": target, "effect": do, "n": effect.n}))
    if do == "poison" and kind == "hero" and armour(state, target) <= 0:
        _defeat(state, owner, "poison", events)


def _raise(state: State, seat: int, target: str, every: bool, events: list[Event]) -> None:
    """The Nigromante: enemy astralis leave a Vacío for your army, with no counter left on
    them (poison, bleeding, euphoria, damage) and in the position they had."""
    for player in state["players"]:
        for record in _raisable(player, seat):
            if record["id"] == target or (every and player["hero"]["id"] == target):
                player["vacio"].remove(record)
                raised = astrali_record(record["id"], record["position"], record["owner"])
                state["players"][seat]["army"].append(raised)
                events.append(Event("raised", {"seat": seat, "card": record["id"]}))


# --- the end of a turn, exploring, the end of the match -------------------------------


def _explore(state: State, seat: int, events: list[Event]) -> None:
    """Draw 2 and rest every card in play; exploring an empty Nave loses the match."""
    me = state["players"][seat]
    events.append(Event("explored", {"seat": seat, "nave": len(me["nave"])}))
    if not me["nave"]:
        _defeat(state, seat, "empty_nave", events)
    else:
        for _ in range(EXPLORE_DRAW):
            _draw(state, seat, events)
        for record in [*me["slots"], *me["permanents"], *me["army"]]:
            if record["position"] == "turned":
                record["position"] = "upright"
            elif record["position"] == "exhausted":
                record["position"] = "turned"
    if not _finish_if_over(state, events):
        _end_turn(state, seat, events)


def _end_turn(state: State, seat: int, events: list[Event]) -> None:
    """Bleeding hurts its bearers at the end of their controller's turn; then the next seat."""
    me = state["players"][seat]
    if not me["out"]:
        bearers = [me["hero"], *me["army"]]
        for record in bearers:
            if record["bleed"] is not None and _present(state, record["id"]):
                by = record["bleed"] if record is not me["hero"] else None
                events.append(Event("bleeding", {"target": record["id"]}))
                _hurt(state, record["id"], 1, by, events)
    if _finish_if_over(state, events):
        return
    seats = len(state["players"])
    following = next(
        s
        for s in ((seat + k) % seats for k in range(1, seats + 1))
        if not state["players"][s]["out"]
    )
    _start_turn(state, following, events)


def _finish_if_over(state: State, events: list[Event]) -> bool:
    standing = living(state)
    if len(standing) > 1:
        return False
    if state["result"] is None:
        state["phase"] = "over"
        outcome = ranking(state)
        state["result"] = outcome
        events.append(Event("game_over", dict(outcome)))
    return True


def ranking(state: State) -> Outcome:
    """The last one standing first; the fallen after, the later the better, together when they
    fell to the same action."""
    groups: list[list[int]] = [living(state)] if living(state) else []
    by_step: dict[int, list[int]] = {}
    for seat, step in state["fallen"]:
        by_step.setdefault(step, []).append(seat)
    groups += [sorted(by_step[step]) for step in sorted(by_step, reverse=True)]
    return {"winners": list(groups[0]), "ranking": groups}


def resign(state: State, seat: int) -> tuple[State, list[Event]]:
    """The seat is out; the others play on, and with one left standing it wins (ours)."""
    if state["result"] is not None:
        raise IllegalAction("the match is over")
    if not 0 <= seat < len(state["players"]) or state["players"][seat]["out"]:
        raise IllegalAction(f"seat {seat} is not playing")
    new = copy.deepcopy(state)
    new["step"] += 1
    events = [Event("resigned", {"seat": seat})]
    _defeat(new, seat, "resigned", events)
    if _finish_if_over(new, events):
        return new, events
    if new["phase"] == "cut":
        _after_cuts(new, events)
    elif new["phase"] == "choose" and new["chooser"] == seat:
        # The chooser is gone: the next seat still playing starts (ours).
        seats = len(new["players"])
        following = next(s for s in ((seat + k) % seats for k in range(1, seats)) if
                         not new["players"][s]["out"])  # fmt: skip
        new["first"] = following
        _start_turn(new, following, events)
    elif new["phase"] == "turn" and new["turn"] == seat:
        _end_turn(new, seat, events)
    return new, events
