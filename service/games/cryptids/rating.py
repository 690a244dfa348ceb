"""Elo scoring of a run's battles (DESIGN §4.4): changes add up and apply when the run ends."""

import math

ELO_K = 32

SCORES = {"player": 1.0, "draw": 0.5, "ghost": 0.0}


def expected_score(rating: int, opponent: int) -> float:
    return 1.0 / (1.0 + math.pow(10.0, (opponent - rating) / 400.0))


def elo_change(rating: int, opponent: int, winner: str, k: int = ELO_K) -> float:
    """The change for `rating` after a battle against `opponent`; `winner` is player/ghost/draw."""
    return k * (SCORES[winner] - expected_score(rating, opponent))
