"""What a client knows of a game's cards: the catalogue it fetched, by id.

A table renderer names every card through here, so a card the view names and the catalogue
lacks fails the test that draws it.
"""

from collections.abc import Mapping
from typing import Any


class Names:
    """A game's catalogue (`GET /v1/content/{game}`), looked up by catalogue id."""

    def __init__(self, catalogue: Mapping[str, Any]) -> None:
        self.entries = {entry["id"]: entry for entry in catalogue["entries"]}
        self.rules = catalogue["rules"]

    def entry(self, card_id: str) -> Mapping[str, Any]:
        assert card_id in self.entries, f"{card_id!r} is not in the catalogue"
        return self.entries[card_id]

    def of(self, card_id: str) -> str:
        """The display name of the catalogue entry `card_id`."""
        return str(self.entry(card_id)["name"])
