"""Which ghosts may move a rating, and what an abandoned run settles.

The rules: docs/rules/cryptids.md#rated-ghosts and docs/rules/cryptids.md#abandoned-runs.
"""

import pytest

from service.games.cryptids.content import load_ruleset
from service.games.cryptids.rating import (
    UNRATED_NEW_ACCOUNT,
    UNRATED_RECENTLY,
    RatedGhosts,
    abandoned_settlement,
    elo_change,
    forfeit_change,
    unrated_reason,
)

K = load_ruleset().run.elo_k
DAY = 24 * 3600.0
BAR = RatedGhosts(min_age_seconds=3 * DAY, min_runs=3, repeat_seconds=DAY)


def test_abandoning_forfeits_one_loss_against_ones_own_rating() -> None:
    assert forfeit_change(K) == elo_change(1234, 1234, "ghost", K) == -16.0


@pytest.mark.parametrize(
    ("pending", "settled"), [(0.0, -16), (15.9, 0), (10.0, -6), (-16.0, -32), (48.4, 32)]
)
def test_an_abandoned_run_settles_its_pending_change_and_the_forfeit(
    pending: float, settled: int
) -> None:
    assert abandoned_settlement(pending, K) == settled


def test_a_run_left_below_one_losss_worth_settles_below_zero() -> None:
    # The exploit stopped whenever one more loss would make the run a net loss.
    assert all(abandoned_settlement(p / 10, K) < 0 for p in range(-300, 155))


@pytest.mark.parametrize(
    ("age", "runs", "since", "reason"),
    [
        (3 * DAY, 3, None, None),
        (10 * DAY, 7, DAY, None),
        (3 * DAY - 1, 3, None, UNRATED_NEW_ACCOUNT),
        (30 * DAY, 2, None, UNRATED_NEW_ACCOUNT),
        (0.0, 0, 10.0, UNRATED_NEW_ACCOUNT),
        (30 * DAY, 3, DAY - 1, UNRATED_RECENTLY),
        (30 * DAY, 3, 0.0, UNRATED_RECENTLY),
    ],
)
def test_only_an_established_owner_not_met_rated_today_rates(
    age: float, runs: int, since: float | None, reason: str | None
) -> None:
    found = unrated_reason(
        BAR, owner_age_seconds=age, owner_finished_runs=runs, since_owner_rated=since
    )
    assert found == reason
