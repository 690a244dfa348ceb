"""Signed bearer tokens for players (JWT, HS256), the revocations every process refuses, and
the ops token check (docs/api.md#players-and-sessions).

An access token names its player (`sub`), its session (`sid`) and when it was issued (`iat`),
and is verified without the database. A revoked session, or a player signed out everywhere or
deleted, is refused by every process: at once by the one that revoked it, and by the others
when they next read the revocations, every `REVOCATION_SYNC_SECONDS`.
"""

import hmac
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from uuid import UUID

import jwt

_ALGORITHM = "HS256"
_AUDIENCE = "player"


class InvalidToken(Exception):
    """The token is missing, malformed, expired or not signed by us; the message says which."""


@dataclass(frozen=True)
class Bearer:
    """Who a verified access token speaks for."""

    player_id: UUID
    # None in a token issued before sessions existed; such a token lives out its time.
    session_id: UUID | None
    issued_at: float
    expires_at: float


def issue_token(
    secret: str,
    player_id: UUID,
    ttl_seconds: int,
    now: float | None = None,
    session_id: UUID | None = None,
) -> str:
    # `iat` with its fraction: a sign-out everywhere in the same second as a sign-in refuses
    # only the tokens issued before it (Revocations.refused). `exp` whole, rounded up: a token
    # lives its `ttl_seconds` at least (PyJWT reads `exp` as an integer).
    issued = time.time() if now is None else now
    claims: dict[str, object] = {
        "sub": str(player_id),
        "aud": _AUDIENCE,
        "iat": issued,
        "exp": math.ceil(issued + ttl_seconds),
    }
    if session_id is not None:
        claims["sid"] = str(session_id)
    return jwt.encode(claims, secret, algorithm=_ALGORITHM)


def verify_token(secret: str, token: str) -> Bearer:
    """Who the token was issued to, under which session, when, and until when."""
    try:
        claims = jwt.decode(
            token,
            secret,
            algorithms=[_ALGORITHM],
            audience=_AUDIENCE,
            # A refresh's token is stamped with the database's clock (so that a retry signs it
            # again byte for byte), which may run a little ahead of this process's: an `iat`
            # in the future is no reason to refuse a token this key signed.
            options={"require": ["sub", "exp", "aud"], "verify_iat": False},
        )
    except jwt.ExpiredSignatureError as exc:
        raise InvalidToken("token expired") from exc
    except jwt.InvalidSignatureError as exc:
        raise InvalidToken("token signature is not valid") from exc
    except jwt.PyJWTError as exc:
        raise InvalidToken("token is malformed") from exc
    try:
        session = claims.get("sid")
        return Bearer(
            UUID(str(claims["sub"])),
            None if session is None else UUID(str(session)),
            float(claims.get("iat", 0)),
            float(claims["exp"]),
        )
    except (TypeError, ValueError) as exc:
        raise InvalidToken("token is malformed") from exc


class VerifiedTokens:
    """Tokens this process has verified under `secret`, until each one expires.

    Checking an HS256 signature costs about a tenth of a battle, and a client sends the same
    token with every request; a remembered token is still refused once its `exp` has passed.
    """

    def __init__(self, secret: str, size: int = 10_000) -> None:
        self.secret = secret
        self.size = size
        self._known: dict[str, Bearer] = {}

    def known(self, token: str) -> Bearer | None:
        """The bearer of a token this process has verified and that has not expired yet."""
        known = self._known.get(token)
        if known is not None and time.time() < known.expires_at:
            return known
        return None

    def bearer(self, token: str) -> Bearer:
        known = self.known(token)
        if known is not None:
            return known
        bearer = verify_token(self.secret, token)
        if len(self._known) >= self.size:
            del self._known[next(iter(self._known))]
        self._known[token] = bearer
        return bearer


class Revocations:
    """Sessions revoked, and players whose tokens issued before a time are refused (signed out
    everywhere, or deleted), as this process knows them: what it revoked itself, and what it
    last read from the database. Each is kept with its time, and forgotten once no token it
    refuses can be alive.
    """

    def __init__(self) -> None:
        # In about the order of their times, so that forgetting stops at the first one kept.
        self._sessions: dict[UUID, float] = {}
        self._players: dict[UUID, float] = {}
        self._listeners: list[Callable[[], None]] = []

    def on_change(self, listener: Callable[[], None]) -> None:
        """Call `listener` after each revocation, its own or read from the database: open
        sockets end with their sessions (service/api/open_sockets.py)."""
        self._listeners.append(listener)

    def _changed(self) -> None:
        for listener in self._listeners:
            listener()

    def refused(self, bearer: Bearer) -> bool:
        """Whether the token's session was revoked, or its player signed out everywhere (or was
        deleted) since it was issued."""
        if bearer.session_id is not None and bearer.session_id in self._sessions:
            return True
        after = self._players.get(bearer.player_id)
        return after is not None and bearer.issued_at <= after

    def revoke_session(self, session_id: UUID, at: float) -> None:
        self._sessions.setdefault(session_id, at)
        self._changed()

    def revoke_player(self, player_id: UUID, at: float) -> None:
        """Refuse the player's tokens issued at or before `at` (epoch seconds), of every
        session and of none."""
        before = self._players.pop(player_id, at)
        self._players[player_id] = max(at, before)
        self._changed()

    def absorb(
        self,
        sessions: dict[UUID, float],
        players: dict[UUID, float],
        forget_sessions_before: float,
        forget_players_before: float,
    ) -> None:
        """Add what the database holds, and forget what was revoked before those times: a read
        brings only what changed since the one before, so this costs what it brings."""
        for session_id, at in sessions.items():
            self.revoke_session(session_id, at)
        for player_id, at in players.items():
            self.revoke_player(player_id, at)
        _forget(self._sessions, forget_sessions_before)
        _forget(self._players, forget_players_before)


def _forget(kept: dict[UUID, float], before: float) -> None:
    """Drop the oldest entries while they are older than `before`. They were added in about the
    order of their times: one added out of order waits for those before it, which refuses
    nothing alive."""
    while kept:
        oldest = next(iter(kept))
        if kept[oldest] >= before:
            return
        del kept[oldest]


class KnownPlayers:
    """Players this process has seen in the database lately.

    A validly signed token may name a player that no longer exists (a restored database, a
    shared SECRET_KEY): endpoints that touch the database check, and remember the answer for a
    while so that a client's stream of requests costs one lookup.
    """

    def __init__(self, ttl_seconds: float = 60.0, size: int = 10_000) -> None:
        self.ttl_seconds = ttl_seconds
        self.size = size
        self._seen: dict[UUID, float] = {}

    def known(self, player_id: UUID) -> bool:
        seen = self._seen.get(player_id)
        return seen is not None and time.monotonic() - seen < self.ttl_seconds

    def remember(self, player_id: UUID) -> None:
        if len(self._seen) >= self.size:
            del self._seen[next(iter(self._seen))]
        self._seen[player_id] = time.monotonic()


def bearer_token(authorization: str | None) -> str:
    """The token of an `Authorization: Bearer …` header."""
    if not authorization:
        raise InvalidToken("missing Authorization header")
    scheme, _, token = authorization.partition(" ")
    # A JWT is ASCII; anything else (a header in another encoding) is no token of ours.
    if scheme.lower() != "bearer" or not token.strip() or not token.isascii():
        raise InvalidToken("Authorization must be 'Bearer <token>'")
    return token.strip()


def ops_token_matches(expected: str, given: str) -> bool:
    return given.isascii() and hmac.compare_digest(expected.encode(), given.encode())
