"""A simple necromancer bot: greedy, one decision ahead, ties broken by the given seed.

It sees what its seat sees: the view (all public here) and its prompt. To look one decision
ahead it rebuilds a state from the view; resolving a die draws nothing from the generator,
so the unknown generator state cannot matter.
"""

from collections.abc import Callable, Mapping
from typing import Any

from service.games.kernel.prompts import Prompt
from service.games.kernel.protocol import Action, Game, IllegalAction
from service.games.kernel.rng import SplitMix64
from service.games.necromancers.content import Ruleset
from service.games.necromancers.state import Die, Necromancer, State


def _strength(necromancer: Necromancer) -> int:
    if not necromancer.alive:
        return 0
    # Lives are the game; keeping both troop types keeps the second attack die.
    both = 2 if necromancer.skeletons > 0 and necromancer.zombies > 0 else 0
    return 3 * necromancer.lives + necromancer.skeletons + necromancer.zombies + both


def _standing(state: State, seat: int) -> int:
    return sum(_strength(n) if n.seat == seat else -_strength(n) for n in state.necromancers)


def state_from_view(ruleset: Ruleset, view: Mapping[str, Any]) -> State:
    """The match as the view shows it; seed and generator are unknown and set to 0."""
    defence = view["defence"]
    return State(
        ruleset=view["ruleset"],
        seed=0,
        rng=0,
        order_rolls=[],
        order=list(view["order"]),
        necromancers=[
            Necromancer(n["seat"], n["lives"], n["skeletons"]["count"], n["zombies"]["count"])
            for n in view["necromancers"]
        ],
        turn=view["turn"],
        current=view["current"],
        phase=view["phase"],
        target=view["target"],
        dice=[Die(d["face"], d["status"]) for d in view["dice"]],
        defence=None if defence is None else defence["face"],
        eliminated=list(view["eliminated"]),
    )


def choose(
    game: Game[State], ruleset: Ruleset, view: Mapping[str, Any], prompt: Prompt, rng_seed: int
) -> Action:
    legal = prompt.actions
    if not legal:
        raise IllegalAction("not_asked", "nothing to choose from")
    seat: int = view["seat"]
    state = state_from_view(ruleset, view)
    score: Callable[[Action], int]
    if prompt.kind == "target":

        def score(action: Action) -> int:
            # The weakest enemy is the nearest to falling.
            return -_strength(state.necromancers[action["seat"]])

    elif prompt.kind == "defend":

        def score(action: Action) -> int:
            # Cancel the die that can deal the most damage.
            face = state.dice[action["die"]].face
            return max((o.points for o in ruleset.faces[face] if o.effect == "damage"), default=0)

    else:

        def score(action: Action) -> int:
            return _standing(game.apply(state, seat, action)[0], seat)

    scores = [score(action) for action in legal]
    best = max(scores)
    return SplitMix64(rng_seed).pick([a for a, s in zip(legal, scores, strict=True) if s == best])
