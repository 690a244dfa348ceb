"""Duelo de Nigromantes (seed 002): rules in `rules`, data in faces.toml, protocol in `game`."""

from service.games.necromancers.game import NecromancersGame

__all__ = ["NecromancersGame"]
