"""Elo scoring of a run's battles (docs/rules/cryptids.md#rating): changes add up and apply when
the run ends; which ghosts may move a rating (docs/rules/cryptids.md#rated-ghosts); and what an
abandoned run settles (docs/rules/cryptids.md#abandoned-runs)."""

import math
from dataclasses import dataclass

SCORES = {"player": 1.0, "draw": 0.5, "ghost": 0.0}

# Why a battle moved no rating, as the end-turn answer and the battle name it.
UNRATED_BOT = "bot"
UNRATED_NEW_ACCOUNT = "new_account"
UNRATED_RECENTLY = "rated_recently"


def expected_score(rating: int, opponent: int) -> float:
    return 1.0 / (1.0 + math.pow(10.0, (opponent - rating) / 400.0))


def elo_change(rating: int, opponent: int, winner: str, k: int) -> float:
    """The change for `rating` after a battle against `opponent`; `winner` is player/ghost/draw.

    `k` is the ruleset's `run.elo_k`.
    """
    return k * (SCORES[winner] - expected_score(rating, opponent))


def forfeit_change(k: int) -> float:
    """What abandoning adds to a run's pending change: one loss against a ghost of the
    player's own rating (-k/2), the battle the player walked away from."""
    return elo_change(0, 0, "ghost", k)


def abandoned_settlement(pending: float, k: int) -> int:
    """What an abandoned run adds to the player's rating: its pending change and the forfeit,
    rounded once, as a finished run's pending change is."""
    return round(pending + forfeit_change(k))


@dataclass(frozen=True)
class RatedGhosts:
    """The bar a ghost's owner must clear for the battle to move the player's rating."""

    min_age_seconds: float  # the owner's account at least this old
    min_runs: int  # with at least this many runs that played a battle
    repeat_seconds: float  # and it has not moved this player's rating for this long


def unrated_reason(
    bar: RatedGhosts,
    *,
    owner_age_seconds: float,
    owner_finished_runs: int,
    since_owner_rated: float | None,
) -> str | None:
    """Why a battle against a player's ghost moves no rating, or None when it does.

    `since_owner_rated` is how long ago this owner last moved this player's rating (None:
    never, or longer ago than anyone remembers)."""
    if owner_age_seconds < bar.min_age_seconds or owner_finished_runs < bar.min_runs:
        return UNRATED_NEW_ACCOUNT
    if since_owner_rated is not None and since_owner_rated < bar.repeat_seconds:
        return UNRATED_RECENTLY
    return None
