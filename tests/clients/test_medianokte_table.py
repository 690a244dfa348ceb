"""The Medianokte text table draws a real view with the names of the catalogue."""

from service.games.medianokte import MedianokteGame
from service.games.medianokte.content import random_nave
from service.games.medianokte.state import Astrali, State
from tests.clients.medianokte_table import render
from tests.clients.names import Names

GAME = MedianokteGame()
NAMES = Names(GAME.catalogue())


def _table() -> State:
    loadouts = [
        {"character": c, "nave": random_nave(s)} for s, c in enumerate(("guerrera", "cazador"))
    ]
    state = GAME.setup(5, 2, {}, loadouts)
    for seat in range(2):
        state, _ = GAME.apply(state, seat, {"type": "cut", "at": 1})
    assert state.chooser is not None
    state, _ = GAME.apply(state, state.chooser, {"type": "first", "seat": 0})
    return state


def test_the_table_names_every_card_and_shows_current_over_printed() -> None:
    state = _table()
    wolf = "s1.t0:lobo_de_niebla"
    state.players[1].army.append(Astrali(id=wolf, position="turned", owner=1, poison=2))
    state.players[0].slots[0].position = "exhausted"
    text = render(GAME.view(state, 0), NAMES)
    assert "Seat 0 (you): Guerrera del Alba" in text and "Seat 1: Cazador de Niebla" in text
    assert "Espadón (exhausted)" in text and "Tajo del alba (0/3 energy)" in text
    assert "Lobo de niebla (turned) damage 0/3, armour 2 (printed 4) [poison 2]" in text
    hand = [NAMES.of(c.rsplit(":", 1)[1]) for c in state.players[0].hand]
    assert "  hand: " + ", ".join(hand) in text
    assert "  hand: 5 hidden" in text and "nave: 25 cards" in text
    assert "seat 0 to play, 3 activations left" in text


def test_the_table_of_a_finished_match_for_a_spectator() -> None:
    state = _table()
    for step in range(3000):
        if not GAME.to_act(state):
            break
        (seat,) = GAME.to_act(state)
        state, _ = GAME.apply(state, seat, GAME.bot_move(state, seat, step))
    text = render(GAME.view(state, None), NAMES)
    assert "over: seat(s)" in text and " OUT" in text and "(you)" not in text
