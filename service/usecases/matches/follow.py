"""Following a match: pages of the events a seat may see, by long-poll or pushed.

Each event is redacted for the reader's seat (a spectator sees public facts only), so the
drawer of a card sees it and the others see that a card was drawn. A follower's first page is
its own read; the pages after it come from the match's feed (feed.py), which reads each change
once for all the followers of this process.
"""

import asyncio
from collections.abc import AsyncGenerator
from contextlib import suppress
from dataclasses import dataclass, field
from uuid import UUID

import asyncpg

from service.store import matches as store
from service.store.notify import Waiter
from service.usecases.errors import NotFound
from service.usecases.matches.feed import EventPage, Feeds
from service.usecases.matches.progress import ACTIVE, WAITING, WireEvent

# A follower asks again this often even without a notification, in case one was lost; the feed
# reads again if it has not read for as long.
RECHECK_SECONDS = 15.0


async def seat_of(pool: asyncpg.Pool, match_id: UUID, player_id: UUID) -> int | None:
    """The player's seat in the match, None for a spectator; NotFound if there is no match."""
    seats = await store.seats(pool, match_id)
    if not seats:
        raise NotFound("no such match")
    return next((s.seat for s in seats if s.player_id == player_id), None)


async def wait_events(
    feeds: Feeds, player_id: UUID, match_id: UUID, after: int, wait_s: float
) -> EventPage:
    """Long-poll: the events past `after`, waiting up to `wait_s` for some to arrive."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait_s
    cursor = Cursor(after)
    with feeds.joined(match_id, cursor) as feed, feeds.hub.subscribe(match_id) as signal:
        own = True
        while True:
            signal.clear()
            page = await feed.page(player_id, cursor.after, own=own)
            own = False
            remaining = deadline - loop.time()
            if page.events or page.over or remaining <= 0:
                return page
            cursor.advance(page.last_seq)
            if page.more:
                continue  # a page of events this seat may not see: the next one
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
    feeds: Feeds,
    player_id: UUID,
    match_id: UUID,
    cursor: Cursor,
    turn: asyncio.Lock | None = None,
) -> AsyncGenerator[EventPage, None]:
    """Pages past `cursor` as events come, which the caller delivers and advances the cursor
    past; ends once a finished match has nothing more to send.

    A notification of events the cursor has already passed (those of the follower's own action)
    is not asked for. With `turn`, the lock under which the follower's actions are answered,
    that is decided once the action in flight has been answered, since its answer may hold them.
    """
    turn = turn or asyncio.Lock()
    with feeds.joined(match_id, cursor) as feed, feeds.hub.subscribe(match_id) as waiter:
        first, due, recheck = True, True, False
        while True:
            async with turn:
                news = due or waiter.seq > cursor.after or cursor.over
                waiter.clear()
                # A follower is stopped by cancelling it, but its read runs to the end:
                # asyncpg, cancelled just after preparing a statement, gives the connection
                # back to the pool inside an unfinished transaction.
                page = None
                if news:
                    max_age = RECHECK_SECONDS if recheck else None
                    if not first:
                        page = feed.held(player_id, cursor.after, max_age)
                    if page is None:
                        asked = feed.page(player_id, cursor.after, own=first, max_age=max_age)
                        page = await asyncio.shield(asked)
            first = False
            if page is not None:
                yield page
                if page.more:
                    due, recheck = True, False
                    continue
                if page.over:
                    return
            due = recheck = await _recheck_due(waiter)


async def _recheck_due(waiter: Waiter) -> bool:
    """Wait for a notification: False when one came, True when the recheck is due instead."""
    try:
        async with asyncio.timeout(RECHECK_SECONDS):
            await waiter.wait()
    except TimeoutError:
        return True
    return False
