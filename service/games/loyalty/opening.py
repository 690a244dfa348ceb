"""Setting up one game: the shuffled decks and hands, and who starts (seed §5).

Who starts is drawn, or, from the second game of a match on, chosen by the loser of the last.
"""

from collections.abc import Sequence

from service.games.kernel.hidden import Hidden
from service.games.kernel.protocol import Event
from service.games.kernel.rng import SplitMix64, one_way_seed
from service.games.loyalty.content import Content
from service.games.loyalty.state import Side, State


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


def choose_first(state: State, chooser: int, first: int, events: list[Event]) -> None:
    """The chooser's answer: `first` starts, and its first turn begins."""
    state.first = state.active = first
    state.phase = "draw"
    events.append(Event("starts", {"seat": state.first, "by": "choice", "chooser": chooser}))
    events.append(Event("turn_started", {"seat": state.first, "turn": 1}))
