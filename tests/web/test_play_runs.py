"""The web client's autobattler (#/runs, #/runs/ID, #/leaderboard), driven in Chromium by clicks
and keys alone and checked against what the API reads: a run played to its end, the warband
arranged by keyboard and by drag, a refused buy, the battle opened in the replay viewer, and the
leaderboards."""

import asyncio
import re
from typing import Any

from playwright.async_api import Browser, Page, expect

from tests.browser import WAIT_MS
from tests.http import Api
from tests.web.test_play import open_play, sign_in

# A run ends at 5 losses or 10 wins; draws cost nothing, so the bound leaves room for some.
MOST_ROUNDS = 30
RUN_SECONDS = 45
TEST_SECONDS = 20
BUY = re.compile(r"^Buy ")
REFUSED = (
    "Failed to load resource: the server responded with a status of 422 (Unprocessable Entity)"
)


async def token_of(page: Page, api: Api) -> str:
    """A token of the page's player: a session of its own, signed in with the device id the page
    keeps, so that the page's own session is left as it was."""
    device = await page.evaluate("localStorage.getItem('cryptid.device_id')")
    assert device, "the page keeps its device id in localStorage"
    answer = await api.post("/v1/auth/device", {"device_id": device})
    assert answer.status == 200, answer.body
    return str(answer.body["access_token"])


async def playing(browser: Browser, api: Api, name: str) -> tuple[Page, list[str], str]:
    """A page signed in as a new player, and a token of that player for the test's own reads."""
    page, problems = await open_play(browser, api.base_url)
    await sign_in(page, name)
    return page, problems, await token_of(page, api)


def round_heading(page: Page, number: int) -> Any:
    return page.get_by_role("heading", name=f"Round {number}", exact=True)


async def new_run(page: Page) -> str:
    """Start a run with the button of #/runs; its id, from the address it goes to."""
    await page.get_by_role("link", name="Autobattler").click()
    await page.get_by_role("button", name="New run").click()
    await expect(page).to_have_url(re.compile(r"#/runs/[\w-]+$"), timeout=WAIT_MS)
    await expect(round_heading(page, 1)).to_be_visible(timeout=WAIT_MS)
    return page.url.rsplit("/", 1)[1]


async def read_run(api: Api, token: str, run_id: str) -> dict[str, Any]:
    answer = await api.get(f"/v1/runs/{run_id}", token=token)
    assert answer.status == 200, answer.body
    run: dict[str, Any] = answer.body
    return run


async def shown(page: Page, stat: str) -> str:
    return await page.locator(f'[data-stat="{stat}"]').inner_text()


async def spend(page: Page, button: Any) -> None:
    """Click a button that costs gold, and wait for the gold shown to change."""
    gold = await shown(page, "gold")
    await button.click()
    await expect(page.locator('[data-stat="gold"]')).not_to_have_text(gold, timeout=WAIT_MS)


async def warband_shown(page: Page) -> list[str]:
    return [
        str(await member.get_attribute("data-species"))
        for member in await page.locator(".slot.member").all()
    ]


async def two_kinds(page: Page) -> list[str]:
    """Buy until the warband holds two cryptids of different species, rerolling for one."""
    await spend(page, page.get_by_role("button", name=BUY).first)
    first = (await warband_shown(page))[0]
    for _ in range(3):
        offers = [
            await offer.get_attribute("data-species")
            for offer in await page.locator(".offer[data-species]").all()
        ]
        other = next((i for i, species in enumerate(offers) if species != first), None)
        if other is not None:
            await spend(page, page.get_by_role("button", name=BUY).nth(other))
            return await warband_shown(page)
        await spend(page, page.get_by_role("button", name=re.compile(r"^Reroll")))
    raise AssertionError("no offer of another species in three rerolls")


async def warband_read(api: Api, token: str, run_id: str) -> list[str]:
    return [member["species"] for member in (await read_run(api, token, run_id))["warband"]]


async def test_a_run_is_played_to_its_end_by_clicking(api: Api, browser: Browser) -> None:
    page, problems, token = await playing(browser, api, "runner")
    handle = await page.locator("#who").inner_text()
    run_id = await new_run(page)
    async with asyncio.timeout(RUN_SECONDS):
        for number in range(1, MOST_ROUNDS + 1):
            await expect(round_heading(page, number)).to_be_visible(timeout=WAIT_MS)
            # Buy what the gold and the warband's room allow, then fight.
            while (
                int(await shown(page, "gold")) >= 3
                and await page.locator(".slot.member").count() < 5
                and await page.get_by_role("button", name=BUY).count() > 0
            ):
                await spend(page, page.get_by_role("button", name=BUY).first)
            shopped = await read_run(api, token, run_id)
            assert await shown(page, "gold") == str(shopped["gold"])
            assert await warband_shown(page) == [m["species"] for m in shopped["warband"]]
            await page.get_by_role("button", name="End turn").click()
            result = page.get_by_role("heading", name=re.compile(rf"^Round {number}: "))
            await expect(result).to_be_visible(timeout=WAIT_MS)
            run = await read_run(api, token, run_id)
            assert run["round"] == number + 1
            assert await shown(page, "lives") == f"{run['lives']} of 5"
            assert await shown(page, "wins") == f"{run['wins']} of 10"
            watch = page.get_by_role("link", name="Watch the battle")
            battle_id = str(await watch.get_attribute("href")).removeprefix("/watch/")
            battle = (await api.get(f"/v1/battles/{battle_id}", token=token)).body
            assert battle["round"] == number
            outcome = {"player": "you won", "ghost": "you lost", "draw": "a draw"}
            await expect(result).to_have_text(f"Round {number}: {outcome[battle['winner']]}")
            health = battle["health"]
            assert await page.locator('[data-health="player"]').inner_text() == str(
                health["player"]
            )
            assert await page.locator('[data-health="ghost"]').inner_text() == str(health["ghost"])
            if run["status"] != "shopping":
                break
        else:
            raise AssertionError(f"the run did not end in {MOST_ROUNDS} rounds")
    assert (run["status"] == "won" and run["wins"] == 10) or (
        run["status"] == "lost" and run["lives"] == 0
    )
    await expect(page.get_by_role("heading", name="Run over")).to_be_visible()
    await expect(page.locator("[data-record]")).to_contain_text(f"Final record: {run['wins']} win")
    await expect(page.get_by_role("button", name=BUY)).to_have_count(0)
    await expect(page.get_by_role("button", name="End turn")).to_have_count(0)
    # Its end offers a new run, which starts afresh.
    await page.get_by_role("button", name="New run").click()
    await expect(round_heading(page, 1)).to_be_visible(timeout=WAIT_MS)
    assert page.url.rsplit("/", 1)[1] != run_id
    await expect(page.locator('[data-stat="lives"]')).to_have_text("5 of 5")
    # The leaderboard lists the player, around itself, at the rating the API gives it now.
    me = (await api.get("/v1/players/me", token=token)).body
    await page.get_by_role("link", name="Leaderboard").click()
    row = page.get_by_role("region", name="Around you").locator("tr.me")
    await expect(row).to_have_count(1, timeout=WAIT_MS)
    await expect(row.locator(".handle")).to_contain_text(handle)
    await expect(row.locator(".rating")).to_have_text(str(me["rating"]))
    assert problems == []
    await page.close()


async def test_the_warband_is_arranged_by_keyboard_and_by_drag(api: Api, browser: Browser) -> None:
    async with asyncio.timeout(TEST_SECONDS):
        page, problems, token = await playing(browser, api, "arranger")
        run_id = await new_run(page)
        first, second = await two_kinds(page)
        assert await warband_read(api, token, run_id) == [first, second]
        # The keyboard: focus the leftmost cryptid and press →; it moves, and the focus with it.
        await page.locator(".slot.member").first.focus()
        await page.keyboard.press("ArrowRight")
        await expect(page.locator(".slot.member").nth(1)).to_have_attribute(
            "data-species", first, timeout=WAIT_MS
        )
        assert await warband_read(api, token, run_id) == [second, first]
        focused = await page.evaluate("document.activeElement.dataset.focus")
        assert focused == "member-1"
        await page.keyboard.press("ArrowLeft")
        await expect(page.locator(".slot.member").first).to_have_attribute(
            "data-species", first, timeout=WAIT_MS
        )
        assert await warband_read(api, token, run_id) == [first, second]
        # Its buttons, reached by Tab (◀ is disabled at the left end) and pressed with Enter.
        await page.locator(".slot.member").first.focus()
        await page.keyboard.press("Tab")
        assert await page.evaluate("document.activeElement.dataset.focus") == "right-0"
        await page.keyboard.press("Enter")
        await expect(page.locator(".slot.member").first).to_have_attribute(
            "data-species", second, timeout=WAIT_MS
        )
        assert await warband_read(api, token, run_id) == [second, first]
        # A drag of the leftmost cryptid onto the other's place.
        await page.locator(".slot.member").first.drag_to(page.locator(".slot.member").nth(1))
        await expect(page.locator(".slot.member").first).to_have_attribute(
            "data-species", first, timeout=WAIT_MS
        )
        assert await warband_read(api, token, run_id) == [first, second]
        # An offer dragged onto a place is bought into it (next round: the gold is back), in a
        # window tall enough to hold both: a drag that scrolls the page drops nowhere.
        await page.set_viewport_size({"width": 1280, "height": 1400})
        await page.get_by_role("button", name="End turn").click()
        await expect(round_heading(page, 2)).to_be_visible(timeout=WAIT_MS)
        offer = page.locator(".offer[data-species]").first
        bought = str(await offer.get_attribute("data-species"))
        await offer.drag_to(page.locator(".slot.member").first)
        await expect(page.locator(".slot.member")).to_have_count(3, timeout=WAIT_MS)
        assert await warband_read(api, token, run_id) == [bought, first, second]
        assert problems == []
        await page.close()


async def test_a_refused_buy_shows_its_reason(api: Api, browser: Browser) -> None:
    async with asyncio.timeout(TEST_SECONDS):
        page, problems, token = await playing(browser, api, "spender")
        await page.set_viewport_size({"width": 375, "height": 740})
        run_id = await new_run(page)
        while await page.get_by_role("button", name=BUY).count() > 0:
            await spend(page, page.get_by_role("button", name=BUY).first)
        await spend(page, page.get_by_role("button", name=re.compile(r"^Reroll")))
        assert await shown(page, "gold") == "0"
        await page.get_by_role("button", name=BUY).first.click()
        message = page.locator("#message")
        await expect(message).to_be_visible(timeout=WAIT_MS)
        await expect(message).to_contain_text("not_enough_gold")
        await expect(message).to_contain_text("costs 3 gold, you have 0")
        run = await read_run(api, token, run_id)
        assert run["gold"] == 0 and all(offer is not None for offer in run["shop"])
        # The next move that is made takes the refusal away.
        freeze = page.get_by_role("button", name=re.compile(r"^Freeze ")).first
        await freeze.click()
        await expect(message).to_be_hidden(timeout=WAIT_MS)
        await expect(
            page.get_by_role("button", name=re.compile(r"^Freeze ")).first
        ).to_have_attribute("aria-pressed", "true")
        assert (await read_run(api, token, run_id))["shop"][0]["frozen"] is True
        # It reads on a phone: nothing wider than the screen.
        assert await page.evaluate("document.documentElement.scrollWidth") <= 375
        # The refusal itself is all the browser logged (Chromium logs every answer in 4xx).
        assert problems == [REFUSED]
        await page.close()


async def test_the_battle_link_opens_the_viewer_which_verifies_it(
    api: Api, browser: Browser
) -> None:
    async with asyncio.timeout(TEST_SECONDS):
        page, problems, token = await playing(browser, api, "watcher")
        me = (await api.get("/v1/players/me", token=token)).body
        await new_run(page)
        await spend(page, page.get_by_role("button", name=BUY).first)
        await page.get_by_role("button", name="End turn").click()
        link = page.get_by_role("link", name="Watch the battle")
        await expect(link).to_be_visible(timeout=WAIT_MS)
        battle_id = str(await link.get_attribute("href")).removeprefix("/watch/")
        # By the keyboard, as a player would without a mouse.
        await link.focus()
        await page.keyboard.press("Enter")
        await expect(page).to_have_url(f"{api.base_url}/watch/{battle_id}", timeout=WAIT_MS)
        verdict = page.locator("#verdict")
        await expect(verdict).to_have_text(
            re.compile(r"^verified: (\d+) of \1 rolls match$"), timeout=WAIT_MS
        )
        # The viewer was handed a token of the player, which the API takes.
        handed = await page.evaluate("sessionStorage.getItem('cryptid-player-token')")
        viewer = await api.get("/v1/players/me", token=handed)
        assert viewer.status == 200 and viewer.body["player_id"] == me["player_id"]
        # Back in the game, the battle is still shown.
        await page.go_back()
        await expect(page.get_by_role("heading", name=re.compile(r"^Round 1: "))).to_be_visible(
            timeout=WAIT_MS
        )
        assert problems == []
        await page.close()


async def test_the_leaderboards_show_a_run_given_up_and_each_game(
    api: Api, browser: Browser
) -> None:
    async with asyncio.timeout(TEST_SECONDS):
        page, problems, token = await playing(browser, api, "quitter")
        handle = await page.locator("#who").inner_text()
        run_id = await new_run(page)
        await page.get_by_role("link", name="Autobattler").click()
        item = page.locator(f'[data-run="{run_id}"]')
        await item.get_by_role("button", name="Give up").click()
        await item.get_by_role("button", name="Give up: sure?").click()
        await expect(page.locator(f'.run-item.abandoned[data-run="{run_id}"]')).to_be_visible(
            timeout=WAIT_MS
        )
        assert (await read_run(api, token, run_id))["status"] == "abandoned"
        me = (await api.get("/v1/players/me", token=token)).body
        assert me["rating"] == 1000 - 16, "a run given up settles one more loss"
        await page.get_by_role("link", name="Leaderboard").click()
        around = page.get_by_role("region", name="Around you")
        row = around.locator("tr.me")
        await expect(row.locator(".handle")).to_contain_text(handle, timeout=WAIT_MS)
        await expect(row.locator(".rating")).to_have_text(str(me["rating"]))
        # A turn-based game's board, by the selector: a player without a match there is unrated.
        await page.get_by_label("Board").select_option("necromancers")
        await expect(around).to_contain_text("You are not rated here yet", timeout=WAIT_MS)
        await expect(page.locator(".leaderboard .hint")).to_contain_text("Season ")
        board = (await api.get("/v1/leaderboard?game=necromancers&limit=20", token=token)).body
        shown_handles = (
            await page.get_by_role("region", name="Best 20").locator(".handle").all_inner_texts()
        )
        assert shown_handles == [entry["handle"] for entry in board["entries"]]
        await page.get_by_label("Board").select_option("")
        await expect(around.locator("tr.me .rating")).to_have_text(
            str(me["rating"]), timeout=WAIT_MS
        )
        assert problems == []
        await page.close()
