"""A run's own rules: lives, wins, status, and what a battle is worth.

The rules: docs/rules/cryptids.md#a-run-lives-wins-and-rounds and docs/rules/cryptids.md#rating.
"""

import pytest

from service.games.cryptids import run
from service.games.cryptids.content import load_ruleset
from service.games.cryptids.rating import elo_change

RULES = load_ruleset().run
FRESH = run.Standing(lives=RULES.lives, wins=0, status=run.SHOPPING, pending=0.0)


def test_a_loss_costs_one_life_and_a_win_adds_one_win() -> None:
    lost = run.after_battle(RULES, FRESH, "ghost", -16.0)
    assert (lost.lives, lost.wins, lost.status) == (RULES.lives - 1, 0, run.SHOPPING)
    won = run.after_battle(RULES, FRESH, "player", 16.0)
    assert (won.lives, won.wins, won.status) == (RULES.lives, 1, run.SHOPPING)


def test_a_draw_costs_no_life_and_is_not_a_win() -> None:
    drawn = run.after_battle(RULES, FRESH, "draw", 0.0)
    assert (drawn.lives, drawn.wins, drawn.status) == (FRESH.lives, FRESH.wins, run.SHOPPING)


def test_ten_wins_end_the_run_won() -> None:
    nine = run.Standing(1, RULES.wins_to_finish - 1, run.SHOPPING, 0.0)
    after = run.after_battle(RULES, nine, "player", 3.0)
    assert after.status == run.WON and after.over
    assert run.after_battle(RULES, nine, "draw", 0.0).status == run.SHOPPING


def test_losing_the_last_life_ends_the_run_lost() -> None:
    last = run.Standing(1, 4, run.SHOPPING, 0.0)
    after = run.after_battle(RULES, last, "ghost", -5.0)
    assert (after.lives, after.status) == (0, run.LOST) and after.over


def test_rating_changes_add_up_until_the_run_ends() -> None:
    standing = FRESH
    for winner, change in (("player", 16.0), ("ghost", -12.5), ("draw", 0.5)):
        standing = run.after_battle(RULES, standing, winner, change)
    assert standing.pending == pytest.approx(4.0)


def test_a_battle_against_a_bot_is_worth_no_rating() -> None:
    assert run.rating_change(RULES, 1200, 1200, "player", against_bot=True) == 0.0
    against_player = run.rating_change(RULES, 1200, 1300, "player", against_bot=False)
    assert against_player == elo_change(1200, 1300, "player", RULES.elo_k) > 0


def test_each_round_of_a_run_has_its_own_battle_seed() -> None:
    seeds = {run.battle_seed(42, round_) for round_ in range(1, 30)}
    assert len(seeds) == 29
    assert run.battle_seed(42, 3) == run.battle_seed(42, 3) != run.battle_seed(43, 3)
