import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from service.games.cryptids import ENGINE_BUILD


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _request(url: str, body: dict[str, Any] | None = None, token: str | None = None) -> Any:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    with urllib.request.urlopen(urllib.request.Request(url, data, headers), timeout=5) as answer:
        return json.loads(answer.read())


def _start(repo_root: Path, data_dir: Path, port: int) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update({"DATA_DIR": str(data_dir), "PORT": str(port), "LOG_FORMAT": "json"})
    return subprocess.Popen(
        [sys.executable, "-m", "service", "serve"],
        cwd=repo_root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _wait_healthy(base: str, process: subprocess.Popen[bytes], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read() if process.stderr else b""
        try:
            if _request(base + "/healthz")["status"] == "ok":
                return
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.1)
    raise AssertionError("service did not become healthy")


def _stop(process: subprocess.Popen[bytes]) -> str:
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr.decode()
    return stderr.decode()


def test_serve_uses_the_embedded_database_keeps_its_data_and_stops_it(
    tmp_path: Path, repo_root: Path
) -> None:
    port = _free_port()
    base = f"http://127.0.0.1:{port}"

    first = _start(repo_root, tmp_path, port)
    try:
        _wait_healthy(base, first)
        created = _request(base + "/v1/players", {"name": "persisted"})
        token = created["token"]
        match = _request(base + "/v1/matches", {"game": "necromancers", "seats": 2}, token)
        events = f"{base}/v1/matches/{match['match_id']}/events"
        seen = _request(events, None, token)["last_seq"]
        # A long-poll in flight when SIGTERM arrives still gets its answer before the exit.
        with ThreadPoolExecutor(1) as pool:
            in_flight = pool.submit(_request, f"{events}?after={seen}&wait=2", None, token)
            time.sleep(0.5)
            first.send_signal(signal.SIGTERM)
            polled = in_flight.result(timeout=15)
        _, stderr = first.communicate(timeout=30)
    finally:
        if first.poll() is None:
            _stop(first)
    log = stderr.decode()
    assert first.returncode == 0, log
    assert polled["status"] == "waiting" and polled["events"] == []
    assert not (tmp_path / "pgdata" / "postmaster.pid").exists(), "embedded database left running"
    assert '"event":"embedded_database_stopped"' in log
    # Which engine build serves is logged once, at start.
    lines = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    assert [line["engine"] for line in lines if line["event"] == "listening"] == [ENGINE_BUILD]

    second = _start(repo_root, tmp_path, port)
    try:
        _wait_healthy(base, second)
        me = _request(base + "/v1/players/me", token=created["token"])
        # A third service on the same data directory refuses, leaving the running one alone.
        third = _start(repo_root, tmp_path, _free_port())
        _, third_err = third.communicate(timeout=30)
        assert third.returncode == 2
        assert b"in use by pid" in third_err
        assert _request(base + "/readyz") == {"status": "ready"}
    finally:
        _stop(second)
    assert me["name"] == "persisted"
    assert (tmp_path / "secret_key").exists()
