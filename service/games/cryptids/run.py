"""A run's own rules (docs/rules/cryptids.md#a-run-lives-wins-and-rounds): its battle seeds,
the score of a battle, and where a battle leaves the run's lives, wins and status.
"""

from dataclasses import dataclass

from service.games.cryptids.content import RunRules
from service.games.cryptids.rating import elo_change
from service.games.kernel.rng import one_way_seed

BATTLE_SALT = "cryptids:battle:{round}"
SHOPPING = "shopping"
WON = "won"
LOST = "lost"
# Left idle too long: ended by the service (docs/rules/cryptids.md#abandoned-runs).
ABANDONED = "abandoned"
# The engine's sides as a run sees them: side A is the player, side B the ghost.
WINNERS = {"a": "player", "b": "ghost", "draw": "draw"}


@dataclass(frozen=True)
class Standing:
    """Where a run stands: lives left, wins, status, and the rating change not yet applied."""

    lives: int
    wins: int
    status: str
    pending: float

    @property
    def over(self) -> bool:
        return self.status != SHOPPING


def battle_seed(run_seed: int, round_: int) -> int:
    """The seed of the run's battle in `round_`: one-way, since the battle's replay shows it."""
    return one_way_seed(run_seed, BATTLE_SALT.format(round=round_).encode())


def rating_change(
    rules: RunRules, rating: int, ghost_rating: int, winner: str, against_bot: bool
) -> float:
    """The Elo change of one battle; a bot is not a player, so a battle against one is worth 0."""
    if against_bot:
        return 0.0
    return elo_change(rating, ghost_rating, winner, rules.elo_k)


def after_battle(rules: RunRules, before: Standing, winner: str, change: float) -> Standing:
    """The run once a battle is counted: a loss costs a life, a draw nothing; enough wins end
    it won, no lives left end it lost."""
    lives = before.lives - (winner == "ghost")
    wins = before.wins + (winner == "player")
    status = SHOPPING
    if wins >= rules.wins_to_finish:
        status = WON
    elif lives <= 0:
        status = LOST
    return Standing(lives, wins, status, before.pending + change)
