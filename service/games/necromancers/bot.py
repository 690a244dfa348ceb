"""A simple necromancer bot: greedy, one decision ahead, ties broken by the given seed."""

from collections.abc import Callable

from service.games.kernel.protocol import Action, IllegalAction
from service.games.kernel.rng import SplitMix64
from service.games.necromancers import rules
from service.games.necromancers.content import Ruleset
from service.games.necromancers.state import Necromancer, State


def _strength(necromancer: Necromancer) -> int:
    if not necromancer.alive:
        return 0
    # Lives are the game; keeping both troop types keeps the second attack die.
    both = 2 if necromancer.skeletons > 0 and necromancer.zombies > 0 else 0
    return 3 * necromancer.lives + necromancer.skeletons + necromancer.zombies + both


def _standing(state: State, seat: int) -> int:
    return sum(_strength(n) if n.seat == seat else -_strength(n) for n in state.necromancers)


def choose(ruleset: Ruleset, state: State, seat: int, rng_seed: int) -> Action:
    legal = rules.legal_actions(ruleset, state, seat)
    if not legal:
        raise IllegalAction(f"seat {seat} may not act now")
    score: Callable[[Action], int]
    if state.phase == "target":

        def score(action: Action) -> int:
            # The weakest enemy is the nearest to falling.
            return -_strength(state.necromancers[action["seat"]])

    elif state.phase == "defend":

        def score(action: Action) -> int:
            # Cancel the die that can deal the most damage.
            face = state.dice[action["die"]].face
            return max((o.points for o in ruleset.faces[face] if o.effect == "damage"), default=0)

    else:

        def score(action: Action) -> int:
            return _standing(rules.apply(ruleset, state, seat, action)[0], seat)

    scores = [score(action) for action in legal]
    best = max(scores)
    return SplitMix64(rng_seed).pick([a for a, s in zip(legal, scores, strict=True) if s == best])
