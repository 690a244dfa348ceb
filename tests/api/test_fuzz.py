"""API fuzzing with schemathesis against the service's own OpenAPI document.

The service runs as `make serve` runs it (a subprocess with its embedded PostgreSQL); requests
are generated from the document in JSON and msgpack, with an authenticated player, one
operation at a time and then as sequences that follow the links between operations. No request
may get a 5xx, and every answer must match its documented status, media type and schema.
"""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgpack
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import checks
from schemathesis.openapi import from_url

from tests.runtime.test_serve import _free_port

CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
]
EXAMPLES = 12


def _packable(value: Any) -> Any:
    """msgpack has no integers past 64 bits: a client could only send such a number as text."""
    if isinstance(value, dict):
        return {k: _packable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_packable(v) for v in value]
    if isinstance(value, int) and not -(2**63) <= value < 2**64:
        return str(value)
    return value


@schemathesis.serializer("application/msgpack", "application/x-msgpack")
def _to_msgpack(ctx: Any, value: Any) -> bytes:
    packed: bytes = msgpack.packb(_packable(value))
    return packed


@schemathesis.deserializer("application/msgpack")
def _from_msgpack(ctx: Any, response: Any) -> Any:
    return msgpack.unpackb(response.content, raw=False)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, repo_root_module: Path) -> Iterator[str]:
    data_dir = tmp_path_factory.mktemp("fuzz")
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update(
        DATA_DIR=str(data_dir),
        PORT=str(port),
        LOG_REQUESTS="errors",
        LOG_FORMAT="json",
        RATE_LIMIT_PER_SECOND="100000",
        RATE_LIMIT_BURST="100000",
    )
    with (data_dir / "service.log").open("ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "service", "serve"],
            cwd=repo_root_module,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            assert process.poll() is None, (data_dir / "service.log").read_text()
            with contextlib.suppress(OSError):
                if urllib.request.urlopen(base + "/readyz", timeout=2).status == 200:
                    break
            time.sleep(0.1)
        yield base
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)
        assert "unhandled_error" not in (data_dir / "service.log").read_text()


@pytest.fixture(scope="module")
def repo_root_module() -> Path:
    return Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def token(served: str) -> str:
    request = urllib.request.Request(
        served + "/v1/players",
        json.dumps({"name": "fuzzer"}).encode(),
        {"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=5) as answer:
        created: dict[str, str] = json.loads(answer.read())
    return created["token"]


@pytest.fixture(scope="module")
def fuzz_schema(served: str) -> Any:
    schema = from_url(served + "/v1/openapi.json")
    schema.config.update(base_url=served)
    # The WebSocket upgrade is not a plain HTTP answer; the socket tests cover it.
    return schema.exclude(path_regex=r"/ws$")


def test_no_request_gets_a_5xx_and_every_answer_matches_the_document(
    fuzz_schema: Any, token: str
) -> None:
    operations = [result.ok() for result in fuzz_schema.get_all_operations()]
    assert len(operations) > 20
    headers = {"Authorization": f"Bearer {token}", "X-Ops-Token": "fuzz-wrong-token"}
    for operation in operations:
        fuzz = given(case=operation.as_strategy())(_call)
        settings(
            max_examples=EXAMPLES,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            derandomize=True,
        )(fuzz)(headers)


def _call(headers: dict[str, str], case: Any) -> None:
    case.call_and_validate(headers=headers, checks=CHECKS, timeout=10)


def test_sequences_that_follow_the_links_between_operations(fuzz_schema: Any, token: str) -> None:
    machine = fuzz_schema.as_state_machine()

    class Player(machine):  # type: ignore[misc, valid-type]
        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            return {"headers": {"Authorization": f"Bearer {token}"}, "timeout": 10}

        def validate_response(self, response: Any, case: Any, **kwargs: Any) -> None:
            case.validate_response(response, checks=CHECKS)

    Player.run(
        settings=settings(
            max_examples=8,
            stateful_step_count=6,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            derandomize=True,
        )
    )
