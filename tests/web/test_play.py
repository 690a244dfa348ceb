"""The web client's shell at /play: served under the dashboard's policy, signs in with a device id
the browser keeps, and comes back signed in after a reload."""

from playwright.async_api import Browser, Page, expect

from service.api import pages
from tests.browser import WAIT_MS
from tests.http import Api


async def open_play(browser: Browser, base_url: str) -> tuple[Page, list[str]]:
    """A new browser's page at /play, and the problems it meets: console errors, failed
    requests and any request that leaves the service's origin."""
    page = await browser.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on(
        "request",
        lambda r: None if r.url.startswith(base_url) else problems.append(f"outside: {r.url}"),
    )
    await page.goto(base_url + "/play")
    return page, problems


async def sign_in(page: Page, name: str) -> None:
    await page.get_by_label("Your name").fill(name)
    await page.get_by_role("button", name="Start playing").click()
    await expect(page.locator("#who")).to_contain_text(f"{name}#", timeout=WAIT_MS)


async def test_the_page_and_its_files_are_served_under_a_strict_policy(api: Api) -> None:
    for path, media in [
        ("/play", "text/html"),
        ("/play/assets/play.js", "text/javascript"),
        ("/play/assets/play.css", "text/css"),
    ]:
        answer = await api.get(path)
        assert answer.status == 200, path
        assert answer.headers["Content-Type"].startswith(media)
        assert answer.headers["Content-Security-Policy"] == pages.CSP
    assert (await api.get("/play/assets/play.html")).status == 404
    assert (await api.get("/play/assets/nothing.js")).status == 404


async def test_a_player_signs_in_once_and_a_reload_keeps_them(api: Api, browser: Browser) -> None:
    page, problems = await open_play(browser, api.base_url)
    await sign_in(page, "webby")
    handle = await page.locator("#who").inner_text()
    device = await page.evaluate("Object.keys(localStorage).length")
    assert device > 0
    await page.reload()
    await expect(page.locator("#who")).to_have_text(handle, timeout=WAIT_MS)
    await expect(page.get_by_label("Your name")).to_have_count(0)
    assert problems == []
    await page.close()
