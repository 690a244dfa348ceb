"""One shape of view, checked for every game (docs/architecture.md#views): random bot
playouts, and at every step every seat's and a spectator's view must fit the game's published
schema, hold the same keys whoever looks, and name only cards its catalogue lists; no view and
no event keys anything by a seat number written as a string."""

from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest

from service.games.kernel.protocol import Event, Game
from service.games.kernel.views import view_schema
from service.games.registry import REGISTRY
from tests.games import cardgame

cardgame.register_test_games()
GAMES = sorted(REGISTRY.games(), key=lambda g: (g.id, g.ruleset))
SEEDS = range(3)
MAX_STEPS = 400


def _playout(game: Game[Any], seed: int, seats: int) -> Iterator[tuple[Any, list[Event]]]:
    options = game.check_options(seats, {})
    loadouts = [game.sample_loadout(seed * 7 + s, options) for s in range(seats)]
    state = game.setup(seed, seats, options, loadouts)
    yield state, game.setup_events(state)
    for step in range(MAX_STEPS):
        to_act = game.to_act(state)
        if not to_act:
            return
        seat = to_act[step % len(to_act)]
        state, events = game.apply(state, seat, game.bot_move(state, seat, seed * 1000 + step))
        yield state, events


def _string_seats(tree: Any, path: str = "") -> Iterator[str]:
    """Where an object is keyed by a number written as a string (`{"0": …}`)."""
    if isinstance(tree, dict):
        for key, value in tree.items():
            if isinstance(key, str) and key.isdigit():
                yield f"{path}.{key}"
            yield from _string_seats(value, f"{path}.{key}")
    elif isinstance(tree, list):
        for index, item in enumerate(tree):
            yield from _string_seats(item, f"{path}[{index}]")


def _named_cards(tree: Any) -> Iterator[str]:
    if isinstance(tree, dict):
        if isinstance(tree.get("id"), str) and isinstance(tree.get("card"), str):
            yield tree["card"]
        for value in tree.values():
            yield from _named_cards(value)
    elif isinstance(tree, list):
        for item in tree:
            yield from _named_cards(item)


def _same_keys(a: Any, b: Any, path: str = "") -> None:
    """Every object both views hold has the same keys (a hidden zone's null is no object)."""
    if isinstance(a, dict) and isinstance(b, dict):
        assert a.keys() == b.keys(), f"{path}: {sorted(a.keys() ^ b.keys())}"
        for key in a:
            _same_keys(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, list) and isinstance(b, list):
        for index, (x, y) in enumerate(zip(a, b, strict=False)):
            _same_keys(x, y, f"{path}[{index}]")
    else:
        assert (a is None or b is None) or type(a) is type(b), f"{path}: {a!r} vs {b!r}"


@pytest.mark.parametrize("game", GAMES, ids=lambda g: f"{g.id}:{g.ruleset}")
def test_views_fit_their_schema_in_one_shape_naming_catalogued_cards_and_integer_seats(
    game: Game[Any],
) -> None:
    schema = view_schema(game.id, game.view_schema())
    validator = jsonschema.Draft202012Validator(schema)
    listed = {entry["id"] for entry in game.catalogue()["entries"]}
    for seed in SEEDS:
        seats = game.min_seats + seed % (game.max_seats - game.min_seats + 1)
        for state, events in _playout(game, seed, seats):
            stored = [event.as_dict() for event in events]
            assert not list(_string_seats(stored)), list(_string_seats(stored))
            views = [game.view(state, seat) for seat in [*range(seats), None]]
            assert not list(_string_seats(views)), list(_string_seats(views))
            for view in views:
                errors = sorted(validator.iter_errors(view), key=str)
                assert not errors, (
                    f"seat {view['seat']}: {errors[0].message} at {list(errors[0].absolute_path)}"
                )
                unknown = set(_named_cards(view)) - listed
                assert not unknown, f"not in the catalogue: {sorted(unknown)}"
            for other in views[1:]:
                _same_keys(views[0], other)
