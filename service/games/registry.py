"""The turn-based games the service offers, by id."""

from collections.abc import Mapping
from typing import Any

from service.games.kernel.protocol import Game, GameError
from service.games.necromancers import NecromancersGame

GAMES: Mapping[str, Game[Any]] = {game.id: game for game in (NecromancersGame(),)}


def get_game(game_id: str) -> Game[Any]:
    """The game with that id, or `GameError`."""
    try:
        return GAMES[game_id]
    except KeyError:
        raise GameError(f"unknown game {game_id!r}") from None


def describe() -> list[dict[str, Any]]:
    """What a client needs to create a match: id, ruleset, seat range, options."""
    return [
        {
            "id": game.id,
            "ruleset": game.ruleset,
            "min_seats": game.min_seats,
            "max_seats": game.max_seats,
            "options": game.options_schema(),
        }
        for game in GAMES.values()
    ]
