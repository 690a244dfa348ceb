"""Every read the service makes is bounded by an index: proven on bulk-loaded tables for every
statement a request or a background task sends (issue 35, "What must work" 4).

How. A fresh database gets the schema and the bulk load of tests/store/bulk.py, then a service
runs on it through `Recorder` (tests/store/statements.py), a proxy that reads the statements
off the wire: the package is not touched. Its statement cache is off (`DB_STATEMENT_CACHE_SIZE`
0, as behind PgBouncer), so that every execution is a Parse and a Bind the proxy sees, under the
scenario's step running at the time. The background tasks run on short intervals, alone for a
moment first (the step "background") and then beside the scenario. The scenario calls every
operation of the OpenAPI document with the real games; a new route without a step fails here.

Sizes (tests/store/bulk.py). 100,000 players (4 % deleted, 10 % signed out everywhere within
30 days), 50,000 runs (a tenth open), 60,000 snapshots and as many battles in this week's
partitions and 12,000 more of each in the default ones, 30,000 matches (1 % waiting, 10 %
active, 5 % expired, the rest finished) with 60,000 seats, 60,000 actions and 70,000 events,
30,000 tickets (200 searching, in buckets the scenario does not use), 30,000 idempotency keys,
24,000 devices, 40,000 sessions and refresh tokens, 15,000 ratings per game this season, 20,000
rated pairs, 12,000 rate buckets, and a week or two of the hourly roll-ups. The issue's 200,000
players and a million ratings would take minutes to load on two cores and prove nothing more:
the plans are decided at these sizes (an index beats a scan from a few thousand rows), and what
a read costs is measured in rows read, not milliseconds. The scenario's own player also holds
3,000 rows of each of its lists (devices, sessions, runs, matches, tickets, keys, rated pairs,
battles against its ghosts), loaded at once and analysed, as a script or years of play would
leave them: a request that reads a whole list a player grows is seen reading 3,000 rows.

What is unbounded. Relations of 10,000 rows or more (a partition counts by its own size) are
"large". Each distinct statement (SELECT, WITH, INSERT, UPDATE, DELETE) is planned twice:
- its generic plan (`EXPLAIN (GENERIC_PLAN)`, which PostgreSQL's plan cache may switch a
  prepared statement to) must not read a large relation by a Seq Scan (unless a Limit stops it
  and no Filter discards rows), nor by an index scan with no Index Cond outside a Limit, nor
  under a Limit with a Filter (it may step over any number of rows), nor under a Limit with a
  Filter on key columns of its index that its Index Cond leaves out (the walk starts where the
  Index Cond lets it and discards its way to the rows it wants: the old per-game board's `OR`
  walk), nor by a bitmap of an index with no Index Cond. A generic plan that costs more than
  the plans of the service's parameters did is one the plan cache never switches to: it is
  printed, and does not fail;
- run with the parameters the service sent (`EXPLAIN ANALYZE` in a transaction rolled back,
  up to six distinct parameter sets each, on the tables as the scenario left them, the heavy
  player's lists included whenever the statement ran), no scan of a large relation may read
  READ_LIMIT rows or more: that catches what a shape cannot show, a range too wide (a 30-day
  window), a count over a board, a list a player grows, a planner misled by a long list.
A page (at most 100), a sweep's batch (SWEEP_BATCH_ROWS) and a matcher's claim stay below
READ_LIMIT. A statement that calls a plpgsql function, or fires a trigger, is opaque to EXPLAIN:
each such function is reviewed in REVIEWED (a new one fails), and the statements are listed.
ALLOWED holds the statements let through although flagged, each with why.
"""

import asyncio
import json
import re
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import asyncpg

from service.config import Settings
from service.store.database import create_pool
from tests.conftest import TEST_OPS_TOKEN, migrated, service_and_app
from tests.http import Answer, Api
from tests.store import bulk
from tests.store.statements import (
    CHECKED_KINDS,
    Catalogue,
    Finding,
    Recorder,
    Replayer,
    ReplayError,
    Statement,
    functions_called,
    kind,
    measured_findings,
    one_line,
    shape_findings,
)

LARGE = 10_000
READ_LIMIT = 2_000
SWEEP_BATCH_ROWS = 500
OPS = {"X-Ops-Token": TEST_OPS_TOKEN}
BACKGROUND = "background"

# Statements let through although a check flags them: a fragment of their text, and why.
ROLL_UP = (
    "an hourly roll-up's window: its rows are the window's hours times the rounds or games,"
    " buckets and shards, fixed by the settings however many players play"
)
LIVE = (
    "an operator's count of what is live now (open runs, matches in play, the queue), not of"
    " history nor of one player's doing; read at most every METRICS_CACHE_SECONDS per process,"
    " or by the ops token"
)
ALLOWED: dict[str, str] = {
    "FROM pool_counts": ROLL_UP,
    "FROM pairing_stats": ROLL_UP,
    "FROM match_stats": ROLL_UP,
    "SELECT count(*) FROM runs WHERE status = 'shopping'": LIVE,
    "count(*) FILTER (WHERE status = 'waiting') AS waiting": LIVE,
    "WITH matched AS (": LIVE,
    "GROUP BY game, ruleset, seats, options ORDER BY min(created_at)": (
        "the matcher's buckets: every searching ticket, one per player and game at most, so the"
        " live queue, never history; read once per MATCHMAKING_INTERVAL_SECONDS per instance"
    ),
    "WHERE r.status = 'shopping' AND r.updated_at < now()": (
        "the idle-run sweep walks the open runs (runs_active_idx) rather than an index on"
        " updated_at, which would make every shop move a non-HOT update; once per"
        " RUN_SWEEP_INTERVAL_SECONDS per instance (docs/operations.md#runs-and-rating)"
    ),
    "tokens_after > to_timestamp($2)": (
        "a process's first revocation read at start: every revocation a live token may still"
        " meet; each later read takes only what changed since (tokens_after > to_timestamp($1))"
    ),
}

# plpgsql functions and trigger functions, which EXPLAIN does not open: why each is bounded.
REVIEWED: dict[str, str] = {
    "pairing_candidates": (
        "two walks of snapshots_pairing_idx, up and down from the rating, each LIMITed, over"
        " the live partitions only: its query is EXPLAINed under the function's generic plan"
        " in tests/store/test_partitions.py"
        " (test_the_pairing_query_reads_only_the_partitions_of_the_time_to_live)"
    ),
    "ensure_partitions": "catalogue look-ups and the DDL of at most a few weeks' partitions",
    "once_per_round": (
        "the run by its key, then its round's row by battles_run_round_idx or"
        " snapshots_run_round_idx, in the partitions since the run began"
    ),
    "count_ratings": "the statement's own transition tables, upserted into rating_counts by key",
    "count_match_actions": (
        "the statement's transition table, the action before each by match_actions' key, and"
        " its match by key"
    ),
    "count_game_ratings": (
        "the statement's own transition tables, upserted into game_rating_counts by key; the"
        " rows it left at zero deleted by key"
    ),
    "game_ratings_follow_deletion": (
        "the deleted player's ratings by game_ratings_player_idx: one per game and season"
    ),
    "game_ratings_born_flagged": "the new rating's player by its key",
    "match_seats_follow_end": "the ended match's seats by match_seats' key",
}

# Operations the scenario does not call, and why (none so far).
NOT_CALLED: dict[tuple[str, str], str] = {}

# Each background task, and a table its statements name while the service idles.
TASKS = {
    "sweeper (turn timers, bots, expiry)": r"\bmatches\b",
    "retention sweep": r"\bidempotency_keys\b",
    "idle runs": r"\bruns\b",
    "matcher": r"\bmatch_tickets\b",
    "revocation sync": r"\bsessions\b",
    "partitions": r"\bensure_partitions\b",
}


class Scenario:
    """Calls through HTTP, each under a step the recorder names, each status checked; which
    operations of the OpenAPI document were called."""

    def __init__(self, api: Api, recorder: Recorder, document: dict[str, Any]) -> None:
        self.api = api
        self.recorder = recorder
        self.operations = {
            (method.upper(), path)
            for path, operations in document["paths"].items()
            for method in operations
        }
        self.templates = [
            (re.compile("^" + re.sub(r"{\w+}", "[^/]+", path) + "$"), path)
            for path in document["paths"]
        ]
        self.called: set[tuple[str, str]] = set()

    def template(self, method: str, path: str) -> str:
        bare, _, query = path.partition("?")
        for pattern, template in self.templates:
            if pattern.match(bare) and (method, template) in self.operations:
                self.called.add((method, template))
                return f"{template}?{query}" if query else template
        raise AssertionError(f"{method} {bare} is no operation of the document")

    async def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        token: str | None = None,
        expect: int = 200,
        headers: dict[str, str] | None = None,
    ) -> Answer:
        self.recorder.step = f"{method} {self.template(method, path)}"
        answer = await self.api.call(method, path, body, token=token, headers=headers)
        assert answer.status == expect, (method, path, answer.status, answer.body)
        return answer

    async def get(self, path: str, **kwargs: Any) -> Any:
        return (await self.call("GET", path, **kwargs)).body

    async def post(self, path: str, body: Any = None, **kwargs: Any) -> Any:
        return (await self.call("POST", path, {} if body is None else body, **kwargs)).body


@dataclass
class Player:
    player_id: str
    token: str
    refresh: str = ""
    device: str = ""


def _device() -> str:
    return uuid.uuid4().hex + uuid.uuid4().hex[:8]


async def _sign_in(s: Scenario, device: str, expect: int, name: str = "ana") -> Player:
    body = await s.post("/v1/auth/device", {"device_id": device, "name": name}, expect=expect)
    return Player(body["player_id"], body["access_token"], body["refresh_token"], device)


async def _identity(s: Scenario, database_url: str) -> tuple[Player, Player, float]:
    """Sign-ins, refresh, a device linked and unlinked, a session signed out; then the first
    player's lists are made long. The two players, and the seconds the heavy load took."""
    ana = await _sign_in(s, _device(), 201)
    again = await _sign_in(s, ana.device, 200)
    assert again.player_id == ana.player_id
    registered = await s.post("/v1/players", {"name": "bea"}, expect=201)
    bea = Player(registered["player_id"], registered["access_token"])
    refreshed = await s.post("/v1/auth/refresh", {"refresh_token": again.refresh})
    ana.token, ana.refresh = refreshed["access_token"], refreshed["refresh_token"]
    second = _device()
    linked = await s.post("/v1/auth/device/link", {"device_id": second}, token=ana.token)
    assert len(linked["devices"]) == 2, linked
    fingerprint = linked["devices"][-1]["fingerprint"]
    left = await s.call("DELETE", f"/v1/auth/devices/{fingerprint}", token=ana.token)
    assert len(left.body["devices"]) == 1, left.body
    # A second session of ana's, signed out alone.
    other = await _sign_in(s, ana.device, 200)
    out = await s.post("/v1/auth/logout", {}, token=other.token)
    assert out["sessions_revoked"] == 1, out
    s.recorder.step = "bulk: the heavy player's lists"
    heavy_s = await bulk.load_heavy(database_url, uuid.UUID(ana.player_id))
    me = await s.get("/v1/players/me", token=ana.token)
    assert me["player_id"] == ana.player_id
    renamed = await s.call("PATCH", "/v1/players/me", {"name": "ana2"}, token=ana.token)
    assert renamed.body["name"] == "ana2"
    return ana, bea, heavy_s


async def _content(s: Scenario, token: str) -> None:
    for path in ("/healthz", "/readyz", "/v1/openapi.json", "/v1/content/cryptids"):
        await s.get(path)
    # Other tests of the same process may have registered games of their own beside these.
    games = [g for g in (await s.get("/v1/games", token=token))["games"] if g["id"] in bulk.GAMES]
    assert {g["id"] for g in games} == set(bulk.GAMES)
    for game in games:
        catalogue = await s.get(f"/v1/content/{game['id']}")
        assert catalogue["game"] == game["id"]


def _offer(run: dict[str, Any]) -> int | None:
    """The first shop slot whose offer the run can afford."""
    for slot, offer in enumerate(run["shop"]):
        if offer is not None and offer["cost"] <= run["gold"]:
            return slot
    return None


async def _runs(s: Scenario, ana: Player) -> tuple[str, int]:
    """A run played through every shop move and three turns; a second run abandoned. The run
    and a battle of it."""
    run = await s.post("/v1/runs", token=ana.token, expect=201)
    path = f"/v1/runs/{run['run_id']}"
    for _ in range(2):
        slot = _offer(run)
        assert slot is not None, run
        run = await s.post(f"{path}/buy", {"slot": slot}, token=ana.token)
    run = await s.post(f"{path}/arrange", {"order": [1, 0]}, token=ana.token)
    slot = next(i for i, offer in enumerate(run["shop"]) if offer is not None)
    run = await s.post(f"{path}/freeze", {"slot": slot}, token=ana.token)
    run = await s.post(f"{path}/reroll", {}, token=ana.token)
    run = await s.post(f"{path}/sell", {"position": 0}, token=ana.token)
    battle = 0
    for round_ in (1, 2, 3):
        turn = await s.post(f"{path}/end-turn", {"round": round_}, token=ana.token)
        battle = turn["battle_id"]
        # The ghosts are the bulk-loaded players' warbands.
        assert turn["pairing"] != "bot", turn
        if turn["status"] != "shopping":
            break
        slot = _offer(turn["run"])
        if slot is not None:
            await s.post(f"{path}/buy", {"slot": slot}, token=ana.token)
    assert (await s.get(path, token=ana.token))["run_id"] == run["run_id"]
    listed = await s.get("/v1/runs?limit=5", token=ana.token)
    assert run["run_id"] in {r["run_id"] for r in listed["runs"]}, listed
    given_up = await s.post("/v1/runs", token=ana.token, expect=201)
    ended = await s.post(f"/v1/runs/{given_up['run_id']}/abandon", {}, token=ana.token)
    assert ended["status"] == "abandoned"
    warband = {"cryptids": [{"species": "mothman", "ability": 0, "level": 2}]}
    other = {"cryptids": [{"species": "alux", "ability": 0, "level": 1}]}
    fought = await s.post(
        "/v1/battles/simulate", {"seed": 42, "a": warband, "b": other}, token=ana.token
    )
    assert fought["winner"] in ("a", "b", "draw")
    assert (await s.get(f"/v1/battles/{battle}", token=ana.token))["battle_id"] == battle
    await s.get(f"/v1/battles/{battle}/replay", token=ana.token)
    return run["run_id"], battle


async def _act(s: Scenario, tokens: dict[int, str], match_id: str) -> dict[str, Any]:
    """The first action the seat asked first is offered, through HTTP."""
    anyone = next(iter(tokens.values()))
    match = await s.get(f"/v1/matches/{match_id}", token=anyone)
    seat = next(seat for seat in match["to_act"] if seat in tokens)
    mine = await s.get(f"/v1/matches/{match_id}", token=tokens[seat])
    body = {"version": mine["version"], "action": mine["prompt"]["actions"][0]}
    acted: dict[str, Any] = await s.post(
        f"/v1/matches/{match_id}/actions", body, token=tokens[seat]
    )
    return acted


async def _socket(s: Scenario, token: str, match_id: str) -> None:
    """The match's WebSocket: opened, one batch read, closed."""
    path = f"/v1/matches/{match_id}/ws"
    s.recorder.step = f"GET {s.template('GET', path)}"
    url = s.api.base_url.replace("http", "ws", 1) + path
    headers = {"Authorization": f"Bearer {token}"}
    async with s.api.session.ws_connect(url, headers=headers) as ws:
        message = await ws.receive(timeout=10)
        assert message.type == aiohttp.WSMsgType.TEXT, message
        assert "events" in json.loads(message.data)


async def _matches(s: Scenario, ana: Player, bea: Player) -> str:
    """Matches with and without bots, joined, listed, played, pushed, resigned, replayed; the
    finished one."""
    created = await s.post(
        "/v1/matches", {"game": "necromancers", "seats": 2}, token=ana.token, expect=201
    )
    match_id = created["match_id"]
    joined = await s.post(f"/v1/matches/{match_id}/join", token=bea.token)
    assert joined["status"] == "active"
    await _act(s, {0: ana.token, 1: bea.token}, match_id)
    page = await s.get(f"/v1/matches/{match_id}/events?after=0", token=ana.token)
    assert page["events"]
    # Nothing new: the long-poll waits its 0.2 s on the push hub and answers empty.
    after = page["last_seq"]
    waited = await s.get(f"/v1/matches/{match_id}/events?after={after}&wait=0.2", token=ana.token)
    assert waited["events"] == []
    await _socket(s, ana.token, match_id)
    with_bot = await s.post(
        "/v1/matches",
        {"game": "necromancers", "seats": 2, "bots": [1]},
        token=ana.token,
        expect=201,
    )
    assert with_bot["status"] == "active"
    loyalty = {
        "game": "loyalty",
        "seats": 2,
        "bots": [1],
        "options": {"mode": "escaramuza"},
        "loadout": {"ready": "neutral"},
    }
    card_match = await s.post("/v1/matches", loyalty, token=ana.token, expect=201)
    kept = await s.call(
        "PUT",
        f"/v1/matches/{card_match['match_id']}/preferences",
        {"preferences": {"auto_pass": True}},
        token=ana.token,
    )
    assert kept.body is not None
    # Two waiting matches of ana's, to page through the lobby and through ana's own list.
    for _ in range(2):
        await s.post(
            "/v1/matches", {"game": "necromancers", "seats": 3}, token=ana.token, expect=201
        )
    lobby = await s.get("/v1/matches?limit=1", token=bea.token)
    assert lobby["next"] is not None
    await s.get(f"/v1/matches?limit=1&cursor={lobby['next']}", token=bea.token)
    mine = await s.get("/v1/matches?mine=true&limit=2", token=ana.token)
    assert mine["next"] is not None
    await s.get(f"/v1/matches?mine=true&limit=2&cursor={mine['next']}", token=ana.token)
    resigned = await s.post(f"/v1/matches/{match_id}/resign", token=ana.token)
    assert resigned["status"] == "finished"
    replay = await s.get(f"/v1/matches/{match_id}/replay", token=bea.token)
    assert replay["actions"]
    operator = await s.post(
        "/v1/ops/matches",
        {"game": "necromancers", "seats": 2, "bots": [1]},
        headers=OPS,
        expect=201,
    )
    assert operator["match_id"]
    return str(match_id)


async def _tickets(s: Scenario, ana: Player, bea: Player) -> None:
    """Play now for two, matched together; a ticket cancelled."""
    tickets = "/v1/matchmaking/tickets"
    body = {"game": "necromancers", "seats": 2}
    first = await s.post(tickets, body, token=ana.token, expect=201)
    await s.post(tickets, body, token=bea.token, expect=201)
    matched = await s.get(f"{tickets}/{first['ticket_id']}?wait=5", token=ana.token)
    assert matched["status"] == "matched", matched
    alone = {"game": "fate-duel", "seats": 2, "loadout": {"crew": "vecinos"}}
    waiting = await s.post(tickets, alone, token=ana.token, expect=201)
    cancelled = await s.call("DELETE", f"{tickets}/{waiting['ticket_id']}", token=ana.token)
    assert cancelled.body["status"] == "cancelled"


async def _boards(s: Scenario, ana: Player, season: str) -> None:
    await s.get("/v1/leaderboard?limit=20", token=ana.token)
    await s.get("/v1/leaderboard?around=me", token=ana.token)
    await s.get("/v1/leaderboard?game=necromancers&limit=20", token=ana.token)
    rated = await s.get("/v1/leaderboard?game=necromancers&around=me", token=ana.token)
    # Ana was rated by the match she resigned: she is on the board, among the bulk.
    assert any(e["player_id"] == ana.player_id for e in rated["entries"]), rated
    await s.get(f"/v1/leaderboard?game=fate-duel&season={season}", token=ana.token)


async def _operators(s: Scenario, battle: int, match_id: str) -> None:
    await s.get("/v1/ops/database", headers=OPS)
    await s.get("/v1/ops/matchmaking", headers=OPS)
    for _ in range(2):
        # Twice, past the gauges' cache, so that the second scrape reads them again.
        scraped = await s.call("GET", "/metrics", headers=OPS)
        assert b"# TYPE" in scraped.raw
        await asyncio.sleep(0.6)
    pages = (
        "/ops",
        "/ops/ops.js",
        "/play",
        "/play/assets/play.js",
        "/watch",
        "/watch/assets/watch.js",
        f"/watch/{battle}",
        f"/watch/matches/{match_id}",
    )
    for page in pages:
        await s.call("GET", page)


async def _leaving(s: Scenario, ana: Player, bea: Player) -> None:
    """A new season; ana signs out everywhere and back in; bea deletes her account."""
    started = await s.post("/v1/ops/seasons", {"name": "2099-01"}, headers=OPS, expect=201)
    assert started is not None
    fresh = await _sign_in(s, ana.device, 200)
    out = await s.post("/v1/auth/logout", {"everywhere": True}, token=fresh.token)
    assert out["sessions_revoked"] >= 1, out
    back = await _sign_in(s, ana.device, 200)
    assert (await s.get("/v1/players/me", token=back.token))["player_id"] == ana.player_id
    gone = await s.call("DELETE", "/v1/players/me", {}, token=bea.token)
    assert gone.body["player_id"] == bea.player_id


@dataclass
class Verdict:
    statement: Statement
    shape: list[Finding] = field(default_factory=list)
    measured: list[Finding] = field(default_factory=list)
    opaque: list[str] = field(default_factory=list)
    unreplayed: list[str] = field(default_factory=list)
    generic_cost: float = 0.0
    # The cost of each plan made with the service's parameters, planning included, as
    # PostgreSQL's plan cache counts it.
    custom_costs: list[float] = field(default_factory=list)

    @property
    def generic_may_run(self) -> bool:
        """Whether PostgreSQL may run the generic plan: its plan cache switches a prepared
        statement to it when it costs less than the custom plans did on average
        (plancache.c, choose_custom_plan). Without parameters it is the only plan."""
        if not self.custom_costs or "$1" not in self.statement.sql:
            return True
        return self.generic_cost < sum(self.custom_costs) / len(self.custom_costs)

    @property
    def unbounded(self) -> bool:
        return bool((self.shape and self.generic_may_run) or self.measured)

    @property
    def generic_only(self) -> bool:
        """An unbounded generic plan that PostgreSQL would not pick for these parameters."""
        return bool(self.shape and not self.generic_may_run and not self.measured)


async def _catalogue(database_url: str) -> tuple[Catalogue, set[str], dict[str, list[str]]]:
    """Relation sizes, index key columns, the plpgsql functions, and per table the functions
    of its triggers (foreign keys' own left out)."""
    conn = await asyncpg.connect(database_url)
    try:
        sizes = {
            r["relname"]: float(r["reltuples"])
            for r in await conn.fetch(
                "SELECT relname, reltuples FROM pg_class WHERE relkind IN ('r', 'p', 'm', 't')"
            )
        }
        columns = {
            r["relname"]: tuple(r["columns"])
            for r in await conn.fetch(
                """
                SELECT c.relname, array(SELECT pg_get_indexdef(i.indexrelid, k, true)
                                          FROM generate_series(1, i.indnkeyatts) k) AS columns
                  FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                """
            )
        }
        plpgsql = {
            r["proname"]
            for r in await conn.fetch(
                """
                SELECT p.proname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
                 WHERE l.lanname = 'plpgsql' AND p.pronamespace = 'public'::regnamespace
                """
            )
        }
        triggers: dict[str, list[str]] = {}
        for r in await conn.fetch(
            """
            SELECT c.relname, p.proname FROM pg_trigger t
              JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_proc p ON p.oid = t.tgfoid
             WHERE NOT t.tgisinternal
            """
        ):
            triggers.setdefault(r["relname"], []).append(r["proname"])
    finally:
        await conn.close()
    return Catalogue(sizes, columns, LARGE), plpgsql, triggers


def _plan(rows: list[str]) -> dict[str, Any]:
    plan: dict[str, Any] = json.loads(rows[0])[0]["Plan"]
    return plan


def _written(plan: dict[str, Any]) -> set[str]:
    """The relations a plan's ModifyTable nodes write."""
    found = set()
    stack = [plan]
    while stack:
        node = stack.pop()
        if node["Node Type"] == "ModifyTable":
            found.add(node["Relation Name"])
        stack += node.get("Plans", [])
    return found


async def _judge(
    replayer: Replayer,
    statement: Statement,
    catalogue: Catalogue,
    plpgsql: set[str],
    triggers: dict[str, list[str]],
) -> Verdict:
    verdict = Verdict(statement)
    sql = statement.sql
    generic = _plan(await replayer.query(f"EXPLAIN (GENERIC_PLAN, FORMAT JSON) {sql}"))
    verdict.shape = shape_findings(generic, catalogue)
    verdict.generic_cost = generic["Total Cost"]
    called = functions_called(generic) | {f for f in plpgsql if re.search(rf"\b{f}\s*\(", sql)}
    fired = {f for table in _written(generic) for f in triggers.get(table, [])}
    verdict.opaque = sorted((called & plpgsql) | fired)
    runs = [None] if statement.simple or not statement.bindings else statement.bindings
    for binding in runs:
        analysed = f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}"
        await replayer.query("BEGIN")
        try:
            rows = await (
                replayer.query(analysed) if binding is None else replayer.bound(analysed, binding)
            )
        except ReplayError as exc:
            verdict.unreplayed.append(str(exc))
            continue
        finally:
            await replayer.query("ROLLBACK")
        plan = _plan(rows)
        if binding is not None:
            verdict.custom_costs.append(plan["Total Cost"] + _planning_cost(plan))
        for finding in measured_findings(plan, catalogue, READ_LIMIT):
            if finding not in verdict.measured:
                verdict.measured.append(finding)
    return verdict


def _planning_cost(plan: dict[str, Any]) -> float:
    """What the plan cache adds to a custom plan's cost for planning it: 1000 times
    cpu_operator_cost (0.0025) per entry of the range table, plus one (plancache.c,
    cached_plan_cost). The range table is counted from the plan: a scan or a join each."""
    entries = 0
    stack = [plan]
    while stack:
        node = stack.pop()
        node_type = node["Node Type"]
        scan = node_type.endswith("Scan") and node_type != "Bitmap Index Scan"
        entries += scan or "Join" in node_type or node_type == "Nested Loop"
        stack += node.get("Plans", [])
    return 2.5 * (entries + 1)


def _origin(statement: Statement) -> str:
    steps = [step for step in statement.steps if step != BACKGROUND]
    if BACKGROUND in statement.steps:
        return f"a background task (sent while the service idled, and during {len(steps)} steps)"
    shown = ", ".join(f"{step} (x{statement.steps[step]})" for step in steps[:6])
    return shown + (f", and {len(steps) - 6} more steps" if len(steps) > 6 else "")


def _report(verdicts: list[Verdict]) -> str:
    lines = []
    for v in verdicts:
        lines.append(f"\n* {one_line(v.statement.sql)}")
        lines.append(f"  sent by: {_origin(v.statement)}")
        # A statement without parameters has one plan: the plan cache has nothing to choose.
        if v.shape and v.custom_costs and "$1" in v.statement.sql:
            average = sum(v.custom_costs) / len(v.custom_costs)
            keeps = "PostgreSQL keeps those" if not v.generic_may_run else "it may switch to it"
            lines.append(
                f"  (the generic plan costs {v.generic_cost:,.0f}, the plans of the service's"
                f" parameters {average:,.0f} on average: {keeps})"
            )
        lines += [f"  generic plan: {f}" for f in v.shape]
        lines += [f"  run with the service's parameters: {f}" for f in v.measured]
    return "\n".join(lines)


async def test_every_statement_a_request_or_a_task_sends_is_bounded_by_an_index(
    settings: Settings, make_settings: Any, fresh_database_url: str
) -> None:
    began = time.monotonic()
    pool = await create_pool(fresh_database_url, 1, 2, 60.0)
    try:
        await migrated(pool)
    finally:
        await pool.close()
    loaded = await bulk.load(fresh_database_url, settings.season)
    print(f"\nbulk load: {loaded.rows:,} rows in {loaded.seconds:.1f} s (ANALYZE included)")
    print("  slowest: " + ", ".join(f"{what} {secs:.1f} s" for what, secs in loaded.slowest[:8]))

    recorder = Recorder(fresh_database_url)
    await recorder.start()
    service = make_settings(
        database_url=recorder.url,
        db_statement_cache_size=0,
        sweep_interval_seconds=0.2,
        run_sweep_interval_seconds=0.3,
        revocation_sync_seconds=0.3,
        rate_limit_sync_seconds=0.2,
        matchmaking_interval_seconds=0.3,
        # The bulk tickets still searching are never completed with bots during the test.
        matchmaking_bot_after_seconds=3600.0,
        metrics_cache_seconds=0.5,
        sweep_batch_rows=SWEEP_BATCH_ROWS,
        db_timeout_seconds=10.0,
    )
    try:
        async with service_and_app(service) as (api, _):
            recorder.step = BACKGROUND
            await asyncio.sleep(2.0)
            document = (await api.get("/v1/openapi.json")).body
            s = Scenario(api, recorder, document)
            ana, bea, heavy_s = await _identity(s, fresh_database_url)
            await _content(s, ana.token)
            _, battle = await _runs(s, ana)
            match_id = await _matches(s, ana, bea)
            await _tickets(s, ana, bea)
            await _boards(s, ana, settings.season)
            await _operators(s, battle, match_id)
            await _leaving(s, ana, bea)
            recorder.step = "background, after the scenario"
            await asyncio.sleep(1.0)
    finally:
        await recorder.close()
    print(f"heavy player's lists: {bulk.HEAVY:,} rows each, in {heavy_s:.1f} s")

    # Every operation of the document was called (or is excused, with why).
    problems: list[str] = []
    missing = s.operations - s.called - set(NOT_CALLED)
    if missing:
        problems.append(f"operations no step of the scenario calls: {sorted(missing)}")
    # Every background task ran while the service idled.
    idle = [st.sql for st in recorder.statements.values() if BACKGROUND in st.steps]
    silent = [task for task, table in TASKS.items() if not any(re.search(table, q) for q in idle)]
    if silent:
        problems.append(f"background tasks that sent nothing while the service idled: {silent}")

    checked = [st for st in recorder.statements.values() if kind(st.sql) in CHECKED_KINDS]
    catalogue, plpgsql, triggers = await _catalogue(fresh_database_url)
    replayer = await Replayer.open(recorder.socket_path, recorder.database)
    try:
        verdicts = [await _judge(replayer, st, catalogue, plpgsql, triggers) for st in checked]
    finally:
        await replayer.close()

    kinds = Counter(kind(st.sql) for st in recorder.statements.values())
    unreplayed = [v for v in verdicts if v.unreplayed]
    print(
        f"statements: {recorder.messages:,} sent, {len(recorder.statements)} distinct"
        f" ({', '.join(f'{k} {n}' for k, n in kinds.most_common())}), {len(checked)} checked;"
        f" {sum(len(v.statement.bindings) or 1 for v in verdicts)} parameter sets run again,"
        f" {len(unreplayed)} statements with one the database refused to run again (their"
        " generic plan is still checked)"
    )
    for v in unreplayed:
        print(f"  not run again: {one_line(v.statement.sql, 120)}: {v.unreplayed[0]}")
    opaque = [v for v in verdicts if v.opaque]
    print("opaque to EXPLAIN, each function reviewed in REVIEWED:")
    for v in opaque:
        print(f"  {', '.join(v.opaque)}: {one_line(v.statement.sql, 120)}")
    unreviewed = sorted({f for v in opaque for f in v.opaque} - set(REVIEWED))
    if unreviewed:
        problems.append(f"functions or trigger functions no one reviewed: {unreviewed}")

    flagged = [v for v in verdicts if v.unbounded]
    allowed = [v for v in flagged if any(a in v.statement.sql for a in ALLOWED)]
    unbounded = [v for v in flagged if v not in allowed]
    for v in allowed:
        why = next(reason for a, reason in ALLOWED.items() if a in v.statement.sql)
        print(f"allowed: {one_line(v.statement.sql, 120)}: {why}")
    if unbounded:
        problems.append(f"{len(unbounded)} statements read without bound:{_report(unbounded)}")
    generic_only = [v for v in verdicts if v.generic_only]
    if generic_only:
        print(
            f"{len(generic_only)} statements have an unbounded generic plan that PostgreSQL"
            f" would not pick for the service's parameters:{_report(generic_only)}"
        )
    total_s = time.monotonic() - began
    print(
        f"unbounded: {len(unbounded)} ({len(allowed)} allowed); load {loaded.seconds:.1f} s,"
        f" scenario and plans {total_s - loaded.seconds:.1f} s, total {total_s:.1f} s"
    )
    assert not problems, "\n".join(problems)
