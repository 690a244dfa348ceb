"""Signing in and staying signed in: device ids, sessions, refresh tokens that rotate
(docs/api.md#players-and-sessions).

A device id is a secret the client made; the database keeps only its keyed hash. A refresh
token is 256 random bits; the database keeps only its SHA-256. Each use of a refresh token gives
a new one and marks the old one used: the old one presented again is taken for a stolen copy,
and the whole session is revoked, unless it comes back within `retry_seconds` of its use and
before the token its use gave was ever used (a client that lost the answer and retries), which
is answered again with a new pair, the unseen one voided.
"""

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

import asyncpg

from service.store import players as player_store
from service.store import sessions as store
from service.store.database import transaction
from service.usecases.errors import Conflict, NotFound, ServiceError
from service.usecases.names import normalise_name

DEFAULT_NAME = "player"
# The longest a token without a session was ever issued for: such tokens may still be alive.
SESSIONLESS_TOKEN_SECONDS = 30 * 24 * 3600


class Unauthenticated(ServiceError):
    """The credential does not open a session (the HTTP layer answers 401)."""

    code = "unauthorized"


def device_hash(secret_key: str, device_id: str) -> bytes:
    """The keyed hash under which a device id is kept."""
    return hmac.new(secret_key.encode(), b"device:" + device_id.encode(), hashlib.sha256).digest()


def fingerprint(kept_hash: bytes) -> str:
    """A short name of a linked device that gives nothing of its id away."""
    return hashlib.sha256(b"fingerprint:" + kept_hash).hexdigest()[:8]


def refresh_hash(token: str) -> bytes:
    """The SHA-256 under which a refresh token is kept."""
    return hashlib.sha256(token.encode()).digest()


@dataclass(frozen=True)
class SignedIn:
    """A session opened or carried on: what a sign-in answers, but the access token, which the
    HTTP layer signs."""

    player_id: UUID
    name: str
    tag: int
    session_id: UUID
    refresh_token: str
    created: bool


async def _open_session(
    conn: asyncpg.Connection, player_id: UUID, ttl_seconds: int, created: bool
) -> SignedIn:
    player = await store.live_player(conn, player_id)
    if player is None:
        raise Unauthenticated("the player is gone")
    token = secrets.token_urlsafe(32)
    session_id = await store.start_session(conn, player_id, refresh_hash(token), ttl_seconds)
    return SignedIn(player_id, player.name, player.tag, session_id, token, created)


async def register(pool: asyncpg.Pool, name: str, ttl_seconds: int) -> SignedIn:
    """A new player without a device, signed in (the answer of `POST /v1/players`)."""
    async with transaction(pool) as conn:
        row = await player_store.insert(conn, normalise_name(name))
        return await _open_session(conn, row.player_id, ttl_seconds, created=True)


async def device_known(pool: asyncpg.Pool, kept_hash: bytes) -> bool:
    """Whether the device signs a player in already (else signing in with it registers one)."""
    async with pool.acquire() as conn:
        return await store.device_player(conn, kept_hash) is not None


async def sign_in_device(
    pool: asyncpg.Pool, kept_hash: bytes, name: str | None, ttl_seconds: int
) -> SignedIn:
    """The player bound to the device, signed in; a new one bound to it when none is."""
    chosen = normalise_name(DEFAULT_NAME if name is None else name)
    async with transaction(pool) as conn:
        player_id = await store.device_player(conn, kept_hash)
        if player_id is not None:
            return await _open_session(conn, player_id, ttl_seconds, created=False)
        row = await player_store.insert(conn, chosen)
        bound = await store.add_device(conn, kept_hash, row.player_id)
        if bound != row.player_id:
            # Another sign-in bound the device first: this new player is not kept.
            raise _BoundMeanwhile()
        return await _open_session(conn, row.player_id, ttl_seconds, created=True)


class _BoundMeanwhile(Exception):
    pass


async def sign_in_device_once(
    pool: asyncpg.Pool, kept_hash: bytes, name: str | None, ttl_seconds: int
) -> SignedIn:
    """`sign_in_device`, taken again as a sign-in when a first sign-in of the same new device
    won the race (the transaction that lost is rolled back whole)."""
    try:
        return await sign_in_device(pool, kept_hash, name, ttl_seconds)
    except _BoundMeanwhile:
        return await sign_in_device(pool, kept_hash, name, ttl_seconds)


class RefreshReused(Unauthenticated):
    """A used refresh token came back: its session is revoked."""

    code = "refresh_token_reused"

    def __init__(self, session_id: UUID) -> None:
        super().__init__("the refresh token was used before: the session is revoked, sign in again")
        self.session_id = session_id


async def refresh(
    pool: asyncpg.Pool, token: str, ttl_seconds: int, retry_seconds: float
) -> SignedIn:
    """A new refresh token for the one given, which stops working; see the module's note."""
    async with transaction(pool) as conn:
        kept = await store.lock_refresh(conn, refresh_hash(token))
        if kept is None or kept.expired or kept.revoked:
            raise Unauthenticated(
                "the refresh token is not valid: sign in again", code="invalid_refresh_token"
            )
        reused = kept.used_seconds_ago is not None and (
            kept.used_seconds_ago > retry_seconds or kept.successor_used
        )
        if reused:
            await store.revoke_session(conn, kept.session_id)
        else:
            player = await store.live_player(conn, kept.player_id)
            if player is None:
                raise Unauthenticated("the player is gone", code="invalid_refresh_token")
            replacement = secrets.token_urlsafe(32)
            voided = kept.successor if kept.used_seconds_ago is not None else None
            await store.rotate(
                conn,
                refresh_hash(token),
                kept.session_id,
                refresh_hash(replacement),
                ttl_seconds,
                voided,
            )
            return SignedIn(
                kept.player_id, player.name, player.tag, kept.session_id, replacement, False
            )
    # Outside the transaction: the revocation is kept, the answer is the refusal.
    raise RefreshReused(kept.session_id)


async def logout(
    pool: asyncpg.Pool, player_id: UUID, session_id: UUID | None, everywhere: bool
) -> tuple[list[UUID], float | None]:
    """Revoke the caller's session, or every session of the player: the sessions revoked, and
    with `everywhere` the time before which its tokens without a session are refused too."""
    async with transaction(pool) as conn:
        if everywhere:
            live = await store.live_sessions(conn, player_id)
            at = await store.revoke_player_sessions(conn, player_id)
            return live, at
        if session_id is None:
            raise Conflict(
                "this token has no session to sign out of: sign out everywhere",
                code="no_session",
            )
        await store.revoke_session(conn, session_id)
        return [session_id], None


@dataclass(frozen=True)
class LinkedDevice:
    fingerprint: str
    linked_at: datetime


async def devices(pool: asyncpg.Pool, player_id: UUID) -> list[LinkedDevice]:
    return [
        LinkedDevice(fingerprint(d.device_hash), d.linked_at)
        for d in await store.devices_of(pool, player_id)
    ]


async def link(pool: asyncpg.Pool, player_id: UUID, kept_hash: bytes) -> list[LinkedDevice]:
    """Bind another device to the player (again: nothing changes); one of another player's is
    a 409."""
    async with transaction(pool) as conn:
        bound = await store.add_device(conn, kept_hash, player_id)
        if bound != player_id:
            raise Conflict("this device signs in another player", code="device_taken")
    return await devices(pool, player_id)


async def unlink(pool: asyncpg.Pool, player_id: UUID, printed: str) -> list[LinkedDevice]:
    """Unbind the device of that fingerprint; the last way in cannot be unbound."""
    async with transaction(pool) as conn:
        kept = await store.devices_of(conn, player_id)
        chosen = [d for d in kept if fingerprint(d.device_hash) == printed]
        if not chosen:
            raise NotFound(f"no device {printed} is linked to you")
        if len(kept) == 1:
            raise Conflict(
                "this is your only device: link another before unlinking it",
                code="last_device",
            )
        await store.remove_device(conn, player_id, chosen[0].device_hash)
    return await devices(pool, player_id)


async def revocations(
    pool: asyncpg.Pool, access_ttl_seconds: int
) -> tuple[dict[UUID, float], dict[UUID, float]]:
    """What every process must refuse: sessions revoked while their access tokens may live,
    and players signed out everywhere while their sessionless tokens may."""
    window = max(access_ttl_seconds, SESSIONLESS_TOKEN_SECONDS)
    return await store.revocations(pool, float(access_ttl_seconds) + 60, float(window))
