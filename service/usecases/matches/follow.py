"""Following a match: pages of the events a seat may see, by long-poll or pushed.

Each event is redacted for the reader's seat (a spectator sees public facts only), so the
drawer of a card sees it and the others see that a card was drawn.
"""

import asyncio
from collections.abc import AsyncGenerator
from contextlib import suppress
from dataclasses import dataclass
from typing import Annotated
from uuid import UUID

import asyncpg
from pydantic import Field
from typing_extensions import TypedDict

from service.store import matches as store
from service.store.notify import Hub
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
    if await store.get(pool, match_id) is None:
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


async def follow(
    pool: asyncpg.Pool, hub: Hub, player_id: UUID, match_id: UUID, after: int
) -> AsyncGenerator[EventPage, None]:
    """Pages of new events as they come; ends once a finished match has nothing more to send."""
    with hub.subscribe(match_id) as signal:
        while True:
            signal.clear()
            page = await events_page(pool, player_id, match_id, after)
            after = page.last_seq
            if page.events:
                yield page
            if page.more:
                continue
            if page.over:
                return
            with suppress(TimeoutError):
                await asyncio.wait_for(signal.wait(), RECHECK_SECONDS)
