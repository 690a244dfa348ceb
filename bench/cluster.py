"""`python -m bench --cluster`: throughput through nginx with 1, 2 and 3 instances.

Each instance count is a local topology of its own (service.runtime.cluster: PostgreSQL,
PgBouncer in transaction mode, instances of one worker, nginx), on one data directory whose
pairing pool is pre-filled once. Through the balancer it measures the battle endpoint
(msgpack), the end-turn loop (bench.load) and match actions (below), each the median of a few
runs that go round the figures; with one instance also the battle endpoint without nginx, for
what the balancer costs. `server us/req` is the instances' CPU per answered request.

The match-action load generator is here too, a process of its own like bench.load:
`python -m bench.cluster '{"base_url": ..., "concurrency": N, "seconds": S}'` keeps N
two-seat Duelo de Nigromantes matches going, one client holding both seats, each action chosen
from the legal actions of the last answer (a read when the turn passes to the other seat).
"""

import asyncio
import json
import random
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import psutil

from bench import http, pairing
from bench.load import Clock, Tally, _headers, _json, _player, _run, _timed
from bench.table import percentile
from service.runtime.cluster import Cluster, running

SIMULATE = "/v1/battles/simulate"
NO_NGINX = "simulate msgpack, no nginx"
# Never refused, as in the single-instance bench.
INSTANCE_ENV = {"RATE_LIMIT_PER_SECOND": "1000000000", "RATE_LIMIT_BURST": "1000000000"}


@dataclass(frozen=True)
class Sizes:
    instances: tuple[int, ...]
    repeats: int
    seconds: float
    warmup: float
    clients: int  # simulate clients, end-turn players, and twice the matches in play
    pool: int  # snapshots in the pairing pool


FULL = Sizes((1, 2, 3), 3, 2.5, 0.5, 64, 20_000)
SMOKE = Sizes((1, 2), 1, 0.3, 0.1, 4, 200)


@dataclass
class Figure:
    label: str
    instances: int
    spec: dict[str, Any]
    runs: list[dict[str, Any]] = field(default_factory=list)

    def median(self, key: str) -> float:
        return float(statistics.median(run[key] for run in self.runs))

    def row(self, note: str) -> dict[str, str]:
        rates = [run["rate"] for run in self.runs]
        # A 422 is the end-turn loop buying into a full board: the rules refusing, not a failure.
        errors = sum(n for run in self.runs for what, n in run["errors"].items() if what != "422")
        return {
            "figure": self.label,
            "instances": str(self.instances),
            "clients": str(self.spec["concurrency"]),
            "median/s": f"{self.median('rate'):.0f}",
            "spread/s": f"{min(rates):.0f}-{max(rates):.0f}",
            "p50 ms": f"{self.median('p50_ms'):.2f}",
            "p99 ms": f"{self.median('p99_ms'):.2f}",
            "server us/req": f"{self.median('server_us'):.0f}",
            "load cpu": f"{self.median('cpu'):.2f}",
            "note": f"{note}, {errors} errors" if errors else note,
        }


def _specs(sizes: Sizes, instances: int) -> list[tuple[str, dict[str, Any]]]:
    timing = {"seconds": sizes.seconds, "warmup": sizes.warmup}
    simulate = {"mode": "simulate", "path": SIMULATE, "format": "msgpack", "corpus": 1000}
    specs = [
        ("simulate msgpack", {**simulate, "concurrency": sizes.clients, **timing}),
        ("end-turn (HTTP)", {"mode": "end-turn", "concurrency": sizes.clients, **timing}),
        ("match actions", {"mode": "matches", "concurrency": sizes.clients // 2, **timing}),
    ]
    if instances == 1:
        # The same battles sent straight to the instance: what nginx costs, in the same run.
        direct = {**simulate, "concurrency": sizes.clients, **timing, "direct": True}
        specs.insert(1, (NO_NGINX, direct))
    return specs


def _cpu_seconds(cluster: Cluster) -> float:
    times = [psutil.Process(i.process.pid).cpu_times() for i in cluster.instances if i.process]
    return float(sum(t.user + t.system for t in times))


def _load(spec: dict[str, Any]) -> dict[str, Any]:
    """One run of a load generator in its own process: bench.load, or this one for matches."""
    if spec["mode"] != "matches":
        return http.load(spec)
    done = subprocess.run(
        [sys.executable, "-m", "bench.cluster", json.dumps(spec)],
        capture_output=True,
        check=False,
        timeout=spec["seconds"] + 120,
    )
    if done.returncode != 0:
        raise RuntimeError(f"match load generator failed: {done.stderr.decode()[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _measure(cluster: Cluster, spec: dict[str, Any]) -> dict[str, Any]:
    before = _cpu_seconds(cluster)
    base_url = cluster.instances[0].url if spec.get("direct") else cluster.balancer_url
    result = _load({**spec, "base_url": base_url})
    result["server_us"] = (_cpu_seconds(cluster) - before) / max(1, result["completed"]) * 1e6
    return result


async def _prefill(database_url: str, snapshots: int) -> None:
    pool = await asyncpg.create_pool(database_url, min_size=1, max_size=2)
    try:
        await pairing.fill(pool, snapshots, owners=max(10, snapshots // 20))
    finally:
        await pool.close()


def run(sizes: Sizes) -> list[dict[str, str]]:
    figures = [
        [Figure(label, count, spec) for label, spec in _specs(sizes, count)]
        for count in sizes.instances
    ]
    with tempfile.TemporaryDirectory(prefix="bench-cluster-") as folder:
        for count, row in zip(sizes.instances, figures, strict=True):
            with running(Path(folder), count, env=INSTANCE_ENV) as cluster:
                if count == sizes.instances[0]:
                    # The instances applied the schema; the pool stays for the later counts.
                    asyncio.run(_prefill(cluster.database_url, sizes.pool))
                # Repeats go round the figures, so that a burst of noise spreads over them.
                for _ in range(sizes.repeats):
                    for figure in row:
                        figure.runs.append(_measure(cluster, figure.spec))
    one = {figure.label: figure.median("rate") for figure in figures[0]}
    return [
        figure.row(
            f"with nginx: {one['simulate msgpack'] / one[NO_NGINX]:.2f}x"
            if figure.label == NO_NGINX
            else f"{figure.median('rate') / one[figure.label]:.2f}x 1 instance"
        )
        for row in figures
        for figure in row
    ]


async def _matches(spec: dict[str, Any]) -> dict[str, Any]:
    """Match actions for `seconds`: requests/s and latency of the actions alone."""
    base = spec["base_url"]
    clock = Clock()
    actions = Tally(clock)
    others = Tally(clock)  # creates, joins and reads: counted for the CPU, not timed

    async def play(session: aiohttp.ClientSession, number: int) -> None:
        rng = random.Random(number)
        tokens = [await _player(session, base, f"m{number}-{seat}") for seat in (0, 1)]
        headers = [_headers("json", token) for token in tokens]

        async def read(seat: int, match_id: str) -> Any:
            async with session.get(f"{base}/v1/matches/{match_id}", headers=headers[seat]) as got:
                others.completed += 1
                if got.status != 200:
                    others.error(str(got.status))
                    return None
                return await got.json()

        while clock.running():
            seat = 0
            body = _json({"game": "necromancers", "seats": 2})
            created = await _timed(others, session, f"{base}/v1/matches", body, headers[0])
            if created is None:
                return
            url = f"{base}/v1/matches/{created['match_id']}"
            if await _timed(others, session, f"{url}/join", b"{}", headers[1]) is None:
                return
            state = await read(0, created["match_id"])
            if state is not None and state["to_act"] != [0]:
                seat = state["to_act"][0]
                state = await read(seat, created["match_id"])
            while state is not None and state["status"] == "active" and clock.running():
                sent = _json(
                    {"version": state["version"], "action": rng.choice(state["legal_actions"])}
                )
                state = await _timed(actions, session, f"{url}/actions", sent, headers[seat])
                if state is not None and state["status"] == "active" and not state["legal_actions"]:
                    # The other seat is asked now: its own read gives its choices.
                    seat = state["to_act"][0]
                    state = await read(seat, created["match_id"])

    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        await _run([play(session, n) for n in range(spec["concurrency"])], spec, clock)
    latencies = actions.latencies_ms
    return {
        "requests": len(latencies),
        "rate": len(latencies) / spec["elapsed"],
        "p50_ms": percentile(latencies, 0.5) if latencies else 0.0,
        "p99_ms": percentile(latencies, 0.99) if latencies else 0.0,
        "errors": dict(Counter(others.errors) + Counter(actions.errors)),
        "cpu": spec["cpu"],
        "completed": actions.completed + others.completed,
    }


def main() -> int:
    print(json.dumps(asyncio.run(_matches(json.loads(sys.argv[1])))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
