"""Signed bearer tokens for players (JWT, HS256) and the ops token check."""

import hmac
import time
from uuid import UUID

import jwt

_ALGORITHM = "HS256"
_AUDIENCE = "player"


class InvalidToken(Exception):
    """The token is missing, malformed, expired or not signed by us; the message says which."""


def issue_token(secret: str, player_id: UUID, ttl_seconds: int, now: float | None = None) -> str:
    issued = int(time.time() if now is None else now)
    claims = {"sub": str(player_id), "aud": _AUDIENCE, "iat": issued, "exp": issued + ttl_seconds}
    return jwt.encode(claims, secret, algorithm=_ALGORITHM)


def verify_token(secret: str, token: str) -> tuple[UUID, float]:
    """The player id a token was issued to, and when it expires."""
    try:
        claims = jwt.decode(
            token,
            secret,
            algorithms=[_ALGORITHM],
            audience=_AUDIENCE,
            options={"require": ["sub", "exp", "aud"]},
        )
    except jwt.ExpiredSignatureError as exc:
        raise InvalidToken("token expired") from exc
    except jwt.InvalidSignatureError as exc:
        raise InvalidToken("token signature is not valid") from exc
    except jwt.PyJWTError as exc:
        raise InvalidToken("token is malformed") from exc
    try:
        return UUID(str(claims["sub"])), float(claims["exp"])
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
        self._known: dict[str, tuple[UUID, float]] = {}

    def known(self, token: str) -> UUID | None:
        """The player of a token this process has verified and that has not expired yet."""
        known = self._known.get(token)
        if known is not None and time.time() < known[1]:
            return known[0]
        return None

    def player(self, token: str) -> UUID:
        known = self.known(token)
        if known is not None:
            return known
        player_id, expires = verify_token(self.secret, token)
        if len(self._known) >= self.size:
            del self._known[next(iter(self._known))]
        self._known[token] = (player_id, expires)
        return player_id


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
