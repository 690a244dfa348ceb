"""Record a release's database for the upgrade drill (tests/upgrade/test_upgrade_drill.py).

    python -m tests.upgrade.record_release [--commit SHA] [--version V]

The release's files are taken from git at the commit (HEAD by default), and its own code serves
a throwaway PostgreSQL while players play everything through HTTP: sessions signed in by
device and refreshed, runs at every stage, battles, matches of every game finished and in
progress, lobby and queue, tickets, rated matches in two seasons, writes retried by
Idempotency-Key. Some runs are then moved weeks back, so that snapshots and battles lie in
several partitions. What every player can read back is observed through HTTP again and written
to `releases/<version>/release.json`, beside `database.dump` (pg_dump's custom format).

The playing and the observing talk HTTP only and use nothing of `service`: they drive any
release, and the drill reads the upgraded service with the same functions. Only the throwaway
PostgreSQL and its programs come from this checkout's code.
"""

import argparse
import asyncio
import hashlib
import json
import random
import secrets
import signal
import socket
import subprocess
import tempfile
import tomllib
import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import msgpack

from service.runtime.embedded_db import EmbeddedPostgres, postgres_bin
from tests.clients.prompts import choose
from tests.http import Answer, Api
from tests.upgrade.release import DUMP, MANIFEST, RELEASES, REPOSITORY, serve, source_tree

GAMES = ("necromancers", "fate-duel", "loyalty", "medianokte")
FIRST_SEASON, SECOND_SEASON = "2026-12", "2027-01"
PLAYERS = 12
# Whatever day the drill restores the database, nothing recorded may have aged out by then:
# refresh tokens and the turn timers of queued matches are stored with their end, so they
# are made to last (a century; a decade for the timer, an integer column of seconds).
CENTURY_SECONDS = 100 * 365 * 24 * 3600
DECADE_SECONDS = 10 * 365 * 24 * 3600
# The runs played out to their end before the staged ones: enough to have won and lost runs.
FINISHED_RUNS_WANTED = {"won": 1, "lost": 2}
# The first runs end their second round by Idempotency-Key (the others by round).
KEYED_END_TURNS = 3
MAX_FINISHED_RUNS = 40
# Answers sent while a match is played to its end, and the budget of one left in progress.
MAX_ANSWERS = 4000
IN_PROGRESS_ANSWERS = 3
WAIT_SECONDS = 30.0
# Finished runs moved back this many days, after partitions were made for the first two: the
# third lands in the default partition, the safety net for rows outside every week made.
AGES_DAYS = (7, 14, 35)


# -- what was played --------------------------------------------------------------------------


@dataclass
class Player:
    index: int
    name: str
    device_id: str
    player_id: str
    access_token: str
    refresh_token: str
    linked_device_id: str | None = None


@dataclass(frozen=True)
class KeyedWrite:
    """A write sent with an Idempotency-Key: sent again, it must answer as it did."""

    player: int
    method: str
    path: str
    body: Any
    key: str


@dataclass(frozen=True)
class PlayedMatch:
    game: str
    stage: str
    # The player index of each seat (None: a bot); `reader` is the one who reads it back.
    seats: list[int | None]
    reader: int


@dataclass
class World:
    """Everything played, by id, with who may read it back."""

    players: list[Player]
    runs: dict[str, tuple[int, str]] = field(default_factory=dict)  # id -> (owner, stage)
    battles: dict[int, int] = field(default_factory=dict)  # id -> owner
    matches: dict[str, PlayedMatch] = field(default_factory=dict)
    tickets: dict[str, int] = field(default_factory=dict)  # id -> owner
    keyed: list[KeyedWrite] = field(default_factory=list)
    revoked_refresh_token: tuple[int, str] | None = None

    def token(self, player: int) -> str:
        return self.players[player].access_token


def ok(answer: Answer, *statuses: int) -> Any:
    """The answer's body, once its status is one expected (200 when none is named)."""
    assert answer.status in (statuses or (200,)), (answer.status, answer.body)
    return answer.body


async def send_keyed(
    api: Api, world: World, player: int, method: str, path: str, body: Any = None
) -> Answer:
    """A write with an Idempotency-Key of its own, kept for the drill to send again."""
    write = KeyedWrite(player, method, path, body, f"upgrade-{uuid.uuid4().hex}")
    world.keyed.append(write)
    return await api.call(
        method, path, body, token=world.token(player), headers={"Idempotency-Key": write.key}
    )


# -- sessions -----------------------------------------------------------------------------------


def new_device_id() -> str:
    return secrets.token_urlsafe(32)


async def sign_in(api: Api, index: int) -> Player:
    device_id = new_device_id()
    name = f"player{index}"
    body = {"device_id": device_id, "name": name}
    signed = ok(await api.post("/v1/auth/device", body), 201)
    return Player(
        index, name, device_id, signed["player_id"], signed["access_token"], signed["refresh_token"]
    )


async def refresh(api: Api, player: Player) -> None:
    """A refresh: the token used is spent and kept as used; the player goes on with the pair."""
    pair = ok(await api.post("/v1/auth/refresh", {"refresh_token": player.refresh_token}))
    player.access_token, player.refresh_token = pair["access_token"], pair["refresh_token"]


async def play_sessions(api: Api, world: World) -> None:
    """Refresh chains, a linked second device, and a session signed out (revoked)."""
    first, second, linker, leaver = world.players[:4]
    await refresh(api, first)
    await refresh(api, first)
    await refresh(api, second)
    linker.linked_device_id = new_device_id()
    link = {"device_id": linker.linked_device_id, "refresh_token": linker.refresh_token}
    ok(await api.post("/v1/auth/device/link", link, token=linker.access_token))
    other = ok(await api.post("/v1/auth/device", {"device_id": leaver.device_id}))
    ok(await api.post("/v1/auth/logout", {}, token=other["access_token"]))
    world.revoked_refresh_token = (leaver.index, other["refresh_token"])


# -- runs ---------------------------------------------------------------------------------------


async def tiers(api: Api) -> dict[str, int]:
    catalogue = ok(await api.get("/v1/content/cryptids"))
    return {e["id"]: e["numbers"]["tier"] for e in catalogue["entries"] if e["kind"] == "species"}


def _strength(tier_of: Mapping[str, int], cryptid: Mapping[str, Any]) -> int:
    return tier_of[cryptid["species"]] * 3 + int(cryptid["level"]) * 4


async def shop(api: Api, token: str, run: dict[str, Any], tier_of: Mapping[str, int]) -> Any:
    """A greedy shopper: copies toward a merge first, then higher tiers; it sells its weakest
    for a much better offer and rerolls while gold is left. Against each other's ghosts, one
    run in ten or so is won."""
    path = f"/v1/runs/{run['run_id']}"
    for _ in range(16):
        board, gold = run["warband"], run["gold"]
        singles: dict[str, int] = {}
        for cryptid in board:
            if cryptid["level"] == 1:
                singles[cryptid["species"]] = singles.get(cryptid["species"], 0) + 1
        offers = sorted(
            (o for o in run["shop"] if o is not None and o.get("species")),
            key=lambda o: o["tier"] * 3 + 5 * singles.get(o["species"], 0),
            reverse=True,
        )
        if gold >= 3 and offers:
            best = offers[0]
            worth = best["tier"] * 3 + 5 * singles.get(best["species"], 0)
            if len(board) < 5 or singles.get(best["species"], 0) >= 2:
                run = ok(await api.post(f"{path}/buy", {"slot": best["slot"]}, token=token))
                continue
            weakest = min(range(len(board)), key=lambda i: _strength(tier_of, board[i]))
            if worth > _strength(tier_of, board[weakest]) + 2:
                run = ok(await api.post(f"{path}/sell", {"position": weakest}, token=token))
                continue
        if gold < 4:
            return run
        run = ok(await api.post(f"{path}/reroll", {}, token=token))
    return run


async def end_turn(
    api: Api, world: World, owner: int, run: dict[str, Any], keyed: bool = False
) -> Any:
    path = f"/v1/runs/{run['run_id']}/end-turn"
    if keyed:
        answer = await send_keyed(api, world, owner, "POST", path, {})
    else:
        answer = await api.post(path, {"round": run["round"]}, token=world.token(owner))
    turn = ok(answer)
    world.battles[turn["battle_id"]] = owner
    return turn["run"]


async def play_rounds(
    api: Api,
    world: World,
    owner: int,
    rounds: int | None,
    tier_of: Mapping[str, int],
    keyed_round: int | None = None,
) -> Any:
    """A new run played `rounds` rounds (None: to its end), `keyed_round` ended by key."""
    run = ok(await api.post("/v1/runs", token=world.token(owner)), 201)
    played = 0
    while run["status"] == "shopping" and (rounds is None or played < rounds):
        run = await shop(api, world.token(owner), run, tier_of)
        run = await end_turn(api, world, owner, run, keyed=run["round"] == keyed_round)
        played += 1
    return run


async def play_runs(api: Api, world: World, runners: list[int]) -> None:
    """Runs won and lost (the ghosts of each other, rated), then one at each open stage."""
    tier_of = await tiers(api)
    ended = {"won": 0, "lost": 0}
    for attempt in range(MAX_FINISHED_RUNS):
        owner = runners[attempt % len(runners)]
        keyed_round = 2 if attempt < KEYED_END_TURNS else None
        run = await play_rounds(api, world, owner, None, tier_of, keyed_round)
        world.runs[run["run_id"]] = (owner, run["status"])
        ended[run["status"]] += 1
        if all(ended[s] >= n for s, n in FINISHED_RUNS_WANTED.items()):
            break
    assert all(ended[s] >= n for s, n in FINISHED_RUNS_WANTED.items()), ended
    several, mid_shop, started, abandoned = runners[:4]
    run = await play_rounds(api, world, several, 3, tier_of)
    world.runs[run["run_id"]] = (several, "several_rounds")
    await play_mid_shop(api, world, mid_shop, tier_of)
    run = ok(await send_keyed(api, world, started, "POST", "/v1/runs"), 201)
    world.runs[run["run_id"]] = (started, "just_started")
    run = await play_rounds(api, world, abandoned, 2, tier_of)
    ok(await send_keyed(api, world, abandoned, "POST", f"/v1/runs/{run['run_id']}/abandon", {}))
    world.runs[run["run_id"]] = (abandoned, "abandoned")


async def play_mid_shop(api: Api, world: World, owner: int, tier_of: Mapping[str, int]) -> None:
    """A run in its second round's shop: bought (by key), rerolled and frozen, not ended."""
    run = await play_rounds(api, world, owner, 1, tier_of)
    path = f"/v1/runs/{run['run_id']}"
    token = world.token(owner)
    slot = next(o["slot"] for o in run["shop"] if o is not None and o.get("species"))
    ok(await send_keyed(api, world, owner, "POST", f"{path}/buy", {"slot": slot}))
    ok(await api.post(f"{path}/reroll", {}, token=token))
    ok(await api.post(f"{path}/freeze", {"slot": 0}, token=token))
    world.runs[run["run_id"]] = (owner, "mid_shop")


# -- matches ------------------------------------------------------------------------------------


async def read_match(api: Api, token: str, match_id: str) -> Any:
    return ok(await api.get(f"/v1/matches/{match_id}", token=token))


async def wait_for_events(api: Api, token: str, match_id: str, after: int) -> int:
    """Wait (a second at most) for events past `after`; the last one's number."""
    path = f"/v1/matches/{match_id}/events?after={after}&wait=1"
    seen: int = ok(await api.get(path, token=token))["last_seq"]
    return seen


async def act_in(
    api: Api,
    match_id: str,
    tokens: Mapping[int, str],
    rng: random.Random,
    budget: int | None = None,
    first_keyed: tuple[World, int] | None = None,
) -> Any:
    """Answer the prompts of the seats in `tokens` (seat -> access token) until the match is
    over, or until `budget` answers were taken and one of those seats is asked again (so no
    bot is left with moves to make). With `first_keyed`, the first answer goes by key."""
    reader = next(iter(tokens.values()))
    taken = seen = 0
    for _ in range(MAX_ANSWERS):
        match = await read_match(api, reader, match_id)
        if match["status"] != "active":
            return match
        asked = [seat for seat in match["to_act"] if seat in tokens]
        if not asked:
            # Bots left moves for the server's sweeper: wait for the match to move.
            seen = await wait_for_events(api, reader, match_id, seen)
            continue
        if budget is not None and taken >= budget:
            return match
        seat = rng.choice(asked)
        mine = await read_match(api, tokens[seat], match_id)
        if mine["prompt"] is None:
            continue
        body = {"version": mine["version"], "action": choose(mine["prompt"], rng)}
        path = f"/v1/matches/{match_id}/actions"
        if first_keyed is not None and taken == 0:
            world, player = first_keyed
            answer = await send_keyed(api, world, player, "POST", path, body)
        else:
            answer = await api.post(path, body, token=tokens[seat])
        if answer.status == 200:
            taken += 1
        else:
            # A parameterised answer may break a rule its schema cannot say; a seat asked at
            # once with another may find its prompt moved.
            assert answer.error_code in ("illegal_action", "stale_version"), answer.body
    raise AssertionError(f"match {match_id} did not end in {MAX_ANSWERS} answers")


async def sample_loadouts(api: Api, token: str) -> dict[str, Any]:
    games = ok(await api.get("/v1/games", token=token))["games"]
    return {g["id"]: g.get("sample_loadout") for g in games}


def _loadout(loadouts: Mapping[str, Any], game: str) -> dict[str, Any]:
    sample = loadouts[game]
    return {} if sample is None else {"loadout": sample}


async def create_match(
    api: Api, world: World, player: int, body: dict[str, Any], keyed: bool = False
) -> str:
    if keyed:
        answer = await send_keyed(api, world, player, "POST", "/v1/matches", body)
    else:
        answer = await api.post("/v1/matches", body, token=world.token(player))
    created: str = ok(answer, 201)["match_id"]
    return created


async def join(
    api: Api, world: World, player: int, match_id: str, loadout: Mapping[str, Any]
) -> None:
    ok(await api.post(f"/v1/matches/{match_id}/join", dict(loadout), token=world.token(player)))


async def against_bot(
    api: Api, world: World, game: str, player: int, stage: str, loadouts: Mapping[str, Any]
) -> None:
    """A match of `player` against a bot: played to its end (its creation and first answer by
    key) or left in progress with the player asked."""
    finished = stage == "finished_vs_bot"
    body = {"game": game, "seats": 2, "bots": [1], **_loadout(loadouts, game)}
    match_id = await create_match(api, world, player, body, keyed=finished)
    rng = random.Random(f"{game}:{stage}")
    tokens = {0: world.token(player)}
    if finished:
        await act_in(api, match_id, tokens, rng, first_keyed=(world, player))
    else:
        await act_in(api, match_id, tokens, rng, budget=IN_PROGRESS_ANSWERS)
    world.matches[match_id] = PlayedMatch(game, stage, [player, None], player)


async def between(
    api: Api,
    world: World,
    game: str,
    players: list[int],
    stage: str,
    loadouts: Mapping[str, Any],
    budget: int | None = None,
) -> str:
    """A match of two or more players, played to its end (rated), or `budget` answers."""
    body = {"game": game, "seats": len(players), **_loadout(loadouts, game)}
    match_id = await create_match(api, world, players[0], body)
    for player in players[1:]:
        await join(api, world, player, match_id, _loadout(loadouts, game))
    tokens = {seat: world.token(p) for seat, p in enumerate(players)}
    await act_in(api, match_id, tokens, random.Random(f"{game}:{stage}"), budget=budget)
    world.matches[match_id] = PlayedMatch(game, stage, list(players), players[0])
    return match_id


async def resigned(
    api: Api, world: World, game: str, players: list[int], loadouts: Mapping[str, Any]
) -> None:
    """A two-player match ended by a resignation (sent by key) after a few answers."""
    match_id = await between(
        api, world, game, players, "resigned", loadouts, budget=IN_PROGRESS_ANSWERS
    )
    path = f"/v1/matches/{match_id}/resign"
    ok(await send_keyed(api, world, players[1], "POST", path))
    match = await read_match(api, world.token(players[0]), match_id)
    assert match["status"] == "finished", match


async def play_matches(api: Api, world: World, ops_token: str, players: list[int]) -> None:
    """Every game against a bot and between players, finished and in progress; rated matches
    in two seasons; a waiting match, an expired one and an operator's bots-only match."""
    a, b, c, d, e, f = players
    loadouts = await sample_loadouts(api, world.token(a))
    for game in GAMES:
        await against_bot(api, world, game, a, "finished_vs_bot", loadouts)
        await against_bot(api, world, game, b, "in_progress_vs_bot", loadouts)
        await between(api, world, game, [c, d], "finished_rated", loadouts)
        await between(
            api, world, game, [e, f], "in_progress_players", loadouts, budget=IN_PROGRESS_ANSWERS
        )
    await between(api, world, "necromancers", [a, c, e], "finished_rated", loadouts)
    waiting = {"game": "necromancers", "seats": 3}
    world.matches[await create_match(api, world, f, waiting)] = PlayedMatch(
        "necromancers", "waiting", [f, None, None], f
    )
    expired = await create_match(api, world, f, {"game": "necromancers", "seats": 2})
    ok(await api.post(f"/v1/matches/{expired}/resign", token=world.token(f)))
    world.matches[expired] = PlayedMatch("necromancers", "expired", [None, None], f)
    await operator_match(api, world, ops_token, a)
    ok(
        await api.post(
            "/v1/ops/seasons", {"name": SECOND_SEASON}, headers={"X-Ops-Token": ops_token}
        ),
        201,
    )
    for game in GAMES:
        await between(api, world, game, [d, c], "finished_rated", loadouts)
        await resigned(api, world, game, [e, a], loadouts)


async def operator_match(api: Api, world: World, ops_token: str, reader: int) -> None:
    """An operator's match of bots alone, which the server plays to its end, and no one owns."""
    body = {"game": "fate-duel", "seats": 2, "bots": [0, 1]}
    made = ok(await api.post("/v1/ops/matches", body, headers={"X-Ops-Token": ops_token}), 201)
    match_id = made["match_id"]
    token = world.token(reader)
    seen = 0
    for _ in range(int(WAIT_SECONDS)):
        if (await read_match(api, token, match_id))["status"] == "finished":
            break
        seen = await wait_for_events(api, token, match_id, seen)
    else:
        raise AssertionError(f"the operator's match {match_id} did not end")
    world.matches[match_id] = PlayedMatch("fate-duel", "finished_bots_only", [None, None], reader)


# -- the matchmaking queue ----------------------------------------------------------------------


async def play_queue(api: Api, world: World, players: list[int]) -> None:
    """Two tickets matched together (their match left in progress), one cancelled and one
    still searching. The first of each is queued by key, as is the cancel."""
    a, b, c, d = players
    queue = "/v1/matchmaking/tickets"
    body = {"game": "necromancers", "seats": 2}
    first = ok(await send_keyed(api, world, a, "POST", queue, body), 201)["ticket_id"]
    second = ok(await api.post(queue, body, token=world.token(b)), 201)["ticket_id"]
    matched = ok(await api.get(f"{queue}/{first}?wait={WAIT_SECONDS:.0f}", token=world.token(a)))
    assert matched["status"] == "matched", matched
    seats: list[int | None] = [None, None]
    seats[matched["seat"]] = a
    seats[1 - matched["seat"]] = b
    world.matches[matched["match_id"]] = PlayedMatch("necromancers", "in_progress_queued", seats, a)
    loadouts = await sample_loadouts(api, world.token(c))
    loyalty = {"game": "loyalty", "seats": 2, **_loadout(loadouts, "loyalty")}
    cancelled = ok(await send_keyed(api, world, c, "POST", queue, loyalty), 201)["ticket_id"]
    ok(await send_keyed(api, world, c, "DELETE", f"{queue}/{cancelled}"))
    searching = {"game": "fate-duel", "seats": 2, **_loadout(loadouts, "fate-duel")}
    waiting = ok(await api.post(queue, searching, token=world.token(d)), 201)["ticket_id"]
    world.tickets.update({first: a, second: b, cancelled: c, waiting: d})


def progress(step: str) -> None:
    print(f"{datetime.now(UTC):%H:%M:%S} {step}", flush=True)


async def play(api: Api, ops_token: str) -> World:
    world = World([await sign_in(api, i) for i in range(PLAYERS)])
    await play_sessions(api, world)
    progress("sessions played")
    await play_runs(api, world, [0, 1, 2, 3])
    progress(f"runs played: {len(world.runs)} runs, {len(world.battles)} battles")
    await play_matches(api, world, ops_token, [4, 5, 6, 7, 8, 9])
    progress(f"matches played: {len(world.matches)}")
    await play_queue(api, world, [10, 11, 6, 7])
    progress(f"tickets queued: {len(world.tickets)}")
    return world


# -- snapshots and battles across partitions ----------------------------------------------------


async def age_runs(url: str, world: World) -> dict[str, int]:
    """Move some finished runs, their snapshots and battles back in time (run id -> days).

    Through HTTP every row lands in this week's partition. The release's own ensure_partitions
    makes the weekly partitions of the last two weeks; the rows moved change partition as their
    created_at changes (the battles' references to the snapshots follow by ON UPDATE CASCADE).
    """
    finished = [r for r, (_, stage) in world.runs.items() if stage in ("won", "lost")]
    aged = dict(zip(finished, AGES_DAYS, strict=False))
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("SELECT ensure_partitions(2, 2)")
        for run_id, days in aged.items():
            async with conn.transaction():
                shift = f"interval '{days} days'"
                await conn.execute(
                    f"UPDATE runs SET created_at = created_at - {shift},"
                    f" updated_at = updated_at - {shift}, ended_at = ended_at - {shift}"
                    " WHERE run_id = $1",
                    uuid.UUID(run_id),
                )
                for table in ("snapshots", "battles"):
                    await conn.execute(
                        f"UPDATE {table} SET created_at = created_at - {shift} WHERE run_id = $1",
                        uuid.UUID(run_id),
                    )
    finally:
        await conn.close()
    return aged


async def row_counts(url: str) -> dict[str, int]:
    """Rows per table of the schema, partitions each on their own (the parents are their sum)."""
    conn = await asyncpg.connect(url)
    try:
        names = await conn.fetch(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') ORDER BY c.relname"
        )
        return {
            row["relname"]: await conn.fetchval(f'SELECT count(*) FROM "{row["relname"]}"')
            for row in names
        }
    finally:
        await conn.close()


# -- what a player reads back (the drill reads the same) ----------------------------------------


def digest(value: Any) -> str:
    """SHA-256 of a value's canonical JSON."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


async def observe_run(api: Api, token: str, run_id: str) -> Any:
    return ok(await api.get(f"/v1/runs/{run_id}", token=token))


async def fetch_battle(api: Api, token: str, battle_id: int) -> tuple[Any, Any]:
    """The battle and its replay (read as msgpack, which keeps a 64-bit seed exact)."""
    battle = ok(await api.get(f"/v1/battles/{battle_id}", token=token))
    path = f"/v1/battles/{battle_id}/replay"
    return battle, ok(await api.get(path, token=token, fmt="msgpack"))


def replay_digest(replay: Any) -> str:
    """SHA-256 of the replay's msgpack bytes, as the golden corpus counts them."""
    return hashlib.sha256(msgpack.packb(replay)).hexdigest()


def battle_observation(battle: Mapping[str, Any], replay: Any) -> dict[str, Any]:
    return {
        "winner": battle["winner"],
        "rolls": battle["rolls"],
        "battle": digest(battle),
        "replay_sha256": replay_digest(replay),
    }


async def match_events(api: Api, token: str, match_id: str) -> list[Any]:
    events: list[Any] = []
    after = 0
    while True:
        page = ok(await api.get(f"/v1/matches/{match_id}/events?after={after}", token=token))
        events += page["events"]
        if page["last_seq"] == after:
            return events
        after = page["last_seq"]


async def observe_match(api: Api, token: str, match_id: str) -> dict[str, Any]:
    match = await read_match(api, token, match_id)
    observed = {
        "status": match["status"],
        "version": match["version"],
        "to_act": match["to_act"],
        "outcome": match["outcome"],
        "match": digest(match),
        "events": digest(await match_events(api, token, match_id)),
    }
    if match["status"] == "finished":
        replay = ok(await api.get(f"/v1/matches/{match_id}/replay", token=token))
        observed["replay"] = digest(replay)
    return observed


async def observe_ticket(api: Api, token: str, ticket_id: str) -> Any:
    return ok(await api.get(f"/v1/matchmaking/tickets/{ticket_id}", token=token))


async def leaderboards(api: Api, token: str, seasons: list[str]) -> dict[str, Any]:
    """The autobattler's board, and every game's in every season (100 entries: all of them)."""
    boards = {"cryptids": ok(await api.get("/v1/leaderboard?limit=100", token=token))["entries"]}
    for game in GAMES:
        for season in seasons:
            query = f"?game={game}&season={season}&limit=100"
            boards[f"{game}/{season}"] = ok(await api.get(f"/v1/leaderboard{query}", token=token))
    return boards


async def player_ratings(api: Api, token: str) -> dict[str, Any]:
    me = ok(await api.get("/v1/players/me", token=token))
    return {"rating": me["rating"], "ratings": me["ratings"], "handle": me["handle"]}


async def retried(api: Api, token: str, write: Mapping[str, Any]) -> dict[str, Any]:
    """The answer to a keyed write sent again: its status and its body's digest."""
    answer = await api.call(
        write["method"],
        write["path"],
        write["body"],
        token=token,
        headers={"Idempotency-Key": write["key"]},
    )
    return {"status": answer.status, "body": digest(answer.body)}


async def observe(api: Api, world: World) -> dict[str, Any]:
    """What every player reads back of what it played, by id."""
    token = world.token
    runs = {
        run_id: {
            "owner": owner,
            "stage": stage,
            "run": await observe_run(api, token(owner), run_id),
        }
        for run_id, (owner, stage) in world.runs.items()
    }
    battles = {
        str(battle_id): {
            "owner": owner,
            **battle_observation(*await fetch_battle(api, token(owner), battle_id)),
        }
        for battle_id, owner in sorted(world.battles.items())
    }
    matches = {
        match_id: {**asdict(played), **await observe_match(api, token(played.reader), match_id)}
        for match_id, played in world.matches.items()
    }
    tickets = {
        ticket_id: {"owner": owner, "ticket": await observe_ticket(api, token(owner), ticket_id)}
        for ticket_id, owner in world.tickets.items()
    }
    keyed = [
        {**asdict(write), "answer": await retried(api, token(write.player), asdict(write))}
        for write in world.keyed
    ]
    return {
        "runs": runs,
        "battles": battles,
        "matches": matches,
        "tickets": tickets,
        "keyed_writes": keyed,
        "leaderboards": await leaderboards(api, token(0), [FIRST_SEASON, SECOND_SEASON]),
        "ratings": [await player_ratings(api, token(p.index)) for p in world.players],
    }


# -- the release's service and its database -----------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def release_env(url: str, secret_key: str, ops_token: str, data_dir: Path) -> dict[str, str]:
    """The release's settings while it is played: one address signs everyone in, every battle
    against a player's ghost rates (so that runs move the autobattler's ratings apart), and
    nothing stored ages out (see above)."""
    many = str(1_000_000)
    return {
        "DATABASE_URL": url,
        "SECRET_KEY": secret_key,
        "OPS_TOKEN": ops_token,
        "DATA_DIR": str(data_dir),
        "SEASON": FIRST_SEASON,
        "LOG_FORMAT": "json",
        "LOG_REQUESTS": "errors",
        "RATE_LIMIT_PER_SECOND": many,
        "RATE_LIMIT_BURST": many,
        "REGISTRATIONS_PER_ADDRESS_PER_HOUR": many,
        "REGISTRATIONS_PER_ADDRESS_PER_DAY": many,
        "SIGN_INS_PER_ADDRESS_PER_MINUTE": many,
        "AUTH_FAILURES_PER_ADDRESS_PER_MINUTE": many,
        "RATED_GHOST_MIN_AGE_SECONDS": "0",
        "RATED_GHOST_MIN_RUNS": "0",
        "RATED_GHOST_REPEAT_SECONDS": "0",
        "REFRESH_TOKEN_TTL_SECONDS": str(CENTURY_SECONDS),
        "MATCH_WAIT_SECONDS": str(CENTURY_SECONDS),
        "MATCHMAKING_TURN_SECONDS": str(DECADE_SECONDS),
        "MATCHMAKING_BOT_AFTER_SECONDS": str(CENTURY_SECONDS),
        "RUN_IDLE_SECONDS": str(CENTURY_SECONDS),
    }


def stop(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGTERM)
    if process.wait(timeout=60) != 0:
        raise RuntimeError(f"the release's service exited with {process.returncode}")


def pg_dump(url: str, into: Path) -> None:
    subprocess.run(
        [
            str(postgres_bin() / "pg_dump"),
            "--format=custom",
            "--compress=9",
            "--no-owner",
            "--no-privileges",
            f"--file={into}",
            f"--dbname={url}",
        ],
        check=True,
        timeout=300,
    )


def tree_version(tree: Path) -> str:
    version: str = tomllib.loads((tree / "pyproject.toml").read_text())["project"]["version"]
    return version


def head_commit(name: str) -> str:
    return subprocess.run(
        ["git", "rev-parse", "--verify", f"{name}^{{commit}}"],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


async def create_database(admin_url: str, name: str) -> str:
    conn = await asyncpg.connect(admin_url)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    return admin_url.replace("/postgres?", f"/{name}?", 1)


async def play_release(tree: Path, url: str, scratch: Path) -> dict[str, Any]:
    """The release served on `url`, played and observed: the manifest's body."""
    secret_key, ops_token = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    log = scratch / "service.log"
    port = free_port()
    process = serve(tree, release_env(url, secret_key, ops_token, scratch / "var"), port, log)
    try:
        async with aiohttp.ClientSession() as session:
            api = Api(session, f"http://127.0.0.1:{port}")
            world = await play(api, ops_token)
            aged = await age_runs(url, world)
            observed = await observe(api, world)
    except BaseException:
        print(log.read_text(errors="replace")[-4000:])
        raise
    finally:
        stop(process)
    manifest = {
        "secret_key": secret_key,
        "seasons": [FIRST_SEASON, SECOND_SEASON],
        # Access tokens last an hour: the drill signs in with the device ids instead.
        "players": [
            {k: v for k, v in asdict(p).items() if k != "access_token"} for p in world.players
        ],
        "revoked_refresh_token": world.revoked_refresh_token,
        "aged_runs_days": aged,
        **observed,
    }
    return manifest


async def record(commit: str, version: str | None, folder: Path | None) -> Path:
    with tempfile.TemporaryDirectory(prefix="release-") as scratch_name:
        scratch = Path(scratch_name)
        tree = source_tree(commit, scratch / "tree")
        version = version or tree_version(tree)
        folder = folder or RELEASES / version
        folder.mkdir(parents=True, exist_ok=True)
        server = EmbeddedPostgres(scratch / "pgdata")
        try:
            url = await create_database(server.start(), "release")
            played = await play_release(tree, url, scratch)
            pg_dump(url, folder / DUMP)
            rows = await row_counts(url)
        finally:
            server.release()
    manifest = {
        "version": version,
        "commit": commit,
        "recorded_at": datetime.now(UTC).isoformat(),
        "rows": rows,
        **played,
    }
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commit", default="HEAD", help="the release's commit (default HEAD)")
    parser.add_argument("--version", help="the release's version (default: its pyproject's)")
    parser.add_argument("--into", type=Path, help="the folder (default releases/<version>)")
    args = parser.parse_args()
    folder = asyncio.run(record(head_commit(args.commit), args.version, args.into))
    print(f"recorded {folder}: {(folder / DUMP).stat().st_size} bytes of dump")


if __name__ == "__main__":
    main()
