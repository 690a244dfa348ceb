"""The loyalty card game (seed 004): cards in cards.toml (`content`), one game's rules in
`rules`, the bot in `bot`, the protocol and the best-of-3 match in `game`."""

from service.games.loyalty.game import LoyaltyGame, LoyaltyGameLeg

__all__ = ["LoyaltyGame", "LoyaltyGameLeg"]
