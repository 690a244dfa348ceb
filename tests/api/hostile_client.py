"""One account doing its worst within its limits, from a process of its own.

`python -m tests.api.hostile_client '{"base_url", "token", "match_id", "rate"}'` prints
`started`, then attacks while told to: a line `go` on its input starts it, `stop` pauses it, and
the end of its input ends it; it then prints how each kind of attack was answered, as a line of
JSON: {kind: {status, or how a socket closed: count}}, and the CPU it used itself.

It sends every kind of body and frame that costs the service most, one stream of each kind at a
time: 1 MB bodies declared and chunked, the deepest and the dearest bodies within the limit, and
on the match's WebSocket 1 MB frames and the dearest frames within the limit; and on several
connections at once, 16 KB gzip bodies that inflate to 16 MiB (without a token, and with one),
and scrapes of /metrics. It spends all its limits allow, for as long as it is let, and no more:
requests and frames as fast as the per-request buckets, the player's and the address's, refill
(`rate` each); a WebSocket handshake again once a refused one's Retry-After is over. A flood
past the limits is answered 429 at the cost of any request, which is for the load balancer in
front to bound, not for the body limit. `"only": [names]` in the spec runs those streams alone
(STREAMS). Its own process, so that its work does not share the event loop of the service under
test.
"""

import asyncio
import gzip
import json
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import suppress
from typing import Any

import aiohttp
import msgpack

MEGABYTE = 1_000_000
# The dearest bodies of a megabyte: as many empty arrays as fit, each an object to allocate.
BIG_JSON = b"[" + b",".join([b"[]"] * (MEGABYTE // 3)) + b"]"
BIG_MSGPACK = b"\xdd" + (MEGABYTE - 5).to_bytes(4, "big") + b"\x90" * (MEGABYTE - 5)
# Within a 16 KiB body limit: the deepest JSON, and the msgpack body that costs most to decode.
DEEP_JSON = b"[" * 8192 + b"]" * 8192
MANY_ARRAYS = b"\xdc\x3f\xf0" + b"\x90" * 0x3FF0
# 16 KB that inflate to 16 MiB; sent on this many connections at once.
GZIP_BOMB = gzip.compress(b'{"name": "' + b"x" * 2**24 + b'"}', compresslevel=9)
BOMB_CONNECTIONS = 4
SCRAPERS = 10
STREAMS = (
    "1 MB body",
    "1 MB chunked body",
    "16 KiB deep body",
    "16 KiB dearest body",
    "1 MB frames",
    "16 KiB dearest frames",
    "gzip bomb",
    "gzip bomb with a token",
    "/metrics scrapes",
)


class Attack:
    def __init__(self, spec: dict[str, Any], session: aiohttp.ClientSession) -> None:
        self.base_url: str = spec["base_url"]
        self.match_id: str = spec["match_id"]
        self.auth = {"Authorization": f"Bearer {spec['token']}"}
        self.session = session
        self.go = asyncio.Event()
        self.over = asyncio.Event()
        self.answers: dict[str, Counter[str]] = {}
        self.player = Pace(self, spec["rate"])
        self.address = Pace(self, spec["rate"])

    def running(self) -> bool:
        return not self.over.is_set()

    async def follow_orders(self) -> None:
        """`go` and `stop` from the input, until it ends."""
        while line := await asyncio.to_thread(sys.stdin.readline):
            if line.strip() == "go":
                self.go.set()
            else:
                self.go.clear()
        self.over.set()
        self.go.set()

    async def pause(self, seconds: float) -> None:
        """Wait `seconds`, or until the attack is over."""
        with suppress(TimeoutError):
            await asyncio.wait_for(self.over.wait(), seconds)

    def count(self, kind: str, outcome: object) -> None:
        self.answers.setdefault(kind, Counter())[str(outcome)] += 1

    async def post(self, kind: str, path: str, data: Any, headers: dict[str, str]) -> None:
        await (self.player if "Authorization" in headers else self.address).take()
        if not self.running():
            return
        async with self.session.post(self.base_url + path, data=data, headers=headers) as answer:
            await answer.read()
            self.count(kind, answer.status)

    async def big_bodies(self) -> None:
        """Unauthenticated sign-ups of 1 MB, declared by Content-Length."""
        while self.running():
            headers = {"Content-Type": "application/json"}
            await self.post("1 MB body", "/v1/players", BIG_JSON, headers)

    async def chunked_bodies(self) -> None:
        """Unauthenticated sign-ups of 1 MB that declare no length (chunked)."""

        async def chunks() -> AsyncIterator[bytes]:
            for start in range(0, len(BIG_JSON), 10_000):
                yield BIG_JSON[start : start + 10_000]

        while self.running():
            headers = {"Content-Type": "application/json"}
            await self.post("1 MB chunked body", "/v1/players", chunks(), headers)

    async def deep_bodies(self) -> None:
        while self.running():
            headers = {**self.auth, "Content-Type": "application/json"}
            path = f"/v1/matches/{self.match_id}/actions"
            await self.post("16 KiB deep body", path, DEEP_JSON, headers)

    async def dear_bodies(self) -> None:
        while self.running():
            headers = {**self.auth, "Content-Type": "application/msgpack"}
            path = f"/v1/matches/{self.match_id}/actions"
            await self.post("16 KiB dearest body", path, MANY_ARRAYS, headers)

    async def gzip_bombs(self, kind: str, path: str, headers: dict[str, str]) -> None:
        """The bomb on BOMB_CONNECTIONS connections at once (an aiohttp session opens one for
        each request in flight)."""

        async def one_connection() -> None:
            while self.running():
                await self.post(kind, path, GZIP_BOMB, {**headers, "Content-Encoding": "gzip"})

        await asyncio.gather(*(one_connection() for _ in range(BOMB_CONNECTIONS)))

    async def scrapes(self) -> None:
        """SCRAPERS scrapes of /metrics in flight, unauthenticated as a scraper is."""

        async def one_scraper() -> None:
            while self.running():
                await self.address.take()
                if not self.running():
                    return
                async with self.session.get(self.base_url + "/metrics") as answer:
                    await answer.read()
                    self.count("/metrics scrapes", answer.status)

        await asyncio.gather(*(one_scraper() for _ in range(SCRAPERS)))

    async def socket(self, kind: str, frame: bytes) -> None:
        """Open the match's socket and send `frame` until the socket closes; again until the
        attack is over (each handshake counts against the handshake limits)."""
        url = self.base_url.replace("http", "ws", 1) + f"/v1/matches/{self.match_id}/ws"
        while self.running():
            await self.player.take()
            try:
                ws = await self.session.ws_connect(url, headers=self.auth, max_msg_size=0)
            except aiohttp.WSServerHandshakeError as exc:
                self.count(kind, f"handshake {exc.status}")
                await self.pause(float((exc.headers or {}).get("Retry-After", "1")))
                continue
            async with ws:
                await asyncio.gather(self._send(ws, frame), self._read(kind, ws))

    async def _send(self, ws: aiohttp.ClientWebSocketResponse, frame: bytes) -> None:
        while not ws.closed:
            await self.player.take()
            if not self.running():
                await ws.close()
                return
            try:
                await ws.send_bytes(frame)
            except (ConnectionError, RuntimeError):
                return

    async def _read(self, kind: str, ws: aiohttp.ClientWebSocketResponse) -> None:
        async for message in ws:
            if message.type in (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY):
                text = message.type == aiohttp.WSMsgType.TEXT
                reply = json.loads(message.data) if text else msgpack.unpackb(message.data)
                if "reply" in reply:
                    self.count(kind, reply.get("status", 200))
        self.count(kind, f"closed {ws.close_code}")


class Pace:
    """Sends spaced at the rate a per-request bucket refills, while the attack goes on: what an
    attack that never stops may send once its burst is spent, paused time not counted."""

    def __init__(self, attack: Attack, rate: float) -> None:
        self.attack = attack
        self.interval = 1 / rate
        self.next = 0.0

    async def take(self) -> None:
        await self.attack.go.wait()
        now = time.monotonic()
        self.next = max(self.next, now)
        await self.attack.pause(self.next - now)
        self.next += self.interval


async def attack(spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    async with aiohttp.ClientSession() as session:
        hostile = Attack(spec, session)
        json_body = {"Content-Type": "application/json"}
        actions = f"/v1/matches/{hostile.match_id}/actions"
        streams: dict[str, Callable[[], Awaitable[None]]] = {
            "1 MB body": hostile.big_bodies,
            "1 MB chunked body": hostile.chunked_bodies,
            "16 KiB deep body": hostile.deep_bodies,
            "16 KiB dearest body": hostile.dear_bodies,
            "1 MB frames": lambda: hostile.socket("1 MB frames", BIG_MSGPACK),
            "16 KiB dearest frames": lambda: hostile.socket("16 KiB dearest frames", MANY_ARRAYS),
            "gzip bomb": lambda: hostile.gzip_bombs("gzip bomb", "/v1/players", json_body),
            "gzip bomb with a token": lambda: hostile.gzip_bombs(
                "gzip bomb with a token", actions, {**hostile.auth, **json_body}
            ),
            "/metrics scrapes": hostile.scrapes,
        }
        assert tuple(streams) == STREAMS
        print("started", flush=True)
        only = spec.get("only", STREAMS)
        await asyncio.gather(hostile.follow_orders(), *(streams[name]() for name in only))
    answers: dict[str, dict[str, Any]] = {k: dict(c) for k, c in hostile.answers.items()}
    answers["client"] = {"cpu_seconds": round(time.process_time(), 2)}
    return answers


if __name__ == "__main__":
    print(json.dumps(asyncio.run(attack(json.loads(sys.argv[1])))))
