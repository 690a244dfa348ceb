"""Devices, sessions and refresh tokens (docs/api.md#players-and-sessions).

Only hashes are kept: a device id's keyed hash, a refresh token's SHA-256.
"""

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID, uuid4

import asyncpg


@dataclass(frozen=True)
class LivePlayer:
    name: str
    tag: int


async def live_player(conn: asyncpg.Connection, player_id: UUID) -> LivePlayer | None:
    """The player, unless deleted; held (FOR SHARE) so that a deletion running now is waited
    for, and then seen: no session opens for a player deleted meanwhile."""
    row = await conn.fetchrow(
        """
        SELECT name, tag FROM players WHERE player_id = $1 AND deleted_at IS NULL FOR SHARE
        """,
        player_id,
    )
    return None if row is None else LivePlayer(row["name"], row["tag"])


async def device_player(conn: asyncpg.Connection, device_hash: bytes) -> UUID | None:
    """The player signed in by that device, if any."""
    found: UUID | None = await conn.fetchval(
        "SELECT player_id FROM devices WHERE device_hash = $1", device_hash
    )
    return found


async def add_device(conn: asyncpg.Connection, device_hash: bytes, player_id: UUID) -> UUID:
    """Bind the device to the player, unless it is bound already: the player it names."""
    bound: UUID = await conn.fetchval(
        """
        WITH added AS (
            INSERT INTO devices (device_hash, player_id) VALUES ($1, $2)
            ON CONFLICT (device_hash) DO NOTHING RETURNING player_id)
        SELECT player_id FROM added
        UNION ALL SELECT player_id FROM devices WHERE device_hash = $1
        LIMIT 1
        """,
        device_hash,
        player_id,
    )
    return bound


@dataclass(frozen=True)
class Device:
    device_hash: bytes
    linked_at: datetime


async def devices_of(conn: asyncpg.Connection | asyncpg.Pool, player_id: UUID) -> list[Device]:
    rows = await conn.fetch(
        "SELECT device_hash, created_at FROM devices WHERE player_id = $1 ORDER BY created_at",
        player_id,
    )
    return [Device(bytes(r["device_hash"]), r["created_at"]) for r in rows]


async def remove_device(conn: asyncpg.Connection, player_id: UUID, device_hash: bytes) -> None:
    await conn.execute(
        "DELETE FROM devices WHERE player_id = $1 AND device_hash = $2", player_id, device_hash
    )


async def start_session(
    conn: asyncpg.Connection, player_id: UUID, refresh_hash: bytes, ttl_seconds: int
) -> UUID:
    """A new session for the player, with its first refresh token."""
    session_id = uuid4()
    await conn.execute(
        "INSERT INTO sessions (session_id, player_id) VALUES ($1, $2)", session_id, player_id
    )
    await add_refresh(conn, session_id, refresh_hash, ttl_seconds)
    return session_id


async def add_refresh(
    conn: asyncpg.Connection, session_id: UUID, refresh_hash: bytes, ttl_seconds: int
) -> None:
    await conn.execute(
        """
        INSERT INTO refresh_tokens (token_hash, session_id, expires_at)
        VALUES ($1, $2, now() + make_interval(secs => $3))
        """,
        refresh_hash,
        session_id,
        float(ttl_seconds),
    )


@dataclass(frozen=True)
class Refresh:
    """A refresh token as kept, with its session's state, at the time of reading."""

    session_id: UUID
    player_id: UUID
    expired: bool
    revoked: bool
    # Seconds since it was used (None: never), and whether the token then issued was used.
    used_seconds_ago: float | None
    successor: bytes | None
    successor_used: bool


async def lock_refresh(conn: asyncpg.Connection, refresh_hash: bytes) -> Refresh | None:
    """The refresh token, its row and its session's locked until the transaction ends."""
    row = await conn.fetchrow(
        """
        SELECT r.session_id, s.player_id, r.expires_at <= now() AS expired,
               s.revoked_at IS NOT NULL AS revoked,
               extract(epoch FROM now() - r.used_at)::float8 AS used_seconds_ago,
               r.successor, coalesce(n.used_at IS NOT NULL, false) AS successor_used
          FROM refresh_tokens r
          JOIN sessions s USING (session_id)
          LEFT JOIN refresh_tokens n ON n.token_hash = r.successor
         WHERE r.token_hash = $1
           FOR UPDATE OF r, s
        """,
        refresh_hash,
    )
    if row is None:
        return None
    successor = None if row["successor"] is None else bytes(row["successor"])
    return Refresh(
        row["session_id"],
        row["player_id"],
        row["expired"],
        row["revoked"],
        row["used_seconds_ago"],
        successor,
        row["successor_used"],
    )


async def rotate(
    conn: asyncpg.Connection,
    used: bytes,
    session_id: UUID,
    replacement: bytes,
    ttl_seconds: int,
    voided: bytes | None = None,
) -> None:
    """Mark `used` as used, with `replacement` as its successor, and keep `replacement`; a
    `voided` successor (issued, never seen) stops working."""
    if voided is not None:
        await conn.execute("DELETE FROM refresh_tokens WHERE token_hash = $1", voided)
    await add_refresh(conn, session_id, replacement, ttl_seconds)
    await conn.execute(
        """
        UPDATE refresh_tokens SET used_at = coalesce(used_at, now()), successor = $2
         WHERE token_hash = $1
        """,
        used,
        replacement,
    )


async def revoke_session(conn: asyncpg.Connection, session_id: UUID) -> None:
    await conn.execute(
        "UPDATE sessions SET revoked_at = now() WHERE session_id = $1 AND revoked_at IS NULL",
        session_id,
    )


async def live_sessions(conn: asyncpg.Connection, player_id: UUID) -> list[UUID]:
    rows = await conn.fetch(
        "SELECT session_id FROM sessions WHERE player_id = $1 AND revoked_at IS NULL", player_id
    )
    return [r["session_id"] for r in rows]


async def revoke_player_sessions(conn: asyncpg.Connection, player_id: UUID) -> float:
    """Revoke every session of the player, and its tokens from before sessions; the time, in
    epoch seconds, before which its sessionless tokens are refused."""
    await conn.execute(
        "UPDATE sessions SET revoked_at = now() WHERE player_id = $1 AND revoked_at IS NULL",
        player_id,
    )
    at: float = await conn.fetchval(
        """
        UPDATE players SET tokens_after = now() WHERE player_id = $1
        RETURNING extract(epoch FROM tokens_after)::float8
        """,
        player_id,
    )
    return at


async def revocations(
    conn: asyncpg.Pool, session_seconds: float, player_seconds: float
) -> tuple[dict[UUID, float], dict[UUID, float]]:
    """Sessions revoked, and players' `tokens_after`, within those windows, with their times."""
    sessions = await conn.fetch(
        """
        SELECT session_id, extract(epoch FROM revoked_at)::float8 AS at FROM sessions
         WHERE revoked_at > now() - make_interval(secs => $1)
        """,
        session_seconds,
    )
    players = await conn.fetch(
        """
        SELECT player_id, extract(epoch FROM tokens_after)::float8 AS at FROM players
         WHERE tokens_after > now() - make_interval(secs => $1)
        """,
        player_seconds,
    )
    return (
        {r["session_id"]: r["at"] for r in sessions},
        {r["player_id"]: r["at"] for r in players},
    )
