"""The loyalty table renderer draws a real view: every seat's zones, hidden ones as counts,
and a boosted character with its printed values."""

from service.games.loyalty import LoyaltyGame
from service.games.loyalty.state import Unit
from tests.clients.loyalty_table import render
from tests.clients.names import Names

GAME = LoyaltyGame()


def test_the_table_shows_both_sides_hides_the_other_hand_and_marks_a_boost() -> None:
    options = GAME.check_options(2, {})
    match = GAME.setup(5, 2, options, [GAME.sample_loadout(s, options) for s in (0, 1)])
    match.inner.sides[0].units.append(Unit("t.0-0:reednor", "attack", attack_boost=2))
    names = Names(GAME.catalogue())
    drawn = render(GAME.view(match, 0), names)
    mine = [names.of(c.rsplit(":", 1)[1]) for c in match.inner.sides[0].hand]
    assert f"  hand: {', '.join(mine)}" in drawn
    assert "  hand: 5 hidden" in drawn and "deck 15" in drawn
    assert "attack: Reednor 4/2 (printed 2/2)" in drawn
    assert drawn.startswith("game 1 of best of 3, score 0-0")
    assert drawn.count("  hand: 5 hidden") == 1
    assert render(GAME.view(match, None), names).count("  hand: 5 hidden") == 2
