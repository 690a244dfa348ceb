"""The match store on the real database: per-seat event visibility, the seed's full range."""

import dataclasses
from collections.abc import AsyncIterator

import asyncpg
import pytest

from service.config import Settings
from service.games.kernel.rng import MASK64
from service.store import matches as store
from service.store import players
from service.store.database import apply_schema
from service.store.matches import ActionRow, Changes, EventRow, SeatRow


def _changes(events: list[EventRow], version: int = 0) -> Changes:
    return Changes(
        status="waiting",
        version=version,
        last_seq=events[-1].seq if events else 0,
        state={},
        outcome=None,
        due_in_seconds=None,
        reset_due=False,
        prompts=[],
        actions=[],
        events=events,
    )


@pytest.fixture
async def conn(settings: Settings) -> AsyncIterator[asyncpg.Connection]:
    """A connection inside a transaction that is rolled back: the test leaves nothing behind."""
    assert settings.database_url is not None
    pool = await asyncpg.create_pool(settings.database_url, min_size=1, max_size=1)
    await apply_schema(pool)
    async with pool.acquire() as connection:
        transaction = connection.transaction()
        await transaction.start()
        yield connection
        await transaction.rollback()
    await pool.close()


async def test_events_after_gives_each_seat_only_what_it_may_see(conn: asyncpg.Connection) -> None:
    owner = await players.insert(conn, "store-test")
    match_id = await store.insert_match(
        conn,
        game="necromancers",
        ruleset="r",
        seed=MASK64,
        seats=[SeatRow(0, owner.player_id, False), SeatRow(1, None, True)],
        options={},
        turn_seconds=None,
        created_by=owner.player_id,
        expires_in_seconds=60.0,
    )
    events = [
        EventRow(1, 0, "public", {}, None),
        EventRow(2, 1, "secret_of_0", {"card": 7}, [0]),
        EventRow(3, 1, "secret_of_1", {"card": 9}, [1]),
        EventRow(4, 2, "shared", {}, [0, 1]),
    ]
    assert await store.save(conn, match_id, 0, _changes(events))

    async def kinds(seat: int | None, after: int = 0, limit: int = 10) -> list[str]:
        return [e.kind for e in await store.events_after(conn, match_id, after, seat, limit)]

    assert await kinds(None) == ["public"]
    assert await kinds(0) == ["public", "secret_of_0", "shared"]
    assert await kinds(1) == ["public", "secret_of_1", "shared"]
    assert await kinds(1, after=1, limit=1) == ["secret_of_1"]
    assert [e.visible_to for e in await store.all_events(conn, match_id)] == [
        None,
        [0],
        [1],
        [0, 1],
    ]
    row = await store.get(conn, match_id)
    assert row is not None
    assert row.seed == MASK64 and row.state == {}
    # A waiting match has no state until it starts, and is due to expire if it never fills.
    assert row.status == "waiting" and row.due_at is not None


async def test_save_writes_nothing_when_the_match_moved_since_it_was_read(
    conn: asyncpg.Connection,
) -> None:
    owner = await players.insert(conn, "store-test-moved")
    match_id = await store.insert_match(
        conn,
        game="necromancers",
        ruleset="r",
        seed=1,
        seats=[SeatRow(0, owner.player_id, False), SeatRow(1, None, True)],
        options={},
        turn_seconds=None,
        created_by=owner.player_id,
        expires_in_seconds=60.0,
    )
    first = _changes([EventRow(1, 1, "first", {}, None)], version=1)
    first = dataclasses.replace(first, actions=[ActionRow(1, 0, {"type": "a"}, "player")])
    assert await store.save(conn, match_id, 0, first)
    # A second write computed from version 0 lost the race: none of it is stored.
    late = dataclasses.replace(first, events=[EventRow(2, 1, "late", {}, None)])
    assert not await store.save(conn, match_id, 0, late)
    assert [e.kind for e in await store.all_events(conn, match_id)] == ["first"]
    assert [a.version for a in await store.actions(conn, match_id)] == [1]
    row = await store.get(conn, match_id)
    assert row is not None and row.version == 1 and row.last_seq == 1
