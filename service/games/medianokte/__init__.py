"""Medianokte: Exploración, duel mode (seed 000): card data in the TOML files (`content`),
protocol, loadouts and views in `game`, the rules under it in `setup`, `activations`, `turn`,
`attacks`, `effects`, `damage`, `targets` and `state`, the bot in `bot`."""

from service.games.medianokte.game import MedianokteGame

__all__ = ["MedianokteGame"]
