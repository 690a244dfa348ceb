"""The necromancers' text table draws a real view with the names of the catalogue."""

from service.games.necromancers import NecromancersGame
from tests.clients.names import Names
from tests.clients.necromancers_table import render

GAME = NecromancersGame()
NAMES = Names(GAME.catalogue())


def test_the_table_names_every_piece_and_shows_current_over_printed() -> None:
    state = GAME.setup(11, 3, {}, [None] * 3)
    attacker = state.current
    (action, *_) = GAME.legal_actions(state, attacker)
    state, _ = GAME.apply(state, attacker, action)
    state.necromancers[action["seat"]].zombies = 2
    text = render(GAME.view(state, 0), NAMES)
    assert "Necromancer" in text and "Skeletons" in text and "Zombies" in text
    assert f"seat {attacker} attacks seat {action['seat']}" in text
    assert "2/6" in text
    for die in state.dice:
        assert f"Face {die.face}" in text
    assert f"Defence die showing {state.defence}" in text
    assert "you are seat 0" in text


def test_the_table_of_a_finished_match() -> None:
    state = GAME.setup(4, 2, {}, [None] * 2)
    for step in range(500):
        if not GAME.to_act(state):
            break
        (seat,) = GAME.to_act(state)
        state, _ = GAME.apply(state, seat, GAME.bot_move(state, seat, step))
    text = render(GAME.view(state, None), NAMES)
    assert "step over" in text
    assert "out" in text
    assert "asked: nobody; you are seat None" in text
