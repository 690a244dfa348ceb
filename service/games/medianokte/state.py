"""The state of a Medianokte match as typed records, what is read off it, and the two moves
every rule makes (drawing and tiring).

Every record's fields are named as the stored state's keys, so `dump_state` gives the data
matches have always been stored as, and a stored match loads as it was. Every card in play
is a record with an instance id: a Nave card's is "s<seat>.<index>:<card>", a character
card's "s<seat>:<card>"; targets and the cards an action uses are named by those ids.
"""

from typing import Literal

import msgspec

from service.games.kernel.hidden import Hidden
from service.games.kernel.protocol import Event, Outcome
from service.games.kernel.state import GameState
from service.games.medianokte.content import CONTENT, POSITIONS, Card, Character, Position

MAX_ENERGY = 3
DIE = 10

Phase = Literal["cut", "choose", "turn", "over"]


class Placed(msgspec.Struct):
    """A card in play that turns and exhausts: a character's weapon or assistance (its
    `slots`), a permanent object or an object weapon (its `permanents`)."""

    id: str
    position: Position


class Final(msgspec.Struct):
    """The final action: never turned nor exhausted, it holds up to 3 energy counters."""

    id: str
    energy: int


class Discardable(msgspec.Struct):
    """A discardable object in play, waiting to be used."""

    id: str


class VacioCard(msgspec.Struct):
    """A card in a Vacío: the position it had (a dead astrali's), and whose Nave it came from."""

    id: str
    position: Position
    owner: int


class Bearer(msgspec.Struct, kw_only=True):
    """What a character and an astrali in play both carry: damage and the statuses."""

    id: str
    damage: int = 0
    # The seat that put the bleeding token; it destroys an astrali the bleeding kills.
    bleed: int | None = None
    poison: int = 0
    euphoria: bool = False


class Hero(Bearer, kw_only=True):
    """A player's character card."""


class Astrali(Bearer, kw_only=True):
    """An astrali in an army; its `owner` is whose Nave it came from, whose Vacío it dies to."""

    position: Position
    owner: int


class Player(msgspec.Struct, kw_only=True):
    """One seat's cards, zone by zone; every zone but the Nave starts empty."""

    character: str
    hero: Hero
    slots: list[Placed]  # the two weapons, then the assistance
    final: Final
    army: list[Astrali] = []
    discardables: list[Discardable] = []
    permanents: list[Placed] = []
    hand: list[str] = []
    nave: list[str]  # top card first
    vacio: list[VacioCard] = []
    out: bool = False

    def in_play(self) -> list[Placed | Astrali]:
        """The cards in play that turn and exhaust: weapons and assistance, permanent objects
        and object weapons, astralis."""
        return [*self.slots, *self.permanents, *self.army]


class State(GameState, kw_only=True):
    phase: Phase
    cut: list[bool]  # by seat: whether it has cut
    # The roll-off, one round per entry (ties roll again): each seat's d10 by its number.
    rolls: list[dict[str, int]]
    chooser: int | None
    first: int | None
    turn: int  # the turn player's seat
    used: int  # activations used this turn
    step: int  # actions and resignations so far, to group the seats that fell together
    fallen: list[list[int]]  # [seat, step] in the order they fell
    result: Outcome | None
    players: list[Player]


def card_of(instance: str) -> Card:
    """The card an instance id names."""
    return CONTENT.cards[instance.rsplit(":", 1)[-1]]


# --- looking things up ----------------------------------------------------------------


def living(state: State) -> list[int]:
    return [s for s, p in enumerate(state.players) if not p.out]


def enemies(state: State, seat: int) -> list[int]:
    return [s for s in living(state) if s != seat]


def following(state: State, seat: int) -> int:
    """The next seat after `seat` still playing."""
    seats = len(state.players)
    return next(
        s for s in ((seat + k) % seats for k in range(1, seats + 1)) if not state.players[s].out
    )


def hero_card(state: State, seat: int) -> Character:
    return CONTENT.characters[state.players[seat].character]


def max_life(state: State, seat: int) -> int:
    bonus = sum(card_of(o.id).life_bonus for o in state.players[seat].permanents)
    return hero_card(state, seat).life + bonus


def armour(state: State, target: str) -> int:
    """The target's armour now: printed, plus permanent objects, minus one per poison token."""
    seat, record = locate(state, target)
    if isinstance(record, Hero):
        bonus = sum(card_of(o.id).armour_bonus for o in state.players[seat].permanents)
        return hero_card(state, seat).armour + bonus - record.poison
    return max(0, card_of(target).armour - record.poison)


def locate(state: State, target: str) -> tuple[int, Hero | Astrali]:
    """The controller and the record of a character or of an astrali in an army."""
    for seat, player in enumerate(state.players):
        if player.hero.id == target:
            return seat, player.hero
        for record in player.army:
            if record.id == target:
                return seat, record
    raise KeyError(target)


def is_hero(state: State, target: str) -> bool:
    return isinstance(locate(state, target)[1], Hero)


def present(state: State, target: str) -> bool:
    try:
        seat, _ = locate(state, target)
    except KeyError:
        return False
    return not state.players[seat].out


def seat_rolls(rolls: dict[str, int]) -> list[dict[str, int]]:
    """One round of the roll-off as `{"seat", "roll"}` items in seat order: the state keeps
    it keyed by seat strings, as matches have always been stored, but seats travel as
    integers."""
    return sorted(({"seat": int(s), "roll": roll} for s, roll in rolls.items()), key=_by_seat)


def _by_seat(item: dict[str, int]) -> int:
    return item["seat"]


# --- drawing and tiring ---------------------------------------------------------------


def draw(state: State, seat: int, events: list[Event]) -> None:
    """The Nave's top card to the hand, seen by its drawer only; nothing from an empty Nave."""
    player = state.players[seat]
    if player.nave:
        card = player.nave.pop(0)
        player.hand.append(card)
        events.append(Event("drew", {"seat": seat, "card": Hidden((seat,), card)}))


def tire(record: Placed | Astrali, position: Position) -> None:
    """Turn or exhaust a card; tiring never brings a card back up (exhausted stays so)."""
    if POSITIONS.index(position) > POSITIONS.index(record.position):
        record.position = position
