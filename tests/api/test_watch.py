"""The replay viewer: served offline with a strict CSP; its JavaScript re-simulator reproduces the
golden corpus byte for byte in Chromium, and the page verifies and plays a stored battle."""

import asyncio
import json
import random
import shutil
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from aiohttp import web
from playwright.async_api import Browser, ConsoleMessage, Page, expect

from service.api import watch
from service.api.keys import POOL
from service.games.cryptids import load_ruleset, simulate
from service.usecases.catalogue import cryptid_catalogue
from tests.api.matches_helpers import new_players, play_out, start_match
from tests.api.runs_helpers import STRONG, add_snapshot, seeded_run, spend_gold
from tests.browser import WAIT_MS
from tests.games.golden.gen import corpus_path
from tests.http import Api

CORPUS = corpus_path("cryptids-2026.12").read_text(encoding="utf-8")
# The worked example of docs/rules/cryptids.md: B wins by wipe on roll 5.
EXAMPLE_QUERY = "seed=1197&a=trauco.1.1,chupacabra.1.1&b=mothman.0.1,nahual.0.1"
EXAMPLE = ("cryptids-2026.12", 1197, [["trauco", 1, 1], ["chupacabra", 1, 1]])
EXAMPLE_B = [["mothman", 0, 1], ["nahual", 0, 1]]

# Runs in the page: every corpus battle re-simulated in JavaScript, its replay packed as msgpack
# and hashed, against the digest the corpus stores (and its winner and roll count).
RESIMULATE_CORPUS = """async ([corpusText]) => {
    const { simulate, parseReplay, sha256, hex } = await import("/watch/assets/resim.js");
    const { pack, wire } = await import("/watch/assets/msgpack.js");
    const corpus = parseReplay(corpusText);
    const content = await (await fetch("/v1/content/cryptids?ruleset=" + corpus.ruleset)).json();
    const wrong = [];
    for (const battle of corpus.battles) {
        const replay = simulate(content, battle.seed, battle.a, battle.b);
        const digest = hex(sha256(pack(wire(replay))));
        if (digest !== battle.replay_sha256 || replay.winner !== battle.winner
            || replay.rolls !== battle.rolls) {
            wrong.push(String(battle.seed));
        }
    }
    return { checked: corpus.battles.length, wrong };
}"""
# Runs in the page: the server's replays (as JSON text) re-simulated, compared event by event
# and hash by hash, then verified whole and with one damage amount altered.
COMPARE_REPLAYS = """async ([replays]) => {
    const { simulate, verify, parseReplay } = await import("/watch/assets/resim.js");
    const ruleset = parseReplay(replays[0]).ruleset;  // the corpus's, not the default
    const content = await (await fetch(`/v1/content/cryptids?ruleset=${ruleset}`)).json();
    const out = [];
    for (const text of replays) {
        const server = parseReplay(text);
        const mine = simulate(content, server.seed, server.a, server.b);
        const altered = parseReplay(text);
        const damage = altered.events.findIndex((e) => e[0] === "damage");
        altered.events[damage][3] += 1;
        const rollOfDamage = altered.events.slice(0, damage).filter((e) => e[0] === "roll").length;
        const bad = verify(content, altered);
        out.push({
            events: JSON.stringify(mine.events) === JSON.stringify(server.events),
            hashes: JSON.stringify(mine.hashes) === JSON.stringify(server.hashes),
            ok: verify(content, server).ok,
            alteredOk: bad.ok,
            alteredAt: bad.firstMismatch,
            expectedAt: rollOfDamage,
        });
    }
    return out;
}"""


class Watched:
    """A page with its console watched: CSP violations and script errors are problems."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.problems: list[str] = []
        self.hosts: set[str | None] = set()
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.problems.append(str(error)))
        page.on("request", lambda request: self.hosts.add(urlsplit(request.url).hostname))

    def _console(self, message: ConsoleMessage) -> None:
        # A refused token is an expected 401; any other console error is a problem.
        if message.type == "error" and "status of 401" not in message.text:
            self.problems.append(message.text)


async def _open(browser: Browser, width: int = 1280, height: int = 720) -> Watched:
    page = await browser.new_page(viewport={"width": width, "height": height}, color_scheme="light")
    page.set_default_timeout(WAIT_MS)
    return Watched(page)


async def _stored_battle(api: Api, app: web.Application) -> tuple[str, int, dict[str, Any]]:
    """A battle of a run played through the API: (player token, battle id, replay)."""
    ghost_id, _ = await api.new_player("ghost-owner")
    await add_snapshot(app[POOL], uuid.UUID(ghost_id), 1, 1000, STRONG)
    token, run_id = await seeded_run(app, api, seed=11)
    await spend_gold(api, token, (await api.get(f"/v1/runs/{run_id}", token=token)).body)
    turn = (await api.post(f"/v1/runs/{run_id}/end-turn", {"round": 1}, token=token)).body
    replay = await api.get(f"/v1/battles/{turn['battle_id']}/replay", token=token)
    assert replay.status == 200
    return token, turn["battle_id"], replay.body


async def _sign_in(page: Page, token: str) -> None:
    await page.fill("#token", token)
    await page.click("#token-form button[type=submit]")


async def test_viewer_files_are_served_with_their_types_and_a_strict_csp(api: Api) -> None:
    expected = {
        "/watch": "text/html",
        "/watch/42": "text/html",
        "/watch/assets/watch.css": "text/css",
        "/watch/assets/watch.js": "text/javascript",
        "/watch/assets/resim.js": "text/javascript",
        "/watch/assets/msgpack.js": "text/javascript",
    }
    for path, content_type in expected.items():
        answer = await api.get(path)
        assert answer.status == 200, path
        assert answer.headers["Content-Type"].split(";")[0] == content_type
        csp = answer.headers["Content-Security-Policy"]
        assert "default-src 'self'" in csp and "script-src 'self'" in csp
        assert "unsafe-inline" not in csp
        again = await api.get(path, headers={"If-None-Match": answer.headers["ETag"]})
        assert again.status == 304
    page = (await api.get("/watch")).raw.decode()
    assert '<script type="module" src="/watch/assets/watch.js"' in page and "<style" not in page
    for missing in ("/watch/assets/watch.html", "/watch/assets/nope.js"):
        answer = await api.get(missing)
        assert answer.status == 404 and answer.error_code == "not_found"


async def test_the_js_resimulator_reproduces_the_golden_corpus_byte_for_byte(
    browser: Browser, api: Api
) -> None:
    watched = await _open(browser)
    await watched.page.goto(f"{api.base_url}/watch")
    result = await watched.page.evaluate(RESIMULATE_CORPUS, [CORPUS])
    await watched.page.close()
    assert result == {"checked": len(json.loads(CORPUS)["battles"]), "wrong": []}
    assert result["checked"] >= 50
    assert watched.problems == []


async def test_the_js_resimulator_matches_server_replays_and_catches_an_altered_event(
    browser: Browser, api: Api
) -> None:
    corpus = json.loads(CORPUS)
    ruleset = load_ruleset(corpus["ruleset"])
    replays = []
    for battle in corpus["battles"]:
        result = simulate(ruleset, battle["seed"], battle["a"], battle["b"])
        assert result.replay is not None
        if any(event[0] == "damage" for event in result.replay.events):
            replays.append(json.dumps(result.replay.to_wire()))
    watched = await _open(browser)
    await watched.page.goto(f"{api.base_url}/watch")
    checks = await watched.page.evaluate(COMPARE_REPLAYS, [replays])
    await watched.page.close()
    assert len(checks) == len(replays) >= 50
    for check in checks:
        assert check["events"] and check["hashes"] and check["ok"]
        assert not check["alteredOk"] and check["alteredAt"] == check["expectedAt"]


async def test_a_stored_battle_is_verified_stepped_and_watched_to_the_end(
    browser: Browser, fresh_service: tuple[Api, web.Application], tmp_path: Path
) -> None:
    api, app = fresh_service
    token, battle_id, replay = await _stored_battle(api, app)
    rolls, events = len(replay["hashes"]), len(replay["events"])
    watched = await _open(browser)
    page = watched.page
    await page.goto(f"{api.base_url}/watch/{battle_id}")
    await _sign_in(page, "not-a-token")
    await expect(page.locator("#token-error")).to_contain_text("refused (401")
    await _sign_in(page, token)
    await expect(page.locator("#verdict")).to_have_text(f"verified: {rolls} of {rolls} rolls match")
    await expect(page.locator("#side-a .card[data-uid]")).to_have_count(len(replay["a"]))
    await expect(page.locator("#side-b .card[data-uid]")).to_have_count(len(replay["b"]))
    await expect(page.locator("#position")).to_have_text(f"roll 0 of {rolls} · event 0 of {events}")

    await page.click("#step")
    _, roll, d1, d2 = replay["events"][0]
    await expect(page.locator("#position")).to_have_text(f"roll 1 of {rolls} · event 1 of {events}")
    await expect(page.locator("#dice .die")).to_have_text([str(d1), str(d2)])
    await expect(page.locator("#log li.current")).to_have_text(f"Roll {roll}: {d1} and {d2}")
    await page.click("#back")
    await expect(page.locator("#position")).to_contain_text("event 0 of")
    await page.click("#next-roll")
    await expect(page.locator("#position")).to_contain_text(f"roll 1 of {rolls}")
    await page.locator("#scrubber").fill(str(rolls))
    await expect(page.locator("#status")).to_have_class("status over")
    await page.click("#prev-roll")
    await expect(page.locator("#position")).to_contain_text(f"roll {rolls - 1} of")

    # Played at the fastest speed from the start, it reaches the end by itself.
    await page.click("#back")
    await page.locator("#scrubber").fill("0")
    await page.select_option("#speed", "16")
    await page.click("#play")
    await expect(page.locator("#play")).to_have_text("Pause")
    end = replay["events"][-1]
    winner = "Draw" if end[1] == "draw" else f"{end[1].upper()} wins"
    await expect(page.locator("#status")).to_contain_text(winner, timeout=30_000)
    await expect(page.locator("#play")).to_have_text("Play")
    await expect(page.locator("#position")).to_have_text(
        f"roll {rolls} of {rolls} · event {events} of {events}"
    )
    await page.screenshot(path=str(tmp_path / "watch.png"))
    print(f"viewer screenshot: {tmp_path / 'watch.png'}")
    await page.close()
    assert watched.hosts == {"127.0.0.1"}
    assert watched.problems == [], watched.problems


async def test_the_simulate_answer_links_to_the_viewer_which_verifies_it_on_a_phone(
    browser: Browser, api: Api
) -> None:
    _, token = await api.new_player("watcher")
    ruleset, seed, a = EXAMPLE

    def side(picks: list[list[Any]]) -> dict[str, Any]:
        return {"cryptids": [{"species": s, "ability": x, "level": n} for s, x, n in picks]}

    request = {"seed": seed, "ruleset": ruleset, "a": side(a), "b": side(EXAMPLE_B)}
    answer = await api.post("/v1/battles/simulate", request, token=token)
    assert answer.status == 200
    assert answer.body["watch"] == f"/watch?ruleset={ruleset}&{EXAMPLE_QUERY}"
    watched = await _open(browser, width=375, height=740)
    page = watched.page
    await page.goto(api.base_url + answer.body["watch"])
    await _sign_in(page, token)
    await expect(page.locator("#verdict")).to_have_text("verified: 5 of 5 rolls match")
    await page.locator("#scrubber").fill("5")
    await expect(page.locator("#status")).to_have_text("B wins by wipe, 0 to 7")
    await expect(page.locator("#side-a .card.dead")).to_have_count(0)  # closed up at the end
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= 375
    # A seed past 2^53 reaches the server and the re-simulator with all its digits.
    largest = await api.post("/v1/battles/simulate", {**request, "seed": 2**64 - 1}, token=token)
    await page.goto(api.base_url + largest.body["watch"])
    rolls = largest.body["rolls"]
    await expect(page.locator("#verdict")).to_have_text(f"verified: {rolls} of {rolls} rolls match")
    await expect(page.locator("#title")).to_contain_text(str(2**64 - 1))
    await page.close()
    assert watched.problems == [], watched.problems


async def test_a_pasted_replay_altered_in_one_event_shows_the_first_roll_that_differs(
    browser: Browser, api: Api
) -> None:
    ruleset, seed, a = EXAMPLE
    result = simulate(load_ruleset(ruleset), seed, a, EXAMPLE_B)
    assert result.replay is not None
    wire = result.replay.to_wire()
    altered: list[Any] = [list(event) for event in wire["events"]]
    # Roll 3's poison on Mothman: one stack more than the rules give.
    index = [i for i, event in enumerate(altered) if event[0] == "poison"][1]
    altered[index][3] += 1
    altered[index][4] += 1
    watched = await _open(browser)
    page = watched.page
    await page.goto(f"{api.base_url}/watch")
    await page.fill("#replay-text", json.dumps({**wire, "events": altered}))
    await page.click("#replay-form button[type=submit]")
    await expect(page.locator("#verdict")).to_have_text(
        "mismatch: roll 3 differs (4 of 5 rolls match)"
    )
    await expect(page.locator("#compare")).to_be_visible()
    title = page.locator("#compare-title")
    await expect(title).to_contain_text(f"re-simulated {wire['hashes'][2]}")
    await expect(page.locator("#compare-theirs .card.diff")).to_have_count(1)
    await expect(page.locator("#compare-mine .card.diff")).to_have_count(1)

    await page.goto(f"{api.base_url}/watch")
    await page.fill("#replay-text", json.dumps(wire))
    await page.click("#replay-form button[type=submit]")
    await expect(page.locator("#verdict")).to_have_text("verified: 5 of 5 rolls match")
    await expect(page.locator("#compare")).to_be_hidden()
    await page.close()
    assert watched.problems == [], watched.problems


async def test_a_finished_match_plays_back_as_a_timeline_with_its_hidden_events_revealed(
    browser: Browser, api: Api
) -> None:
    players = await new_players(api, 2)
    match_id = await start_match(api, players)
    await play_out(api, match_id, players, random.Random(5))
    replay = (await api.get(f"/v1/matches/{match_id}/replay", token=players[1])).body
    events = replay["events"]
    hidden = [event for event in events if event["visible_to"] is not None]
    watched = await _open(browser)
    page = watched.page
    await page.goto(f"{api.base_url}/watch/matches/{match_id}")
    await _sign_in(page, players[1])
    timeline = page.locator("#side-a .timeline li")
    await expect(timeline).to_have_count(len(events))
    await expect(page.locator("#side-a .timeline li.private")).to_have_count(len(hidden))
    await expect(page.locator("#side-b .card.seat")).to_have_count(2)
    await page.click("#step")
    await expect(page.locator("#side-a li.current")).to_have_attribute(
        "data-kind", events[0]["kind"]
    )
    await page.locator("#scrubber").fill(str(len({event["version"] for event in events})))
    await expect(page.locator("#position")).to_contain_text(f"event {len(events)} of {len(events)}")
    winners = ", ".join(f"seat {seat}" for seat in replay["outcome"]["winners"])
    await expect(page.locator("#status")).to_have_text(f"{winners} won" if winners else "No winner")
    await page.close()
    assert watched.problems == [], watched.problems


async def test_a_long_battle_mid_roll_shows_dice_damage_numbers_and_statuses_at_1280x720(
    browser: Browser, api: Api, tmp_path: Path
) -> None:
    corpus = json.loads(CORPUS)
    ruleset = load_ruleset(corpus["ruleset"])
    replays = [simulate(ruleset, b["seed"], b["a"], b["b"]).replay for b in corpus["battles"]]
    # The busiest battle: the most damage, so the screenshot has something on every card.
    busiest = max(replays, key=lambda r: sum(e[0] == "damage" for e in r.events) if r else 0)
    assert busiest is not None
    wire = busiest.to_wire()
    events = wire["events"]
    rolls = len(wire["hashes"])
    watched = await _open(browser)
    page = watched.page
    await page.goto(f"{api.base_url}/watch")
    await page.fill("#replay-text", json.dumps(wire))
    await page.click("#replay-form button[type=submit]")
    await expect(page.locator("#verdict")).to_have_text(f"verified: {rolls} of {rolls} rolls match")
    # Half way, then on to the next damage event: its number floats up from the card it hit.
    middle = rolls // 2
    await page.locator("#scrubber").fill(str(middle))
    start = [i for i, event in enumerate(events) if event[0] == "roll"][middle]
    damage = next(i for i in range(start, len(events)) if events[i][0] == "damage")
    for _ in range(damage - start + 1):
        await page.click("#step")
    _, _, target, amount, _, health = events[damage]
    card = page.locator(f'.card[data-uid="{target}"]')
    await expect(card.locator(".float")).to_have_text(f"\N{MINUS SIGN}{amount}")
    await expect(card.locator('[data-stat="health"]')).to_contain_text(f"{health}/")
    await expect(page.locator("#log li.current")).to_contain_text(f"for {amount}")
    screenshot = tmp_path / "watch.png"
    await page.screenshot(path=str(screenshot))
    print(f"viewer screenshot: {screenshot}")
    await page.close()
    assert watched.problems == [], watched.problems


# The same check in Node, where the module runs on its own (no page, no fetch): a client
# developer's use. Node 20 has no JSON.parse source text, so parseReplay's fallback is used.
NODE_CORPUS = """
import { readFileSync } from "node:fs";
import { simulate, parseReplay, sha256, hex } from "%(resim)s";
import { pack, wire } from "%(msgpack)s";
const [content, corpus] = JSON.parse(readFileSync(0, "utf8")).map(parseReplay);
const wrong = corpus.battles.filter((b) => {
    const replay = simulate(content, b.seed, b.a, b.b);
    return hex(sha256(pack(wire(replay)))) !== b.replay_sha256;
}).map((b) => String(b.seed));
console.log(JSON.stringify({ checked: corpus.battles.length, wrong }));
"""


async def test_the_js_resimulator_reproduces_the_golden_corpus_in_node_when_present() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("no Node here; the Chromium test above checks the same corpus")
    assets = watch.DIRECTORY
    script = NODE_CORPUS % {
        "resim": (assets / "resim.js").as_uri(),
        "msgpack": (assets / "msgpack.js").as_uri(),
    }
    content = json.dumps(cryptid_catalogue("cryptids-2026.12"))
    process = await asyncio.create_subprocess_exec(
        node,
        "--input-type=module",
        "-e",
        script,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate(json.dumps([content, CORPUS]).encode())
    assert process.returncode == 0, err.decode()
    assert json.loads(out) == {"checked": len(json.loads(CORPUS)["battles"]), "wrong": []}
