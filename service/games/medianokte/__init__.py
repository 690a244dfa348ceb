"""Medianokte: Exploración, duel mode (seed 000): card data in the TOML files (`content`),
rules in `rules`, protocol, loadouts and views in `game`, the bot in `bot`."""

from service.games.medianokte.game import MedianokteGame

__all__ = ["MedianokteGame"]
