"""A bystander's view of an attack: one player's `GET /v1/players/me`, timed while an attacker
running in a process of its own is paused and let go in turn, so that what else the machine
does weighs on both alike: CYCLES windows of SAMPLES_PER_WINDOW samples of each.

The attacker is a module run as `python -m MODULE SPEC` that prints `started` once ready,
attacks between the lines `go` and `stop` it reads, and prints its counts (JSON) at the end
of its input.
"""

import asyncio
import json
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.http import Api

CYCLES = 5
SAMPLES_PER_WINDOW = 10
SAMPLE_GAP_SECONDS = 0.02
RAMP_SECONDS = 0.1
SETTLE_SECONDS = 0.2
# A few seconds when the service holds; a service that does not fails here rather than hang.
MEASURING_SECONDS = 60.0


@dataclass(frozen=True)
class Measured:
    """The bystander's times (ms), idle and under attack, and what the attacker counted."""

    idle: list[float]
    loaded: list[float]
    counts: Any

    @property
    def idle_p50(self) -> float:
        return statistics.median(self.idle)

    @property
    def loaded_p50(self) -> float:
        return statistics.median(self.loaded)

    def summary(self, under: str) -> str:
        def p90(times: list[float]) -> float:
            return statistics.quantiles(times, n=10)[-1]

        return (
            f"bystander GET /v1/players/me p50: idle {self.idle_p50:.2f} ms, {under}"
            f" {self.loaded_p50:.2f} ms ({self.loaded_p50 / self.idle_p50:.2f}x); p90 idle"
            f" {p90(self.idle):.2f} ms, {under} {p90(self.loaded):.2f} ms"
        )


async def _latencies_ms(api: Api, token: str) -> list[float]:
    """SAMPLES_PER_WINDOW times of `GET /v1/players/me`, a little apart."""
    headers = {"Authorization": f"Bearer {token}"}
    latencies = []
    for _ in range(SAMPLES_PER_WINDOW):
        started = time.perf_counter()
        async with api.session.get(api.base_url + "/v1/players/me", headers=headers) as answer:
            await answer.read()
            assert answer.status == 200
        latencies.append((time.perf_counter() - started) * 1000)
        await asyncio.sleep(SAMPLE_GAP_SECONDS)
    return latencies


async def under_attack(
    api: Api, token: str, module: str, spec: dict[str, Any], repo_root: Path
) -> Measured:
    """The bystander of `token` timed idle and while `module` attacks as `spec` says."""
    attacker = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        module,
        json.dumps(spec),
        cwd=repo_root,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert attacker.stdin is not None and attacker.stdout is not None
    idle: list[float] = []
    loaded: list[float] = []
    try:
        async with asyncio.timeout(MEASURING_SECONDS):
            assert await attacker.stdout.readline() == b"started\n"
        async with asyncio.timeout(MEASURING_SECONDS):
            for _ in range(CYCLES):
                idle += await _latencies_ms(api, token)
                attacker.stdin.write(b"go\n")
                await asyncio.sleep(RAMP_SECONDS)
                loaded += await _latencies_ms(api, token)
                attacker.stdin.write(b"stop\n")
                await asyncio.sleep(SETTLE_SECONDS)
        attacker.stdin.close()
        output, _ = await asyncio.wait_for(attacker.communicate(), 30)
    finally:
        if attacker.returncode is None:
            attacker.kill()
            await attacker.wait()
    return Measured(idle, loaded, json.loads(output))
