"""A match's feed on the real database: each follower gets from the one read what its own read
would have given its seat, page by page, and a follower behind what the feed holds reads alone."""

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from functools import partial
from typing import Any
from uuid import UUID

import asyncpg
import pytest

from service.config import Settings
from service.store import matches as store
from service.store import players
from service.store.match_events import EventRow
from service.store.matches import Changes, SeatRow
from service.store.notify import Hub, listen_forever
from service.usecases.matches import feed as feeds
from service.usecases.matches import follow
from service.usecases.matches.feed import EVENT_PAGE, EventPage, Feeds
from service.usecases.matches.follow import Cursor
from tests.usecases.matches_helpers import own_pool


@pytest.fixture
async def pool(settings: Settings) -> AsyncIterator[asyncpg.Pool]:
    async with own_pool(settings, 4) as pool:
        yield pool


def _event(seq: int) -> EventRow:
    """Public, one seat's secret, or a card drawn: seat 1 sees it, the others that it was."""
    kind = seq % 3
    if kind == 0:
        return EventRow(seq, seq, "public", {"n": seq}, None)
    if kind == 1:
        return EventRow(seq, seq, "secret_of_0", {"n": seq}, [0])
    drawn = {"$hidden": {"seats": [1], "value": f"card-{seq}", "shown": None}}
    return EventRow(seq, seq, "drawn", {"card": drawn}, None)


async def _append(pool: asyncpg.Pool, match_id: UUID, count: int) -> None:
    """`count` more events, as one write would store them (its NOTIFY included)."""
    row = await store.get(pool, match_id)
    assert row is not None
    events = [_event(seq) for seq in range(row.last_seq + 1, row.last_seq + count + 1)]
    changes = Changes(
        status="active",
        version=events[-1].seq,
        last_seq=events[-1].seq,
        state={},
        outcome=None,
        due_in_seconds=None,
        reset_due=False,
        prompts=[],
        actions=[],
        events=events,
    )
    async with pool.acquire() as conn, conn.transaction():
        assert await store.save(conn, row, changes)


async def _match(pool: asyncpg.Pool, events: int) -> tuple[list[UUID], UUID]:
    """A 2-seat match holding `events` events: its readers (the seats' players, a spectator)."""
    seated = [(await players.insert(pool, f"feed-{seat}")).player_id for seat in (0, 1)]
    spectator = (await players.insert(pool, "feed-spectator")).player_id
    match_id = await store.insert_match(
        pool,
        game="necromancers",
        ruleset="r",
        seed=1,
        seats=[SeatRow(seat, player, False) for seat, player in enumerate(seated)],
        options={},
        turn_seconds=None,
        created_by=seated[0],
        expires_in_seconds=60.0,
    )
    await _append(pool, match_id, events)
    return [*seated, spectator], match_id


@asynccontextmanager
async def _events_locked(pool: asyncpg.Pool) -> AsyncIterator[None]:
    """match_events locked against every read: what answers meanwhile read nothing of it."""
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute("LOCK TABLE match_events IN ACCESS EXCLUSIVE MODE")
        yield


async def _pages(ask: Callable[[int], Awaitable[EventPage]], after: int) -> list[EventPage]:
    """Every page from `after` on, each asked at the last one's `last_seq`."""
    pages = [await ask(after)]
    while pages[-1].more:
        pages.append(await ask(pages[-1].last_seq))
    return pages


def _flat(pages: list[EventPage]) -> tuple[list[Any], int, str, int]:
    last = pages[-1]
    return [e for page in pages for e in page.events], last.last_seq, last.status, last.version


AFTERS = (0, 7, EVENT_PAGE - 1, EVENT_PAGE, 1199, 1200)


async def test_every_reader_gets_from_the_feed_what_its_own_read_gives_its_seat(
    pool: asyncpg.Pool,
) -> None:
    """Pages past every cursor, for each seat and a spectator, from a feed that read them
    once: the same as each reader's own read, and answered while match_events is locked."""
    readers, match_id = await _match(pool, 1200)
    with Feeds(pool, Hub()).joined(match_id, Cursor(0)) as feed:
        shared = {}
        for reader in readers:
            for after in AFTERS:
                shared[reader, after] = await _pages(partial(feed.page, reader), after)
        async with _events_locked(pool):
            for (reader, after), pages in shared.items():
                again = await asyncio.wait_for(_pages(partial(feed.page, reader), after), 2)
                assert again == pages
    for (reader, after), pages in shared.items():
        own = await _pages(partial(feeds.events_page, pool, reader, match_id), after)
        assert _flat(pages) == _flat(own), (reader, after)
    seat_1, spectator = shared[readers[1], 0][0].events, shared[readers[2], 0][0].events
    assert {e["data"]["card"] for e in seat_1 if e["kind"] == "drawn"} != {None}
    assert {e["data"]["card"] for e in spectator if e["kind"] == "drawn"} == {None}
    assert "secret_of_0" not in {e["kind"] for e in spectator}


async def test_a_follower_behind_what_the_feed_holds_reads_on_its_own(pool: asyncpg.Pool) -> None:
    """The feed first read past 1000, for a follower there: a page past 1100 comes from what
    it holds while match_events is locked, one past 10 waits for a read of its own."""
    readers, match_id = await _match(pool, 1200)
    with Feeds(pool, Hub()).joined(match_id, Cursor(1000)) as feed:
        await feed.page(readers[0], 1000)
        async with _events_locked(pool):
            held = await asyncio.wait_for(feed.page(readers[0], 1100), 2)
            behind = asyncio.ensure_future(feed.page(readers[0], 10))
            assert not (await asyncio.wait({behind}, timeout=0.5))[0]
        assert await behind == await feeds.events_page(pool, readers[0], match_id, 10)
    assert held == await feeds.events_page(pool, readers[0], match_id, 1100)


async def test_notified_events_reach_every_follower_as_their_own_reads_would(
    pool: asyncpg.Pool, settings: Settings
) -> None:
    """Followers of each seat and a spectator on one feed, woken together by the real LISTEN
    connection, each get the events past their cursor."""
    assert settings.database_url is not None
    readers, match_id = await _match(pool, 10)
    hub = Hub()
    listening = asyncio.create_task(listen_forever(settings.database_url, hub, 5.0))
    shared = Feeds(pool, hub)
    cursors = [Cursor(10) for _ in readers]
    followers = [
        follow.follow(shared, reader, match_id, cursor)
        for reader, cursor in zip(readers, cursors, strict=True)
    ]
    try:
        for follower, cursor in zip(followers, cursors, strict=True):
            cursor.advance((await anext(follower)).last_seq)
        await _append(pool, match_id, 5)
        # All woken at once: those that come while another's read is under way wait for it.
        pages = await asyncio.wait_for(asyncio.gather(*(anext(f) for f in followers)), 5)
        for reader, page in zip(readers, pages, strict=True):
            assert page == await feeds.events_page(pool, reader, match_id, 10)
            assert page.events and page.last_seq == 15
    finally:
        for follower in followers:
            await follower.aclose()
        listening.cancel()
        with suppress(asyncio.CancelledError):
            await listening


async def test_a_follower_that_asks_while_a_read_is_under_way_waits_for_that_read(
    pool: asyncpg.Pool,
) -> None:
    """One follower's notification starts the feed's read, which match_events being locked
    holds up; another follower, woken by the same notification but held by its turn (its own
    action being answered), asks meanwhile: it gets the events once that read is done, not a
    page from before it."""
    readers, match_id = await _match(pool, 10)
    hub = Hub()
    shared, turn = Feeds(pool, hub), asyncio.Lock()
    first, late = Cursor(10), Cursor(10)
    reading = follow.follow(shared, readers[0], match_id, first)
    waiting = follow.follow(shared, readers[1], match_id, late, turn)
    try:
        for follower in (reading, waiting):
            assert (await anext(follower)).last_seq == 10
        # A first change, read by the feed for both.
        await _append(pool, match_id, 2)
        hub.publish(f"{match_id}:12")
        for follower, cursor in ((reading, first), (waiting, late)):
            cursor.advance((await asyncio.wait_for(anext(follower), 5)).last_seq)
        await _append(pool, match_id, 3)
        async with _events_locked(pool):
            async with turn:
                late_page = asyncio.ensure_future(anext(waiting))
                first_page = asyncio.ensure_future(anext(reading))
                hub.publish(f"{match_id}:15")
                await asyncio.sleep(0.2)  # the read has started and waits on the lock
            assert not (await asyncio.wait({late_page}, timeout=0.3))[0]
        page = await asyncio.wait_for(late_page, 5)
        assert page == await feeds.events_page(pool, readers[1], match_id, 12)
        assert page.events and (await first_page).last_seq == 15
    finally:
        await reading.aclose()
        await waiting.aclose()
