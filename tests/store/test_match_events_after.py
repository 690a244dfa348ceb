"""The feed's read on the real database: every event past a cursor, unredacted, with the match's
figures and who holds which seat, from one statement."""

from collections.abc import AsyncIterator
from uuid import uuid4

import asyncpg
import pytest

from service.config import Settings
from service.store import match_events, players
from service.store import matches as store
from service.store.match_events import EventRow
from service.store.matches import Changes, SeatRow
from tests.conftest import migrated


@pytest.fixture
async def conn(settings: Settings) -> AsyncIterator[asyncpg.Connection]:
    """A connection inside a transaction that is rolled back: the test leaves nothing behind."""
    assert settings.database_url is not None
    async with asyncpg.create_pool(settings.database_url, min_size=1, max_size=1) as pool:
        await migrated(pool)
        async with pool.acquire() as connection:
            transaction = connection.transaction()
            await transaction.start()
            yield connection
            await transaction.rollback()


async def test_events_after_reads_every_event_with_its_routing_and_the_seats_held(
    conn: asyncpg.Connection,
) -> None:
    owner = await players.insert(conn, "feed-owner")
    other = await players.insert(conn, "feed-other")
    seats = [SeatRow(0, other.player_id, False), SeatRow(1, owner.player_id, False)]
    seats += [SeatRow(2, None, False), SeatRow(3, None, True)]
    match_id = await store.insert_match(
        conn,
        game="necromancers",
        ruleset="r",
        seed=1,
        seats=seats,
        options={},
        turn_seconds=None,
        created_by=owner.player_id,
        expires_in_seconds=60.0,
    )
    events = [
        EventRow(1, 0, "public", {}, None),
        EventRow(2, 1, "secret_of_1", {"card": 7}, [1]),
        EventRow(3, 2, "shared", {}, [0, 3]),
    ]
    row = await store.get(conn, match_id)
    assert row is not None
    changes = Changes(
        status="active",
        version=2,
        last_seq=3,
        state={},
        outcome=None,
        due_in_seconds=None,
        reset_due=False,
        prompts=[],
        actions=[],
        events=events,
    )
    assert await store.save(conn, row, changes)

    read = await match_events.events_after(conn, match_id, 0, 10)
    assert read is not None
    assert read.events == events
    assert (read.status, read.version, read.last_seq) == ("active", 2, 3)
    assert read.seat_of == {other.player_id: 0, owner.player_id: 1}

    limited = await match_events.events_after(conn, match_id, 1, 1)
    assert limited is not None and [e.seq for e in limited.events] == [2]
    past = await match_events.events_after(conn, match_id, 3, 10)
    assert past is not None and (past.events, past.last_seq) == ([], 3)
    assert await match_events.events_after(conn, uuid4(), 0, 10) is None
