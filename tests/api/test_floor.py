from collections.abc import Callable
from typing import Any

import pytest

from service.api import floor
from service.config import Settings
from tests.conftest import running_service
from tests.http import Api


def _cryptids(picks: list[tuple[str, int, int]]) -> dict[str, Any]:
    return {"cryptids": [{"species": s, "ability": a, "level": lv} for s, a, lv in picks]}


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
async def test_floor_answers_the_precomputed_simulate_result_when_enabled(
    make_settings: Callable[..., Settings], fmt: str
) -> None:
    enabled = make_settings(bench_floor=True)
    async with running_service(enabled) as api:
        _, token = await api.new_player()
        request = {
            "seed": floor.FLOOR_SEED,
            "a": _cryptids(floor.FLOOR_A),
            "b": _cryptids(floor.FLOOR_B),
        }
        simulated = await api.post("/v1/battles/simulate", request, token=token, fmt=fmt)
        answer = await api.post("/v1/bench/floor", request, fmt=fmt)
        document = (await api.get("/v1/openapi.json")).body
    assert answer.status == 200
    assert answer.headers["Content-Type"] == simulated.headers["Content-Type"]
    assert answer.raw == simulated.raw
    assert "post" in document["paths"]["/v1/bench/floor"]


async def test_floor_is_absent_by_default(api: Api) -> None:
    answer = await api.post("/v1/bench/floor", {})
    document = (await api.get("/v1/openapi.json")).body
    assert answer.status == 404
    assert "/v1/bench/floor" not in document["paths"]
