"""A small HTTP client for the tests: real requests, JSON or msgpack, decoded answers.

Every answer is checked against the service's own OpenAPI document, as a client generated from
it would read it: its status must be documented for that operation, and its body must match
the documented schema. A test whose answer drifts from the document fails.
"""

import json
import re
from dataclasses import dataclass
from typing import Any

import aiohttp
import jsonschema
import msgpack
from multidict import CIMultiDictProxy

OPENAPI_PATH = "/v1/openapi.json"
DECODED = ("application/json", "application/msgpack")


class UndocumentedAnswer(AssertionError):
    """An answer that the OpenAPI document does not describe."""


class Document:
    """The OpenAPI document, with each operation found by method and concrete path."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.routes = [
            (re.compile("^" + re.sub(r"{\w+}", "[^/]+", path) + "$"), operations)
            for path, operations in document["paths"].items()
        ]

    def operation(self, method: str, path: str) -> dict[str, Any] | None:
        bare = path.split("?", 1)[0]
        for pattern, operations in self.routes:
            if pattern.match(bare) and method.lower() in operations:
                operation: dict[str, Any] = operations[method.lower()]
                return operation
        return None

    def check(self, method: str, path: str, answer: "Answer") -> None:
        operation = self.operation(method, path)
        if operation is None or answer.status == 304:
            return  # an unknown path is the router's 404/405; a 304 has no body
        documented = operation["responses"].get(str(answer.status))
        if documented is None:
            raise UndocumentedAnswer(f"{method} {path}: status {answer.status} is not documented")
        media = answer.headers.get("Content-Type", "").split(";")[0]
        content = documented.get("content", {})
        if media not in content:
            raise UndocumentedAnswer(f"{method} {path} {answer.status}: {media} not documented")
        if media not in DECODED:
            return
        schema = {**content[media]["schema"], "components": self.document["components"]}
        try:
            jsonschema.validate(answer.body, schema, cls=jsonschema.Draft202012Validator)
        except jsonschema.ValidationError as exc:
            raise UndocumentedAnswer(
                f"{method} {path} {answer.status}: the answer does not match its schema:"
                f" {exc.message} at {list(exc.absolute_path)}"
            ) from exc


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
    def __init__(
        self, session: aiohttp.ClientSession, base_url: str, *, check_answers: bool = True
    ) -> None:
        self.session = session
        self.base_url = base_url
        self.check_answers = check_answers
        self._document: Document | None = None

    async def _documented(self) -> Document:
        if self._document is None:
            async with self.session.get(self.base_url + OPENAPI_PATH) as response:
                self._document = Document(await response.json())
        return self._document

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
            answer = Answer(response.status, response.headers, await response.read())
        if self.check_answers:
            (await self._documented()).check(method, path, answer)
        return answer

    async def get(self, path: str, **kwargs: Any) -> Answer:
        return await self.call("GET", path, **kwargs)

    async def post(self, path: str, body: Any = None, **kwargs: Any) -> Answer:
        return await self.call("POST", path, body, **kwargs)

    async def new_player(self, name: str = "tester") -> tuple[str, str]:
        """Register a player; returns (player_id, token)."""
        answer = await self.post("/v1/players", {"name": name})
        assert answer.status == 201, answer.body
        return answer.body["player_id"], answer.body["token"]
