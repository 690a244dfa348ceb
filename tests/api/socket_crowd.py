"""A match played in front of a full crowd of sockets, from a process of its own.

`python -m tests.api.socket_crowd '{"base_url", "match_id", "seats", "watchers", "per_watcher",
"pace"}'` opens a socket for each seat's token in `seats` and `per_watcher` sockets for each
token in `watchers`, and prints `started` once every socket has had its backlog. Then it plays
the match on the seats' sockets while told to (a line `go` on its input starts it, `stop` pauses
it, the end of its input ends it), an action every `pace` seconds, reading every socket all
along. It ends by printing, as a line of JSON, the actions applied and the p50 of their round
trips, those refused, the batches the watchers were pushed, and whether the match ended.
Its own process, so that its work does not share the event loop of the service under test.
"""

import asyncio
import json
import statistics
import sys
import time
from collections import Counter
from typing import Any

import aiohttp


class Crowd:
    def __init__(self, spec: dict[str, Any], session: aiohttp.ClientSession) -> None:
        self.spec = spec
        self.session = session
        self.base_url: str = spec["base_url"]
        self.match_path = f"/v1/matches/{spec['match_id']}"
        self.go = asyncio.Event()
        self.over = asyncio.Event()
        self.replies: list[asyncio.Queue[dict[str, Any]]] = []
        self.seat_sockets: list[aiohttp.ClientWebSocketResponse] = []
        self.counts: Counter[str] = Counter()
        # How long each applied action took, from its frame sent to its reply read.
        self.action_ms: list[float] = []

    async def open(self) -> list[asyncio.Task[None]]:
        """Every socket, its backlog read, and a reader for each."""
        readers = []
        for token in self.spec["seats"]:
            ws = await self._socket(token)
            replies: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
            self.seat_sockets.append(ws)
            self.replies.append(replies)
            readers.append(asyncio.create_task(self._read(ws, replies)))
        for token in self.spec["watchers"]:
            for _ in range(self.spec["per_watcher"]):
                readers.append(asyncio.create_task(self._read(await self._socket(token), None)))
        return readers

    async def _socket(self, token: str) -> aiohttp.ClientWebSocketResponse:
        url = self.base_url.replace("http", "ws", 1) + f"{self.match_path}/ws?token={token}"
        ws = await self.session.ws_connect(url)
        await ws.receive_json(timeout=10)
        return ws

    async def _read(
        self, ws: aiohttp.ClientWebSocketResponse, replies: asyncio.Queue[dict[str, Any]] | None
    ) -> None:
        async for message in ws:
            if replies is None:
                self.counts["batches pushed to watchers"] += 1
                continue
            frame = json.loads(message.data)
            if "reply" in frame:
                replies.put_nowait(frame)

    async def follow_orders(self) -> None:
        while line := await asyncio.to_thread(sys.stdin.readline):
            if line.strip() == "go":
                self.go.set()
            else:
                self.go.clear()
        self.over.set()
        self.go.set()

    async def _view(self, seat: int) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {self.spec['seats'][seat]}"}
        async with self.session.get(self.base_url + self.match_path, headers=headers) as answer:
            view: dict[str, Any] = await answer.json()
            assert answer.status == 200, view
            return view

    async def play(self) -> None:
        """Actions on the seats' sockets, each the first legal one of the seat asked, at most
        one every `pace` seconds."""
        asked: dict[str, Any] | None = None
        loop = asyncio.get_running_loop()
        due = loop.time()
        while not self.over.is_set():
            await asyncio.sleep(due - loop.time())
            await self.go.wait()
            if self.over.is_set():
                return
            due = max(due, loop.time()) + self.spec["pace"]
            if asked is None:
                (seat, *_) = (await self._view(0))["to_act"]
                asked = {"seat": seat, **(await self._view(seat))}
            seat = asked["seat"]
            frame = {"version": asked["version"], "action": asked["legal_actions"][0]}
            sent = time.perf_counter()
            await self.seat_sockets[seat].send_str(json.dumps(frame))
            reply = await self.replies[seat].get()
            took_ms = (time.perf_counter() - sent) * 1000
            if "answer" not in reply:
                self.counts[f"refused {reply['error']['code']}"] += 1
                await asyncio.sleep(reply["error"]["details"].get("retry_after", 0))
                asked = None
                continue
            answer = reply["answer"]
            self.counts["actions applied"] += 1
            self.action_ms.append(took_ms)
            if answer["status"] != "active":
                self.counts["match ended"] += 1
                return
            # The seat still asked plays on from its answer; another is asked what it sees.
            again = seat in answer["to_act"] and answer["legal_actions"]
            asked = {"seat": seat, **answer} if again else None


async def crowd(spec: dict[str, Any]) -> dict[str, float]:
    # Every socket holds a connection: no cap on them (aiohttp's default is 100).
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        match = Crowd(spec, session)
        readers = await match.open()
        print("started", flush=True)
        await asyncio.gather(match.follow_orders(), match.play())
        for ws in match.seat_sockets:
            await ws.close()
        for reader in readers:
            reader.cancel()
        await asyncio.gather(*readers, return_exceptions=True)
    figures: dict[str, float] = dict(match.counts)
    if match.action_ms:
        figures["action p50 ms"] = round(statistics.median(match.action_ms), 2)
    return figures


if __name__ == "__main__":
    print(json.dumps(asyncio.run(crowd(json.loads(sys.argv[1])))))
