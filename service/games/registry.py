"""The turn-based games the service offers, by (game id, ruleset id).

A match is created under a game's default ruleset and pinned to it: it plays and replays
under that ruleset also after a newer one becomes the default. The registry lives here,
beside the games, so that the kernel never imports a game.
"""

from typing import Any

from service.games.fate_duel import FateDuelGame
from service.games.kernel.protocol import Game, GameError
from service.games.loyalty import LoyaltyGame
from service.games.medianokte import MedianokteGame
from service.games.necromancers import NecromancersGame


class Registry:
    """Games by (id, ruleset), with a default ruleset per game id."""

    def __init__(self) -> None:
        self._games: dict[tuple[str, str], Game[Any]] = {}
        self._defaults: dict[str, str] = {}

    def register(self, game: Game[Any], *, default: bool = False) -> None:
        """Add (or replace) `game` under its (id, ruleset); the first of an id is its default."""
        self._games[(game.id, game.ruleset)] = game
        if default or game.id not in self._defaults:
            self._defaults[game.id] = game.ruleset

    def get(self, game_id: str, ruleset: str | None = None) -> Game[Any]:
        """The game under that ruleset (None: the default one), or `GameError`."""
        if game_id not in self._defaults:
            raise GameError(f"unknown game {game_id!r}")
        key = (game_id, self._defaults[game_id] if ruleset is None else ruleset)
        if key not in self._games:
            raise GameError(f"unknown ruleset {ruleset!r} for game {game_id!r}")
        return self._games[key]

    def games(self) -> list[Game[Any]]:
        """Every registered game under every ruleset."""
        return list(self._games.values())

    def describe(self) -> list[dict[str, Any]]:
        """What a client needs to create a match, per game id, from its default ruleset."""
        described = []
        for game_id, ruleset in self._defaults.items():
            game = self._games[(game_id, ruleset)]
            options = game.check_options(game.min_seats, {})
            described.append(
                {
                    "id": game_id,
                    "name": game.name,
                    "ruleset": ruleset,
                    "rulesets": sorted(r for g, r in self._games if g == game_id),
                    "min_seats": game.min_seats,
                    "max_seats": game.max_seats,
                    "options": game.options_schema(),
                    "preferences": game.preferences_schema(),
                    "loadout": game.loadout_schema(),
                    "sample_loadout": game.sample_loadout(0, options),
                }
            )
        return described


REGISTRY = Registry()
REGISTRY.register(NecromancersGame(), default=True)
REGISTRY.register(FateDuelGame(), default=True)
REGISTRY.register(LoyaltyGame(), default=True)
REGISTRY.register(MedianokteGame(), default=True)


def get_game(game_id: str, ruleset: str | None = None) -> Game[Any]:
    """The game with that id under that ruleset (None: the default), or `GameError`."""
    return REGISTRY.get(game_id, ruleset)


def describe() -> list[dict[str, Any]]:
    """Per game id: its default and every ruleset, seats, options, loadout schema and sample."""
    return REGISTRY.describe()
