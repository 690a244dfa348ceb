"""What one player may make the server keep and do, and how long it keeps it, through real HTTP on
the real database: bots alone only for an operator, caps on the matches a player holds, the
lobby's pages, and the sweeps of old idempotency keys, old events and old expired matches."""

import asyncio
import random
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import asyncpg
import pytest

from service.store import idempotency, match_sweeps
from tests.api.matches_helpers import (
    all_events,
    create,
    finished_matches_rebuild,  # noqa: F401 (autouse)
    new_players,
    operator_match,
    play_out,
    read,
    start_match,
    walk_list,
)
from tests.conftest import migrated, running_service
from tests.http import Api

SWEEP = 0.05


async def eventually(check: Callable[[], Awaitable[bool]], seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not await check():
        assert time.monotonic() < deadline, "never happened"
        await asyncio.sleep(SWEEP)


@pytest.fixture
async def database(fresh_database_url: str) -> AsyncIterator[asyncpg.Pool]:
    pool = await asyncpg.create_pool(fresh_database_url, min_size=1, max_size=2)
    await migrated(pool)
    yield pool
    await pool.close()


async def test_a_player_may_not_make_a_match_of_bots_alone_an_operator_may(api: Api) -> None:
    """Bots alone were the server's work from start to end for nobody (a third of a second of
    CPU and hundreds of KB of events each), and any player could order them by the dozen."""
    (token,) = await new_players(api, 1)
    refused = await create(api, token, seats=4, bots=[0, 1, 2, 3])
    assert (refused.status, refused.error_code) == (422, "bots_only"), refused.body
    assert "operator" in refused.body["error"]["message"]
    assert (await operator_match(api, seats=2, bots=[0, 1])).status == 201
    body = {"game": "necromancers", "seats": 2, "bots": [0, 1]}
    assert (await api.post("/v1/ops/matches", body)).status == 401
    wrong = await api.post("/v1/ops/matches", body, headers={"X-Ops-Token": "nope"})
    assert wrong.status == 403
    assert (await api.post("/v1/ops/matches", body, token=token)).status == 401


async def test_an_operators_match_leaves_every_seat_but_the_bots_to_players(api: Api) -> None:
    a, b = await new_players(api, 2)
    made = await operator_match(api, seats=3, bots=[1])
    assert made.status == 201, made.body
    assert (made.body["seat"], made.body["status"]) == (None, "waiting")
    match_id = made.body["match_id"]
    assert (await api.post(f"/v1/matches/{match_id}/join", token=a)).body["seat"] == 0
    joined = await api.post(f"/v1/matches/{match_id}/join", token=b)
    assert (joined.body["seat"], joined.body["status"]) == (2, "active")
    match = await read(api, a, match_id)
    assert [(s["player_id"] is None, s["bot"]) for s in match["seats"]] == [
        (False, False),
        (True, True),
        (False, False),
    ]
    await play_out(api, match_id, [a, "", b], random.Random(1))


async def test_a_player_who_leaves_an_operators_match_leaves_it_waiting_for_others(
    api: Api,
) -> None:
    a, b = await new_players(api, 2)
    match_id = (await operator_match(api, seats=2, bots=[])).body["match_id"]
    await api.post(f"/v1/matches/{match_id}/join", token=a)
    left = await api.post(f"/v1/matches/{match_id}/resign", token=a)
    assert (left.status, left.body["status"]) == (200, "waiting")
    # A player's own match, left by its only player, is over at once.
    own = (await create(api, b)).body["match_id"]
    gone = await api.post(f"/v1/matches/{own}/resign", token=b)
    assert (gone.status, gone.body["status"]) == (200, "expired")
    joined = await api.post(f"/v1/matches/{match_id}/join", token=b)
    assert (joined.status, joined.body["seat"]) == (200, 0)


@pytest.fixture
async def capped(make_settings: Any) -> AsyncIterator[Api]:
    """A second instance on the session's database, with small caps."""
    async with running_service(make_settings(max_waiting_matches=2, max_open_matches=3)) as client:
        yield client


async def test_a_player_holds_seats_in_few_waiting_and_open_matches_a_409_names_them(
    capped: Api,
) -> None:
    api = capped
    a, b, c, d = await new_players(api, 4)
    first = (await create(api, a)).body["match_id"]
    second = (await create(api, a)).body["match_id"]
    third = await create(api, a)
    assert (third.status, third.error_code) == (409, "too_many_waiting_matches"), third.body
    assert third.body["error"]["details"] == {"limit": 2, "matches": [first, second], "tickets": []}
    # A match against a bot starts at once: it waits for nobody, and is under the open cap.
    against_bot = await create(api, a, bots=[1])
    assert against_bot.status == 201 and against_bot.body["status"] == "active"
    fourth = await create(api, a, bots=[1])
    assert (fourth.status, fourth.error_code) == (409, "too_many_open_matches")
    held = {first, second, against_bot.body["match_id"]}
    assert fourth.body["error"]["details"]["limit"] == 3
    assert set(fourth.body["error"]["details"]["matches"]) == held
    # Joining counts too: b's match would be a fourth open one for a.
    others = (await create(api, b)).body["match_id"]
    late = await api.post(f"/v1/matches/{others}/join", token=a)
    assert (late.status, late.error_code) == (409, "too_many_open_matches")
    # Leaving a waiting match frees its place.
    assert (await api.post(f"/v1/matches/{first}/resign", token=a)).status == 200
    assert (await api.post(f"/v1/matches/{others}/join", token=a)).status == 200
    # At the waiting cap, a join that leaves the match waiting is refused, one that fills it not.
    held_waiting = [(await create(api, d)).body["match_id"] for _ in range(2)]
    three_seats = (await create(api, c, seats=3)).body["match_id"]
    refused = await api.post(f"/v1/matches/{three_seats}/join", token=d)
    assert (refused.status, refused.error_code) == (409, "too_many_waiting_matches")
    assert refused.body["error"]["details"] == {"limit": 2, "matches": held_waiting, "tickets": []}
    two_seats = (await create(api, c)).body["match_id"]
    filled = await api.post(f"/v1/matches/{two_seats}/join", token=d)
    assert filled.status == 200 and filled.body["status"] == "active"


async def test_a_retried_create_gets_its_answer_over_the_cap_and_racing_creates_keep_it(
    capped: Api,
) -> None:
    api = capped
    a, b = await new_players(api, 2)
    key = {"Idempotency-Key": "cap-retry"}
    body = {"game": "necromancers", "seats": 2}
    kept = await api.post("/v1/matches", body, token=a, headers=key)
    await create(api, a)
    again = await api.post("/v1/matches", body, token=a, headers=key)
    assert again.status == 201 and again.body == kept.body
    # Concurrent creates by one player take the places one at a time: two, never more.
    answers = await asyncio.gather(*(create(api, b) for _ in range(6)))
    assert sorted(r.status for r in answers) == [201, 201, 409, 409, 409, 409]
    assert {r.error_code for r in answers if r.status == 409} == {"too_many_waiting_matches"}


async def test_one_account_can_hold_only_a_few_waiting_matches_by_default(api: Api) -> None:
    """A hundred waiting matches from one account pushed everyone else's out of the lobby."""
    (a,) = await new_players(api, 1)
    made = [await create(api, a) for _ in range(6)]
    assert [m.status for m in made] == [201] * 5 + [409]
    assert made[-1].error_code == "too_many_waiting_matches"


@pytest.fixture
async def roomy(make_settings: Any, fresh_database_url: str) -> AsyncIterator[Api]:
    """A service on an empty database where one player may hold many waiting matches."""
    settings = make_settings(
        database_url=fresh_database_url, max_waiting_matches=30, max_open_matches=30
    )
    async with running_service(settings) as client:
        yield client


async def test_the_lobby_pages_reach_every_waiting_match_once_past_one_accounts_many(
    roomy: Api,
) -> None:
    api = roomy
    heavy, *others = await new_players(api, 5)
    mine = [(await create(api, heavy)).body["match_id"] for _ in range(25)]
    theirs = [(await create(api, token)).body["match_id"] for token in others]
    first = await api.get("/v1/matches?limit=7", token=others[0])
    assert len(first.body["matches"]) == 7 and first.body["next"]
    seen = [m["match_id"] for m in first.body["matches"]]
    cursor = first.body["next"]
    # Matches made while a client pages are newer than its cursor: they never repeat a page.
    later = (await create(api, others[1], seats=3)).body["match_id"]
    while cursor is not None:
        page = await api.get(f"/v1/matches?limit=7&cursor={cursor}", token=others[0])
        assert page.status == 200, page.body
        seen += [m["match_id"] for m in page.body["matches"]]
        cursor = page.body["next"]
    assert len(seen) == len(set(seen)) == 29
    assert set(seen) == set(mine) | set(theirs)
    assert seen[:4] == list(reversed(theirs))
    walked = await walk_list(api, others[2], limit=5)
    assert [m["match_id"] for m in walked][1:] == seen and walked[0]["match_id"] == later
    own = await walk_list(api, heavy, "&mine=true", limit=4)
    assert [m["match_id"] for m in own] == list(reversed(mine))
    for bad in ("nope", first.body["next"] + "x", "bS4xLjI"):
        refused = await api.get(f"/v1/matches?cursor={bad}", token=heavy)
        assert (refused.status, refused.error_code) == (422, "invalid_cursor"), bad
    # A cursor of one list is not one of the other.
    crossed = await api.get(f"/v1/matches?mine=true&cursor={first.body['next']}", token=heavy)
    assert (crossed.status, crossed.error_code) == (422, "invalid_cursor")


@pytest.fixture
async def short_keys(
    make_settings: Any, fresh_database_url: str
) -> AsyncIterator[tuple[Api, asyncpg.Pool]]:
    """A service on an empty database that keeps keys 1.5 s, sweeping 2 rows a statement."""
    settings = make_settings(
        database_url=fresh_database_url,
        idempotency_key_ttl_seconds=1.5,
        sweep_interval_seconds=SWEEP,
        sweep_batch_rows=2,
    )
    async with running_service(settings) as client:
        pool = await asyncpg.create_pool(fresh_database_url, min_size=1, max_size=2)
        yield client, pool
        await pool.close()


async def test_idempotency_keys_are_swept_after_their_ttl_and_a_retry_within_it_is_answered(
    short_keys: tuple[Api, asyncpg.Pool],
) -> None:
    api, pool = short_keys
    (token,) = await new_players(api, 1)
    body = {"game": "necromancers", "seats": 2, "bots": [1]}

    async def keyed(key: str) -> str:
        made = await api.post("/v1/matches", body, token=token, headers={"Idempotency-Key": key})
        assert made.status == 201, made.body
        return str(made.body["match_id"])

    async def kept() -> int:
        count: int = await pool.fetchval("SELECT count(*) FROM idempotency_keys")
        return count

    old = [await keyed(f"old-{i}") for i in range(5)]
    assert await kept() == 5

    async def none_kept() -> bool:
        return await kept() == 0

    # Five keys, two a statement: swept in several batches once 1.5 s old.
    await eventually(none_kept)
    recent = await keyed("recent")
    assert await keyed("recent") == recent
    assert await kept() == 1
    # The old key is forgotten: it names a new request, which makes a new match.
    assert await keyed("old-0") not in old


async def test_a_key_sweep_deletes_at_most_its_batch_oldest_first(database: asyncpg.Pool) -> None:
    player = await database.fetchval(
        "INSERT INTO players (name) VALUES ('sweep') RETURNING player_id"
    )
    await database.executemany(
        "INSERT INTO idempotency_keys (player_id, key, request_hash, created_at)"
        " VALUES ($1, $2, '', now() - make_interval(secs => $3::float8))",
        [(player, f"k{age}", float(age)) for age in (100, 200, 300, 400, 500, 1)],
    )
    assert await idempotency.sweep(database, 50.0, 2) == 2
    left = await database.fetch("SELECT key FROM idempotency_keys ORDER BY key")
    assert [r["key"] for r in left] == ["k1", "k100", "k200", "k300"]
    assert await idempotency.sweep(database, 50.0, 2) == 2
    assert await idempotency.sweep(database, 50.0, 2) == 1
    assert await idempotency.sweep(database, 50.0, 2) == 0
    assert await database.fetchval("SELECT key FROM idempotency_keys") == "k1"


@pytest.fixture
async def short_events(
    make_settings: Any, fresh_database_url: str
) -> AsyncIterator[tuple[Api, asyncpg.Pool]]:
    """A service on an empty database that keeps an ended match's events 2 s."""
    settings = make_settings(
        database_url=fresh_database_url,
        match_events_retention_seconds=2.0,
        match_wait_seconds=0.3,
        sweep_interval_seconds=SWEEP,
        sweep_batch_rows=50,
    )
    async with running_service(settings) as client:
        pool = await asyncpg.create_pool(fresh_database_url, min_size=1, max_size=2)
        yield client, pool
        await pool.close()


def _game_events(replay: dict[str, Any]) -> list[tuple[int, str, Any, Any]]:
    """The replay's events from `match_started` on, without their sequence numbers."""
    events = replay["events"]
    start = next(i for i, e in enumerate(events) if e["kind"] == "match_started")
    return [(e["version"], e["kind"], e["data"], e["visible_to"]) for e in events[start:]]


async def _status_is(api: Api, token: str, match_id: str, status: str) -> bool:
    return bool((await read(api, token, match_id))["status"] == status)


@pytest.mark.parametrize(
    ("game", "seats", "options"),
    [("necromancers", 3, {}), ("fate-duel", 2, {"rounds": 1}), ("loyalty", 2, {})],
)
async def test_a_finished_matchs_events_are_swept_and_its_replay_is_rebuilt_the_same(
    short_events: tuple[Api, asyncpg.Pool], game: str, seats: int, options: dict[str, Any]
) -> None:
    api, pool = short_events
    (token,) = await new_players(api, 1)
    made = await operator_match(
        api, game=game, seats=seats, options=options, bots=list(range(seats))
    )
    assert made.status == 201, made.body
    match_id = made.body["match_id"]
    await eventually(lambda: _status_is(api, token, match_id, "finished"))
    stored = (await api.get(f"/v1/matches/{match_id}/replay", token=token)).body
    assert stored["rebuilt"] is False

    async def swept() -> bool:
        count: int = await pool.fetchval(
            "SELECT count(*) FROM match_events WHERE match_id = $1", uuid.UUID(match_id)
        )
        return count == 0

    await eventually(swept)
    rebuilt = (await api.get(f"/v1/matches/{match_id}/replay", token=token)).body
    assert rebuilt["rebuilt"] is True
    assert _game_events(rebuilt) == _game_events(stored)
    assert [e["seq"] for e in rebuilt["events"]] == list(range(1, len(rebuilt["events"]) + 1))
    for field in ("seed", "seats", "loadouts", "actions", "final", "outcome", "options"):
        assert rebuilt[field] == stored[field], field
    # The match itself stays, with its outcome; its events are no longer served.
    assert (await read(api, token, match_id))["status"] == "finished"
    assert await all_events(api, token, match_id) == []


async def test_an_expired_match_is_deleted_after_the_retention_and_a_recent_end_is_kept(
    short_events: tuple[Api, asyncpg.Pool],
) -> None:
    api, pool = short_events
    a, b = await new_players(api, 2)
    expired = (await create(api, a)).body["match_id"]
    await eventually(lambda: _status_is(api, a, expired, "expired"))
    finished = await start_match(api, [a, b])
    await play_out(api, finished, [a, b], random.Random(2))
    # Just finished: its events are still there, and its replay is the stored one.
    replay = (await api.get(f"/v1/matches/{finished}/replay", token=a)).body
    assert replay["rebuilt"] is False and replay["events"][0]["kind"] == "seat_taken"

    async def gone() -> bool:
        return (await api.get(f"/v1/matches/{expired}", token=a)).status == 404

    await eventually(gone)
    match_id = uuid.UUID(expired)
    for table in ("match_events", "match_seats", "matches"):
        left = await pool.fetchval(f"SELECT count(*) FROM {table} WHERE match_id = $1", match_id)
        assert left == 0, table
    listed = await walk_list(api, a, "&mine=true")
    assert expired not in [m["match_id"] for m in listed]


async def test_a_match_sweep_takes_about_its_batch_of_rows_and_one_match_at_least(
    database: asyncpg.Pool,
) -> None:
    player = await database.fetchval(
        "INSERT INTO players (name) VALUES ('sweep') RETURNING player_id"
    )
    ids = []
    for age, events in ((40, 3), (30, 3), (20, 3), (10, 20)):
        match_id = await database.fetchval(
            "INSERT INTO matches (game, ruleset, seed, seats, options, status, state, created_by,"
            " last_seq, finished_at) VALUES ('necromancers', 'r', 1, 2, '{}', 'finished', '{}',"
            " $1, $2, now() - make_interval(mins => $3)) RETURNING match_id",
            player,
            events,
            age,
        )
        await database.executemany(
            "INSERT INTO match_events (match_id, seq, version, kind, data)"
            " VALUES ($1, $2, 0, 'e', '{}')",
            [(match_id, seq) for seq in range(1, events + 1)],
        )
        ids.append(match_id)

    async def with_events() -> list[uuid.UUID]:
        rows = await database.fetch("SELECT DISTINCT match_id FROM match_events")
        return sorted(r["match_id"] for r in rows)

    # Newer than the retention: kept.
    assert await match_sweeps.sweep_finished_events(database, 7200.0, 10) == 0
    # 3 events and 2 seats a match: two of them fit in 10 rows, the oldest first.
    assert await match_sweeps.sweep_finished_events(database, 60.0, 10) == 2
    assert await with_events() == sorted(ids[2:])
    assert await match_sweeps.sweep_finished_events(database, 60.0, 10) == 1
    # A match larger than a batch is taken alone.
    assert await match_sweeps.sweep_finished_events(database, 60.0, 10) == 1
    assert await with_events() == []
    assert await match_sweeps.sweep_finished_events(database, 60.0, 10) == 0
    swept = await database.fetchval(
        "SELECT count(*) FROM matches WHERE events_swept_at IS NOT NULL"
    )
    assert swept == 4
