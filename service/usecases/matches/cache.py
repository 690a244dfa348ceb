"""The active matches this process last wrote, as their next action would read them.

An action whose match is here skips its read: it decides on the kept row and seats, and its
writing statement applies only if the match is still at that version and sequence (store.save).
Whatever moved the match meanwhile (another instance, the sweeper, a resignation) makes that
write store nothing, and the action then reads the match as usual. The kept copy can only be
behind, never ahead, so a refusal decided on it is not given: the action reads and decides again.
"""

from collections import OrderedDict
from dataclasses import dataclass
from uuid import UUID

from service.store.matches import MatchRow, SeatRow

# Enough for every match a busy instance has in play; the least recently written go first.
CAPACITY = 4096


@dataclass(frozen=True)
class Cached:
    row: MatchRow
    seats: tuple[SeatRow, ...]


class MatchCache:
    def __init__(self, capacity: int = CAPACITY) -> None:
        self._capacity = capacity
        self._kept: OrderedDict[UUID, Cached] = OrderedDict()

    def __len__(self) -> int:
        return len(self._kept)

    def get(self, match_id: UUID) -> Cached | None:
        return self._kept.get(match_id)

    def keep(self, row: MatchRow, seats: tuple[SeatRow, ...]) -> None:
        """Keep the match as written; one that is no longer active has no next action."""
        if row.status != "active":
            self.drop(row.match_id)
            return
        self._kept[row.match_id] = Cached(row, seats)
        self._kept.move_to_end(row.match_id)
        if len(self._kept) > self._capacity:
            self._kept.popitem(last=False)

    def drop(self, match_id: UUID) -> None:
        self._kept.pop(match_id, None)
