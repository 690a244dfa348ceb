"""Shared fixtures: one real embedded PostgreSQL and one real HTTP service per test session."""

import dataclasses
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from service.app import create_app
from service.config import Settings
from service.embedded_db import EmbeddedPostgres
from tests.http import Api

TEST_SECRET = "test-secret-key-of-thirty-two-bytes!"
TEST_OPS_TOKEN = "test-ops-token"


@pytest.fixture(scope="session")
def embedded_db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedPostgres]:
    server = EmbeddedPostgres(tmp_path_factory.mktemp("db") / "pgdata")
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def settings(embedded_db: EmbeddedPostgres, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return Settings(
        port=0,
        database_url=embedded_db.uri,
        data_dir=tmp_path_factory.mktemp("var"),
        secret_key=TEST_SECRET,
        ops_token=TEST_OPS_TOKEN,
        rate_limit_per_second=10_000.0,
        rate_limit_burst=10_000,
        db_timeout_seconds=2.0,
    )


@asynccontextmanager
async def running_service(settings: Settings) -> AsyncIterator[Api]:
    """The real application on a real port of 127.0.0.1, with a client for it."""
    runner = web.AppRunner(create_app(settings), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    async with aiohttp.ClientSession() as session:
        yield Api(session, f"http://127.0.0.1:{port}")
    await runner.cleanup()


@pytest.fixture(scope="session")
async def api(settings: Settings) -> AsyncIterator[Api]:
    async with running_service(settings) as client:
        yield client


@pytest.fixture
def make_settings(settings: Settings) -> Any:
    """Settings for a second service with some fields changed."""

    def make(**changes: Any) -> Settings:
        return dataclasses.replace(settings, **changes)

    return make


@pytest.fixture
def repo_root() -> Path:
    return Path(__file__).resolve().parents[1]
