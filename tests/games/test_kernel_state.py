"""How the kernel keeps a game's state: copied, dumped and loaded with nothing shared or lost,
and the generator borrowed from the state draw by draw exactly as SplitMix64 gives it."""

from typing import Any

import msgspec
import pytest

from service.games.kernel.rng import SplitMix64
from service.games.kernel.state import GameState, copy_state, dump_state, load_state
from service.games.necromancers import NecromancersGame
from service.games.necromancers.state import State

GAME = NecromancersGame()


def _mutable_ids(value: Any) -> set[int]:
    """The ids of every list, dict and record reachable from `value`."""
    found: set[int] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.add(id(item))
            stack.extend(item.values())
        elif isinstance(item, list):
            found.add(id(item))
            stack.extend(item)
        elif isinstance(item, msgspec.Struct):
            found.add(id(item))
            stack.extend(getattr(item, name) for name in item.__struct_fields__)
    return found


def _plain(value: Any) -> Any:
    """A record as a dict of its fields by name, recursively: what a dump must be."""
    if isinstance(value, msgspec.Struct):
        return {name: _plain(getattr(value, name)) for name in value.__struct_fields__}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _played() -> State:
    """A four-seat match some turns in: rolls kept, dice on the table, troops lost."""
    state = GAME.setup(5, 4, {}, [None] * 4)
    for _ in range(12):
        seat = GAME.to_act(state)[0]
        state, _ = GAME.apply(state, seat, GAME.bot_move(state, seat, 3))
    return state


def test_copied_dumped_and_loaded_states_share_nothing_mutable_and_lose_nothing() -> None:
    state = _played()
    assert state.order_rolls and state.necromancers
    copied = copy_state(state)
    assert copied == state and _mutable_ids(copied).isdisjoint(_mutable_ids(state))
    dumped = dump_state(state)
    assert dumped == _plain(state)
    assert _mutable_ids(dumped).isdisjoint(_mutable_ids(state))
    loaded = load_state(dumped, State)
    assert loaded == state and _mutable_ids(loaded).isdisjoint(_mutable_ids(dumped))


def test_a_dump_that_does_not_fit_the_declared_types_is_refused() -> None:
    dumped = dump_state(_played())
    dumped["necromancers"][0]["lives"] = "six"
    with pytest.raises(msgspec.ValidationError, match="lives"):
        load_state(dumped, State)


class Drawn(GameState, kw_only=True):
    pass


def test_the_state_draws_exactly_what_its_generator_gives_and_keeps_its_place() -> None:
    state = Drawn(seed=1, rng=77)
    reference = SplitMix64(77)
    assert [state.die(6) for _ in range(5)] == [reference.die(6) for _ in range(5)]
    assert state.below(10) == reference.below(10)
    assert state.pick("abc") == reference.pick("abc")
    cards, expected = list(range(20)), list(range(20))
    state.shuffle(cards)
    reference.shuffle(expected)
    assert cards == expected
    assert state.rng == reference.state
