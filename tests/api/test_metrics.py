import asyncio
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from prometheus_client.parser import text_string_to_metric_families

from tests.api.runs_helpers import seeded_run, spend_gold
from tests.conftest import service_and_app
from tests.http import Api


def _samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


async def _scrape(api: Api) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    answer = await api.get("/metrics")
    assert answer.status == 200
    assert answer.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    return _samples(answer.raw.decode())


def _value(
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str
) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


@pytest.fixture
async def fresh_gauges(
    make_settings: Any, fresh_database_url: str
) -> AsyncIterator[tuple[Api, web.Application]]:
    """A service on a database of its own whose cluster gauges are read again at every scrape
    but the one right after the last."""
    settings = make_settings(database_url=fresh_database_url, metrics_cache_seconds=0.001)
    async with service_and_app(settings) as pair:
        yield pair


async def test_requests_are_counted_by_route_template_and_status(api: Api) -> None:
    _, token = await api.new_player()
    before = await _scrape(api)
    await api.get("/v1/runs/00000000-0000-0000-0000-000000000000", token=token)
    await api.get("/v1/nowhere")
    after = await _scrape(api)
    route = dict(route="/v1/runs/{run_id}", method="GET", status="404")
    assert (
        _value(after, "http_requests_total", **route)
        == _value(before, "http_requests_total", **route) + 1
    )
    unmatched = dict(route="unmatched", method="GET", status="404")
    assert (
        _value(after, "http_requests_total", **unmatched)
        >= _value(before, "http_requests_total", **unmatched) + 1
    )
    assert _value(after, "http_request_duration_seconds_count", route="/v1/runs/{run_id}") >= 1


async def test_end_turns_move_battles_pairings_and_the_cluster_gauges(
    fresh_gauges: tuple[Api, web.Application],
) -> None:
    api, app = fresh_gauges
    before = await _scrape(api)
    token, run_id = await seeded_run(app, api, seed=9)
    await spend_gold(api, token, (await api.get(f"/v1/runs/{run_id}", token=token)).body)
    turn = (await api.post(f"/v1/runs/{run_id}/end-turn", {"round": 1}, token=token)).body
    after = await _scrape(api)
    assert turn["pairing"] == "bot"
    assert (
        _value(after, "pairings_total", rung="bot")
        == _value(before, "pairings_total", rung="bot") + 1
    )
    assert (
        _value(after, "battles_resolved_total", source="end_turn")
        == _value(before, "battles_resolved_total", source="end_turn") + 1
    )
    assert (
        _value(after, "pairing_rating_gap_count") == _value(before, "pairing_rating_gap_count") + 1
    )
    assert _value(after, "matchmaking_pool_depth", round="1") == 1
    assert _value(after, "matchmaking_bot_rate") == 1.0
    assert _value(after, "runs_active") == 1
    assert ("db_pool_connections", frozenset()) in after


async def test_matches_and_their_actions_are_counted(
    fresh_gauges: tuple[Api, web.Application],
) -> None:
    api, _ = fresh_gauges
    _, token = await api.new_player()
    before = await _scrape(api)
    created = await api.post(
        "/v1/matches", {"game": "necromancers", "seats": 2, "bots": [1]}, token=token
    )
    assert created.status == 201
    after = await _scrape(api)
    assert _value(after, "matches_open", game="necromancers", status="active") >= 1
    bot_moves = _value(after, "match_actions_total", game="necromancers", by="bot")
    assert bot_moves >= _value(before, "match_actions_total", game="necromancers", by="bot")


async def test_cluster_gauges_are_read_from_the_database_at_most_once_a_window(
    make_settings: Any, fresh_database_url: str
) -> None:
    slow = make_settings(database_url=fresh_database_url, metrics_cache_seconds=3600.0)
    async with service_and_app(slow) as (api, app):
        first = await _scrape(api)
        await seeded_run(app, api, seed=9)
        scrapes = await asyncio.gather(*(_scrape(api) for _ in range(10)))
        # The run is open in the database, but the gauges read at the first scrape still hold.
        assert _value(first, "runs_active") == 0
        assert [_value(again, "runs_active") for again in scrapes] == [0] * 10
        # This process's own figures are never held back.
        players = dict(route="/v1/players", method="POST", status="201")
        assert _value(scrapes[0], "http_requests_total", **players) == (
            _value(first, "http_requests_total", **players) + 1
        )
    quick = make_settings(database_url=fresh_database_url, metrics_cache_seconds=0.05)
    async with service_and_app(quick) as (api, app):
        await _scrape(api)
        await seeded_run(app, api, seed=10)
        await asyncio.sleep(0.1)
        assert _value(await _scrape(api), "runs_active") == 2


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_with_a_metrics_port_metrics_are_served_there_and_not_on_the_public_port(
    make_settings: Any,
) -> None:
    port = _free_port()
    async with service_and_app(make_settings(metrics_port=port)) as (api, _):
        public = await api.get("/metrics")
        assert (public.status, public.error_code) == (404, "not_found")
        assert public.body["error"]["message"] == "no such path: /metrics"
        internal = Api(api.session, f"http://127.0.0.1:{port}")
        samples = await _scrape(internal)
        # The public port's refusal was counted like any other request.
        refused = dict(route="/metrics", method="GET", status="404")
        assert _value(samples, "http_requests_total", **refused) >= 1


async def test_a_scrape_renders_at_most_once_a_window_and_every_scrape_in_it_gets_that_text(
    make_settings: Any,
) -> None:
    async with service_and_app(make_settings(metrics_render_seconds=3600.0)) as (api, _):
        first = await api.get("/metrics")
        await api.get("/healthz")
        again = await asyncio.gather(*(api.get("/metrics") for _ in range(10)))
        assert {answer.raw for answer in again} == {first.raw}
    async with service_and_app(make_settings(metrics_render_seconds=0.05)) as (api, _):
        before = await _scrape(api)
        await api.get("/healthz")
        await asyncio.sleep(0.1)
        after = await _scrape(api)
        healthz = dict(route="/healthz", method="GET", status="200")
        assert _value(after, "http_requests_total", **healthz) == (
            _value(before, "http_requests_total", **healthz) + 1
        )


async def test_scrapes_count_against_the_per_address_request_limit(
    make_settings: Any, fresh_database_url: str
) -> None:
    tight = make_settings(
        database_url=fresh_database_url, rate_limit_per_second=0.01, rate_limit_burst=3
    )
    async with service_and_app(tight) as (api, _):
        statuses = [(await api.get("/metrics")).status for _ in range(4)]
        refused = await api.get("/metrics")
    assert statuses == [200, 200, 200, 429]
    assert (refused.status, refused.error_code) == (429, "rate_limited")
