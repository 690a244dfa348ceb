"""Following a match: pages of the events a seat may see, by long-poll or pushed.

Each event is redacted for the reader's seat (a spectator sees public facts only), so the
drawer of a card sees it and the others see that a card was drawn.
"""

import asyncio
from collections.abc import AsyncGenerator
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Annotated
from uuid import UUID

import asyncpg
from pydantic import Field
from typing_extensions import TypedDict

from service.store import matches as store
from service.store.notify import Hub, Waiter
from service.usecases.errors import NotFound
from service.usecases.matches.progress import ACTIVE, WAITING, WireEvent, events_wire

EVENT_PAGE = 500
# A follower re-reads this often even without a notification, in case one was lost.
RECHECK_SECONDS = 15.0


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


async def ensure_exists(pool: asyncpg.Pool, match_id: UUID) -> None:
    if not await store.exists(pool, match_id):
        raise NotFound("no such match")


async def events_page(
    pool: asyncpg.Pool, player_id: UUID, match_id: UUID, after: int, limit: int = EVENT_PAGE
) -> EventPage:
    read = await store.events_for(pool, match_id, player_id, after, limit)
    if read is None:
        raise NotFound("no such match")
    more = len(read.events) == limit
    last = read.events[-1].seq if more else max(after, read.last_seq)
    return EventPage(events_wire(read.events, read.seat), last, read.status, read.version, more)


async def wait_events(
    pool: asyncpg.Pool, hub: Hub, player_id: UUID, match_id: UUID, after: int, wait_s: float
) -> EventPage:
    """Long-poll: the events past `after`, waiting up to `wait_s` for some to arrive."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait_s
    with hub.subscribe(match_id) as signal:
        while True:
            signal.clear()
            page = await events_page(pool, player_id, match_id, after)
            remaining = deadline - loop.time()
            if page.events or page.over or remaining <= 0:
                return page
            with suppress(TimeoutError):
                await asyncio.wait_for(signal.wait(), remaining)


@dataclass
class Cursor:
    """Where a follower stands: every event it may see up to `after` has reached it.

    Events reach it in pages, and on a socket that also acts, in the answers to its actions;
    an answer that holds events past a gap (a push not yet sent) counts once the gap is filled.
    `over` once an answer has told it the match is over.
    """

    after: int
    over: bool = False
    _answered: list[tuple[int, int]] = field(default_factory=list)

    def fresh(self, page: EventPage) -> list[WireEvent]:
        """The page's events past the cursor: some may have reached it since the page was read."""
        return [event for event in page.events if event["seq"] > self.after]

    def advance(self, last_seq: int) -> None:
        """Everything up to `last_seq` has been delivered."""
        self.after = max(self.after, last_seq)
        for since, last in sorted(self._answered):
            if since <= self.after:
                self.after = max(self.after, last)
        self._answered = [(since, last) for since, last in self._answered if last > self.after]

    def answered(self, since: int, last_seq: int, status: str) -> None:
        """An action's answer delivered every event past `since` up to `last_seq`."""
        self._answered.append((since, last_seq))
        self.advance(self.after)
        self.over = self.over or status not in (WAITING, ACTIVE)


async def follow(
    pool: asyncpg.Pool,
    hub: Hub,
    player_id: UUID,
    match_id: UUID,
    cursor: Cursor,
    turn: asyncio.Lock | None = None,
) -> AsyncGenerator[EventPage, None]:
    """Pages past `cursor` as events come, which the caller delivers and advances the cursor
    past; ends once a finished match has nothing more to send.

    A notification of events the cursor has already passed (those of the follower's own action)
    is not read. With `turn`, the lock under which the follower's actions are answered, that is
    decided once the action in flight has been answered, since its answer may hold them.
    """
    turn = turn or asyncio.Lock()
    with hub.subscribe(match_id) as waiter:
        due = True  # the first page, and each recheck, is read whatever was notified
        while True:
            async with turn:
                news = due or waiter.seq > cursor.after or cursor.over
                waiter.clear()
                # A follower is stopped by cancelling it, but its read runs to the end:
                # asyncpg, cancelled just after preparing a statement, gives the connection
                # back to the pool inside an unfinished transaction.
                read = events_page(pool, player_id, match_id, cursor.after) if news else None
                page = None if read is None else await asyncio.shield(read)
            if page is not None:
                yield page
                if page.more:
                    due = True
                    continue
                if page.over:
                    return
            due = await _recheck_due(waiter)


async def _recheck_due(waiter: Waiter) -> bool:
    """Wait for a notification: False when one came, True when the recheck is due instead."""
    try:
        await asyncio.wait_for(waiter.wait(), RECHECK_SECONDS)
    except TimeoutError:
        return True
    return False
