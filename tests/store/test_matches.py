"""The match store on the real database: per-seat event visibility, one-snapshot reads, the seed."""

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from uuid import UUID, uuid4

import asyncpg
import pytest

from service.config import Settings
from service.games.kernel.rng import MASK64
from service.store import match_events, players
from service.store import matches as store
from service.store.match_events import EventRow
from service.store.matches import ActionRow, Changes, SeatRow
from tests.conftest import migrated


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


async def _match_against_a_bot(conn: asyncpg.Connection, owner: UUID, seed: int) -> UUID:
    """A 2-seat match: `owner` in seat 0, a bot in seat 1."""
    return await store.insert_match(
        conn,
        game="necromancers",
        ruleset="r",
        seed=seed,
        seats=[SeatRow(0, owner, False), SeatRow(1, None, True)],
        options={},
        turn_seconds=None,
        created_by=owner,
        expires_in_seconds=60.0,
    )


async def _read(conn: asyncpg.Connection, match_id: UUID) -> store.MatchRow:
    row = await store.get(conn, match_id)
    assert row is not None
    return row


@pytest.fixture
async def conn(settings: Settings) -> AsyncIterator[asyncpg.Connection]:
    """A connection inside a transaction that is rolled back: the test leaves nothing behind."""
    assert settings.database_url is not None
    pool = await asyncpg.create_pool(settings.database_url, min_size=1, max_size=1)
    await migrated(pool)
    async with pool.acquire() as connection:
        transaction = connection.transaction()
        await transaction.start()
        yield connection
        await transaction.rollback()
    await pool.close()


async def test_events_for_gives_each_seat_only_what_it_may_see(conn: asyncpg.Connection) -> None:
    owner = await players.insert(conn, "store-test")
    other = await players.insert(conn, "store-test-other")
    onlooker = await players.insert(conn, "store-test-onlooker")
    match_id = await store.insert_match(
        conn,
        game="necromancers",
        ruleset="r",
        seed=MASK64,
        seats=[SeatRow(0, owner.player_id, False), SeatRow(1, other.player_id, False)],
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
    assert await store.save(conn, await _read(conn, match_id), _changes(events, version=2))

    async def read(player: UUID, after: int = 0, limit: int = 10) -> match_events.EventsRead:
        found = await match_events.events_for(conn, match_id, player, after, limit)
        assert found is not None
        return found

    async def kinds(player: UUID, after: int = 0, limit: int = 10) -> list[str]:
        return [e.kind for e in (await read(player, after, limit)).events]

    assert await kinds(onlooker.player_id) == ["public"]
    assert await kinds(owner.player_id) == ["public", "secret_of_0", "shared"]
    assert await kinds(other.player_id) == ["public", "secret_of_1", "shared"]
    assert await kinds(other.player_id, after=1, limit=1) == ["secret_of_1"]
    page = await read(owner.player_id, after=4)
    assert (page.events, page.seat, page.version, page.last_seq) == ([], 0, 2, 4)
    assert (await read(onlooker.player_id)).seat is None
    assert await match_events.events_for(conn, uuid4(), owner.player_id, 0, 10) is None
    assert [e.visible_to for e in await match_events.all_events(conn, match_id)] == [
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
    match_id = await _match_against_a_bot(conn, owner.player_id, seed=1)
    first = _changes([EventRow(1, 1, "first", {}, None)], version=1)
    first = dataclasses.replace(first, actions=[ActionRow(1, 0, {"type": "a"}, "player")])
    read = await _read(conn, match_id)
    assert await store.save(conn, read, first)
    # A second write computed from version 0 lost the race: none of it is stored.
    late = dataclasses.replace(first, events=[EventRow(2, 1, "late", {}, None)])
    assert not await store.save(conn, read, late)
    assert [e.kind for e in await match_events.all_events(conn, match_id)] == ["first"]
    assert [a.version for a in await store.actions(conn, match_id)] == [1]
    row = await store.get(conn, match_id)
    assert row is not None and row.version == 1 and row.last_seq == 1


async def test_save_writes_nothing_when_only_the_events_moved_since_the_read(
    conn: asyncpg.Connection,
) -> None:
    """An expiry adds an event without an action: a write read before it must not land."""
    owner = await players.insert(conn, "store-test-sequence")
    match_id = await _match_against_a_bot(conn, owner.player_id, seed=2)
    read = await _read(conn, match_id)
    assert await store.save(conn, read, _changes([EventRow(1, 0, "match_expired", {}, None)]))
    late = _changes([EventRow(1, 1, "late", {}, None)], version=1)
    assert not await store.save(conn, read, late)
    row = await _read(conn, match_id)
    assert (row.version, row.last_seq) == (0, 1)
    assert [e.kind for e in await match_events.all_events(conn, match_id)] == ["match_expired"]


async def test_after_save_is_what_the_next_read_gives(conn: asyncpg.Connection) -> None:
    owner = await players.insert(conn, "store-test-after")
    match_id = await _match_against_a_bot(conn, owner.player_id, seed=4)
    read = await _read(conn, match_id)
    # Integer keys and a big integer: the JSON text decides what a read gets back.
    changes = dataclasses.replace(
        _changes([EventRow(1, 1, "moved", {}, None)], version=1),
        status="active",
        state={"rng": 2**64 - 1, "by_seat": {0: "a"}},
        outcome={"winner": 1},
        prompts=[(1, 1, "fingerprint")],
    )
    seats = await store.seats(conn, match_id)
    assert await store.save(conn, read, changes)
    row, after = store.after_save(read, seats, changes)
    stored = await _read(conn, match_id)
    assert row == dataclasses.replace(stored, due_at=None)
    assert row.state == {"rng": 2**64 - 1, "by_seat": {"0": "a"}}
    assert list(after) == await store.seats(conn, match_id)


async def test_a_follower_never_reads_events_with_the_version_from_before_them(
    settings: Settings,
) -> None:
    """Events and the match's version come from one snapshot, however the writes interleave."""
    assert settings.database_url is not None
    async with asyncpg.create_pool(settings.database_url, min_size=2, max_size=2) as pool:
        await migrated(pool)
        writer = await pool.acquire()
        owner = await players.insert(writer, "store-test-follower")
        match_id = await _match_against_a_bot(writer, owner.player_id, seed=3)
        writes = 300
        done = asyncio.Event()

        async def write() -> None:
            read = await _read(writer, match_id)
            for version in range(1, writes + 1):
                moved = _changes([EventRow(version, version, "moved", {}, None)], version)
                assert await store.save(writer, read, moved)
                read = dataclasses.replace(read, version=version, last_seq=version)
            done.set()

        async def follow() -> list[match_events.EventsRead]:
            pages = []
            while not done.is_set():
                page = await match_events.events_for(pool, match_id, owner.player_id, 0, writes)
                assert page is not None
                pages.append(page)
            return pages

        _, pages = await asyncio.gather(write(), follow())
        await pool.release(writer)
    assert len(pages) > 10
    for page in pages:
        assert [e.version for e in page.events] == list(range(1, page.version + 1))
        assert page.last_seq == page.version
