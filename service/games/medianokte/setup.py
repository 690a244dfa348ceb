"""Setting a match up: the Naves shuffled and the characters laid out, the cuts, then the
opening hands and the d10 roll-off for who chooses the first player."""

from typing import Any

from service.games.kernel.protocol import Event, IllegalAction
from service.games.kernel.rng import SplitMix64
from service.games.medianokte.content import CONTENT
from service.games.medianokte.state import DIE, State, draw, living

HAND = 5


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


def cut_position(action: Any, maximum: int) -> int:
    if not isinstance(action, dict) or set(action) != {"type", "at"} or action["type"] != "cut":
        raise IllegalAction('a cut is {"type": "cut", "at": n}')
    at = action["at"]
    if type(at) is not int or not 1 <= at <= maximum:
        raise IllegalAction(f"cut position 'at' must be an integer from 1 to {maximum}")
    return at


def cut(state: State, seat: int, at: int, events: list[Event]) -> None:
    target = cut_target(state, seat)
    nave = state["players"][target]["nave"]
    state["players"][target]["nave"] = nave[at:] + nave[:at]
    state["cut"][seat] = True
    events.append(Event("cut", {"seat": seat, "nave": target, "at": at}))
    after_cuts(state, events)


def after_cuts(state: State, events: list[Event]) -> None:
    """Once every living seat has cut: each draws 5, then the d10 roll-off."""
    if not all(state["cut"][s] for s in living(state)):
        return
    for seat in living(state):
        for _ in range(HAND):
            draw(state, seat, events)
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
