"""OpenSkill ratings of a finished match: who moves, which way, and the season's soft reset."""

import pytest

from service.games.kernel.ratings import MU, SIGMA, Skill, rate, rated_seats, soft_reset


def test_a_win_raises_the_winner_and_lowers_the_loser() -> None:
    new = rate([[1], [0]], {0: Skill(), 1: Skill()})
    assert new[1].mu > MU > new[0].mu
    assert new[1].ordinal > Skill().ordinal > new[0].ordinal
    assert new[0].sigma < SIGMA and new[1].sigma < SIGMA


def test_a_tie_moves_both_toward_each_other() -> None:
    strong, weak = Skill(30.0, 4.0), Skill(20.0, 4.0)
    new = rate([[0, 1]], {0: strong, 1: weak})
    assert strong.mu > new[0].mu > new[1].mu > weak.mu


def test_equal_players_tied_keep_their_mu() -> None:
    new = rate([[0, 1]], {0: Skill(), 1: Skill()})
    assert new[0].mu == pytest.approx(MU) and new[1].mu == pytest.approx(MU)


def test_bots_are_not_rated_and_rate_nobody() -> None:
    # Seat 1 is a bot: it has no skill, so only the two players are rated, as if alone.
    with_bot = rate([[1], [0], [2]], {0: Skill(), 2: Skill()})
    alone = rate([[0], [2]], {0: Skill(), 2: Skill()})
    assert set(with_bot) == {0, 2}
    assert with_bot == alone
    assert rate([[1], [0]], {0: Skill()}) == {}


def test_four_seats_follow_the_ranking() -> None:
    new = rate([[2], [0, 3], [1]], {seat: Skill() for seat in range(4)})
    assert new[2].mu > new[0].mu > new[1].mu
    assert new[0].mu == pytest.approx(new[3].mu)
    assert new[2].mu > MU > new[1].mu


def test_three_seats_with_one_bot_rate_the_other_two() -> None:
    new = rate([[0], [1], [2]], {0: Skill(), 2: Skill()})
    assert new[0].mu > MU > new[2].mu


def test_rated_seats_need_two_players() -> None:
    assert rated_seats([[0], [1]], {0, 1}) == [0, 1]
    assert rated_seats([[1], [0]], {0}) == []
    assert rated_seats([[2], [0, 1]], {0, 1, 2}) == [2, 0, 1]


def test_soft_reset_pulls_toward_the_default() -> None:
    assert soft_reset(None) == Skill(MU, SIGMA)
    reset = soft_reset(Skill(35.0, 2.0))
    assert reset.mu == pytest.approx(30.0)
    assert reset.sigma == pytest.approx(2.0 + SIGMA / 2)
    assert soft_reset(Skill(15.0, 8.0)) == Skill(20.0, SIGMA)
