"""A lean WebSocket client for the load generator: unfragmented text frames, no extensions.

The match loop's socket rows use it for the same reason the other rows use `load.Connection`:
aiohttp's client takes a good share of the cores the generator shares with the server.
"""

import asyncio
import base64
import os
from typing import cast

from yarl import URL

TEXT, CLOSE, PING, PONG = 0x1, 0x8, 0x9, 0xA


class SocketClient(asyncio.Protocol):
    """One WebSocket: `send_text` a message, `receive` the next text one (None once closed)."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        loop = asyncio.get_running_loop()
        self.upgraded: asyncio.Future[None] = loop.create_future()
        self.messages: asyncio.Queue[str | None] = asyncio.Queue()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if not self.upgraded.done():
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            status = bytes(self.buffer[: self.buffer.find(b"\r\n")])
            del self.buffer[: end + 4]
            if not status.startswith(b"HTTP/1.1 101"):
                self.upgraded.set_exception(ConnectionError(status.decode(errors="replace")))
                return
            self.upgraded.set_result(None)
        self._read_frames()

    def _read_frames(self) -> None:
        # A server never masks its frames (RFC 6455 §5.1).
        buffer = self.buffer
        while len(buffer) >= 2:
            opcode, length, start = buffer[0] & 0x0F, buffer[1] & 0x7F, 2
            if length >= 126:
                start = 4 if length == 126 else 10
                if len(buffer) < start:
                    return
                length = int.from_bytes(buffer[2:start], "big")
            if len(buffer) < start + length:
                return
            payload = bytes(buffer[start : start + length])
            del buffer[: start + length]
            if opcode == TEXT:
                self.messages.put_nowait(payload.decode())
            elif opcode == CLOSE:
                self.messages.put_nowait(None)
            elif opcode == PING:
                self._send(PONG, payload)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.upgraded.done():
            self.upgraded.set_exception(exc or ConnectionResetError("closed by the server"))
        self.messages.put_nowait(None)

    def _send(self, opcode: int, payload: bytes) -> None:
        """One final frame, masked as a client's must be."""
        assert self.transport is not None
        size = len(payload)
        if size < 126:
            head = bytes((0x80 | opcode, 0x80 | size))
        elif size < 1 << 16:
            head = bytes((0x80 | opcode, 0x80 | 126)) + size.to_bytes(2, "big")
        else:
            head = bytes((0x80 | opcode, 0x80 | 127)) + size.to_bytes(8, "big")
        mask = os.urandom(4)
        key = (mask * (size // 4 + 1))[:size]
        masked = (int.from_bytes(payload, "big") ^ int.from_bytes(key, "big")).to_bytes(size, "big")
        self.transport.write(head + mask + masked)

    def send_text(self, text: str) -> None:
        self._send(TEXT, text.encode())

    async def receive(self) -> str | None:
        return await self.messages.get()

    def close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self._send(CLOSE, (1000).to_bytes(2, "big"))
            self.transport.close()


async def connect(base_url: str, path: str, token: str) -> SocketClient:
    """A WebSocket on `path` of the service at `base_url`, as the player of `token`."""
    url = URL(base_url)
    assert url.host is not None and url.port is not None
    loop = asyncio.get_running_loop()
    _, client = await loop.create_connection(SocketClient, url.host, url.port)
    assert client.transport is not None
    key = base64.b64encode(os.urandom(16)).decode()
    client.transport.write(
        f"GET {path} HTTP/1.1\r\nHost: {url.raw_authority}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
        f"Authorization: Bearer {token}\r\n\r\n".encode()
    )
    await client.upgraded
    return client
