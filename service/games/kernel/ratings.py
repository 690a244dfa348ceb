"""OpenSkill ratings of a finished match (Weng-Lin, Plackett-Luce model): pure, no storage.

A player's skill is (mu, sigma); the rating shown is its ordinal, mu - 3 sigma, which starts at
0 and grows as the service grows sure of a player's skill. Only the seats given a skill are
rated: bots are left out of the teams altogether, so they neither move nor move anyone.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce

MU = 25.0
SIGMA = MU / 3

_MODEL = PlackettLuce(mu=MU, sigma=SIGMA)


@dataclass(frozen=True)
class Skill:
    mu: float = MU
    sigma: float = SIGMA

    @property
    def ordinal(self) -> float:
        return self.mu - 3 * self.sigma


def soft_reset(previous: Skill | None) -> Skill:
    """A player's skill at the start of a season, from the previous season's: mu halfway back
    to the default and sigma widened by half the default, never past it. None: the default."""
    if previous is None:
        return Skill()
    return Skill(MU + (previous.mu - MU) / 2, min(SIGMA, previous.sigma + SIGMA / 2))


def rated_seats(ranking: Sequence[Sequence[int]], rated: set[int]) -> list[int]:
    """The seats of `rated` that the ranking places, in its order; fewer than two rate nobody."""
    placed = [seat for group in ranking for seat in group if seat in rated]
    return placed if len(placed) >= 2 else []


def rate(ranking: Sequence[Sequence[int]], skills: Mapping[int, Skill]) -> dict[int, Skill]:
    """The new skills of the seats in `skills` by the match's `ranking` (groups of seats from
    first place down, a group's seats tied); seats without a skill (bots) are not rated."""
    placed = [
        (place, seat)
        for place, group in enumerate(ranking, start=1)
        for seat in group
        if seat in skills
    ]
    if len(placed) < 2:
        return {}
    teams = [[_MODEL.rating(mu=skills[seat].mu, sigma=skills[seat].sigma)] for _, seat in placed]
    rated = _MODEL.rate(teams, ranks=[float(place) for place, _ in placed])
    return {
        seat: Skill(team[0].mu, team[0].sigma)
        for (_, seat), team in zip(placed, rated, strict=True)
    }
