"""Elo scoring of a run's battles (docs/rules/cryptids.md#rating): changes add up and apply when
the run ends."""

import math

SCORES = {"player": 1.0, "draw": 0.5, "ghost": 0.0}


def expected_score(rating: int, opponent: int) -> float:
    return 1.0 / (1.0 + math.pow(10.0, (opponent - rating) / 400.0))


def elo_change(rating: int, opponent: int, winner: str, k: int) -> float:
    """The change for `rating` after a battle against `opponent`; `winner` is player/ghost/draw.

    `k` is the ruleset's `run.elo_k`.
    """
    return k * (SCORES[winner] - expected_score(rating, opponent))
