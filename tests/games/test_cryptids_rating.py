import pytest

from service.games.cryptids.content import load_ruleset
from service.games.cryptids.rating import elo_change, expected_score

K = load_ruleset().run.elo_k


def test_k_is_32_from_the_ruleset() -> None:
    assert K == 32


@pytest.mark.parametrize(("winner", "change"), [("player", 16.0), ("draw", 0.0), ("ghost", -16.0)])
def test_between_equal_ratings_a_battle_moves_half_of_k(winner: str, change: float) -> None:
    assert elo_change(1000, 1000, winner, K) == change


def test_beating_a_stronger_ghost_gains_more_than_beating_a_weaker_one() -> None:
    # 400 points apart, the stronger side is expected to score 10/11.
    assert expected_score(1400, 1000) == pytest.approx(10 / 11)
    assert elo_change(1000, 1400, "player", K) == pytest.approx(32 * 10 / 11)
    assert elo_change(1400, 1000, "player", K) == pytest.approx(32 / 11)
    assert expected_score(1000, 1400) + expected_score(1400, 1000) == pytest.approx(1.0)
