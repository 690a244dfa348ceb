"""A follower's cursor: what pushes and an acting socket's answers have delivered; and a
follower stopped while it reads."""

import asyncio
import random
from collections.abc import AsyncIterator
from contextlib import suppress

import asyncpg
import pytest

from service.config import Settings
from service.store.notify import Hub
from service.usecases.matches import follow, play
from service.usecases.matches.feed import EventPage, Feeds
from service.usecases.matches.follow import Cursor
from service.usecases.matches.progress import WireEvent
from tests.usecases.matches_helpers import duel_against_bot, own_pool


def _page(*seqs: int) -> EventPage:
    events: list[WireEvent] = [{"seq": s, "version": 1, "kind": "k", "data": {}} for s in seqs]
    return EventPage(events, seqs[-1], "active", 1, False)


def test_a_page_read_before_an_answer_sends_only_what_the_answer_did_not_deliver() -> None:
    cursor = Cursor(after=5)
    page = _page(6, 7, 8)  # read while the socket's action was in flight
    cursor.answered(5, 8, "active")  # its answer held 6..8
    assert cursor.after == 8
    assert cursor.fresh(page) == []


def test_an_answer_past_a_gap_counts_once_the_gap_is_pushed() -> None:
    cursor = Cursor(after=3)
    cursor.answered(5, 9, "active")  # events 4 and 5 (another seat's) not pushed yet
    assert cursor.after == 3
    page = _page(4, 5, 6, 7, 8, 9)
    assert [e["seq"] for e in cursor.fresh(page)] == [4, 5, 6, 7, 8, 9]
    cursor.advance(5)  # had the push held 4 and 5 only, the answer fills the rest
    assert cursor.after == 9


def test_answers_in_a_row_behind_a_gap_all_count_once_it_is_filled() -> None:
    cursor = Cursor(after=1)
    cursor.answered(4, 6, "active")
    cursor.answered(6, 8, "active")
    assert cursor.after == 1
    cursor.advance(4)
    assert cursor.after == 8


def test_once_an_answer_says_the_match_is_over_the_cursor_stays_told() -> None:
    cursor = Cursor(after=0)
    cursor.answered(0, 3, "finished")
    assert cursor.over
    cursor.answered(3, 3, "active")
    assert cursor.over


@pytest.fixture
async def one_connection(settings: Settings) -> AsyncIterator[asyncpg.Pool]:
    """A pool of one connection: whatever follows a stopped follower gets its connection."""
    async with own_pool(settings, 1) as pool:
        yield pool


async def test_a_follower_stopped_during_its_read_leaves_its_connection_fit_for_the_next(
    one_connection: asyncpg.Pool,
) -> None:
    pool = one_connection
    player, match_id = await duel_against_bot(pool, "follower")
    hub, chance = Hub(), random.Random(7)
    for _ in range(300):
        # On a new connection the follower's statement is prepared again, and the stop lands
        # anywhere in the read: before, during or after the statement's preparation.
        await pool.expire_connections()
        await pool.execute("SELECT 1")
        pages = follow.follow(Feeds(pool, hub), player, match_id, Cursor(0))
        reading = asyncio.ensure_future(anext(pages))
        await asyncio.sleep(chance.uniform(0, 0.0015))
        reading.cancel()
        with suppress(asyncio.CancelledError):
            await reading
        await pages.aclose()
        # A repeatable-read transaction fails unless it starts the connection's transaction.
        seen = await play.read(pool, player, match_id)
        assert seen["match_id"] == str(match_id)
