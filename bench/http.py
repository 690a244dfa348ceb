"""The service under load: a real `python -m service serve`, load generators in their own processes.

The service runs with its embedded PostgreSQL in a throw-away DATA_DIR (or on a database the
caller started), the floor endpoint on (BENCH_FLOOR=1) and a rate limit high enough never to
refuse. Each measurement starts a fresh
`python -m bench.load` process, so the generator's event loop never shares a core's time slice
with the server's in the same process; the server's CPU per answered request is read from /proc.
"""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TICKS = os.sysconf("SC_CLK_TCK")
START_SECONDS = 120.0
# The engine's own time per battle on demand, as the service's /metrics gives it (all workers).
_ENGINE_SERIES = re.compile(
    r'^battle_duration_seconds_(sum|count)\{source="simulate"\} (\S+)$', re.MULTILINE
)


@dataclass
class Service:
    base_url: str
    process: subprocess.Popen[bytes]
    workers: int

    def worker_pids(self) -> list[int]:
        """The processes that serve: the master's children with several workers, else itself."""
        if self.workers == 1:
            return [self.process.pid]
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        return [int(pid) for pid in children.read_text().split()]

    def cpu_seconds(self) -> float:
        """CPU time (user + system) the serving processes used so far."""
        total = 0
        for pid in self.worker_pids():
            # The command name in field 2 may hold spaces; the fields after its ')' do not.
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
            total += int(fields[11]) + int(fields[12])
        return total / TICKS

    def engine_seconds(self) -> tuple[float, float]:
        """Seconds the engine has spent on battles on demand so far, and how many it fought."""
        with urllib.request.urlopen(self.base_url + "/metrics", timeout=10) as answer:
            series = dict(_ENGINE_SERIES.findall(answer.read().decode()))
        return float(series.get("sum", 0.0)), float(series.get("count", 0.0))

    def peak_rss_mb(self) -> list[float]:
        """Each serving process's peak resident set (VmHWM), in MiB."""
        peaks = []
        for pid in self.worker_pids():
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peaks.append(int(line.split()[1]) / 1024)
        return peaks


# No limit ever refuses the load generator, which registers and signs in its many clients from
# one address: the figures are the service's, not its limits'.
UNLIMITED = {
    name: "1000000000"
    for name in (
        "RATE_LIMIT_PER_SECOND",
        "RATE_LIMIT_BURST",
        "REGISTRATIONS_PER_ADDRESS_PER_HOUR",
        "REGISTRATIONS_PER_ADDRESS_PER_DAY",
        "SIGN_INS_PER_ADDRESS_PER_MINUTE",
        "WS_HANDSHAKES_PER_ADDRESS_PER_MINUTE",
        "WS_HANDSHAKES_PER_PLAYER_PER_MINUTE",
    )
}


# The engine's time is read from /metrics before and after each row: a scrape renders afresh
# rather than answer the text of the last second.
FRESH_METRICS = {"METRICS_RENDER_SECONDS": "0.001"}


# The play-now row measures the queue's work: with the band open, players are matched with
# whoever queues next, however far apart the resigned matches have put their ratings.
QUEUE_WIDE_OPEN = {"MATCHMAKING_BAND": "1000"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _healthy(base_url: str) -> bool:
    try:
        with urllib.request.urlopen(base_url + "/healthz", timeout=2) as answer:
            return bool(answer.status == 200)
    except (urllib.error.URLError, ConnectionError):
        return False


@contextmanager
def running_service(
    data_dir: Path, workers: int, database_url: str | None = None
) -> Iterator[Service]:
    """`python -m service serve` on a free port of 127.0.0.1, stopped by SIGTERM afterwards;
    on its embedded PostgreSQL in `data_dir`, or on `database_url`."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    if database_url is not None:
        env["DATABASE_URL"] = database_url
    env.update(
        {
            "DATA_DIR": str(data_dir),
            "HOST": "127.0.0.1",
            "PORT": str(port),
            "WORKERS": str(workers),
            "BENCH_FLOOR": "1",
            **UNLIMITED,
            **QUEUE_WIDE_OPEN,
            **FRESH_METRICS,
            "LOG_FORMAT": "json",
        }
    )
    with (data_dir / f"service-{workers}.log").open("ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "service", "serve"], env=env, stdout=log, stderr=log
        )
    service = Service(f"http://127.0.0.1:{port}", process, workers)
    try:
        deadline = time.monotonic() + START_SECONDS
        while not _healthy(service.base_url):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the service did not start; see {log.name}")
            time.sleep(0.1)
        # Every worker must be listening before any figure counts.
        while len(service.worker_pids()) < workers:
            time.sleep(0.1)
        yield service
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise


def load(spec: dict[str, Any]) -> dict[str, Any]:
    """One run of the load generator in its own process (see bench.load)."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.load", json.dumps(spec)],
        capture_output=True,
        check=False,
        timeout=spec["seconds"] + 120,
    )
    if done.returncode != 0:
        raise RuntimeError(f"load generator failed: {done.stderr.decode()[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def measure(service: Service, spec: dict[str, Any]) -> dict[str, Any]:
    """`load(spec)` against the service, with the server's CPU per answered request, and for
    battle requests the engine's own time per battle inside the server."""
    battles = spec["mode"] == "simulate"
    engine_before = service.engine_seconds() if battles else (0.0, 0.0)
    before = service.cpu_seconds()
    result = load({**spec, "base_url": service.base_url})
    used = service.cpu_seconds() - before
    result["server_us"] = used / max(1, result["completed"]) * 1e6
    if battles:
        spent, fought = (
            b - a for a, b in zip(engine_before, service.engine_seconds(), strict=True)
        )
        # The floor fights no battle.
        result["engine_us"] = spent / fought * 1e6 if fought else None
    return result
