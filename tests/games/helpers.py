"""What the kernel tests share: starting a match of any game, and searching a received tree."""

from typing import Any

from hypothesis import strategies as st

from service.games.kernel.prompts import Prompt
from service.games.kernel.protocol import Action, Game
from service.games.kernel.rng import SplitMix64


def loadouts(game: Game[Any], seats: int, seed: int = 0) -> list[Any]:
    """A legal sample loadout per seat."""
    options = game.check_options(seats, {})
    return [game.sample_loadout(seed + seat, options) for seat in range(seats)]


def start(game: Game[Any], seed: int, seats: int, loadout_seed: int = 0) -> Any:
    return game.setup(seed, seats, {}, loadouts(game, seats, loadout_seed))


def contains(tree: Any, value: Any) -> bool:
    """Whether `value` is `tree` or any subtree or leaf of it (keys do not count)."""
    if type(tree) is type(value) and tree == value:
        return True
    if isinstance(tree, dict):
        return any(contains(v, value) for v in tree.values())
    if isinstance(tree, list | tuple):
        return any(contains(v, value) for v in tree)
    return False


def _frozen(value: Any, found: set[Any]) -> Any:
    """`value` as a hashable key that keeps types apart (1, 1.0, True, "1"), with every
    subtree's key added to `found` on the way."""
    if isinstance(value, dict):
        key: Any = ("dict", tuple(sorted((k, _frozen(v, found)) for k, v in value.items())))
    elif isinstance(value, list | tuple):
        key = ("list", tuple(_frozen(v, found) for v in value))
    else:
        key = (type(value).__name__, value)
    found.add(key)
    return key


def subtrees(tree: Any) -> set[Any]:
    """Every subtree and leaf of `tree` (keys do not count), as hashable keys, in one walk."""
    found: set[Any] = set()
    _frozen(tree, found)
    return found


def leaked(received: Any, secrets: list[Any]) -> list[Any]:
    """The secrets found anywhere in `received`: what `contains` finds, for many secrets at once."""
    seen = subtrees(received)
    return [secret for secret in secrets if _frozen(secret, set()) in seen]


def random_answer(prompt: Prompt, rng: SplitMix64) -> Action:
    """Any answer to `prompt`: an enumerated action, or a parameterised one with valid values.

    Covers the parameter schemas the kernel's games use: bounded integers, one of an enum
    (a card, a stat) and card subsets.
    """
    choices: list[Action | str] = [*prompt.actions, *prompt.params]
    choice = rng.pick(choices)
    if isinstance(choice, dict):
        return choice
    action: Action = {"type": choice}
    for name, schema in prompt.params[choice].items():
        if schema.get("type") == "integer":
            action[name] = schema["minimum"] + rng.below(schema["maximum"] - schema["minimum"] + 1)
        elif "enum" in schema:
            action[name] = rng.pick(schema["enum"])
        else:
            action[name] = [c for c in schema["items"]["enum"] if rng.below(2)]
    return action


# Seeds of at least 2^32: a secret seed must not be found by chance among a view's small numbers.
secret_seeds = st.integers(min_value=2**32, max_value=2**64 - 1)


# The shop and run sections of the rulesets tests build in code; their battles are the point.
TEST_SHOP = {
    "gold_per_round": 10,
    "buy_cost": 3,
    "sell_refund": 1,
    "reroll_cost": 1,
    "offer_slots": 3,
    "offer_slots_late": 5,
    "offer_slots_late_from_round": 5,
    "tier_unlock_rounds": [1, 3, 5, 7, 9, 11],
}
TEST_RUN = {"lives": 5, "wins_to_finish": 10, "max_level": 3, "merge_copies": 3, "elo_k": 32}
