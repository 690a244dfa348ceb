import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from service.config import ConfigError, load_settings
from tests.runtime.test_serve import _free_port, _wait_healthy


def _get(url: str) -> tuple[str, str]:
    """One request on a connection of its own: (X-Worker-Pid, body)."""
    with urllib.request.urlopen(url, timeout=5) as answer:
        return answer.headers["X-Worker-Pid"], answer.read().decode()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"


def test_two_workers_share_the_port_and_stop_with_the_database(
    tmp_path: Path, repo_root: Path
) -> None:
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    env = {
        k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "PROMETHEUS_MULTIPROC_DIR")
    }
    env.update({"DATA_DIR": str(tmp_path), "PORT": str(port), "WORKERS": "2", "LOG_FORMAT": "json"})
    # The log goes to a file: a pipe nobody reads fills after a few hundred request lines, and
    # then the worker writing the next one blocks.
    log_path = tmp_path / "service.log"
    with log_path.open("wb") as log_file:
        master = subprocess.Popen(
            [sys.executable, "-m", "service", "serve"],
            cwd=repo_root,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=log_file,
        )
    try:
        _wait_healthy(base, master)
        pids: set[str] = set()
        deadline = time.monotonic() + 30
        while len(pids) < 2 and time.monotonic() < deadline:
            pids.add(_get(base + "/healthz")[0])
        assert len(pids) == 2, "one worker answered every connection"
        children = Path(f"/proc/{master.pid}/task/{master.pid}/children").read_text().split()
        assert pids == set(children)
        # Every worker's requests count in a scrape of any one of them.
        requests = 20
        for _ in range(requests):
            _get(base + "/readyz")
        scraped = _get(base + "/metrics")[1]
        counted = re.search(r'http_requests_total\{[^}]*route="/readyz"[^}]*\} (\S+)', scraped)
        assert counted is not None and float(counted.group(1)) == requests
    finally:
        master.send_signal(signal.SIGTERM)
        master.wait(timeout=60)
        log = log_path.read_text()
        # The service's own log, which pytest shows when the test fails.
        sys.stderr.write(log[-8000:])
    assert master.returncode == 0, log
    assert not any(_alive(int(pid)) for pid in pids)
    assert not (tmp_path / "pgdata" / "postmaster.pid").exists(), "embedded database left running"
    assert log.count('"event":"worker_started"') == 2
    assert log.rindex('"event":"embedded_database_stopped"') > log.rindex("worker_started")


def test_worker_count_floor_switch_and_request_logging_are_read(tmp_path: Path) -> None:
    settings = load_settings(
        {"DATA_DIR": str(tmp_path), "WORKERS": "4", "BENCH_FLOOR": "1", "LOG_REQUESTS": "errors"}
    )
    assert (settings.workers, settings.bench_floor, settings.log_requests) == (4, True, "errors")
    defaults = load_settings({"DATA_DIR": str(tmp_path)})
    assert (defaults.workers, defaults.bench_floor, defaults.log_requests) == (1, False, "all")


@pytest.mark.parametrize(
    ("name", "value"), [("WORKERS", "0"), ("BENCH_FLOOR", "yes"), ("LOG_REQUESTS", "some")]
)
def test_unusable_worker_settings_are_named(tmp_path: Path, name: str, value: str) -> None:
    with pytest.raises(ConfigError, match=name):
        load_settings({"DATA_DIR": str(tmp_path), name: value})
