"""Fault injection between the service and PostgreSQL, and the checks made after each fault.

`FaultProxy` listens on 127.0.0.1 and forwards every connection to the server's unix socket.
It can cut every open connection (mid-transaction, as a crash or a network cut would), refuse
new ones for a while, and delay every chunk it forwards. `Workload` plays runs through real
HTTP, retrying as docs/operations.md#reliability tells clients to (the same Idempotency-Key
after a 503), and records every write the service acknowledged, so that a test can check none
was lost.
"""

import asyncio
import contextlib
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import asyncpg

from tests.http import Api

CHUNK = 65536


class FaultProxy:
    def __init__(self, database_url: str) -> None:
        parts = urlsplit(database_url)
        socket_dir = parse_qs(parts.query)["host"][0]
        self.socket_path = f"{socket_dir}/.s.PGSQL.{parts.port or 5432}"
        self.database = parts.path.lstrip("/") or "postgres"
        self.refusing = False
        self.delay_s = 0.0
        self.cuts = 0
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)

    @property
    def url(self) -> str:
        assert self._server is not None
        port = self._server.sockets[0].getsockname()[1]
        return f"postgresql://postgres@127.0.0.1:{port}/{self.database}"

    async def close(self) -> None:
        self.cut()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    def cut(self) -> None:
        """Close every open connection at once, in whatever state it is."""
        self.cuts += 1
        for writer in list(self._open):
            writer.transport.abort()
        self._open.clear()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.refusing:
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_unix_connection(self.socket_path)
        except OSError:
            writer.transport.abort()
            return
        self._open |= {writer, up_writer}
        await asyncio.gather(
            self._pipe(reader, up_writer, self.client_reader()),
            self._pipe(up_reader, writer, None),
            return_exceptions=True,
        )
        for end in (writer, up_writer):
            self._open.discard(end)
            end.transport.abort()

    def client_reader(self) -> Callable[[bytes], None] | None:
        """For each connection: what reads the bytes the client sends, before they go on (a
        proxy that records them overrides it)."""
        return None

    async def _pipe(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        read: Callable[[bytes], None] | None,
    ) -> None:
        while data := await reader.read(CHUNK):
            if read is not None:
                read(data)
            if self.delay_s:
                await asyncio.sleep(self.delay_s)
            writer.write(data)
            await writer.drain()
        writer.transport.abort()


# 502: a load balancer whose instance went away with the request (tests/runtime/test_cluster.py).
RETRIED = {502, 503, 429}


@dataclass
class Workload:
    """Players playing runs through HTTP; what the service acknowledged is recorded."""

    api: Api
    runs: dict[str, str] = field(default_factory=dict)  # run id -> token
    battles: dict[int, tuple[str, int]] = field(default_factory=dict)  # id -> (run, round)
    answers: dict[int, int] = field(default_factory=dict)  # status -> count
    errors: list[str] = field(default_factory=list)

    async def _send(self, method: str, path: str, body: Any, token: str, key: str) -> Any:
        """The request retried with its key until it is answered by something else than a 503."""
        for _ in range(400):
            answer = await self.api.call(
                method, path, body, token=token, headers={"Idempotency-Key": key}
            )
            self.answers[answer.status] = self.answers.get(answer.status, 0) + 1
            if answer.status not in RETRIED:
                if answer.status >= 500:
                    self.errors.append(f"{method} {path}: {answer.status} {answer.raw[:200]!r}")
                return answer
            await asyncio.sleep(0.05)
        raise AssertionError(f"{method} {path} never got through")

    async def player(self, seconds: float) -> None:
        token = ""
        for _ in range(400):
            answer = await self.api.post("/v1/players", {"name": "faulty"})
            if answer.status == 201:
                token = answer.body["token"]
                break
            await asyncio.sleep(0.05)
        assert token, "no player could be registered"
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            started = await self._send("POST", "/v1/runs", {}, token, uuid.uuid4().hex)
            if started.status != 201:
                continue
            run = started.body
            self.runs[run["run_id"]] = token
            while run["status"] == "shopping" and time.monotonic() < deadline:
                path = f"/v1/runs/{run['run_id']}"
                bought = await self._send(
                    "POST", path + "/buy", {"slot": 0}, token, uuid.uuid4().hex
                )
                if bought.status == 200:
                    run = bought.body
                body = {"round": run["round"]}
                turn = await self._send("POST", path + "/end-turn", body, token, uuid.uuid4().hex)
                if turn.status != 200:
                    break
                self.battles[turn.body["battle_id"]] = (run["run_id"], turn.body["round"])
                run = {**run, "round": turn.body["round"] + 1, "status": turn.body["status"]}

    async def run(self, players: int, seconds: float) -> None:
        await asyncio.gather(*(self.player(seconds) for _ in range(players)))

    @property
    def acknowledged(self) -> int:
        return len(self.runs) + len(self.battles)


async def lost_writes(database_url: str, workload: Workload) -> list[str]:
    """Acknowledged runs and battles missing from the database, and runs that do not add up."""
    conn = await asyncpg.connect(database_url)
    try:
        problems: list[str] = []
        run_ids = [uuid.UUID(r) for r in workload.runs]
        found = {
            str(r["run_id"])
            for r in await conn.fetch("SELECT run_id FROM runs WHERE run_id = ANY($1)", run_ids)
        }
        problems += [f"run {r} lost" for r in workload.runs if r not in found]
        stored = {
            r["battle_id"]: (str(r["run_id"]), r["round"])
            for r in await conn.fetch(
                "SELECT battle_id, run_id, round FROM battles WHERE battle_id = ANY($1)",
                list(workload.battles),
            )
        }
        problems += [
            f"battle {b} lost or changed"
            for b, where in workload.battles.items()
            if stored.get(b) != where
        ]
        problems += [
            f"run {r['run_id']} does not add up: {dict(r)}"
            for r in await conn.fetch(
                """
                SELECT r.run_id, r.wins, r.lives, r.shop -> 'round' AS round,
                       count(b.*) AS battles,
                       count(b.*) FILTER (WHERE b.winner = 'player') AS won,
                       count(b.*) FILTER (WHERE b.winner = 'ghost') AS lost,
                       count(DISTINCT b.round) AS rounds
                  FROM runs r LEFT JOIN battles b USING (run_id)
                 WHERE r.run_id = ANY($1)
                 GROUP BY r.run_id
                HAVING r.wins <> count(b.*) FILTER (WHERE b.winner = 'player')
                    OR 5 - r.lives <> count(b.*) FILTER (WHERE b.winner = 'ghost')
                    OR count(DISTINCT b.round) <> count(b.*)
                    OR (r.shop -> 'round')::int <> count(b.*) + 1
                """,
                run_ids,
            )
        ]
        return problems
    finally:
        await conn.close()


async def recovery_seconds(api: Api, limit: float = 60.0) -> float:
    """How long until /readyz answers 200 and a write goes through."""
    started = time.monotonic()
    while time.monotonic() - started < limit:
        with contextlib.suppress(OSError):
            ready = (await api.get("/readyz")).status == 200
            if ready and (await api.post("/v1/players", {"name": "after"})).status == 201:
                return time.monotonic() - started
        await asyncio.sleep(0.05)
    raise AssertionError(f"the service did not recover within {limit} s")
