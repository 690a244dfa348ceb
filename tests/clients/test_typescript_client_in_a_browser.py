"""The TypeScript client's bundle in a real browser (Debian's Chromium, driven by Playwright).

A page on the service's origin imports dist/cryptid-client.js as a web page would, with no
Node.js anywhere: the browser's fetch, its WebSocket (whose frames come as JSON text, since a
browser cannot ask a socket for msgpack) and localStorage. It signs in, sends a seed of 2^64 - 1
and reads it back exact, follows a match over the socket while playing it to its end against a
bot, and resumes the session from localStorage in a second client.

The page and the bundle are handed to the browser by Playwright under the service's origin
(clients/typescript/test-helpers/browser.html); every other request reaches the service.
"""

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser

from tests.browser import launched
from tests.http import Api

PACKAGE = Path(__file__).resolve().parents[2] / "clients" / "typescript"
SCENARIO_MS = 60_000


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Browser]:
    # The page is handed over by Playwright, not by the service, so Chromium cannot tell it is
    # local, and its local-network check would refuse the page's socket to 127.0.0.1.
    async with launched("--disable-features=LocalNetworkAccessChecks") as chromium:
        yield chromium


async def test_the_bundle_works_in_a_browser_page(api: Api, browser: Browser) -> None:
    page = await browser.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    html = (PACKAGE / "test-helpers" / "browser.html").read_text()
    bundle = (PACKAGE / "dist" / "cryptid-client.js").read_text()
    await page.route(
        "**/typescript-client/index.html",
        lambda route: route.fulfill(body=html, content_type="text/html"),
    )
    await page.route(
        "**/typescript-client/cryptid-client.js",
        lambda route: route.fulfill(body=bundle, content_type="text/javascript"),
    )
    try:
        await page.goto(f"{api.base_url}/typescript-client/index.html")
        await page.wait_for_function("window.__result !== undefined", timeout=SCENARIO_MS)
        result = await page.evaluate("window.__result")
    finally:
        await page.close()
    assert "error" not in result, result.get("error")
    assert problems == []
    assert result["kept"] == ["cryptid.device_id", "cryptid.player", "cryptid.refresh_token"]
    assert result["resumed"] == result["player"], "a second client resumed from localStorage"
    assert (result["seed"], result["seedIsBigInt"]) == (str(2**64 - 1), True)
    assert result["transports"] == ["socket"], "followed over the browser's WebSocket"
    assert result["seqs"] == result["everything"], json.dumps(result)
