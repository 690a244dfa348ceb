"""The loyalty card game (seed 004): cards in cards.toml (`content`), the bot in `bot`, the
protocol and the best-of-3 match in `game`, and one game's rules, one job a module: `opening`
(setting up, who starts), `prompts` (what a seat may do), `actions` (what each action does),
`turn` (the phases), `stack` (response windows and adventures), `effects` (card effects),
`combat` (attacks and damage), `cards` (stats and moving cards) and `winning`."""

from service.games.loyalty.game import LoyaltyGame, LoyaltyGameLeg

__all__ = ["LoyaltyGame", "LoyaltyGameLeg"]
