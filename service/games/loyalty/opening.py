"""Setting up one game: the shuffled decks and hands, and who starts
(docs/rules/loyalty.md#5-comenzando-a-jugar-setup).

Who starts is drawn, or, from the second game of a match on, chosen by the loser of the last.
"""

from collections.abc import Sequence

from service.games.kernel.protocol import Event
from service.games.kernel.rng import one_way_seed
from service.games.loyalty.content import STARTING_LOYALTY, Content
from service.games.loyalty.state import Side, State
from service.games.loyalty.turn import phase_event


def setup(
    content: Content, seed: int, mode: str, decks: Sequence[Sequence[str]], chooser: int | None
) -> State:
    """Shuffled decks, 5 cards each; who starts is drawn, or chosen by `chooser`."""
    state = State(
        ruleset=content.ruleset,
        seed=seed,
        rng=seed,
        mode=mode,
        chooser=chooser,
        first=0,
        active=0,
        turn=1,
        phase="choose_first" if chooser is not None else "draw",
        sides=[],
    )
    # A one-way tag: instance ids differ between games and give nothing of the seed away.
    tag = one_way_seed(seed, b"loyalty:ids") >> 32
    for seat, listed in enumerate(decks):
        deck = [f"{tag:08x}.{seat}-{i:02d}:{card}" for i, card in enumerate(listed)]
        state.shuffle(deck)
        hand, deck = deck[: content.hand_size], deck[content.hand_size :]
        state.sides.append(
            Side(life=content.modes[mode].life, loyalty=STARTING_LOYALTY, deck=deck, hand=hand)
        )
    state.first = state.active = state.below(2)
    return state


def choose_first(state: State, chooser: int, first: int, events: list[Event]) -> None:
    """The chooser's answer: `first` starts, and its first turn begins."""
    state.first = state.active = first
    state.phase = "draw"
    events.append(Event("starts", {"seat": state.first, "by": "choice", "chooser": chooser}))
    events.append(Event("turn_started", {"seat": state.first, "turn": 1}))
    events.append(phase_event(state))
