import asyncio

from service.config import Settings
from tests.conftest import TEST_OPS_TOKEN, running_service
from tests.http import Api


async def test_ops_endpoint_needs_the_ops_token(api: Api) -> None:
    missing = await api.get("/v1/ops/database")
    assert missing.status == 401
    wrong = await api.get("/v1/ops/database", headers={"X-Ops-Token": "guess"}, fmt="msgpack")
    assert wrong.status == 403
    assert wrong.error_code == "forbidden"
    right = await api.get("/v1/ops/database", headers={"X-Ops-Token": TEST_OPS_TOKEN})
    assert right.status == 200
    assert right.body["max_size"] >= right.body["size"] >= right.body["in_use"] >= 0


async def test_a_player_token_is_not_an_ops_token(api: Api) -> None:
    _, token = await api.new_player()
    answer = await api.get("/v1/ops/database", headers={"X-Ops-Token": token})
    assert answer.status == 403


async def test_rate_limit_answers_429_with_retry_after_then_recovers(
    make_settings: type[Settings],
) -> None:
    settings = make_settings(rate_limit_burst=3, rate_limit_per_second=2.0)
    async with running_service(settings) as api:
        _, token = await api.new_player()
        statuses = [(await api.get("/v1/players/me", token=token)).status for _ in range(3)]
        limited = await api.get("/v1/players/me", token=token, fmt="msgpack")
        # Another player has its own bucket.
        _, other = await api.new_player()
        other_answer = await api.get("/v1/players/me", token=other)
        await asyncio.sleep(int(limited.headers["Retry-After"]))
        recovered = await api.get("/v1/players/me", token=token)
    assert statuses == [200, 200, 200]
    assert limited.status == 429
    assert limited.error_code == "rate_limited"
    assert int(limited.headers["Retry-After"]) >= 1
    assert other_answer.status == 200
    assert recovered.status == 200
