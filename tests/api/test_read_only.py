"""An instance and a database of different migration levels (service/usecases/schema_level.py,
service/api/read_only.py): a database ahead by migrations that only add is served; one whose
migrations need newer code to write is refused at start and turns a running instance
read-only; an instance that does not migrate waits for the migrations, then says why not."""

import asyncio
import json
from collections.abc import AsyncIterator, Callable

import asyncpg
import pytest

from service.config import Settings
from service.store import migrate
from service.usecases.schema_level import CannotServe
from tests.api.matches_helpers import new_players, read, receive, socket_url, start_match
from tests.conftest import running_service
from tests.http import Api

NEWEST = len(migrate.known())


async def _record(url: str, version: int, writers_from: int) -> None:
    """A migration of a newer release, as its runner records it."""
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(
            "INSERT INTO schema_migrations (version, name, checksum, writers_from, release,"
            " seconds) VALUES ($1, 'newer', '-', $2, '9.0.0', 0)",
            version,
            writers_from,
        )
    finally:
        await conn.close()


@pytest.fixture
async def migrated_url(fresh_database_url: str) -> AsyncIterator[str]:
    await migrate.migrate(fresh_database_url)
    yield fresh_database_url


async def test_a_database_ahead_by_migrations_that_only_add_is_served(
    migrated_url: str, make_settings: Callable[..., Settings]
) -> None:
    await _record(migrated_url, NEWEST + 1, writers_from=0)
    async with running_service(make_settings(database_url=migrated_url)) as api:
        health = (await api.get("/healthz")).body
        created = await api.post("/v1/players", {"name": "beside"})
    assert (health["migration"], health["migration_known"]) == (NEWEST + 1, NEWEST)
    assert created.status == 201


async def test_a_start_on_a_database_this_release_cannot_write_to_is_refused(
    migrated_url: str, make_settings: Callable[..., Settings]
) -> None:
    await _record(migrated_url, NEWEST + 1, writers_from=NEWEST + 1)
    with pytest.raises(CannotServe, match=f"knows migration {NEWEST + 1} to write"):
        async with running_service(make_settings(database_url=migrated_url)):
            pass


async def _until_not_ready(api: Api) -> None:
    for _ in range(100):
        if (await api.get("/readyz")).status == 503:
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the instance stayed ready")


async def test_a_running_instance_turns_read_only_when_a_migration_needs_newer_code(
    migrated_url: str, make_settings: Callable[..., Settings]
) -> None:
    settings = make_settings(database_url=migrated_url, migration_check_seconds=0.1)
    async with running_service(settings) as api:
        _, token = await api.new_player("before")
        await _record(migrated_url, NEWEST + 1, writers_from=NEWEST + 1)
        await _until_not_ready(api)
        ready = await api.get("/readyz")
        write = await api.post("/v1/runs", {}, token=token)
        read = await api.get("/v1/players/me", token=token)
    for refused in (ready, write):
        assert refused.status == 503
        assert refused.error_code == "read_only"
        assert refused.headers["Retry-After"] == "1"
        assert f"knows migration {NEWEST + 1} to write" in refused.body["error"]["message"]
    assert read.status == 200 and read.body["name"] == "before"
    conn = await asyncpg.connect(migrated_url)
    try:
        assert await conn.fetchval("SELECT count(*) FROM runs") == 0
    finally:
        await conn.close()


async def test_a_socket_action_is_refused_read_only_and_not_applied(
    migrated_url: str, make_settings: Callable[..., Settings]
) -> None:
    settings = make_settings(database_url=migrated_url, migration_check_seconds=0.1)
    async with running_service(settings) as api:
        tokens = await new_players(api, 2)
        match_id = await start_match(api, tokens)
        (seat,) = (await read(api, tokens[0], match_id))["to_act"]
        match = await read(api, tokens[seat], match_id)
        headers = {"Authorization": f"Bearer {tokens[seat]}"}
        ws = await api.session.ws_connect(socket_url(api, match_id), headers=headers)
        await receive(ws)  # the backlog
        try:
            await _record(migrated_url, NEWEST + 1, writers_from=NEWEST + 1)
            await _until_not_ready(api)
            action = match["legal_actions"][0]
            await ws.send_str(json.dumps({"version": match["version"], "action": action}))
            reply = await receive(ws)
        finally:
            await ws.close()
        after = await read(api, tokens[seat], match_id)
    assert reply["status"] == 503 and reply["error"]["code"] == "read_only"
    assert after["version"] == match["version"]


async def test_an_instance_that_does_not_migrate_waits_for_the_migrations(
    fresh_database_url: str, make_settings: Callable[..., Settings]
) -> None:
    settings = make_settings(
        database_url=fresh_database_url, migrate_on_start=False, migration_wait_seconds=60.0
    )

    async def serve() -> int:
        async with running_service(settings) as api:
            return (await api.get("/healthz")).body["migration"]

    started = asyncio.create_task(serve())
    await asyncio.sleep(1.5)
    assert not started.done()
    await migrate.migrate(fresh_database_url)
    assert await asyncio.wait_for(started, timeout=30) == NEWEST


async def test_an_instance_that_does_not_migrate_says_what_to_run_when_none_comes(
    fresh_database_url: str, make_settings: Callable[..., Settings]
) -> None:
    settings = make_settings(
        database_url=fresh_database_url, migrate_on_start=False, migration_wait_seconds=0.5
    )
    with pytest.raises(CannotServe, match="run `python -m service migrate`"):
        async with running_service(settings):
            pass
