"""The local topology (service.runtime.cluster): two instances behind nginx, through PgBouncer.

One topology for the module: PostgreSQL, PgBouncer in transaction mode, two real
`python -m service serve` processes and nginx, all on 127.0.0.1, as `make cluster` starts them.
"""

import asyncio
import itertools
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from types import SimpleNamespace

import aiohttp
import asyncpg
import pytest
from prometheus_client.parser import text_string_to_metric_families

from service.runtime.cluster import Cluster, running
from service.runtime.embedded_db import EmbeddedPostgres
from tests.api.matches_helpers import act, cache_agrees_with_log, new_players, read, start_match
from tests.api.runs_helpers import spend_gold
from tests.conftest import make_url
from tests.faults import Workload, lost_writes
from tests.http import Api

# Turn timers are swept every 0.1 s on each instance, so that both race for every due match.
# Every client is on 127.0.0.1: the per-address limits are out of the way, but failed
# authentications, whose budget is shared by the instances, are tested.
AUTH_FAILURES = 5
INSTANCE_ENV = {
    "SWEEP_INTERVAL_SECONDS": "0.1",
    "RATE_LIMIT_PER_SECOND": "10000",
    "RATE_LIMIT_BURST": "10000",
    "REGISTRATIONS_PER_ADDRESS_PER_HOUR": "1000000",
    "REGISTRATIONS_PER_ADDRESS_PER_DAY": "1000000",
    "SIGN_INS_PER_ADDRESS_PER_MINUTE": "1000000",
    "WS_HANDSHAKES_PER_ADDRESS_PER_MINUTE": "1000000",
    "AUTH_FAILURES_PER_ADDRESS_PER_MINUTE": str(AUTH_FAILURES),
}
WAIT = 10.0


@pytest.fixture(scope="module")
async def cluster(
    embedded_db: EmbeddedPostgres, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Cluster]:
    """The topology on a new database of the suite's PostgreSQL (an initdb would cost seconds)."""
    name = f"cluster_{uuid.uuid4().hex}"
    admin = await asyncpg.connect(embedded_db.uri)
    await admin.execute(f'CREATE DATABASE "{name}"')
    try:
        with running(
            tmp_path_factory.mktemp("cluster"),
            instances=2,
            env=INSTANCE_ENV,
            database_url=make_url(embedded_db.uri, name),
        ) as topology:
            yield topology
    finally:
        await admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        await admin.close()


@asynccontextmanager
async def client(url: str, check_answers: bool = True) -> AsyncIterator[tuple[Api, Counter[str]]]:
    """An Api on `url`, and a count of the X-Instance header of every answer it receives."""
    seen: Counter[str] = Counter()

    async def count(_: aiohttp.ClientSession, __: SimpleNamespace, end: object) -> None:
        assert isinstance(end, aiohttp.TraceRequestEndParams)
        seen[end.response.headers.get("X-Instance", "none")] += 1

    trace = aiohttp.TraceConfig()
    trace.on_request_end.append(count)
    async with aiohttp.ClientSession(trace_configs=[trace]) as session:
        yield Api(session, url, check_answers=check_answers), seen


async def test_a_run_played_through_the_balancer_is_served_by_both_instances(
    cluster: Cluster,
) -> None:
    async with client(cluster.balancer_url) as (api, seen):
        _, token = await api.new_player("spread")
        run = (await api.post("/v1/runs", {}, token=token)).body
        for round_ in (1, 2, 3):
            run = await spend_gold(api, token, run)
            turn = await api.post(
                f"/v1/runs/{run['run_id']}/end-turn", {"round": round_}, token=token
            )
            assert turn.status == 200, turn.body
            run = (await api.get(f"/v1/runs/{run['run_id']}", token=token)).body
    # One run's state moved between the instances at every other request and stayed whole.
    assert run["round"] == 4
    assert set(seen) == {"instance-1", "instance-2"}, seen
    assert min(seen.values()) >= 3, seen


async def test_a_websocket_on_one_instance_gets_the_push_of_an_action_sent_to_the_other(
    cluster: Cluster,
) -> None:
    first, second = cluster.instances
    async with client(first.url) as (one, handshakes), client(second.url) as (two, seen):
        a, b = await new_players(two, 2)
        tokens = [a, b]
        match_id = await start_match(two, tokens)
        cursor = (await two.get(f"/v1/matches/{match_id}/events", token=a)).body["last_seq"]
        ws_url = first.url.replace("http", "ws", 1) + f"/v1/matches/{match_id}/ws"
        async with one.session.ws_connect(f"{ws_url}?token={a}&after={cursor}") as ws:
            (seat,) = (await read(two, a, match_id))["to_act"]
            mine = await read(two, tokens[seat], match_id)
            moved = await act(
                two, tokens[seat], match_id, mine["version"], mine["legal_actions"][0]
            )
            assert moved.status == 200, moved.body
            # Its NOTIFY went through PgBouncer; instance 1 LISTENs on PostgreSQL itself.
            pushed = await ws.receive_json(timeout=WAIT)
    assert pushed["events"] == moved.body["events"] != []
    assert pushed["version"] == moved.body["version"] == mine["version"] + 1
    assert set(seen) == {"instance-2"}
    assert handshakes == {"instance-1": 1}


async def _forged(url: str, client: str, forwarded_for: str | None = None) -> int:
    """The status of a forged token's request, sent from the loopback address `client`."""
    headers = {"Authorization": "Bearer forged.token.here"}
    if forwarded_for is not None:
        headers["X-Forwarded-For"] = forwarded_for
    connector = aiohttp.TCPConnector(local_addr=(client, 0), force_close=True)
    async with (
        aiohttp.ClientSession(connector=connector) as session,
        session.get(url + "/v1/players/me", headers=headers) as answer,
    ):
        return answer.status


async def test_the_instances_count_failures_against_the_address_nginx_forwards(
    cluster: Cluster,
) -> None:
    url = cluster.balancer_url
    # Every client connects from an address of its own; nginx, on 127.0.0.1, names it.
    spent = [await _forged(url, "127.0.0.2") for _ in range(AUTH_FAILURES + 1)]
    # Another client that claims to be the first is itself, and so is nginx's own address.
    spoofing = await _forged(url, "127.0.0.3", forwarded_for="127.0.0.2")
    other = await _forged(url, "127.0.0.1")
    # The failures went round both instances, and one budget held them all.
    assert spent == [401] * AUTH_FAILURES + [429]
    assert (spoofing, other) == (401, 401)


async def _metric(url: str, name: str) -> float:
    async with aiohttp.ClientSession() as session, session.get(url) as answer:
        text = await answer.text()
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == name
    )


async def test_each_turn_timer_runs_out_once_across_the_instances(cluster: Cluster) -> None:
    async with client(cluster.balancer_url) as (api, _):
        pairs = [await new_players(api, 2) for _ in range(8)]
        matches = [uuid.UUID(await start_match(api, pair, turn_seconds=1)) for pair in pairs]
        conn = await asyncpg.connect(cluster.database_url)
        try:
            # Nobody plays: both instances' sweepers apply the timeouts, twice in each match.
            async with asyncio.timeout(30):
                while await conn.fetchval(  # noqa: ASYNC110 - the log is polled
                    "SELECT count(*) < $2 FROM (SELECT match_id FROM match_actions"
                    " WHERE match_id = ANY($1) AND source = 'timeout'"
                    " GROUP BY match_id HAVING count(*) >= 2) twice",
                    matches,
                    len(matches),
                ):
                    await asyncio.sleep(0.2)
            for (a, _), match_id in zip(pairs, matches, strict=True):
                resigned = await api.post(f"/v1/matches/{match_id}/resign", token=a)
                assert resigned.status == 200, resigned.body
            timeouts = await conn.fetch(
                "SELECT match_id, version, created_at FROM match_actions"
                " WHERE match_id = ANY($1) AND source = 'timeout' ORDER BY match_id, version",
                matches,
            )
            for match_id in matches:
                assert await cache_agrees_with_log(conn, match_id), match_id
        finally:
            await conn.close()
    # Every timeout restarts the timer: two in one match less than a turn apart would be one
    # run-out applied twice (two instances claiming the same match).
    for earlier, later in itertools.pairwise(timeouts):
        if earlier["match_id"] == later["match_id"]:
            assert (later["created_at"] - earlier["created_at"]).total_seconds() >= 1, later
    # Each instance counts the timeouts it applied; together, each stored one once.
    counted = [await _metric(i.metrics_url, "match_timeouts_total") for i in cluster.instances]
    assert sum(counted) == len(timeouts) >= 2 * len(matches), counted
    for instance in cluster.instances:
        assert "sweep_match_failed" not in instance.log.read_text()


async def test_stopping_an_instance_under_load_loses_no_acknowledged_write(
    cluster: Cluster,
) -> None:
    second = cluster.instances[1]
    async with client(cluster.balancer_url, check_answers=False) as (api, seen):
        # Clients retry a 502 or 503 with the same Idempotency-Key, as
        # docs/operations.md#reliability tells them.
        workload = Workload(api)
        load = asyncio.create_task(workload.run(players=8, seconds=4))
        await asyncio.sleep(1.5)
        before = seen.copy()
        assert await asyncio.to_thread(cluster.stop_instance, second) == 0
        await load
    await asyncio.to_thread(cluster.start_instance, second)
    assert before["instance-2"] > 0, "the stopped instance was not serving"
    assert seen["instance-1"] > before["instance-1"], "nothing was served after the stop"
    assert workload.acknowledged > 20 and not workload.errors, workload.errors
    assert await lost_writes(cluster.database_url, workload) == []
    # Nothing was applied twice: the players' runs and battles are exactly the acknowledged ones.
    conn = await asyncpg.connect(cluster.database_url)
    try:
        acknowledged = [uuid.UUID(r) for r in workload.runs]
        runs = await conn.fetch(
            "SELECT run_id FROM runs WHERE player_id IN"
            " (SELECT player_id FROM runs WHERE run_id = ANY($1))",
            acknowledged,
        )
        battles = await conn.fetch(
            "SELECT battle_id FROM battles WHERE run_id = ANY($1)", acknowledged
        )
    finally:
        await conn.close()
    assert {str(r["run_id"]) for r in runs} == set(workload.runs)
    assert {b["battle_id"] for b in battles} == set(workload.battles)


async def test_metrics_are_served_on_the_instances_metrics_ports_alone(cluster: Cluster) -> None:
    """nginx answers /metrics itself, 404 in the error shape, and forwards nothing; each
    instance's public port answers it 404 too; its metrics port serves it."""
    refusals = {}
    async with aiohttp.ClientSession() as session:
        for url in (cluster.balancer_url, *(i.url for i in cluster.instances)):
            async with session.get(url + "/metrics") as answer:
                error = (await answer.json())["error"]
                refusals[url] = (answer.status, error["code"], answer.headers.get("X-Instance"))
        served = []
        for instance in cluster.instances:
            async with session.get(instance.metrics_url) as answer:
                text = await answer.text()
                served.append((answer.status, answer.headers["X-Instance"]))
            assert "http_requests_total" in text
    # No instance gave the balancer's answer.
    assert refusals == {
        cluster.balancer_url: (404, "not_found", None),
        **{i.url: (404, "not_found", i.name) for i in cluster.instances},
    }
    assert served == [(200, i.name) for i in cluster.instances]


def test_the_topology_runs_the_deploy_files(cluster: Cluster, repo_root: Path) -> None:
    bouncer = (cluster.run_dir / "pgbouncer.ini").read_text()
    assert f"%include {repo_root / 'deploy/pgbouncer/pgbouncer.ini'}" in bouncer
    nginx = (cluster.run_dir / "nginx" / "nginx.conf").read_text()
    assert "${" not in nginx
    for instance in cluster.instances:
        assert f"server 127.0.0.1:{instance.port};" in nginx


async def test_pgbouncer_pools_by_transaction(cluster: Cluster) -> None:
    # A server connection goes back to the pool at the end of each transaction, so a second
    # client reuses the one the first has just left (PgBouncer reuses the last one freed); in
    # session mode it would stay with the first client for as long as that one is connected.
    name = f"probe_{uuid.uuid4().hex}"
    admin = await asyncpg.connect(cluster.database_url)
    await admin.execute(f'CREATE DATABASE "{name}"')
    try:
        url = make_url(cluster.bouncer_url, name)
        first, second = [await asyncpg.connect(url, statement_cache_size=0) for _ in range(2)]
        try:
            served = [
                await client.fetchval("SELECT pg_backend_pid()") for client in (first, second)
            ]
        finally:
            await first.close()
            await second.close()
    finally:
        await admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        await admin.close()
    assert served[0] == served[1]
