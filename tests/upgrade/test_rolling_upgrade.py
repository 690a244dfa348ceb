"""The rolling upgrade drill: the previous release and this one serve one database at once.

The previous release runs from its own commit (tests/upgrade/release.py): two instances behind
the nginx and PgBouncer of `make cluster`, on a new database that it makes as it always did.
Players play runs and matches through nginx the whole time, retrying a 503 or a 429 with the
same Idempotency-Key as docs/operations.md#reliability tells clients to. Meanwhile the operator
upgrades as a Kubernetes Deployment rolls: this release's migrations first (`python -m service
migrate`, as deploy/k8s/migrate.yaml's Job), then one instance at a time, a new one started
and added to nginx's list, then an old one taken out of it (nginx reloads, and its old workers
finish their requests) and stopped gracefully.

Then: no answer was a 5xx other than a 503 with Retry-After, every acknowledged write is in
the database, both releases served players, and only this one once the switch was over. The
line printed at the end gives the figures (`pytest -s` shows it).
"""

import asyncio
import json
import os
import random
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import asyncpg
import psutil

from service.runtime.cluster import (
    HOST,
    NGINX_CONF,
    Cluster,
    Instance,
    free_port,
    nginx_command,
    render,
    running,
)
from service.version import VERSION
from tests.api.matches_helpers import cache_agrees_with_log
from tests.faults import RETRIED, Workload, lost_writes
from tests.http import Answer, Api
from tests.upgrade.release import REPOSITORY, previous, source_tree

# Every player registers from 127.0.0.1: the per-address limits are out of the way. The
# instances do not migrate, as in deploy/k8s/app.yaml: the upgrade's own step does (0.1.0
# knows no such setting, and ignores it).
INSTANCE_ENV = {
    "MIGRATE_ON_START": "false",
    "RATE_LIMIT_PER_SECOND": "10000",
    "RATE_LIMIT_BURST": "10000",
    "REGISTRATIONS_PER_ADDRESS_PER_HOUR": "1000000",
    "REGISTRATIONS_PER_ADDRESS_PER_DAY": "1000000",
}
RUN_PLAYERS = 6
MATCH_TABLES = 2
# Each round of the run players registers new players, who play for this long.
ROUND_SECONDS = 2.0
# How long each stage of the switch lets the players play before the next one.
OLD_ALONE_SECONDS = 2.0
MIXED_SECONDS = 2.0
NEW_ALONE_SECONDS = 2.0
MIGRATE_SECONDS = 60.0
RELOAD_SECONDS = 15.0
ATTEMPTS = 400
RESENDS = 5
RELOAD_MARGIN_SECONDS = 0.5


@dataclass
class Answers:
    """Every answer the players got through nginx."""

    statuses: Counter[int] = field(default_factory=Counter)
    # The X-Instance header: which instance answered ("nginx" for the balancer's own answers).
    served_by: Counter[str] = field(default_factory=Counter)
    # A 5xx other than a 503 with Retry-After: an error a client sees.
    failures: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.statuses.values())

    def trace(self) -> aiohttp.TraceConfig:
        async def answered(
            _: aiohttp.ClientSession, __: SimpleNamespace, end: aiohttp.TraceRequestEndParams
        ) -> None:
            status, headers = end.response.status, end.response.headers
            self.statuses[status] += 1
            self.served_by[headers.get("X-Instance", "nginx")] += 1
            if status >= 500 and not (status == 503 and "Retry-After" in headers):
                self.failures.append(f"{end.method} {end.url.path}: {status} {dict(headers)}")

        trace = aiohttp.TraceConfig()
        trace.on_request_end.append(answered)
        return trace


class Client(Api):
    """The players' HTTP client: a request whose connection was closed before any answer is
    sent again with the same Idempotency-Key, as docs/api.md tells clients and as the
    TypeScript client does (clients/typescript/src/transport.ts). A reload of nginx closes its
    old workers' idle keep-alive connections, and one may close just as a request goes out on
    it. Each resend is recorded, with when, to be matched to a reload."""

    def __init__(self, session: aiohttp.ClientSession, base_url: str) -> None:
        # Answers from two releases: each release's suite checks them against its document.
        super().__init__(session, base_url, check_answers=False)
        self.resent: list[tuple[float, str]] = []

    async def call(self, method: str, path: str, body: Any = None, **options: Any) -> Answer:
        for _ in range(RESENDS):
            try:
                return await super().call(method, path, body, **options)
            except aiohttp.ClientConnectorError:
                # nginx itself refused the connection: nothing a reload explains.
                raise
            except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError) as exc:
                self.resent.append((time.monotonic(), f"{method} {path}: {exc!r}"))
        raise AssertionError(f"{method} {path}: every connection closed: {self.resent[-3:]}")


@asynccontextmanager
async def players_client(url: str) -> AsyncIterator[tuple[Client, Answers]]:
    answers = Answers()
    async with aiohttp.ClientSession(trace_configs=[answers.trace()]) as session:
        yield Client(session, url), answers


@dataclass
class Tables:
    """Pairs of players playing necromancers matches, one after another; every action the
    service acknowledged is recorded."""

    api: Api
    # (match, version the action was sent at) -> (seat, action)
    actions: dict[tuple[str, int], tuple[int, Any]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    async def send(self, method: str, path: str, token: str, body: Any = None) -> Answer:
        """The request, retried as a client would (a write with the same Idempotency-Key)."""
        headers = {} if method == "GET" else {"Idempotency-Key": uuid.uuid4().hex}
        for _ in range(ATTEMPTS):
            answer = await self.api.call(method, path, body, token=token, headers=headers)
            if answer.status not in RETRIED:
                return answer
            await asyncio.sleep(0.05)
        raise AssertionError(f"{method} {path} never got through")

    async def register(self) -> str:
        for _ in range(ATTEMPTS):
            answer = await self.api.post("/v1/players", {"name": "table"})
            if answer.status == 201:
                return str(answer.body["token"])
            await asyncio.sleep(0.05)
        raise AssertionError("no player could be registered")

    async def table(self, seed: int, stop: asyncio.Event) -> None:
        rng = random.Random(seed)
        tokens = [await self.register(), await self.register()]
        while not stop.is_set():
            body = {"game": "necromancers", "seats": 2}
            created = await self.send("POST", "/v1/matches", tokens[0], body)
            assert created.status == 201, created.body
            match_id = created.body["match_id"]
            joined = await self.send("POST", f"/v1/matches/{match_id}/join", tokens[1])
            assert joined.status == 200, joined.body
            await self.play(match_id, tokens, rng, stop)

    async def play(
        self, match_id: str, tokens: list[str], rng: random.Random, stop: asyncio.Event
    ) -> None:
        path = f"/v1/matches/{match_id}"
        while not stop.is_set():
            match = (await self.send("GET", path, tokens[0])).body
            if match["status"] == "finished":
                return
            seat = rng.choice(match["to_act"])
            mine = (await self.send("GET", path, tokens[seat])).body
            action = rng.choice(mine["legal_actions"])
            body = {"version": mine["version"], "action": action}
            acted = await self.send("POST", path + "/actions", tokens[seat], body)
            if acted.status == 200:
                self.actions[(match_id, mine["version"])] = (seat, action)
            elif acted.error_code != "stale_version":
                self.errors.append(f"{match_id} at {mine['version']}: {acted.body}")


async def lost_actions(database_url: str, tables: Tables) -> list[str]:
    """Acknowledged match actions missing from match_actions, and matches whose cached state
    does not replay from their log."""
    matches = sorted({match_id for match_id, _ in tables.actions})
    conn = await asyncpg.connect(database_url)
    try:
        rows = await conn.fetch(
            "SELECT match_id::text, version, seat, action FROM match_actions"
            " WHERE match_id = ANY($1::uuid[]) AND source = 'player'",
            matches,
        )
        # An action sent at version v is logged at v + 1, the first it made.
        stored = {
            (r["match_id"], r["version"] - 1): (r["seat"], json.loads(r["action"])) for r in rows
        }
        problems = [
            f"action of seat {done[0]} in match {match_id} at version {sent} lost"
            for (match_id, sent), done in tables.actions.items()
            if stored.get((match_id, sent)) != done
        ]
        for match_id in matches:
            if not await cache_agrees_with_log(conn, uuid.UUID(match_id)):
                problems.append(f"match {match_id} does not replay from its log")
        return problems
    finally:
        await conn.close()


async def play_runs(workload: Workload, stop: asyncio.Event) -> None:
    """Rounds of run players until `stop`; each round's new players play ROUND_SECONDS."""
    while not stop.is_set():
        await workload.run(RUN_PLAYERS, ROUND_SECONDS)


def nginx_workers(cluster: Cluster) -> set[int]:
    master = int((cluster.run_dir / "nginx" / "nginx.pid").read_text())
    return {child.pid for child in psutil.Process(master).children()}


def balance(cluster: Cluster, instances: list[Instance]) -> None:
    """nginx's upstream list made `instances`, by a reload, as an operator changes it.

    Returns once every worker of the previous list has finished its requests and exited: then
    no connection to an instance left out remains open, and that instance may be stopped.
    """
    prefix = cluster.run_dir / "nginx"
    conf = prefix / "nginx.conf"
    values = {
        "NGINX_LISTEN": urlsplit(cluster.balancer_url).netloc,
        "NGINX_SERVERS": " ".join(f"server {HOST}:{i.port};" for i in instances),
    }
    conf.write_text(render(NGINX_CONF.read_text(), values))
    before = nginx_workers(cluster)
    command = nginx_command(prefix, conf, "-s", "reload")
    subprocess.run(command, check=True, capture_output=True, timeout=RELOAD_SECONDS)
    deadline = time.monotonic() + RELOAD_SECONDS
    while (workers := nginx_workers(cluster)) & before or not workers:
        # A configuration nginx refuses leaves the old workers serving: its log says why.
        assert time.monotonic() < deadline, f"nginx did not reload; see {cluster.run_dir}"
        time.sleep(0.05)


async def migrate(database_url: str) -> None:
    """This release's `python -m service migrate`, on PostgreSQL itself: the runner holds a
    session's lock, which PgBouncer's transaction pooling would not keep."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "service",
        "migrate",
        cwd=REPOSITORY,
        env={**os.environ, "DATABASE_URL": database_url},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        output, _ = await asyncio.wait_for(process.communicate(), MIGRATE_SECONDS)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise
    assert process.returncode == 0, output.decode(errors="replace")


async def health(instance: Instance) -> dict[str, Any]:
    """The instance's own /healthz: this release names its version there, 0.1.0 did not."""
    async with (
        aiohttp.ClientSession() as session,
        session.get(instance.url + "/healthz") as answer,
    ):
        assert answer.status == 200, await answer.text()
        body: dict[str, Any] = await answer.json()
        return body


@dataclass
class Switch:
    """The operator's upgrade, done while the players play: this release's migrations, then
    the instances replaced one at a time as a Deployment rolls (deploy/k8s/app.yaml: maxSurge
    1, maxUnavailable 0): a new instance started and added to nginx's list, then an old one
    taken out of the list and stopped."""

    cluster: Cluster
    new: list[Instance] = field(default_factory=list)
    # When each reload of nginx began, and when the last worker of the list before it exited.
    reloads: list[tuple[float, float]] = field(default_factory=list)

    async def balance(self, instances: list[Instance]) -> None:
        began = time.monotonic()
        await asyncio.to_thread(balance, self.cluster, instances)
        self.reloads.append((began, time.monotonic()))

    def during_a_reload(self, when: float) -> bool:
        # The margin: the client may learn of a closed connection a moment after the worker
        # that closed it has exited.
        return any(began <= when <= ended + RELOAD_MARGIN_SECONDS for began, ended in self.reloads)

    async def run(self) -> None:
        old = list(self.cluster.instances)
        await asyncio.sleep(OLD_ALONE_SECONDS)
        await migrate(self.cluster.database_url)
        serving = list(old)
        for number, leaving in enumerate(old, start=len(old) + 1):
            name = f"instance-{number}"
            joining = Instance(name, free_port(), free_port(), self.cluster.run_dir / f"{name}.log")
            # Listed before it starts, so that the topology stops it at its end in any case.
            self.cluster.instances.append(joining)
            self.new.append(joining)
            await asyncio.to_thread(self.cluster.start_instance, joining)
            serving.append(joining)
            await self.balance(serving)
            await asyncio.sleep(MIXED_SECONDS)
            serving.remove(leaving)
            await self.balance(serving)
            # SIGTERM: requests in flight would finish, but nginx sends it none any more.
            status = await asyncio.to_thread(self.cluster.stop_instance, leaving)
            assert status == 0, f"{leaving.name} exited with {status}; see {leaving.log}"


async def test_players_see_no_error_and_lose_no_write_while_the_release_is_replaced(
    fresh_database_url: str, tmp_path: Path
) -> None:
    started = time.monotonic()
    release = previous()
    tree = await asyncio.to_thread(source_tree, release.commit, tmp_path / release.version)
    with running(
        tmp_path / "topology",
        instances=2,
        env=INSTANCE_ENV,
        database_url=fresh_database_url,
        tree=tree,
    ) as cluster:
        old = list(cluster.instances)
        assert ["version" in await health(i) for i in old] == [False] * len(old)
        switch = Switch(cluster)
        async with players_client(cluster.balancer_url) as (api, answers):
            workload, tables, stop = Workload(api), Tables(api), asyncio.Event()
            # A player that fails stops the switch, and the switch failing stops the players.
            async with asyncio.TaskGroup() as players:
                players.create_task(play_runs(workload, stop))
                for seed in range(MATCH_TABLES):
                    players.create_task(tables.table(seed, stop))
                try:
                    await switch.run()
                    switched = answers.served_by.copy()
                    await asyncio.sleep(NEW_ALONE_SECONDS)
                finally:
                    stop.set()
        new = switch.new
        versions = [(await health(i)).get("version") for i in new]
    lost = await lost_writes(fresh_database_url, workload)
    lost += await lost_actions(fresh_database_url, tables)

    by_old = sum(answers.served_by[i.name] for i in old)
    by_new = sum(answers.served_by[i.name] for i in new)
    errors = sum(n for status, n in answers.statuses.items() if status >= 500 and status != 503)
    figures = (
        f"rolling upgrade {release.version} -> {VERSION}: {answers.total} requests"
        f" ({by_old} answered by {release.version}, {by_new} by {VERSION}),"
        f" 503s: {answers.statuses[503]}, other 5xx: {errors},"
        f" connections closed by nginx's reloads and resent: {len(api.resent)},"
        f" lost writes: {len(lost)} of {workload.acknowledged + len(tables.actions)} acknowledged"
        f" ({len(workload.runs)} runs, {len(workload.battles)} battles,"
        f" {len(tables.actions)} match actions); {time.monotonic() - started:.0f} s"
    )
    print(figures)
    assert answers.failures == [], f"{figures}\n" + "\n".join(answers.failures[:20])
    assert workload.errors == tables.errors == [], (figures, workload.errors, tables.errors)
    assert lost == [], f"{figures}\n" + "\n".join(lost[:20])
    unexplained = [what for when, what in api.resent if not switch.during_a_reload(when)]
    assert unexplained == [], (figures, unexplained)
    # Both releases served players, and this one alone once the switch was over.
    assert all(answers.served_by[i.name] > 0 for i in old + new), (figures, answers.served_by)
    assert all(answers.served_by[i.name] == switched[i.name] for i in old), answers.served_by
    assert by_new > sum(switched[i.name] for i in new), (figures, switched)
    assert versions == [VERSION] * len(new)
    assert workload.acknowledged >= 20 and len(tables.actions) >= 10, figures
