"""Debian's Chromium, driven by Playwright, for the tests of pages (`make test` installs it;
Playwright's own browser download is not used)."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from playwright.async_api import Browser, async_playwright

CHROMIUM = Path("/usr/bin/chromium")
# Without the background-networking flags, Chromium keeps calling out of this closed network.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WAIT_MS = 5000


def _require_chromium() -> None:
    # Failing, not skipping, when it is not installed, so that a page cannot break unnoticed.
    if not CHROMIUM.exists():
        pytest.fail(
            f"the pages' browser tests need Debian's Chromium at {CHROMIUM}; install it with"
            " `sudo apt-get install -y chromium`"
        )


@asynccontextmanager
async def launched(*extra_args: str) -> AsyncIterator[Browser]:
    """A headless Chromium for the block."""
    _require_chromium()
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=[*CHROMIUM_ARGS, *extra_args], timeout=3 * WAIT_MS
        )
        yield browser
        await browser.close()
