"""A match's events as a seat receives them: a follower's own read, or the match's feed.

A follower (a socket, a long-poll) reads its first page on its own: it may be far behind, and
it must see every write committed before it asked. After that, one feed per match and process
reads each change once for every follower there: the events past what it holds, all of them
with their `visible_to`, once per notification. It keeps them until every follower has passed
them and gives each follower the events past its cursor redacted for its seat by the kernel
(`event_wire`, once per event and seat), so that N sockets on a match cost one read of each
change, not N. A follower behind what the feed holds reads on its own again.
"""

import asyncio
import bisect
import math
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from typing import Annotated, Protocol
from uuid import UUID

import asyncpg
from pydantic import Field
from typing_extensions import TypedDict

from service.store import match_events
from service.store.match_events import EventRow, EventsAfter
from service.store.notify import Hub
from service.usecases.errors import NotFound
from service.usecases.matches.progress import ACTIVE, WAITING, WireEvent, event_wire, events_wire

EVENT_PAGE = 500
# What a feed keeps for followers that lag behind the others; one further behind reads alone.
HELD_EVENTS = 4 * EVENT_PAGE


class EventBatch(TypedDict):
    events: list[WireEvent]
    last_seq: Annotated[int, Field(description="pass as `after` next time")]
    status: str
    version: int


@dataclass(frozen=True)
class EventPage:
    """Events past a cursor that the caller may see; pass `last_seq` as the next cursor."""

    events: list[WireEvent]
    last_seq: int
    status: str
    version: int
    more: bool

    @property
    def over(self) -> bool:
        return self.status not in (WAITING, ACTIVE)

    def wire(self) -> EventBatch:
        return {
            "events": self.events,
            "last_seq": self.last_seq,
            "status": self.status,
            "version": self.version,
        }


async def events_page(
    pool: asyncpg.Pool, player_id: UUID, match_id: UUID, after: int, limit: int = EVENT_PAGE
) -> EventPage:
    """A follower's own read: the events past `after` that its seat may see."""
    read = await match_events.events_for(pool, match_id, player_id, after, limit)
    if read is None:
        raise NotFound("no such match")
    more = len(read.events) == limit
    last = read.events[-1].seq if more else max(after, read.last_seq)
    return EventPage(events_wire(read.events, read.seat), last, read.status, read.version, more)


class Follower(Protocol):
    """Where a follower stands: every event up to `after` has reached it."""

    after: int


@dataclass
class _Held:
    """An event a feed holds, and how it showed to each seat that asked."""

    row: EventRow
    shown: dict[int | None, WireEvent | None] = field(default_factory=dict)

    def to(self, seat: int | None) -> WireEvent | None:
        if seat not in self.shown:
            self.shown[seat] = event_wire(self.row, seat)
        return self.shown[seat]


def _seq(held: _Held) -> int:
    return held.row.seq


def _retrieved(read: "asyncio.Future[None]") -> None:
    """A shared read's failure reaches the followers awaiting it; if they all left, it is
    dropped here rather than reported as never retrieved."""
    if not read.cancelled():
        read.exception()


class Feed:
    """One match's events as this process last read them, for all its followers here.

    It holds every event past `_base` up to `_known`, and the match's figures of its last read.
    """

    def __init__(self, pool: asyncpg.Pool, hub: Hub, match_id: UUID) -> None:
        self.pool = pool
        self.match_id = match_id
        self.followers: list[Follower] = []
        self._subscription = ExitStack()
        # Set by each notification of the match; cleared as a read starts.
        self._notified = self._subscription.enter_context(hub.subscribe(match_id))
        self._figures: EventsAfter | None = None
        self._base = 0
        self._known = 0
        self._held: list[_Held] = []
        self._reading: asyncio.Future[None] | None = None
        self._read_at = -math.inf

    def close(self) -> None:
        self._subscription.close()

    def held(self, player_id: UUID, after: int, max_age: float | None = None) -> EventPage | None:
        """The events past `after` that the player's seat may see, from what the feed holds,
        if that needs no read: nothing was notified since the last read, which is less than
        `max_age` seconds old, and `after` is not behind what the feed holds."""
        if self._behind(max_age):
            return None
        return self._held_page(player_id, after)

    async def page(
        self, player_id: UUID, after: int, *, own: bool = False, max_age: float | None = None
    ) -> EventPage:
        """The events past `after` that the player's seat may see. From what the feed holds,
        once it has read what was notified (and read again when its last read is `max_age`
        seconds old); from a read of the follower's own when `own`, or when `after` is behind
        what the feed holds."""
        if not own:
            await self._catch_up(after, max_age)
            page = self._held_page(player_id, after)
            if page is not None:
                return page
        return await events_page(self.pool, player_id, self.match_id, after)

    def _held_page(self, player_id: UUID, after: int) -> EventPage | None:
        if self._figures is None or after < self._base:
            return None
        return self._page(self._figures, player_id, after)

    def _behind(self, max_age: float | None) -> bool:
        """Whether the match may have events the feed has not read: a read under way may hold
        what a follower was woken for (its notification, cleared as the read started)."""
        figures = self._figures
        if figures is None or self._reading is not None:
            return True
        if self._notified.seq > self._known or self._known < figures.last_seq:
            return True
        return max_age is not None and asyncio.get_running_loop().time() - self._read_at >= max_age

    async def _catch_up(self, after: int, max_age: float | None) -> None:
        # Twice at most: a read under way may have started before the notification the follower
        # woke to, and one more read started after it covers it.
        for _ in range(2):
            if not self._behind(max_age):
                return
            if self._reading is None:
                self._reading = asyncio.ensure_future(self._read(after))
                self._reading.add_done_callback(_retrieved)
            await asyncio.shield(self._reading)

    async def _read(self, after: int) -> None:
        """Read what the feed lacks: past what it holds, or past `after` the first time."""
        self._read_at = asyncio.get_running_loop().time()
        self._notified.clear()
        start = after if self._figures is None else self._known
        try:
            read = await match_events.events_after(self.pool, self.match_id, start, EVENT_PAGE)
        except BaseException:
            self._notified.set()  # the next follower to ask reads again
            raise
        finally:
            self._reading = None
        if read is None:
            self._notified.set()
            raise NotFound("no such match")
        full = len(read.events) == EVENT_PAGE
        known = read.events[-1].seq if full else read.last_seq
        if self._figures is None:
            self._base = min(start, known)
        self._held += [_Held(row) for row in read.events]
        self._known = known
        self._figures = replace(read, events=[])
        self._drop_passed()

    def _drop_passed(self) -> None:
        """Forget what every follower has passed, and what lags more than HELD_EVENTS."""
        passed = min((f.after for f in self.followers), default=self._known)
        cut = bisect.bisect_right(self._held, min(passed, self._known), key=_seq)
        cut = max(cut, len(self._held) - HELD_EVENTS)
        if cut > 0:
            self._base = self._held[cut - 1].row.seq
            del self._held[:cut]

    def _page(self, figures: EventsAfter, player_id: UUID, after: int) -> EventPage:
        seat = figures.seat_of.get(player_id)
        events: list[WireEvent] = []
        for at in range(bisect.bisect_right(self._held, after, key=_seq), len(self._held)):
            held = self._held[at]
            shown = held.to(seat)
            if shown is None:
                continue
            events.append(shown)
            if len(events) == EVENT_PAGE:
                return EventPage(events, held.row.seq, figures.status, figures.version, True)
        more = self._known < figures.last_seq
        last = max(after, self._known if more else figures.last_seq)
        return EventPage(events, last, figures.status, figures.version, more)


class Feeds:
    """The feeds of the matches followed on this process, each while anyone follows it."""

    def __init__(self, pool: asyncpg.Pool, hub: Hub) -> None:
        self.pool = pool
        self.hub = hub
        self._feeds: dict[UUID, Feed] = {}

    @contextmanager
    def joined(self, match_id: UUID, follower: Follower) -> Iterator[Feed]:
        """The match's feed, with `follower` counted among those it keeps events for."""
        feed = self._feeds.get(match_id)
        if feed is None:
            feed = self._feeds[match_id] = Feed(self.pool, self.hub, match_id)
        feed.followers.append(follower)
        try:
            yield feed
        finally:
            feed.followers = [f for f in feed.followers if f is not follower]
            if not feed.followers:
                feed.close()
                del self._feeds[match_id]
