"""Shared fixtures: one real embedded PostgreSQL and one real HTTP service per test session."""

import dataclasses
import os
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import aiohttp
import asyncpg
import pytest
from aiohttp import web
from playwright.async_api import Browser

from service.api.server import Runner
from service.app import create_app
from service.config import Settings
from service.runtime.embedded_db import EmbeddedPostgres
from service.store.database import create_pool
from service.store.migrate import migrate_on
from tests.browser import launched
from tests.http import Api
from tests.runtime.test_serve import _free_port, _wait_healthy

TEST_SECRET = "test-secret-key-of-thirty-two-bytes!"
TEST_OPS_TOKEN = "test-ops-token-of-thirty-two-bytes"


@pytest.fixture(scope="session")
def embedded_db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedPostgres]:
    server = EmbeddedPostgres(tmp_path_factory.mktemp("db") / "pgdata")
    server.start()
    yield server
    server.release()


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
        # The whole suite registers and signs in from 127.0.0.1: the tests of those limits
        # set their own, on databases of their own.
        registrations_per_address_per_hour=1_000_000,
        registrations_per_address_per_day=1_000_000,
        sign_ins_per_address_per_minute=1_000_000,
        auth_failures_per_address_per_minute=1_000_000,
        ws_handshakes_per_address_per_minute=1_000_000,
        ws_handshakes_per_player_per_minute=1_000_000,
        db_timeout_seconds=2.0,
        # Tests compare scrapes taken moments apart; tests/api/test_metrics.py sets its own.
        metrics_render_seconds=0.0,
    )


@asynccontextmanager
async def service_and_app(settings: Settings) -> AsyncIterator[tuple[Api, web.Application]]:
    """The real application on a real port of 127.0.0.1 (and on its METRICS_PORT when it has
    one), run as the service runs it, with a client for it."""
    app = create_app(settings)
    runner = Runner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    if settings.metrics_port is not None:
        await web.TCPSite(runner, "127.0.0.1", settings.metrics_port).start()
    async with aiohttp.ClientSession() as session:
        yield Api(session, f"http://127.0.0.1:{port}"), app
    await runner.cleanup()


@asynccontextmanager
async def running_service(settings: Settings) -> AsyncIterator[Api]:
    async with service_and_app(settings) as (api, _):
        yield api


@pytest.fixture
async def fresh_database_url(settings: Settings) -> AsyncIterator[str]:
    """A new, empty database on the session's server, dropped afterwards."""
    name = f"t_{uuid.uuid4().hex}"
    admin = await asyncpg.connect(settings.database_url)
    await admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield make_url(settings.database_url or "", name)
    finally:
        await admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        await admin.close()


@pytest.fixture
async def fresh_pool(fresh_database_url: str) -> AsyncIterator[asyncpg.Pool]:
    """A pool on a new database with the schema applied, closed afterwards."""
    pool = await create_pool(fresh_database_url, 1, 4, 60.0)
    await migrated(pool)
    yield pool
    await pool.close()


@pytest.fixture
async def fresh_service(
    settings: Settings, fresh_database_url: str
) -> AsyncIterator[tuple[Api, web.Application]]:
    """A service on a database of its own, for tests that need an empty pool of snapshots."""
    fresh = dataclasses.replace(settings, database_url=fresh_database_url)
    async with service_and_app(fresh) as pair:
        yield pair


async def migrated(pool: asyncpg.Pool) -> None:
    """The pool's database brought to this release's migration level."""
    async with pool.acquire() as conn:
        await migrate_on(conn)


def make_url(url: str, database: str) -> str:
    """The same server URL naming another database."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{database}"))


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


@pytest.fixture(scope="session")
def built_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package's files as `pip install .` lays them out (the compiled engine aside), built
    from the build's inputs alone (those the image's build gets), so nothing else of the tree
    is read."""
    repo = Path(__file__).resolve().parents[1]
    folder = tmp_path_factory.mktemp("package")
    source = folder / "source"
    ignored = shutil.ignore_patterns("__pycache__", "*.so", "node_modules", "src")
    shutil.copytree(repo / "service", source / "service", ignore=ignored)
    shutil.copytree(repo / "web", source / "web", ignore=ignored)
    for name in ("pyproject.toml", "setup.py"):
        shutil.copy(repo / name, source / name)
    built = folder / "built"
    subprocess.run(
        [sys.executable, "setup.py", "--quiet", "build_py", "--build-lib", str(built)],
        cwd=source,
        check=True,
        capture_output=True,
        timeout=120,
    )
    shutil.rmtree(source)
    return built


@pytest.fixture
def service_process(
    settings: Settings, repo_root: Path, tmp_path: Path
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`python -m service serve` on the test's database, in a process of its own: another
    instance, as one would run, and a service that knows only the games it ships."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "PORT")}
    env.update(
        {
            "DATABASE_URL": settings.database_url or "",
            "SECRET_KEY": TEST_SECRET,
            "DATA_DIR": str(tmp_path),
            "PORT": str(port),
            "LOG_FORMAT": "json",
        }
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "service", "serve"],
        cwd=repo_root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(base, process)
        yield base, process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.communicate(timeout=30)


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Browser]:
    """A headless Chromium for a module's page tests (tests/browser.py)."""
    async with launched() as chromium:
        yield chromium
