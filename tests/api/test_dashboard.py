"""The ops dashboard: served offline with a strict CSP, and working in a real Chromium."""

import asyncio
import dataclasses
import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from aiohttp import web
from playwright.async_api import Browser, ConsoleMessage, Page, Request, expect

from service.api.keys import POOL
from service.config import Settings
from service.store import migrate
from service.version import VERSION
from tests.api.runs_helpers import WEAK, add_snapshot, ghost_player, seeded_run, spend_gold
from tests.api.test_backup_gauges import add_base_backup, backup_dir_of_known_ages
from tests.browser import WAIT_MS
from tests.conftest import TEST_OPS_TOKEN, running_service, service_and_app
from tests.http import Api

API_PATH = "**/v1/ops/matchmaking"
# Counts the page's fetches of its report as they are made, so a test can tell that none
# happened (each load also reads /healthz, for the release line).
COUNT_FETCHES = """
window.__fetches = 0;
const realFetch = window.fetch;
window.fetch = (...args) => {
  if (String(args[0]).includes("/v1/ops/")) window.__fetches += 1;
  return realFetch(...args);
};
"""
HIDE = """hidden => {
    Object.defineProperty(document, "hidden", {value: hidden, configurable: true});
    document.dispatchEvent(new Event("visibilitychange"));
}"""


@pytest.fixture
async def deep_service(
    settings: Settings, fresh_database_url: str
) -> AsyncIterator[tuple[Api, web.Application]]:
    """An empty service where a round with two fresh snapshots is no longer thin."""
    changed = dataclasses.replace(settings, database_url=fresh_database_url, ops_thin_pool=2)
    async with service_and_app(changed) as pair:
        yield pair


async def _end_turn(api: Api, token: str, run_id: str) -> None:
    run = (await api.get(f"/v1/runs/{run_id}", token=token)).body
    if not run["warband"]:
        await spend_gold(api, token, run)
    answer = await api.post(f"/v1/runs/{run_id}/end-turn", {"round": run["round"]}, token=token)
    assert answer.status == 200, answer.body


async def _play_three_rounds(api: Api, app: web.Application) -> None:
    """Three runs end round 1 (the seeded ghost is not in the roll-ups the report counts); one
    goes on alone to rounds 2 and 3, where it meets an earlier round, then a bot. One match of
    necromancers waits for two more players."""
    pool = app[POOL]
    await add_snapshot(pool, await ghost_player(pool), 1, 1120, WEAK)
    for seed in (1, 2):
        token, run_id = await seeded_run(app, api, seed)
        await _end_turn(api, token, run_id)
    token, run_id = await seeded_run(app, api, 3)
    for _ in range(3):
        await _end_turn(api, token, run_id)
    match = {"game": "necromancers", "seats": 3}
    assert (await api.post("/v1/matches", match, token=token)).status == 201


async def _new_page(browser: Browser) -> Page:
    page = await browser.new_page(viewport={"width": 1440, "height": 900}, color_scheme="light")
    page.set_default_timeout(WAIT_MS)
    return page


async def _sign_in(page: Page, token: str) -> None:
    await page.fill("#token", token)
    await page.click("#token-form button[type=submit]")


async def test_dashboard_files_are_served_with_their_types_and_a_strict_csp(api: Api) -> None:
    expected = {
        "/ops": "text/html",
        "/ops/ops.css": "text/css",
        "/ops/ops.js": "text/javascript",
        "/ops/favicon.svg": "image/svg+xml",
    }
    for path, content_type in expected.items():
        answer = await api.get(path)
        assert answer.status == 200, path
        assert answer.headers["Content-Type"].split(";")[0] == content_type
        csp = answer.headers["Content-Security-Policy"]
        assert "default-src 'self'" in csp and "script-src 'self'" in csp
        assert "unsafe-inline" not in csp
        assert answer.headers["Cache-Control"] == "no-cache"
        again = await api.get(path, headers={"If-None-Match": answer.headers["ETag"]})
        assert again.status == 304 and again.raw == b""
    page = (await api.get("/ops")).raw.decode()
    assert '<script src="/ops/ops.js"' in page and "<style" not in page
    for missing in ("/ops/ops.html", "/ops/nope.js", "/ops/..%2Fdashboard.py"):
        answer = await api.get(missing)
        assert answer.status == 404 and answer.error_code == "not_found"


async def test_dashboard_flags_the_thin_round_and_not_the_deep_one(
    browser: Browser, deep_service: tuple[Api, web.Application], tmp_path: Path
) -> None:
    api, app = deep_service
    await _play_three_rounds(api, app)
    page = await _new_page(browser)
    hosts: set[str | None] = set()
    problems: list[str] = []

    def note_request(request: Request) -> None:
        hosts.add(urlsplit(request.url).hostname)

    def note_console(message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text:
            problems.append(message.text)

    page.on("request", note_request)
    page.on("console", note_console)
    page.on("pageerror", lambda error: problems.append(str(error)))
    await page.goto(f"{api.base_url}/ops")

    await _sign_in(page, "not-the-token")
    await expect(page.locator("#token-error")).to_contain_text("rejected (403)")
    await _sign_in(page, TEST_OPS_TOKEN)
    rows = page.locator("#rounds tbody tr[data-round]")
    await expect(rows).to_have_count(3)

    deep, thin, bots = (page.locator(f'#rounds tr[data-round="{n}"]') for n in (1, 2, 3))
    await expect(page.locator("#thresholds")).to_contain_text("under 2 fresh snapshots")
    await expect(page.locator("#meta")).to_contain_text(
        f"release {VERSION} · database at migration {len(migrate.known())} · ruleset"
    )
    await expect(deep.locator("td").first).to_have_text("3")
    await expect(deep.locator("[data-alert]")).to_have_count(0)
    await expect(deep.locator(".verdict")).to_have_text("ok")
    await expect(thin.locator('.badge[data-alert="thin_pool"]')).to_have_text("thin pool")
    await expect(thin.locator('td[data-alert="thin_pool"]')).to_have_text("1")
    await expect(bots.locator('.badge[data-alert="high_bot_rate"]')).to_have_text("high bot rate")
    # Red for the flagged row, the page background for the deep one.
    red = await thin.evaluate("row => getComputedStyle(row).backgroundColor")
    plain = await deep.evaluate("row => getComputedStyle(row).backgroundColor")
    assert red == "rgb(253, 236, 234)" and plain == "rgba(0, 0, 0, 0)"

    necro = page.locator('#games tr[data-game="necromancers"] td')
    await expect(necro).to_have_text(["0", "1", "2", "\N{EN DASH}", "0", "0"])

    bars = page.locator('svg[data-chart="pairings"] rect.bar')
    await expect(bars).to_have_count(24)
    # Five pairings were made just now; summing all bars keeps this true across an hour boundary.
    values = await bars.evaluate_all("bars => bars.map(b => Number(b.dataset.value))")
    assert sum(values) == 5
    assert await page.locator('svg[data-chart="rates"] circle[data-series="bot"]').count() >= 1
    assert await page.locator('svg[data-chart="rates"] text').count() > 10  # axis labels

    screenshot = tmp_path / "ops.png"
    await page.screenshot(path=str(screenshot), full_page=True)
    print(f"dashboard screenshot: {screenshot}")
    await page.close()
    assert hosts == {"127.0.0.1"}
    assert problems == []


async def test_dashboard_refreshes_pauses_when_hidden_and_shows_api_errors(
    browser: Browser, fresh_service: tuple[Api, web.Application]
) -> None:
    api, _ = fresh_service
    page = await _new_page(browser)
    await page.add_init_script(COUNT_FETCHES)
    await page.goto(f"{api.base_url}/ops?refresh=1")
    async with page.expect_response(API_PATH):
        await _sign_in(page, TEST_OPS_TOKEN)
    await expect(page.locator("#rounds td.empty")).to_contain_text("No snapshots")
    await expect(page.locator("#updated")).to_contain_text("updated")

    async with page.expect_response(API_PATH, timeout=5_000):
        pass  # the next poll, a second later on the real clock
    assert await page.evaluate("window.__fetches") == 2

    await page.evaluate(HIDE, True)
    await expect(page.locator("#updated")).to_contain_text("paused")
    await asyncio.sleep(2.5)
    assert await page.evaluate("window.__fetches") == 2
    async with page.expect_response(API_PATH):
        await page.evaluate(HIDE, False)
    assert await page.evaluate("window.__fetches") == 3

    # The page's own rendering of a refusal: the API's 503 is answered in the browser.
    unavailable = {"error": {"code": "unavailable", "message": "database unavailable"}}
    await page.route(API_PATH, lambda route: route.fulfill(status=503, json=unavailable))
    await page.click("#refresh")
    await expect(page.locator("#error")).to_contain_text("503 unavailable")
    await expect(page.locator("#updated")).to_contain_text("update failed")
    await page.unroute(API_PATH)
    await page.click("#refresh")
    await expect(page.locator("#error")).to_be_hidden()
    await page.close()


async def test_the_play_now_queue_shows_its_health_in_the_report_the_metrics_and_the_page(
    browser: Browser, settings: Settings, fresh_database_url: str
) -> None:
    """Two players matched together, one completed with a bot after the delay, one who gave
    up: the report, /metrics and the dashboard all say so, the bot share flagged."""
    quick = dataclasses.replace(
        settings,
        database_url=fresh_database_url,
        matchmaking_bot_after_seconds=1.0,
        ops_high_queue_bot_share=0.25,
        metrics_cache_seconds=0.0,
    )
    ticket = {"game": "necromancers", "seats": 2}
    async with service_and_app(quick) as (api, _):
        tokens = [(await api.new_player(f"q{n}"))[1] for n in range(4)]
        # The one who gives up queues for another game, so that nobody is matched with it.
        gave_up = await api.post(
            "/v1/matchmaking/tickets",
            {"game": "fate-duel", "seats": 2, "loadout": {"crew": "gremio"}},
            token=tokens[3],
        )
        await api.call("DELETE", f"/v1/matchmaking/tickets/{gave_up.body['ticket_id']}",
                       token=tokens[3])  # fmt: skip
        for token in tokens[:2]:
            assert (await api.post("/v1/matchmaking/tickets", ticket, token=token)).status == 201
        lone = (await api.post("/v1/matchmaking/tickets", ticket, token=tokens[2])).body
        matched = await api.get(
            f"/v1/matchmaking/tickets/{lone['ticket_id']}?wait=10", token=tokens[2]
        )
        assert matched.body["status"] == "matched"

        report = await api.get("/v1/ops/matchmaking", headers={"X-Ops-Token": TEST_OPS_TOKEN})
        queues = {q["game"]: q for q in report.body["queues"]}
        necro = queues["necromancers"]
        assert (necro["searching"], necro["matched_hour"], necro["cancelled_hour"]) == (0, 3, 0)
        assert necro["bot_share_hour"] == 0.5 and necro["alerts"] == ["bot_filled"]
        assert necro["wait_seconds_p99"] >= 1.0 > necro["wait_seconds_p50"]
        assert queues["fate-duel"]["cancelled_hour"] == 1
        scraped = (await api.get("/metrics")).raw.decode()
        assert 'matchmaking_queue_bot_share{game="necromancers"} 0.5' in scraped
        assert 'matchmaking_tickets_cancelled{game="fate-duel"} 1.0' in scraped
        assert 'matchmaking_time_to_match_seconds{game="necromancers",quantile="0.95"}' in scraped

        page = await _new_page(browser)
        await page.goto(f"{api.base_url}/ops")
        await _sign_in(page, TEST_OPS_TOKEN)
        row = page.locator('#queues tr[data-game="necromancers"]')
        await expect(row.locator("td").nth(0)).to_have_text("0")
        await expect(row.locator("td").nth(1)).to_have_text("3")
        await expect(row.locator("td").nth(3)).to_have_text("50%")
        await expect(row.locator('.badge[data-alert="bot_filled"]')).to_have_text("bot filled")
        await expect(page.locator("#queue-thresholds")).to_contain_text("over 25%")
        await page.close()


async def test_the_backup_card_shows_both_ages_and_an_alert_line_for_the_stale_one(
    browser: Browser, api: Api, settings: Settings, tmp_path: Path
) -> None:
    """A base backup 30 h old (over the 26 h default) is flagged and the 40 s old WAL is not;
    a new backup clears the alert at the next refresh. An instance that sees no backups says so."""
    backups = backup_dir_of_known_ages(tmp_path / "backups")
    problems: list[str] = []
    async with running_service(dataclasses.replace(settings, backup_dir=backups)) as watched:
        page = await _new_page(browser)
        page.on(
            "console",
            lambda message: problems.append(message.text) if message.type == "error" else None,
        )
        page.on("pageerror", lambda error: problems.append(str(error)))
        await page.goto(f"{watched.base_url}/ops")
        await _sign_in(page, TEST_OPS_TOKEN)
        base, wal = page.locator('[data-backup="base"]'), page.locator('[data-backup="wal"]')
        await expect(base.locator(".kpi-value")).to_have_text("30 h ago")
        await expect(base).to_have_class("kpi bad")
        await expect(wal.locator(".kpi-value")).to_have_text(re.compile(r"^4\d s ago$"))
        await expect(wal).to_have_class("kpi")
        alert = page.locator("#backup-alert")
        await expect(alert.locator("[data-alert]")).to_have_count(1)
        await expect(alert.locator('[data-alert="stale_base_backup"]')).to_have_text(
            "The newest base backup is 30 h old (limit 26 h)."
        )
        await expect(page.locator("#backup-thresholds")).to_contain_text(
            "older than 26 h or the WAL archive older than 5 min"
        )
        red = await base.evaluate("tile => getComputedStyle(tile).backgroundColor")
        assert red == "rgb(253, 236, 234)"

        add_base_backup(backups, datetime.now(UTC))
        await page.click("#refresh")
        await expect(alert).to_be_hidden()
        await expect(base).to_have_class("kpi")
        await expect(base.locator(".kpi-value")).to_have_text(re.compile(r"^\d+ s ago$"))
        await page.close()

    page = await _new_page(browser)
    page.on("pageerror", lambda error: problems.append(str(error)))
    await page.goto(f"{api.base_url}/ops")
    await _sign_in(page, TEST_OPS_TOKEN)
    await expect(page.locator('[data-backup="unwatched"]')).to_contain_text("sees no backups")
    await expect(page.locator("#backup-alert")).to_be_hidden()
    await page.close()
    assert problems == []
