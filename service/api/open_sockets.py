"""The match sockets open in this process: capped per player and per match, each ended with the
token it was opened under, and closed on shutdown (docs/api.md#turn-based-matches).

A socket keeps its handshake's access token. It is closed with 4001 when that token expires,
and with 4002 once its session is revoked (a sign-out, a refresh token reused, the player
deleted): at once on the process that revoked it, and on the others as soon as they read the
revocations, every REVOCATION_SYNC_SECONDS, as every HTTP route refuses the token.

The caps are per process, so that checking them costs no round trip; the handshake budgets,
kept in PostgreSQL for every process, bound how fast a player opens sockets anywhere.
"""

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol
from uuid import UUID

from service.api.auth import Bearer, Revocations
from service.api.errors import ApiError
from service.config import Settings


@dataclass(frozen=True)
class Ending:
    """Why a socket is closed: its close code, and the reason sent with it."""

    code: int
    reason: str


EXPIRED = Ending(4001, "token expired: refresh it, then reconnect")
REVOKED = Ending(4002, "token revoked: sign in again")


class OpenSocket(Protocol):
    """A socket as the registry knows it: whose, on which match, under which token."""

    @property
    def player_id(self) -> UUID: ...

    @property
    def match_id(self) -> UUID: ...

    @property
    def bearer(self) -> Bearer: ...

    async def end(self, ending: Ending) -> None:
        """Close the socket, once what it is sending has gone out."""


def too_many_sockets(setting: str, limit: int, whose: str) -> ApiError:
    return ApiError(
        409,
        "too_many_sockets",
        f"{whose} has {limit} sockets open here ({setting}): close one first",
        {"setting": setting, "limit": limit},
    )


class OpenSockets:
    """The match sockets open in this process, by player and by match."""

    def __init__(self, settings: Settings, revocations: Revocations) -> None:
        self.per_player = settings.max_sockets_per_player
        self.per_match = settings.max_sockets_per_match
        self._revocations = revocations
        self._by_player: dict[UUID, list[OpenSocket]] = {}
        # Sockets open by players not seated in the match; a seat's own are capped per player.
        self._watching: dict[UUID, int] = {}
        self._sweep_due = False
        # Closes under way, kept until done (the event loop holds its tasks weakly).
        self._ending: set[asyncio.Task[None]] = set()
        revocations.on_change(self._revoked)

    def __iter__(self) -> Iterator[OpenSocket]:
        for sockets in list(self._by_player.values()):
            yield from list(sockets)

    def ending(self, bearer: Bearer) -> Ending | None:
        """Why a socket opened under `bearer` must close now, if it must."""
        if self._revocations.refused(bearer):
            return REVOKED
        if time.time() >= bearer.expires_at:
            return EXPIRED
        return None

    @contextmanager
    def held(self, socket: OpenSocket, *, seated: bool) -> Iterator[None]:
        """Count `socket` as open (409 `too_many_sockets` past a cap) until the block ends,
        and end it when its token expires."""
        player_id, match_id = socket.player_id, socket.match_id
        mine = self._by_player.get(player_id, [])
        if len(mine) >= self.per_player:
            raise too_many_sockets("MAX_SOCKETS_PER_PLAYER", self.per_player, "you")
        watching = self._watching.get(match_id, 0)
        if not seated and watching >= self.per_match:
            raise too_many_sockets("MAX_SOCKETS_PER_MATCH", self.per_match, "this match")
        self._by_player[player_id] = [*mine, socket]
        if not seated:
            self._watching[match_id] = watching + 1
        delay = max(0.0, socket.bearer.expires_at - time.time())
        expiry = asyncio.get_running_loop().call_later(delay, self._end, socket, EXPIRED)
        try:
            yield
        finally:
            expiry.cancel()
            left = [s for s in self._by_player[player_id] if s is not socket]
            if left:
                self._by_player[player_id] = left
            else:
                del self._by_player[player_id]
            if not seated:
                self._watching[match_id] -= 1
                if not self._watching[match_id]:
                    del self._watching[match_id]

    def _revoked(self) -> None:
        """Revocations changed: look over the sockets once, soon (a sync brings many at once)."""
        if self._sweep_due or not self._by_player:
            return
        self._sweep_due = True
        asyncio.get_running_loop().call_soon(self._sweep)

    def _sweep(self) -> None:
        self._sweep_due = False
        for socket in self:
            if self._revocations.refused(socket.bearer):
                self._end(socket, REVOKED)

    def _end(self, socket: OpenSocket, ending: Ending) -> None:
        task = asyncio.create_task(socket.end(ending))
        self._ending.add(task)
        task.add_done_callback(self._ending.discard)
