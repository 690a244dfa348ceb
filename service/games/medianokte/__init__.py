"""Medianokte: Exploración, duel mode (seed 000): card data in the TOML files (`content`),
the rules' entry points in `rules` (the rules themselves in `setup`, `activations`, `turn`,
`attacks`, `effects`, `damage`, `targets` and `state`), protocol, loadouts and views in
`game`, the bot in `bot`."""

from service.games.medianokte.game import MedianokteGame

__all__ = ["MedianokteGame"]
