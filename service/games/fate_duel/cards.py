"""Fate decks: shuffling, drawing to the hand, flipping, and the discard pile reshuffled.

Every random draw of the match comes from the state's SplitMix64 generator, in the order the
rules ask for cards, so a match replays exactly from its seed and its action log.
"""

from service.games.fate_duel.content import Ruleset
from service.games.fate_duel.state import State, face
from service.games.kernel.hidden import Hidden
from service.games.kernel.protocol import Event


def shown(card: str) -> dict[str, str]:
    """A card as views and events show it: its instance id and its catalogue id (its face)."""
    return {"id": card, "card": face(card)}


def shown_all(cards: list[str]) -> list[dict[str, str]]:
    return [shown(card) for card in cards]


def new_deck(rules: Ruleset, state: State, seat: int) -> list[str]:
    """Seat's 54 cards, shuffled."""
    cards = [f"s{seat}.0:{f}" for f in rules.faces]
    state.shuffle(cards)
    return cards


def reshuffle(state: State, seat: int, events: list[Event]) -> None:
    """The discard pile becomes the deck, shuffled; its cards take new ids for the new pass."""
    state.passes[seat] += 1
    cards = [f"s{seat}.{state.passes[seat]}:{face(c)}" for c in state.discards[seat]]
    state.shuffle(cards)
    state.decks[seat], state.discards[seat] = cards, []
    events.append(Event("reshuffled", {"seat": seat, "cards": len(cards)}))


def take(state: State, seat: int, events: list[Event]) -> str | None:
    """The top card of seat's deck, reshuffling the discard pile first when the deck is empty;
    None only when both are empty (every card is in the hand or in use)."""
    if not state.decks[seat] and state.discards[seat]:
        reshuffle(state, seat, events)
    return state.decks[seat].pop(0) if state.decks[seat] else None


def draw(state: State, seat: int, count: int, events: list[Event]) -> None:
    """Seat draws `count` cards into its control hand: only it sees which."""
    cards = []
    for _ in range(count):
        card = take(state, seat, events)
        if card is None:
            break
        cards.append(card)
    state.hands[seat].extend(cards)
    drawn = Hidden((seat,), shown_all(cards), shown=len(cards))
    events.append(Event("drew", {"seat": seat, "cards": drawn}))


def discard(state: State, seat: int, cards: list[str], events: list[Event]) -> None:
    """Cards go face up onto their deck's discard pile."""
    if cards:
        state.discards[seat].extend(cards)
        events.append(Event("discarded", {"seat": seat, "cards": shown_all(cards)}))
