import asyncio
from pathlib import Path

import pytest

from service.config import Settings
from service.runtime.embedded_db import EmbeddedPostgres
from service.store import migrate
from service.version import VERSION
from tests.conftest import running_service
from tests.http import Api


async def test_healthz_and_readyz_answer_when_all_is_well(api: Api) -> None:
    newest = len(migrate.known())
    assert (await api.get("/healthz")).body == {
        "status": "ok",
        "version": VERSION,
        "migration": newest,
        "migration_known": newest,
    }
    assert (await api.get("/readyz")).body == {"status": "ready"}


async def _wait_ready(api: Api, seconds: float) -> int:
    status = 0
    for _ in range(int(seconds * 10)):
        status = (await api.get("/readyz")).status
        if status == 200:
            break
        await asyncio.sleep(0.1)
    return status


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
async def test_database_restart_gives_503_then_recovers_without_restarting_the_service(
    tmp_path: Path, make_settings: type[Settings], fmt: str
) -> None:
    db = EmbeddedPostgres(tmp_path / "pgdata")
    db.start()
    try:
        async with running_service(make_settings(database_url=db.uri)) as api:
            _, token = await api.new_player("before-outage")

            db.stop()
            ready = await api.get("/readyz", fmt=fmt)
            write = await api.post("/v1/players", {"name": "during"}, fmt=fmt)
            read = await api.get("/v1/players/me", token=token, fmt=fmt)
            alive = await api.get("/healthz", fmt=fmt)

            db.start()
            recovered = await _wait_ready(api, 10)
            me = await api.get("/v1/players/me", token=token, fmt=fmt)
            after = await api.post("/v1/players", {"name": "after"}, fmt=fmt)
    finally:
        db.release()

    for answer in (ready, write, read):
        assert answer.status == 503
        assert answer.error_code == "unavailable"
        assert answer.headers["Retry-After"] == "1"
    assert alive.status == 200
    assert recovered == 200
    assert me.status == 200 and me.body["name"] == "before-outage"
    assert after.status == 201
