"""The load generator: a process of its own, driven by `bench.http`, answering one JSON line.

`python -m bench.load '{"mode": "simulate", ...}'` keeps `concurrency` requests in flight for
`seconds` (after a warm-up) against one path, cycling through the seeded battle corpus, and
prints the count, the errors, the latencies' percentiles and the CPU this process used, so the
caller can tell whether the generator rather than the server was the limit.
`"mode": "end-turn"` has `players` players each play runs over HTTP (buy, end-turn, again), or
with `"buys": "in-turn"` a turn in one request (the end-turn carries its buys).
`"mode": "match"` has `concurrency` players each play Duelo de Nigromantes against a bot seat,
match after match, choosing every action from the previous action's answer; with
`"via": "socket"` the actions go on the match's WebSocket instead of POST requests.
`"mode": "queue"` has `concurrency` players each press "play now" for Duelo de Nigromantes,
follow the ticket's long-poll until matched, resign the match and queue again; its figures are
the tickets matched per second and their time to match.
Every client has a keep-alive connection of its own and speaks HTTP/1.1 on it through
`Connection`, and WebSocket through `socket_client`, far leaner than aiohttp's client (which
only registers the players).
"""

import asyncio
import json
import os
import random
import sys
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast
from uuid import UUID

import aiohttp
import msgpack
import orjson
from yarl import URL

from bench import socket_client
from bench.engine import corpus
from bench.socket_client import SocketClient
from bench.table import percentile
from service.api.auth import issue_token
from service.games.cryptids.content import DEFAULT_RULESET, load_ruleset

JSON = "application/json"
MSGPACK = "application/msgpack"


@dataclass
class Clock:
    """When recording starts (after the warm-up) and when clients stop sending."""

    recording: bool = False
    stop_at: float = float("inf")

    def running(self) -> bool:
        return time.perf_counter() < self.stop_at


@dataclass
class Tally:
    clock: Clock
    latencies_ms: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)

    completed: int = 0

    def error(self, what: str) -> None:
        if self.clock.recording:
            self.errors[what] = self.errors.get(what, 0) + 1

    def done(self, seconds: float, status: int) -> None:
        """An answer came: count it, keep its latency once recording, count it as an error
        unless it is a success."""
        self.completed += 1
        if self.clock.recording:
            self.latencies_ms.append(seconds * 1000)
        if status >= 300:
            self.error(str(status))

    def absorb(self, other: "Tally") -> None:
        """Count `other`'s answers and errors here too (its latencies stay apart)."""
        self.completed += other.completed
        for what, count in other.errors.items():
            self.errors[what] = self.errors.get(what, 0) + count


def simulate_bodies(fmt: str, size: int) -> list[bytes]:
    """The corpus's battles as simulate requests, encoded once up front."""
    encode: Callable[[Any], bytes] = msgpack.packb if fmt == "msgpack" else _json
    return [
        encode(
            {
                "seed": seed,
                "a": {"cryptids": [_cryptid(p) for p in a]},
                "b": {"cryptids": [_cryptid(p) for p in b]},
            }
        )
        for seed, a, b in corpus(load_ruleset(DEFAULT_RULESET), size)
    ]


def _cryptid(pick: Sequence[Any]) -> dict[str, Any]:
    return {"species": pick[0], "ability": pick[1], "level": pick[2]}


def _json(data: Any) -> bytes:
    return json.dumps(data, separators=(",", ":")).encode()


async def _player(
    session: aiohttp.ClientSession, base: str, name: str, sessionless_key_file: str | None = None
) -> str:
    """A new player's access token; with a key file, a token from before sessions instead,
    signed with that key, for the same player."""
    async with session.post(f"{base}/v1/players", json={"name": name}) as answer:
        answer.raise_for_status()
        signed = await answer.json()
    if sessionless_key_file is not None:
        key = await asyncio.to_thread(Path(sessionless_key_file).read_text)
        return issue_token(key.strip(), UUID(signed["player_id"]), 3600)
    token: str = signed["access_token"]
    return token


async def _socket_act(tally: Tally, socket: SocketClient, frame: dict[str, Any]) -> Any:
    """One action on a match's WebSocket, timed to its reply (pushes before it are skipped);
    the answer, or None after a refusal."""
    started = time.perf_counter()
    socket.send_text(json.dumps(frame))
    while True:
        message = await socket.receive()
        if message is None:
            tally.error("socket closed")
            return None
        data = orjson.loads(message)
        if "reply" in data:
            break
    status = data.get("status", 200)
    tally.done(time.perf_counter() - started, status)
    return data.get("answer")


class Connection(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection sending prepared requests, one at a time.

    The loops' client: far leaner per request than aiohttp's, so the server rather than the
    generator is the limit (the generator's CPU is reported beside every figure). It reads
    answers by their Content-Length, which every answer of this service has.
    """

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.answer: asyncio.Future[tuple[int, bytes]] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0 or self.answer is None or self.answer.done():
            return
        head = bytes(self.buffer[:end]).lower()
        start = head.find(b"\r\ncontent-length:") + 17
        stop = head.find(b"\r\n", start)
        length = int(head[start : stop if stop >= 0 else None])
        if len(self.buffer) >= end + 4 + length:
            body = bytes(self.buffer[end + 4 : end + 4 + length])
            del self.buffer[: end + 4 + length]
            self.answer.set_result((int(head[9:12]), body))

    def connection_lost(self, exc: Exception | None) -> None:
        if self.answer is not None and not self.answer.done():
            self.answer.set_exception(exc or ConnectionResetError("closed by the server"))

    async def send(self, request: bytes) -> tuple[int, bytes]:
        """The answer's status and body."""
        assert self.transport is not None
        self.answer = asyncio.get_running_loop().create_future()
        self.transport.write(request)
        return await self.answer

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


async def _connect(base_url: str) -> Connection:
    url = URL(base_url)
    assert url.host is not None and url.port is not None
    loop = asyncio.get_running_loop()
    _, connection = await loop.create_connection(Connection, url.host, url.port)
    return connection


class Client:
    """A player on a connection of its own, sending JSON and reading JSON answers."""

    def __init__(self, connection: Connection, base_url: str, token: str) -> None:
        self.connection = connection
        self.host = URL(base_url).raw_authority
        self.token = token

    async def call(self, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
        request = _request(method, self.host, path, JSON, self.token, body)
        return await self.connection.send(request)


async def _timed(tally: Tally, client: Client, path: str, body: bytes) -> Any:
    """One POST; its latency is kept, a non-2xx counted; the decoded JSON answer or None."""
    started = time.perf_counter()
    try:
        status, raw = await client.call("POST", path, body)
    except ConnectionError as exc:
        tally.error(type(exc).__name__)
        return None
    tally.done(time.perf_counter() - started, status)
    if status >= 300:
        return None
    return orjson.loads(raw)


def _request(method: str, host: str, path: str, media: str, token: str, body: bytes) -> bytes:
    """One HTTP/1.1 request, its body in `media` and an answer asked for in it."""
    head = (
        f"{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: {media}\r\n"
        f"Accept: {media}\r\nAuthorization: Bearer {token}\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def _simulate(session: aiohttp.ClientSession, spec: dict[str, Any], tally: Tally) -> None:
    """Every client sends the next battle of the corpus, answer after answer."""
    host = URL(spec["base_url"]).raw_authority
    token = await _player(session, spec["base_url"], "bench", spec.get("sessionless_key_file"))
    media = MSGPACK if spec["format"] == "msgpack" else JSON
    requests = [
        _request("POST", host, spec["path"], media, token, body)
        for body in simulate_bodies(spec["format"], spec.get("corpus", 1000))
    ]
    sent = 0

    async def client() -> None:
        nonlocal sent
        connection = await _connect(spec["base_url"])
        while tally.clock.running():
            request = requests[sent % len(requests)]
            sent += 1
            started = time.perf_counter()
            try:
                status, _ = await connection.send(request)
            except ConnectionError as exc:
                tally.error(type(exc).__name__)
                return
            tally.done(time.perf_counter() - started, status)
        connection.close()

    await _run([client() for _ in range(spec["concurrency"])], spec, tally.clock)


async def _end_turn(
    session: aiohttp.ClientSession, spec: dict[str, Any], tally: Tally
) -> list[float]:
    """Each player: start a run, shop, end the turn; a new run when over.

    `"buys": "three"` buys slots 0, 1 and 2 every round whatever they cost (the refusals of a
    full warband or an empty purse count as errors); `"fitting"` buys, from each answer, the
    first offer the purse and the board still allow, and nothing once the warband is full;
    `"in-turn"` buys the same way but sends the buys with the end-turn, and plans the next
    turn from its answer's run: one request a turn.
    Every request counts in `tally`; the end-turns' latencies are returned apart.
    """
    base = spec["base_url"]
    clock = tally.clock
    turns = Tally(clock)
    tokens = await asyncio.gather(
        *(_player(session, base, f"p{i}") for i in range(spec["concurrency"]))
    )
    buys = spec.get("buys", "three")
    fitting = buys == "fitting"
    ruleset = load_ruleset(DEFAULT_RULESET)
    board = ruleset.battle.board_size

    def planned(run: dict[str, Any]) -> list[dict[str, Any]]:
        """Offers left to right that the purse allows, while the board has room (a merge
        would leave more room: never less)."""
        gold, room, moves = run["gold"], board - len(run["warband"]), []
        for offer in run["shop"]:
            if offer is not None and offer["cost"] <= gold and room > 0:
                moves.append({"move": "buy", "slot": offer["slot"]})
                gold, room = gold - offer["cost"], room - 1
        return moves

    def next_buy(run: dict[str, Any]) -> int | None:
        if len(run["warband"]) >= board:
            return None
        for offer in run["shop"]:
            if offer is not None and offer["cost"] <= run["gold"]:
                slot: int = offer["slot"]
                return slot
        return None

    async def shop(client: Client, path: str, run: dict[str, Any]) -> dict[str, Any]:
        if not fitting:
            for each in range(3):
                await _timed(tally, client, f"{path}/buy", _json({"slot": each}))
            return run
        wanted = next_buy(run)
        while wanted is not None and clock.running():
            bought = await _timed(tally, client, f"{path}/buy", _json({"slot": wanted}))
            if bought is None:
                break
            run, wanted = bought, next_buy(bought)
        return run

    async def turn(client: Client, path: str, run: dict[str, Any]) -> dict[str, Any] | None:
        """Play the run's turn; the run as the client next knows it, or None to stop."""
        if buys == "in-turn":
            body = _json({"round": run["round"], "moves": planned(run)})
            played = await _timed(turns, client, f"{path}/end-turn", body)
            return None if played is None else cast(dict[str, Any], played["run"])
        run = await shop(client, path, run)
        body = _json({"round": run["round"]})
        played = await _timed(turns, client, f"{path}/end-turn", body)
        if played is None:
            return None
        # The next round's shop is new, but the warband and what a round pays are known.
        return {
            **run,
            "round": run["round"] + 1,
            "status": played["status"],
            "gold": ruleset.shop.gold_per_round,
        }

    async def player(token: str) -> None:
        client = Client(await _connect(base), base, token)
        try:
            while clock.running():
                run = await _timed(tally, client, "/v1/runs", b"{}")
                if run is None:
                    return
                path = f"/v1/runs/{run['run_id']}"
                while run["status"] == "shopping" and clock.running():
                    run = await turn(client, path, run)
                    if run is None:
                        return
        finally:
            client.connection.close()

    await _run([player(token) for token in tokens], spec, clock)
    tally.absorb(turns)
    return turns.latencies_ms


async def _matches(
    session: aiohttp.ClientSession, spec: dict[str, Any], tally: Tally
) -> tuple[list[float], int]:
    """Each player: a 2-seat match against a bot seat, every action chosen from the answer to
    the previous one (the server plays the bot in the same transaction); a new match when over.

    Every request counts in `tally`; the actions' latencies are returned apart, with the moves
    they applied while recording (the client's and the bot's).
    """
    base = spec["base_url"]
    clock = tally.clock
    actions = Tally(clock)
    moves = 0
    tokens = await asyncio.gather(
        *(_player(session, base, f"m{i}") for i in range(spec["concurrency"]))
    )
    create = _json({"game": spec.get("game", "necromancers"), "seats": 2, "bots": [1]})

    async def player(number: int, token: str) -> None:
        nonlocal moves
        client = Client(await _connect(base), base, token)
        choose = random.Random(number)
        while clock.running():
            joined = await _timed(tally, client, "/v1/matches", create)
            if joined is None:
                return
            path = f"/v1/matches/{joined['match_id']}"
            status, raw = await client.call("GET", path)
            if status >= 300:
                tally.error(str(status))
                return
            state = orjson.loads(raw)
            socket = None
            if spec.get("via") == "socket":
                socket = await socket_client.connect(base, f"{path}/ws", token)
            try:
                while state["status"] == "active" and state["prompt"] and clock.running():
                    action = choose.choice(state["prompt"]["actions"])
                    frame = {"version": state["version"], "action": action}
                    before = state["version"]
                    if socket is None:
                        sent = _timed(actions, client, f"{path}/actions", _json(frame))
                    else:
                        sent = _socket_act(actions, socket, frame)
                    state = await sent
                    if state is None:
                        return
                    if clock.recording:
                        moves += state["version"] - before
            finally:
                if socket is not None:
                    socket.close()
        client.connection.close()

    await _run([player(i, token) for i, token in enumerate(tokens)], spec, clock)
    tally.absorb(actions)
    return actions.latencies_ms, moves


# How long one long-poll of a ticket waits; a player still searching once the clock stops
# cancels its ticket rather than wait for the bot delay.
TICKET_POLL_SECONDS = 1.0


async def _queue(session: aiohttp.ClientSession, spec: dict[str, Any], tally: Tally) -> list[float]:
    """Each player: queue a ticket, long-poll it until matched, resign the match (the partner's
    resign then finds it over), again. Every request counts in `tally`; the tickets' times to
    match, from the POST to the answer that says matched, are returned apart."""
    base = spec["base_url"]
    clock = tally.clock
    matched = Tally(clock)
    tokens = await asyncio.gather(
        *(_player(session, base, f"q{i}") for i in range(spec["concurrency"]))
    )
    ticket = _json({"game": "necromancers", "seats": 2})

    async def player(token: str) -> None:
        client = Client(await _connect(base), base, token)
        while clock.running():
            started = time.perf_counter()
            queued = await _timed(tally, client, "/v1/matchmaking/tickets", ticket)
            if queued is None:
                return
            path = f"/v1/matchmaking/tickets/{queued['ticket_id']}"
            state = queued
            while state["status"] == "searching":
                if not clock.running():
                    status, _ = await client.call("DELETE", path)
                    # 409: matched meanwhile, and left to its turn timer.
                    if status not in (200, 409):
                        tally.error(str(status))
                    return
                status, raw = await client.call("GET", f"{path}?wait={TICKET_POLL_SECONDS}")
                tally.done(0.0, status)
                if status >= 300:
                    return
                state = orjson.loads(raw)
            matched.done(time.perf_counter() - started, 200)
            status, _ = await client.call("POST", f"/v1/matches/{state['match_id']}/resign")
            # 409: the partner resigned first and the match is over.
            tally.done(0.0, 200 if status == 409 else status)
        client.connection.close()

    await _run([player(token) for token in tokens], spec, clock)
    return matched.latencies_ms


async def _run(
    clients: list[Coroutine[Any, Any, None]], spec: dict[str, Any], clock: Clock
) -> None:
    """Run the clients; record from the end of the warm-up for `seconds`, then stop them."""
    tasks = [asyncio.ensure_future(c) for c in clients]
    await asyncio.sleep(spec.get("warmup", 0.5))
    clock.recording = True
    cpu_before = _cpu()
    started = time.perf_counter()
    clock.stop_at = started + spec["seconds"]
    await asyncio.gather(*tasks)
    spec["elapsed"] = time.perf_counter() - started
    spec["cpu"] = (_cpu() - cpu_before) / spec["elapsed"]


def _cpu() -> float:
    times = os.times()
    return times.user + times.system


async def measure(spec: dict[str, Any]) -> dict[str, Any]:
    """Run one measurement; the answer has requests, rate, p50/p99 ms, errors and cpu."""
    tally = Tally(Clock())
    moves = 0
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        if spec["mode"] == "simulate":
            await _simulate(session, spec, tally)
            latencies = tally.latencies_ms
        elif spec["mode"] == "match":
            latencies, moves = await _matches(session, spec, tally)
        elif spec["mode"] == "queue":
            latencies = await _queue(session, spec, tally)
        else:
            latencies = await _end_turn(session, spec, tally)
    return {
        "moves": moves,
        "requests": len(latencies),
        "rate": len(latencies) / spec["elapsed"],
        "p50_ms": percentile(latencies, 0.5) if latencies else 0.0,
        "p95_ms": percentile(latencies, 0.95) if latencies else 0.0,
        "p99_ms": percentile(latencies, 0.99) if latencies else 0.0,
        "errors": tally.errors,
        "cpu": spec["cpu"],
        "completed": tally.completed,
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    spec = json.loads(args[0])
    print(json.dumps(asyncio.run(measure(spec))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
