"""The catalogue of a turn-based game under a ruleset, as clients fetch it
(docs/architecture.md#catalogues). Each game builds its own when it is loaded, at start-up."""

from typing import Any

from typing_extensions import TypedDict

from service.games.kernel.catalogue import catalogue_schema
from service.games.kernel.protocol import Game
from service.games.registry import REGISTRY


class GameCatalogue(TypedDict):
    game: str
    ruleset: str
    rulesets: list[str]
    """every ruleset of the game this server knows"""
    entries: list[dict[str, Any]]
    """every card, model, hazard, face or die a view or prompt names by catalogue id"""
    rules: dict[str, Any]
    """the game-wide numbers: dice, starting life, hand sizes, rounds…"""


def _rulesets(game_id: str) -> list[str]:
    return sorted(game.ruleset for game in REGISTRY.games() if game.id == game_id)


def _answer(game: Game[Any]) -> GameCatalogue:
    body = game.catalogue()
    return {
        "game": game.id,
        "ruleset": game.ruleset,
        "rulesets": _rulesets(game.id),
        "entries": body["entries"],
        "rules": body["rules"],
    }


def game_catalogue(game_id: str, ruleset: str | None) -> GameCatalogue:
    """The catalogue of `game_id` under `ruleset` (None: the default), or `GameError`."""
    return _answer(REGISTRY.get(game_id, ruleset))


def game_ids() -> list[str]:
    """The turn-based games' ids."""
    return sorted({game.id for game in REGISTRY.games()})


def catalogue_schemas() -> dict[str, Any]:
    """Each game's catalogue schema, as components `Catalogue_<game>` of the OpenAPI document
    (from its default ruleset)."""
    return {
        f"Catalogue_{game_id}": catalogue_schema(game_id, REGISTRY.get(game_id).catalogue())
        for game_id in game_ids()
    }
