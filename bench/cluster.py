"""`python -m bench --cluster`: throughput through nginx with 1, 2 and 3 instances.

Each instance count is a local topology of its own (service.runtime.cluster: PostgreSQL,
PgBouncer in transaction mode, instances of one worker, nginx), on one data directory whose
pairing pool is pre-filled once. Through the balancer it measures, with bench.load's clients,
the battle endpoint (msgpack), the end-turn loop (buying what fits) and match actions (Duelo de
Nigromantes against a bot seat), each the median of a few runs that go round the figures; with
one instance also the battle endpoint without nginx, for what the balancer costs in the same
run. `server us/req` is the instances' CPU per answered request.
"""

import asyncio
import statistics
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import psutil

from bench import http, pairing
from service.runtime.cluster import Cluster, running

SIMULATE = "/v1/battles/simulate"
NO_NGINX = "simulate msgpack, no nginx"
# Never refused, as in the single-instance bench.
INSTANCE_ENV = http.UNLIMITED


@dataclass(frozen=True)
class Sizes:
    instances: tuple[int, ...]
    repeats: int
    seconds: float
    warmup: float
    clients: int  # simulate clients, end-turn players, matches in play
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
        errors = sum(sum(run["errors"].values()) for run in self.runs)
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
        (
            "end-turn, fitting buys",
            {"mode": "end-turn", "buys": "fitting", "concurrency": sizes.clients, **timing},
        ),
        ("match actions", {"mode": "match", "concurrency": sizes.clients, **timing}),
    ]
    if instances == 1:
        # The same battles sent straight to the instance: what nginx costs, in the same run.
        direct = {**simulate, "concurrency": sizes.clients, **timing, "direct": True}
        specs.insert(1, (NO_NGINX, direct))
    return specs


def _cpu_seconds(cluster: Cluster) -> float:
    times = [psutil.Process(i.process.pid).cpu_times() for i in cluster.instances if i.process]
    return float(sum(t.user + t.system for t in times))


def _measure(cluster: Cluster, spec: dict[str, Any]) -> dict[str, Any]:
    before = _cpu_seconds(cluster)
    base_url = cluster.instances[0].url if spec.get("direct") else cluster.balancer_url
    result = http.load({**spec, "base_url": base_url})
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
