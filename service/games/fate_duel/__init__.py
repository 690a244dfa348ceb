"""Fate duels (seed 003): content in content.toml, cards and decks in `cards`, the five steps
in `duel`, the crew game around them in `rules`, the bot in `bot`, the protocol in `game`."""

from service.games.fate_duel.game import FateDuelGame

__all__ = ["FateDuelGame"]
