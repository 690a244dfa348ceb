"""Signing in and staying signed in: device ids, sessions, refresh tokens that rotate
(docs/api.md#players-and-sessions).

A device id is a secret the client made; the database keeps only its keyed hash. A refresh
token is 256 bits; the database keeps only its SHA-256. Each use of a refresh token gives the
next one and marks the used one: presented again, it is taken for a stolen copy and the whole
session is revoked, unless it comes back within `retry_seconds` of its use and before the next
one was used (a client that lost the answer and retries). The retry is given the very answer of
the first use: the next token is derived one-way from the used one under the secret key, so
nothing is kept in clear, and every holder of a token gets the same pair (then the first of
them to move on makes the others' next refresh a reuse, which revokes the session).

Changes that hand the account to someone else (linking or unlinking a device, signing out
everywhere, deleting it) need more than an access token that may have leaked: a sign-in within
FRESH_SIGN_IN_SECONDS, or a refresh token of one of the player's live sessions.
"""

import base64
import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

import asyncpg

from service.store import players as player_store
from service.store import sessions as store
from service.store.database import transaction
from service.usecases import player_lock
from service.usecases.errors import Conflict, Forbidden, NotFound, ServiceError
from service.usecases.names import normalise_name

DEFAULT_NAME = "player"
# The longest a token without a session was ever issued for: such tokens may still be alive.
SESSIONLESS_TOKEN_SECONDS = 30 * 24 * 3600
# How recent a sign-in (the access token's issue) must be to change who holds the account.
FRESH_SIGN_IN_SECONDS = 600


class Unauthenticated(ServiceError):
    """The credential does not open a session (the HTTP layer answers 401)."""

    code = "unauthorized"


def device_hash(secret_key: str, device_id: str) -> bytes:
    """The keyed hash under which a device id is kept."""
    return hmac.new(secret_key.encode(), b"device:" + device_id.encode(), hashlib.sha256).digest()


def refresh_hash(token: str) -> bytes:
    """The SHA-256 under which a refresh token is kept."""
    return hashlib.sha256(token.encode()).digest()


def next_refresh_token(secret_key: str, token: str) -> str:
    """The refresh token a use of `token` answers: 256 bits derived one-way from it under the
    key, so that a retry is answered the same one and the database keeps neither in clear."""
    digest = hmac.new(secret_key.encode(), b"refresh:" + token.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


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
    # When the access token is issued (epoch seconds, the database's clock): the session's
    # start for a sign-in, the rotation's time for a refresh (the same again for its retry).
    issued_at: float
    # The player's oldest sessions this sign-in revoked, past MAX_SESSIONS.
    displaced: tuple[UUID, ...] = ()


async def _open_session(
    conn: asyncpg.Connection, player_id: UUID, ttl_seconds: int, max_sessions: int, created: bool
) -> SignedIn:
    player = await store.live_player(conn, player_id)
    if player is None:
        raise Unauthenticated("the player is gone")
    token = secrets.token_urlsafe(32)
    session_id, started = await store.start_session(
        conn, player_id, refresh_hash(token), ttl_seconds
    )
    # Counted a little past the limit, and at most that many revoked: a sign-in reads a few
    # rows, and an account piled up before the limit existed sheds two at each sign-in.
    held = await store.count_live_sessions(conn, player_id, max_sessions + 2)
    displaced: list[UUID] = []
    if held > max_sessions:
        displaced = await store.revoke_oldest_sessions(
            conn, player_id, session_id, held - max_sessions
        )
    return SignedIn(
        player_id, player.name, player.tag, session_id, token, created, started, tuple(displaced)
    )


async def register(pool: asyncpg.Pool, name: str, ttl_seconds: int, max_sessions: int) -> SignedIn:
    """A new player without a device, signed in (the answer of `POST /v1/players`)."""
    async with transaction(pool) as conn:
        row = await player_store.insert(conn, normalise_name(name))
        return await _open_session(conn, row.player_id, ttl_seconds, max_sessions, created=True)


async def device_known(pool: asyncpg.Pool, kept_hash: bytes) -> bool:
    """Whether the device signs a player in already (else signing in with it registers one)."""
    return await store.device_player(pool, kept_hash) is not None


async def sign_in_device(
    pool: asyncpg.Pool, kept_hash: bytes, name: str | None, ttl_seconds: int, max_sessions: int
) -> SignedIn:
    """The player bound to the device, signed in; a new one bound to it when none is."""
    chosen = normalise_name(DEFAULT_NAME if name is None else name)
    async with transaction(pool) as conn:
        player_id = await store.device_player(conn, kept_hash)
        if player_id is not None:
            signed = await _open_session(conn, player_id, ttl_seconds, max_sessions, created=False)
            # After the player's row, in the order a deletion takes them.
            await store.mark_used(conn, kept_hash)
            return signed
        row = await player_store.insert(conn, chosen)
        bound = await store.add_device(conn, kept_hash, row.player_id, used=True)
        if bound != row.player_id:
            # Another sign-in bound the device first: this new player is not kept.
            raise _BoundMeanwhile()
        return await _open_session(conn, row.player_id, ttl_seconds, max_sessions, created=True)


class _BoundMeanwhile(Exception):
    pass


async def sign_in_device_once(
    pool: asyncpg.Pool, kept_hash: bytes, name: str | None, ttl_seconds: int, max_sessions: int
) -> SignedIn:
    """`sign_in_device`, taken again as a sign-in when a first sign-in of the same new device
    won the race (the transaction that lost is rolled back whole)."""
    try:
        return await sign_in_device(pool, kept_hash, name, ttl_seconds, max_sessions)
    except _BoundMeanwhile:
        return await sign_in_device(pool, kept_hash, name, ttl_seconds, max_sessions)


class RefreshReused(Unauthenticated):
    """A used refresh token came back: its session is revoked."""

    code = "refresh_token_reused"

    def __init__(self, session_id: UUID) -> None:
        super().__init__("the refresh token was used before: the session is revoked, sign in again")
        self.session_id = session_id


async def refresh(
    pool: asyncpg.Pool, secret_key: str, token: str, ttl_seconds: int, retry_seconds: float
) -> SignedIn:
    """The next refresh token for the one given, which stops working; see the module's note."""
    used, following = refresh_hash(token), next_refresh_token(secret_key, token)
    async with transaction(pool) as conn:
        # The player's row first, as a deletion takes it: a sign-out everywhere or a deletion
        # running now is waited for, and then seen.
        player = await store.token_player(conn, used)
        kept = None if player is None else await store.lock_refresh(conn, used)
        if player is None or kept is None or kept.expired or not _live(kept, player):
            raise Unauthenticated(
                "the refresh token is not valid: sign in again", code="invalid_refresh_token"
            )
        if kept.used_at is not None and not await _retried(
            conn, kept, refresh_hash(following), retry_seconds
        ):
            await store.revoke_session(conn, kept.session_id)
        else:
            issued_at = kept.used_at
            if issued_at is None:
                issued_at = await store.rotate(
                    conn, used, kept.session_id, refresh_hash(following), ttl_seconds
                )
            return SignedIn(
                player.player_id,
                player.name,
                player.tag,
                kept.session_id,
                following,
                False,
                issued_at,
            )
    # Outside the transaction: the revocation is kept, the answer is the refusal.
    raise RefreshReused(kept.session_id)


def _live(kept: store.Refresh, player: store.LivePlayer) -> bool:
    """Whether the token's session goes on: not revoked, nor opened before its player last
    signed out everywhere."""
    ended = player.tokens_after is not None and kept.session_started <= player.tokens_after
    return not (kept.revoked or ended)


async def _retried(
    conn: asyncpg.Connection, kept: store.Refresh, following: bytes, retry_seconds: float
) -> bool:
    """Whether a used token came back as a retry: soon enough, its successor the one it derives
    (not one issued otherwise, e.g. under another key), and that successor still unused."""
    return (
        kept.used_seconds_ago is not None
        and kept.used_seconds_ago <= retry_seconds
        and kept.successor == following
        and not await store.was_used(conn, following)
    )


@dataclass(frozen=True)
class Proof:
    """What a caller shows for a change that needs a recent sign-in: how old its access token
    is (seconds), and the refresh token it sent, if any."""

    signed_in_ago: float
    refresh_token: str | None = None


async def require_recent_sign_in(
    conn: asyncpg.Connection, player_id: UUID, proof: Proof, doing: str
) -> None:
    """Refuse (403 `reauthentication_required`) unless the caller signed in lately or holds a
    refresh token of one of the player's live sessions (unused, unexpired): more than an access
    token that may have leaked. `doing` names the change, for the message."""
    if proof.signed_in_ago <= FRESH_SIGN_IN_SECONDS:
        return
    if proof.refresh_token is not None and await store.live_refresh(
        conn, player_id, refresh_hash(proof.refresh_token)
    ):
        return
    raise Forbidden(
        f"{doing} needs a sign-in within the last {FRESH_SIGN_IN_SECONDS // 60} minutes, or"
        " the refresh_token of one of your sessions in the body",
        {"fresh_seconds": FRESH_SIGN_IN_SECONDS},
        code="reauthentication_required",
    )


@dataclass(frozen=True)
class SignedOut:
    """The sessions that ended; the session revoked alone, or with `everywhere` the time
    (epoch seconds) before which every token of the player is refused."""

    sessions: int
    session_id: UUID | None = None
    tokens_after: float | None = None


async def logout(
    pool: asyncpg.Pool,
    player_id: UUID,
    session_id: UUID | None,
    everywhere: bool,
    proof: Proof,
    max_sessions: int,
) -> SignedOut:
    """Revoke the caller's session, or (with a recent sign-in) every session of the player, in
    one write: its tokens are refused by the time, not session by session."""
    async with transaction(pool) as conn:
        if everywhere:
            await require_recent_sign_in(conn, player_id, proof, "signing out everywhere")
            held = await store.count_live_sessions(conn, player_id, max_sessions)
            return SignedOut(held, None, await store.sign_out_everywhere(conn, player_id))
        if session_id is None:
            raise Conflict(
                "this token has no session to sign out of: sign out everywhere",
                code="no_session",
            )
        await store.revoke_session(conn, session_id)
        return SignedOut(1, session_id)


class DeviceTaken(Conflict):
    """The device linked signs in another player (whoever tries is told, so each try costs)."""

    code = "device_taken"


@dataclass(frozen=True)
class LinkedDevice:
    fingerprint: str
    linked_at: datetime
    last_used_at: datetime | None


async def _devices(
    conn: asyncpg.Connection | asyncpg.Pool, player_id: UUID, limit: int
) -> list[LinkedDevice]:
    return [
        LinkedDevice(d.fingerprint, d.linked_at, d.last_used_at)
        for d in await store.devices_of(conn, player_id, limit)
    ]


async def devices(pool: asyncpg.Pool, player_id: UUID, max_devices: int) -> list[LinkedDevice]:
    """The player's devices, in the order they were linked, MAX_DEVICES at most."""
    return await _devices(pool, player_id, max_devices)


async def link(
    pool: asyncpg.Pool, player_id: UUID, kept_hash: bytes, proof: Proof, max_devices: int
) -> list[LinkedDevice]:
    """Bind another device to the player (again: nothing changes), within `max_devices`; one of
    another player's is a 409."""
    async with transaction(pool) as conn:
        await require_recent_sign_in(conn, player_id, proof, "linking a device")
        await player_lock.hold(conn, player_id)
        bound = await store.device_player(conn, kept_hash)
        if bound is None:
            held = await store.count_devices(conn, player_id, max_devices)
            if held >= max_devices:
                raise Conflict(
                    f"you have {held} devices linked, the most one player may: unlink one first",
                    {"setting": "MAX_DEVICES", "limit": max_devices},
                    code="too_many_devices",
                )
            bound = await store.add_device(conn, kept_hash, player_id, used=False)
        if bound != player_id:
            raise DeviceTaken("this device signs in another player")
        return await _devices(conn, player_id, max_devices)


async def unlink(
    pool: asyncpg.Pool, player_id: UUID, printed: str, proof: Proof, max_devices: int
) -> list[LinkedDevice]:
    """Unbind the device of that fingerprint; the last way in cannot be unbound."""
    async with transaction(pool) as conn:
        await require_recent_sign_in(conn, player_id, proof, "unlinking a device")
        await player_lock.hold(conn, player_id)
        chosen = await store.find_device(conn, player_id, printed, max_devices)
        if chosen is None:
            raise NotFound(f"no device {printed} is linked to you")
        if await store.count_devices(conn, player_id, 2) < 2:
            raise Conflict(
                "this is your only device: link another before unlinking it",
                code="last_device",
            )
        await store.remove_device(conn, player_id, chosen)
        return await _devices(conn, player_id, max_devices)


class RevocationFeed:
    """What every process must refuse, read from the database: sessions revoked while their
    access tokens may live, and players signed out everywhere (or deleted) while a token issued
    before may (a token from before sessions lived 30 days). The first read takes all of those;
    each later one only what changed since the one before, through the indexes on `revoked_at`
    and `tokens_after`.

    A revocation is stamped with its transaction's start (`now()`) and commits later, so a
    read may miss a row stamped before it that commits after it: each read starts a margin
    before the previous one's clock, longer than any transaction of the service runs, and
    reads those few rows again.
    """

    def __init__(self, access_ttl_seconds: int, db_timeout_seconds: float) -> None:
        self.session_window = float(access_ttl_seconds + 60)
        self.player_window = float(max(access_ttl_seconds, SESSIONLESS_TOKEN_SECONDS))
        # Every statement ends within DB_TIMEOUT_SECONDS, and no transaction of the service
        # runs twenty of them end to end; a minute at least. Each sync so reads again the
        # revocations of that margin (100 s by default): a few rows.
        self.margin_seconds = max(60.0, 20 * db_timeout_seconds)
        self._read_at: float | None = None

    async def read(self, pool: asyncpg.Pool) -> store.Revoked:
        if self._read_at is None:
            now = time.time()
            revoked = await store.revocations_at_start(
                pool, now - self.session_window, now - self.player_window
            )
        else:
            revoked = await store.revocations_since(pool, self._read_at - self.margin_seconds)
        self._read_at = revoked.read_at
        return revoked
