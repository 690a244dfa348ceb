"""A small HTTP client for the tests: real requests, JSON or msgpack, decoded answers."""

import json
from dataclasses import dataclass
from typing import Any

import aiohttp
import msgpack
from multidict import CIMultiDictProxy


@dataclass
class Answer:
    status: int
    headers: CIMultiDictProxy[str]
    raw: bytes

    @property
    def body(self) -> Any:
        content_type = self.headers.get("Content-Type", "")
        if content_type.startswith("application/msgpack"):
            return msgpack.unpackb(self.raw, raw=False)
        if content_type.startswith("application/json"):
            return json.loads(self.raw)
        return self.raw

    @property
    def error_code(self) -> str:
        return str(self.body["error"]["code"])


class Api:
    def __init__(self, session: aiohttp.ClientSession, base_url: str) -> None:
        self.session = session
        self.base_url = base_url

    async def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        token: str | None = None,
        fmt: str = "json",
        headers: dict[str, str] | None = None,
        raw: bytes | None = None,
    ) -> Answer:
        sent = dict(headers or {})
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        if fmt == "msgpack":
            sent.setdefault("Accept", "application/msgpack")
        data = raw
        if body is not None:
            if fmt == "msgpack":
                data = msgpack.packb(body)
                sent.setdefault("Content-Type", "application/msgpack")
            else:
                data = json.dumps(body).encode()
                sent.setdefault("Content-Type", "application/json")
        async with self.session.request(
            method, self.base_url + path, data=data, headers=sent
        ) as response:
            return Answer(response.status, response.headers, await response.read())

    async def get(self, path: str, **kwargs: Any) -> Answer:
        return await self.call("GET", path, **kwargs)

    async def post(self, path: str, body: Any = None, **kwargs: Any) -> Answer:
        return await self.call("POST", path, body, **kwargs)

    async def new_player(self, name: str = "tester") -> tuple[str, str]:
        """Register a player; returns (player_id, token)."""
        answer = await self.post("/v1/players", {"name": name})
        assert answer.status == 201, answer.body
        return answer.body["player_id"], answer.body["token"]
