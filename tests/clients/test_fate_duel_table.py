"""The fate-duel table renderer on real views: every seat's zones (a hidden hand as a count),
models with values now and printed, the open duel, all named through the catalogue."""

from service.games.fate_duel import FateDuelGame
from tests.clients.fate_duel_table import render
from tests.clients.names import Names
from tests.games.test_fate_duel import act, guardia_duel, opposed

GAME = FateDuelGame()
NAMES = Names(GAME.catalogue())


def test_a_pulse_duel_is_drawn_with_the_own_hand_and_the_others_count() -> None:
    state = guardia_duel(["4c"], ["9m", "2r"])
    table = render(GAME.view(state, 0), NAMES)
    assert "Pulse: Terrorífico 13 (Wp vs TN 13" in table
    assert "hand 2: 9 de Máscaras, 2 de Carneros" in table
    assert "hand 6 hidden" in table
    assert "deck 51 hidden" in table
    assert "seat 0 Guardia del Gremio: Wp 5" in table and "active 4 de Cuervos" in table
    assert "total 9c" in table
    watcher = render(GAME.view(state, None), NAMES)
    assert "hand 2 hidden" in watcher and "9 de Máscaras" not in watcher


def test_wounds_show_left_of_printed_and_the_end_shows_the_ranking() -> None:
    state, _ = opposed(["13r"], ["1r"])
    table = render(GAME.view(state, 1), NAMES)
    row = next(line for line in table.splitlines() if "Cadáver Andante" in line)
    assert "4/7" in row and "esbirro" in row
    state = guardia_duel(["6r"], ["2c"])
    state, _ = act(state, 0, type="cheat", card=state.hands[0][0])
    state, _ = GAME.resign(state, 0)
    table = render(GAME.view(state, 1), NAMES)
    assert "Over. Ranking: seat 1 > seat 0" in table
    assert "Guardia del Gremio" in table
