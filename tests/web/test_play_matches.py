"""The web client's turn-based games (#/games, #/matches/ID), driven in Chromium by clicks alone:
a match of every game against a bot played to its end on the prompt's buttons; two players
seated together by "Play now" who see each other's moves arrive, also once their sockets drop,
and are rated; a match without bots that a second player joins from the lobby; a reload that
comes back to the same prompt; a refusal that says why; and the replay viewer drawing a finished
match's table with the same renderer (docs/architecture.md#views)."""

import asyncio
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
from playwright.async_api import Browser, Page, WebSocketRoute, expect

from service.config import Settings
from tests.browser import WAIT_MS
from tests.conftest import running_service
from tests.http import Api
from tests.web.test_play import open_play, sign_in

GAMES = ["necromancers", "fate-duel", "loyalty", "medianokte"]
# Every game played on its first offered action ends within this many answers, and in this time.
MOST_STEPS = 600
GAME_SECONDS = 30
REFUSED = (
    "Failed to load resource: the server responded with a status of 422 (Unprocessable Entity)"
)
MATCH_URL = re.compile(r"#/matches/([\w-]+)$")
# A first rated match: from unrated to the new rating, and the change with its sign.
RATED = re.compile(r"^Your rating in Duelo de Nigromantes: unrated → -?\d+ \([+\u2212±]\d+\)\.$")

# Runs in the page: what the prompt asks once it is ready for an answer at a version other than
# the last one answered (null until then), or the match's status once it is no longer active.
PROMPT_READY = """(last) => {
    const match = document.querySelector(".match-screen");
    if (!match || !match.dataset.status) return null;
    if (match.dataset.status !== "active") return { status: match.dataset.status };
    const prompt = document.getElementById("prompt");
    if (prompt.getAttribute("aria-busy") === "true" || prompt.dataset.version === last) return null;
    const actions = prompt.querySelectorAll("button.action").length;
    if (actions === 0 && !prompt.querySelector("form.param")) return null;
    const { version, kind } = prompt.dataset;
    return { status: "active", version, kind, actions };
}"""


@pytest.fixture
async def api(make_settings: Any, fresh_database_url: str) -> AsyncIterator[Api]:
    """A service on a database of its own: the lobby the page lists holds this test's matches
    only, not those other tests store."""
    async with running_service(make_settings(database_url=fresh_database_url)) as service:
        yield service


async def signed_in(browser: Browser, base_url: str, name: str) -> tuple[Page, list[str]]:
    page, problems = await open_play(browser, base_url)
    page.set_default_timeout(WAIT_MS)
    await sign_in(page, name)
    return page, problems


def game_section(page: Page, game: str) -> Any:
    return page.locator(f'section.game[data-game="{game}"]')


async def new_match(page: Page, game: str) -> str:
    """A match against a bot, made with the games screen's defaults: its id."""
    await page.get_by_role("link", name="Table games").click()
    await game_section(page, game).get_by_role("button", name="New match").click()
    await expect(page).to_have_url(MATCH_URL)
    await expect(page.locator(".match-screen")).to_have_attribute("data-status", "active")
    found = MATCH_URL.search(page.url)
    assert found is not None
    return found.group(1)


async def ready(page: Page, last: str | None) -> dict[str, Any]:
    handle = await page.wait_for_function(PROMPT_READY, arg=last, timeout=WAIT_MS)
    value: dict[str, Any] = await handle.json_value()
    return value


async def answer_first(page: Page, asked: dict[str, Any]) -> None:
    """The prompt's first action; with none, its first parameterised action at first values."""
    prompt = page.locator("#prompt")
    if asked["actions"] > 0:
        # PROMPT_READY has just seen the buttons drawn and enabled: Playwright's wait for a still
        # element, two frames a click, would double a long match's time.
        await prompt.locator("button.action").first.click(force=True)
        return
    form = prompt.locator("form.param").first
    for field in await form.locator("input[type=number]").all():
        await field.fill(await field.get_attribute("min") or "0")
    for select in await form.locator("select").all():
        await select.select_option(index=0)
    await form.locator("button[type=submit]").click()


async def play_to_the_end(page: Page) -> int:
    """Answer every prompt with its first offer until the match is over: the answers given."""
    last: str | None = None
    async with asyncio.timeout(GAME_SECONDS):
        for step in range(MOST_STEPS):
            asked = await ready(page, last)
            if asked["status"] != "active":
                assert asked["status"] == "finished"
                return step
            last = asked["version"]
            await answer_first(page, asked)
    raise AssertionError(f"the match did not end in {MOST_STEPS} answers")


async def play_both_to_the_end(pages: list[Page]) -> None:
    """Each page answers its own prompts with their first offer, until the match is over."""
    last: dict[int, str | None] = dict.fromkeys(range(len(pages)))
    async with asyncio.timeout(GAME_SECONDS):
        for _ in range(MOST_STEPS):
            over = 0
            for index, page in enumerate(pages):
                asked = await page.evaluate(PROMPT_READY, last[index])
                if asked is None:
                    continue
                if asked["status"] != "active":
                    over += 1
                elif await page.locator("#turn").inner_text() == "Your turn.":
                    last[index] = asked["version"]
                    await answer_first(page, asked)
            if over == len(pages):
                return
            await asyncio.sleep(0.02)
    raise AssertionError(f"the match did not end in {MOST_STEPS} rounds")


async def catalogue_names(api: Api, game: str) -> set[str]:
    entries = (await api.get(f"/v1/content/{game}")).body["entries"]
    return {entry["name"] for entry in entries}


@pytest.mark.parametrize("game", GAMES)
async def test_a_match_against_a_bot_is_played_to_its_end_on_the_prompts_buttons(
    api: Api, browser: Browser, game: str
) -> None:
    page, problems = await signed_in(browser, api.base_url, f"tabler-{game}")
    await page.get_by_role("link", name="Table games").click()
    section = game_section(page, game)
    await expect(section.get_by_role("button", name="Play now")).to_be_visible()
    match_id = await new_match(page, game)
    names = await catalogue_names(api, game)
    # The table names its cards from the catalogue, and shows what is hidden as a count.
    drawn = await page.locator("#table .tile .card-name").all_inner_texts()
    assert drawn and set(drawn) <= names, set(drawn) - names
    await expect(page.locator("#table .area.mine")).to_be_visible()
    steps = await play_to_the_end(page)
    assert steps > 0
    await expect(page.locator("#outcome")).to_have_text(re.compile(r"won\.$"))
    # One player against a bot: the match rates nobody, and the page says so.
    await expect(page.locator("#rating")).to_contain_text("did not change your rating")
    await expect(page.locator("#rating")).to_contain_text("Bots are not rated")
    await expect(page.locator("#prompt button.action")).to_have_count(0)
    assert MATCH_URL.search(page.url) and match_id in page.url
    assert await page.locator("#log li").count() > steps
    assert problems == [], problems
    await page.close()


async def test_two_players_press_play_now_and_see_each_others_moves_arrive(
    browser: Browser, make_settings: Any, fresh_database_url: str
) -> None:
    settings: Settings = make_settings(database_url=fresh_database_url)
    async with running_service(settings) as api:
        ana, ana_problems = await signed_in(browser, api.base_url, "ana")
        bea, bea_problems = await signed_in(browser, api.base_url, "bea")
        # Every match socket passes through here, so that the test can drop them (the routing
        # takes effect in the next document: the library keeps the WebSocket it was loaded with).
        sockets: asyncio.Queue[WebSocketRoute] = asyncio.Queue()

        def relay(socket: WebSocketRoute) -> None:
            socket.connect_to_server()
            sockets.put_nowait(socket)

        for page in (ana, bea):
            await page.route_web_socket(re.compile(r"/v1/matches/[\w-]+/ws"), relay)
            await page.reload()
            await page.get_by_role("link", name="Table games").click()
        # A search shows, and can be called off.
        ana_game = game_section(ana, "necromancers")
        await ana_game.get_by_role("button", name="Play now").click()
        await expect(ana_game.locator(".searching")).to_contain_text("Searching")
        await ana_game.get_by_role("button", name="Cancel").click()
        await expect(ana_game.locator(".searching")).to_have_text("Search cancelled.")
        await ana_game.get_by_role("button", name="Play now").click()
        await game_section(bea, "necromancers").get_by_role("button", name="Play now").click()
        for page in (ana, bea):
            await expect(page).to_have_url(MATCH_URL)
            await expect(page.locator(".match-screen")).to_have_attribute("data-status", "active")
        assert ana.url == bea.url
        # Whoever the roll-off put first moves; the other sees it come, without a reload.
        first, other = (
            (ana, bea) if await ana.locator("#turn").inner_text() == "Your turn." else (bea, ana)
        )
        await expect(first.locator("#turn")).to_have_text("Your turn.")
        await expect(other.locator("#turn")).to_have_text(re.compile(r"^Waiting for seat \d\.$"))
        target = first.locator("#prompt button.action").first
        await expect(target).to_have_text(re.compile(r"^Target: seat \d$"))
        await target.click()
        await expect(other.locator('#log li[data-kind="target_chosen"]')).to_have_count(1)
        await expect(other.locator("#latest")).not_to_be_empty()
        await expect(
            other.locator('#table .area.shared [data-field="target"] dd')
        ).not_to_be_empty()
        # Both sockets drop: each page reads what it missed and follows on a new one, on which
        # the match is played out between them; it rates both, and each page shows the change.
        dropped = [sockets.get_nowait() for _ in range(sockets.qsize())]
        assert len(dropped) == 2
        for socket in dropped:
            await socket.close()
        async with asyncio.timeout(WAIT_MS / 1000):
            for _ in dropped:
                await sockets.get()
        await play_both_to_the_end([ana, bea])
        for page in (ana, bea):
            await expect(page.locator("#rating")).to_have_text(RATED)
        outcomes = {await page.locator("#outcome").inner_text() for page in (ana, bea)}
        assert "You won." in outcomes and len(outcomes) == 2, outcomes
        assert (ana_problems, bea_problems) == ([], [])
        await ana.close()
        await bea.close()


async def test_a_match_without_bots_waits_in_the_lobby_until_another_player_joins_it(
    api: Api, browser: Browser
) -> None:
    host, host_problems = await signed_in(browser, api.base_url, "host")
    await host.get_by_role("link", name="Table games").click()
    section = game_section(host, "necromancers")
    await section.get_by_label("seat 1").uncheck()
    await section.get_by_role("button", name="New match").click()
    await expect(host).to_have_url(MATCH_URL)
    await expect(host.locator(".match-screen")).to_have_attribute("data-status", "waiting")
    await expect(host.locator("#turn")).to_have_text("Waiting for players to join.")
    found = MATCH_URL.search(host.url)
    assert found is not None
    match_id = found.group(1)
    guest, guest_problems = await signed_in(browser, api.base_url, "guest")
    await guest.get_by_role("link", name="Table games").click()
    listed = game_section(guest, "necromancers").locator(f'.open li[data-match="{match_id}"]')
    await expect(listed).to_contain_text("2 seats, 1 free")
    await listed.get_by_role("button", name="Join").click()
    await expect(guest).to_have_url(re.compile(f"#/matches/{match_id}$"))
    # The host's table fills in as the guest sits down, without a reload.
    for page in (host, guest):
        await expect(page.locator(".match-screen")).to_have_attribute("data-status", "active")
        await expect(page.locator("#table .area.seat")).to_have_count(2)
    await expect(host.locator('#log li[data-kind="seat_taken"]')).to_have_count(2)
    assert (host_problems, guest_problems) == ([], [])
    await host.close()
    await guest.close()


async def test_a_reload_mid_match_comes_back_to_the_same_prompt_and_plays_on(
    api: Api, browser: Browser
) -> None:
    page, problems = await signed_in(browser, api.base_url, "reloader")
    match_id = await new_match(page, "fate-duel")
    last: str | None = None
    for _ in range(3):
        asked = await ready(page, last)
        last = asked["version"]
        await answer_first(page, asked)
    asked = await ready(page, last)
    logged = await page.locator("#log li").count()
    await page.reload()
    again = await ready(page, None)
    assert MATCH_URL.search(page.url) and match_id in page.url
    assert (again["version"], again["kind"], again["actions"]) == (
        asked["version"],
        asked["kind"],
        asked["actions"],
    )
    # The moves so far are read back, and the follower goes on from the last of them.
    assert await page.locator("#log li").count() == logged
    await answer_first(page, again)
    after = await ready(page, again["version"])
    assert int(after["version"]) > int(again["version"])
    assert await page.locator("#log li").count() > logged
    assert problems == [], problems
    await page.close()


async def test_a_refused_parameter_shows_the_reason_and_changes_nothing(
    api: Api, browser: Browser
) -> None:
    page, problems = await signed_in(browser, api.base_url, "cutter")
    await new_match(page, "medianokte")
    asked = await ready(page, None)
    assert (asked["kind"], asked["actions"]) == ("cut", 0)
    form = page.locator('#prompt form.param[data-type="cut"]')
    at = form.get_by_label("At")
    most = await at.get_attribute("max")
    assert most is not None
    await at.fill(str(int(most) + 1))
    await form.get_by_role("button", name="Send cut").click()
    await expect(page.locator("#message")).to_contain_text("(bad_param)")
    assert (await ready(page, None))["version"] == asked["version"]
    await at.fill("1")
    await form.get_by_role("button", name="Send cut").click()
    await ready(page, asked["version"])
    assert problems == [REFUSED], problems
    await page.close()


async def _finished_fate_duel(api: Api) -> tuple[str, str]:
    """A fate duel against a bot played to its end through the API: (token, match id)."""
    _, token = await api.new_player("replayed")
    games = (await api.get("/v1/games", token=token)).body["games"]
    sample = next(game for game in games if game["id"] == "fate-duel")["sample_loadout"]
    body = {"game": "fate-duel", "seats": 2, "bots": [1], "loadout": sample}
    match_id = (await api.post("/v1/matches", body, token=token)).body["match_id"]
    for _ in range(MOST_STEPS):
        state = (await api.get(f"/v1/matches/{match_id}", token=token)).body
        if state["status"] == "finished":
            return token, match_id
        action = {"version": state["version"], "action": state["prompt"]["actions"][0]}
        answer = await api.post(f"/v1/matches/{match_id}/actions", action, token=token)
        assert answer.status == 200, answer.body
    raise AssertionError("the fate duel did not end")


async def test_the_replay_viewer_draws_a_finished_match_with_the_catalogues_names(
    api: Api, browser: Browser
) -> None:
    token, match_id = await _finished_fate_duel(api)
    replay = (await api.get(f"/v1/matches/{match_id}/replay", token=token)).body
    names = await catalogue_names(api, "fate-duel")
    page = await browser.new_page(viewport={"width": 1280, "height": 720})
    page.set_default_timeout(WAIT_MS)
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on(
        "request",
        lambda r: None if r.url.startswith(api.base_url) else problems.append(f"outside: {r.url}"),
    )
    await page.goto(f"{api.base_url}/watch/matches/{match_id}")
    await page.fill("#token", token)
    await page.click("#token-form button[type=submit]")
    table = page.locator("#match-table")
    await expect(table.locator(".area.seat")).to_have_count(2)
    drawn = set(await table.locator(".tile .card-name").all_inner_texts())
    crews = [crew["name"] for crew in replay["final"]["crews"]]
    assert drawn and drawn <= names, drawn - names
    # Every card is revealed at the end: no hidden stack, and both crews' models by name.
    await expect(table.locator(".tile.back")).to_have_count(0)
    for crew in replay["final"]["crews"]:
        for model in crew["models"]["cards"]:
            assert model["name"] in drawn
    await expect(table.locator(".area.seat")).to_contain_text(crews)
    # The timeline names the cards of its events from the catalogue too.
    timeline = page.locator("#side-a .timeline li")
    await expect(timeline).to_have_count(len(replay["events"]))
    flipped = next(i for i, e in enumerate(replay["events"]) if e["kind"] == "flipped")
    card = replay["events"][flipped]["data"]["cards"][0]["card"]
    entry = next(
        e for e in (await api.get("/v1/content/fate-duel")).body["entries"] if e["id"] == card
    )
    await expect(timeline.nth(flipped)).to_contain_text(entry["name"])
    await expect(page.locator("#title")).to_have_text(f"Duelos Simples match {match_id[:8]}")
    assert problems == [], problems
    await page.close()
