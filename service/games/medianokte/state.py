"""The state of a Medianokte match, what is read off it, and the two moves every rule makes.

The state is a dict (see `setup.new_state`): it is its own dump, so replays and the cache
agree by construction. Every card in play is a record with an instance id: a Nave card's is
"s<seat>.<index>:<card>", a character card's "s<seat>:<card>"; targets and the cards an
action uses are named by those ids.
"""

from typing import Any

from service.games.kernel.hidden import Hidden
from service.games.kernel.protocol import Event
from service.games.medianokte.content import CONTENT, POSITIONS, Card

State = dict[str, Any]
Record = dict[str, Any]

MAX_ENERGY = 3
DIE = 10


def card_of(instance: str) -> Card:
    """The card an instance id names."""
    return CONTENT.cards[instance.rsplit(":", 1)[-1]]


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


def present(state: State, target: str) -> bool:
    try:
        _, seat, _ = locate(state, target)
    except KeyError:
        return False
    return not state["players"][seat]["out"]


# --- drawing and tiring ---------------------------------------------------------------


def draw(state: State, seat: int, events: list[Event]) -> None:
    """The Nave's top card to the hand, seen by its drawer only; nothing from an empty Nave."""
    player = state["players"][seat]
    if player["nave"]:
        card = player["nave"].pop(0)
        player["hand"].append(card)
        events.append(Event("drew", {"seat": seat, "card": Hidden((seat,), card)}))


def tire(record: Record, position: str) -> None:
    """Turn or exhaust a card; tiring never brings a card back up (exhausted stays so)."""
    if POSITIONS.index(position) > POSITIONS.index(record["position"]):
        record["position"] = position
