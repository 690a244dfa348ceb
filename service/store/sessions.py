"""Devices, sessions and refresh tokens (docs/api.md#players-and-sessions).

Only hashes are kept: a device id's keyed hash, a refresh token's SHA-256.
"""

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID, uuid4

import asyncpg

from service.store.params import named

# A device's fingerprint: 8 hex digits of a hash of its kept hash, which give nothing of its id
# away. Computed here alone, so that the list and the unlink agree.
_FINGERPRINT = "substr(encode(sha256('fingerprint:'::bytea || device_hash), 'hex'), 1, 8)"


# The sessions of player `:player_id` still live: not revoked one by one, and opened after the
# player last signed out everywhere (`sessions_live_idx`, from that time on).
_LIVE_SESSIONS = """
    SELECT session_id, created_at FROM sessions
     WHERE player_id = :player_id AND revoked_at IS NULL
       AND created_at > coalesce((SELECT tokens_after FROM players WHERE player_id = :player_id),
                                 '-infinity')
"""


@dataclass(frozen=True)
class LivePlayer:
    player_id: UUID
    name: str
    tag: int
    # Every token issued to it before this is refused, and every session opened before it is
    # over (a sign-out everywhere, a deletion); None: never.
    tokens_after: datetime | None


def _live_player(row: asyncpg.Record | None) -> LivePlayer | None:
    if row is None:
        return None
    return LivePlayer(row["player_id"], row["name"], row["tag"], row["tokens_after"])


_LIVE_PLAYER = named("""
    SELECT player_id, name, tag, tokens_after FROM players
     WHERE player_id = :player_id AND deleted_at IS NULL FOR SHARE
""")


async def live_player(conn: asyncpg.Connection, player_id: UUID) -> LivePlayer | None:
    """The player, unless deleted; held (FOR SHARE) so that a deletion or a sign-out everywhere
    running now is waited for, and then seen: no session opens or goes on past it."""
    row = await conn.fetchrow(_LIVE_PLAYER.sql, *_LIVE_PLAYER.args(player_id=player_id))
    return _live_player(row)


_TOKEN_PLAYER = named("""
    SELECT player_id, name, tag, tokens_after FROM players
     WHERE player_id = (SELECT s.player_id FROM refresh_tokens r JOIN sessions s
                          USING (session_id) WHERE r.token_hash = :refresh_hash)
       AND deleted_at IS NULL
       FOR SHARE
""")


async def token_player(conn: asyncpg.Connection, refresh_hash: bytes) -> LivePlayer | None:
    """`live_player` of the refresh token's session, if the token is known: the player's row is
    held before the token's, in the order a deletion takes them."""
    row = await conn.fetchrow(_TOKEN_PLAYER.sql, *_TOKEN_PLAYER.args(refresh_hash=refresh_hash))
    return _live_player(row)


_DEVICE_PLAYER = named("SELECT player_id FROM devices WHERE device_hash = :device_hash")


async def device_player(conn: asyncpg.Connection | asyncpg.Pool, device_hash: bytes) -> UUID | None:
    """The player signed in by that device, if any."""
    found: UUID | None = await conn.fetchval(
        _DEVICE_PLAYER.sql, *_DEVICE_PLAYER.args(device_hash=device_hash)
    )
    return found


_MARK_USED = named("UPDATE devices SET last_used_at = now() WHERE device_hash = :device_hash")


async def mark_used(conn: asyncpg.Connection, device_hash: bytes) -> None:
    """The device signed its player in now."""
    await conn.execute(_MARK_USED.sql, *_MARK_USED.args(device_hash=device_hash))


_ADD_DEVICE = named("""
    WITH added AS (
        INSERT INTO devices (device_hash, player_id, last_used_at)
        VALUES (:device_hash, :player_id, CASE WHEN :used THEN now() END)
        ON CONFLICT (device_hash) DO NOTHING RETURNING player_id)
    SELECT player_id FROM added
    UNION ALL SELECT player_id FROM devices WHERE device_hash = :device_hash
    LIMIT 1
""")


async def add_device(
    conn: asyncpg.Connection, device_hash: bytes, player_id: UUID, *, used: bool
) -> UUID:
    """Bind the device to the player (`used`: signing it in now), unless it is bound already:
    the player it names."""
    args = _ADD_DEVICE.args(device_hash=device_hash, player_id=player_id, used=used)
    bound: UUID = await conn.fetchval(_ADD_DEVICE.sql, *args)
    return bound


# In the index's order: a plan that scans the table for the first rows it meets may read
# all of it when the player's rows lie at its end.
_COUNT_DEVICES = named("""
    SELECT count(*) FROM (SELECT 1 FROM devices WHERE player_id = :player_id
                           ORDER BY created_at LIMIT :up_to) AS d
""")


async def count_devices(conn: asyncpg.Connection, player_id: UUID, up_to: int) -> int:
    """How many devices the player has, counted no further than `up_to`."""
    args = _COUNT_DEVICES.args(player_id=player_id, up_to=up_to)
    counted: int = await conn.fetchval(_COUNT_DEVICES.sql, *args)
    return counted


@dataclass(frozen=True)
class Device:
    fingerprint: str
    linked_at: datetime
    last_used_at: datetime | None


# The first `:limit` devices of player `:player_id`, in the order they were linked
# (`devices_player_linked_idx`).
_LISTED = """
    SELECT device_hash, created_at, last_used_at FROM devices
     WHERE player_id = :player_id ORDER BY created_at LIMIT :limit
"""

_DEVICES_OF = named(
    f"SELECT {_FINGERPRINT} AS fingerprint, created_at, last_used_at FROM ({_LISTED}) AS d"
    " ORDER BY created_at"
)


async def devices_of(
    conn: asyncpg.Connection | asyncpg.Pool, player_id: UUID, limit: int
) -> list[Device]:
    """The player's first `limit` devices, in the order they were linked."""
    rows = await conn.fetch(_DEVICES_OF.sql, *_DEVICES_OF.args(player_id=player_id, limit=limit))
    return [Device(r["fingerprint"], r["created_at"], r["last_used_at"]) for r in rows]


_FIND_DEVICE = named(
    f"SELECT device_hash FROM ({_LISTED}) AS d WHERE {_FINGERPRINT} = :fingerprint LIMIT 1"
)


async def find_device(
    conn: asyncpg.Connection, player_id: UUID, fingerprint: str, limit: int
) -> bytes | None:
    """The kept hash of the device of that fingerprint among the player's first `limit` (those
    it is shown), if any."""
    args = _FIND_DEVICE.args(player_id=player_id, limit=limit, fingerprint=fingerprint)
    found: bytes | None = await conn.fetchval(_FIND_DEVICE.sql, *args)
    return None if found is None else bytes(found)


_REMOVE_DEVICE = named(
    "DELETE FROM devices WHERE player_id = :player_id AND device_hash = :device_hash"
)


async def remove_device(conn: asyncpg.Connection, player_id: UUID, device_hash: bytes) -> None:
    args = _REMOVE_DEVICE.args(player_id=player_id, device_hash=device_hash)
    await conn.execute(_REMOVE_DEVICE.sql, *args)


_START_SESSION = named("""
    INSERT INTO sessions (session_id, player_id, created_at)
    VALUES (:session_id, :player_id, clock_timestamp())
    RETURNING extract(epoch FROM created_at)::float8
""")


async def start_session(
    conn: asyncpg.Connection, player_id: UUID, refresh_hash: bytes, ttl_seconds: int
) -> tuple[UUID, float]:
    """A new session for the player, with its first refresh token: its id, and when it started
    (epoch seconds, the clock now: after any sign-out everywhere the caller waited for)."""
    session_id = uuid4()
    args = _START_SESSION.args(session_id=session_id, player_id=player_id)
    started: float = await conn.fetchval(_START_SESSION.sql, *args)
    await add_refresh(conn, session_id, refresh_hash, ttl_seconds)
    return session_id, started


# In the index's order, as count_devices.
_COUNT_LIVE_SESSIONS = named(
    f"SELECT count(*) FROM ({_LIVE_SESSIONS} ORDER BY created_at LIMIT :up_to) AS s"
)


async def count_live_sessions(conn: asyncpg.Connection, player_id: UUID, up_to: int) -> int:
    """How many sessions of the player are live, counted no further than `up_to`."""
    args = _COUNT_LIVE_SESSIONS.args(player_id=player_id, up_to=up_to)
    counted: int = await conn.fetchval(_COUNT_LIVE_SESSIONS.sql, *args)
    return counted


_REVOKE_OLDEST = named(f"""
    UPDATE sessions SET revoked_at = now()
     WHERE session_id IN (SELECT session_id FROM ({_LIVE_SESSIONS}) AS s
                           WHERE session_id <> :current ORDER BY created_at LIMIT :count)
    RETURNING session_id
""")


async def revoke_oldest_sessions(
    conn: asyncpg.Connection, player_id: UUID, current: UUID, count: int
) -> list[UUID]:
    """Revoke the player's `count` oldest live sessions but `current`: the sessions revoked."""
    args = _REVOKE_OLDEST.args(player_id=player_id, current=current, count=count)
    rows = await conn.fetch(_REVOKE_OLDEST.sql, *args)
    return [r["session_id"] for r in rows]


_ADD_REFRESH = named("""
    INSERT INTO refresh_tokens (token_hash, session_id, expires_at)
    VALUES (:refresh_hash, :session_id, now() + make_interval(secs => :ttl_seconds))
""")


async def add_refresh(
    conn: asyncpg.Connection, session_id: UUID, refresh_hash: bytes, ttl_seconds: int
) -> None:
    args = _ADD_REFRESH.args(
        refresh_hash=refresh_hash, session_id=session_id, ttl_seconds=float(ttl_seconds)
    )
    await conn.execute(_ADD_REFRESH.sql, *args)


@dataclass(frozen=True)
class Refresh:
    """A refresh token as kept, with its session's state, at the time of reading."""

    session_id: UUID
    session_started: datetime
    expired: bool
    revoked: bool
    # When it was used (epoch seconds; None: never), how long ago, and the token then issued.
    used_at: float | None
    used_seconds_ago: float | None
    successor: bytes | None


_LOCK_REFRESH = named("""
    SELECT r.session_id, s.created_at, r.expires_at <= now() AS expired,
           s.revoked_at IS NOT NULL AS revoked,
           extract(epoch FROM r.used_at)::float8 AS used_at,
           extract(epoch FROM now() - r.used_at)::float8 AS used_seconds_ago, r.successor
      FROM refresh_tokens r
      JOIN sessions s USING (session_id)
     WHERE r.token_hash = :refresh_hash
       FOR UPDATE OF r, s
""")


async def lock_refresh(conn: asyncpg.Connection, refresh_hash: bytes) -> Refresh | None:
    """The refresh token, its row and its session's locked until the transaction ends."""
    row = await conn.fetchrow(_LOCK_REFRESH.sql, *_LOCK_REFRESH.args(refresh_hash=refresh_hash))
    if row is None:
        return None
    return Refresh(
        row["session_id"],
        row["created_at"],
        row["expired"],
        row["revoked"],
        row["used_at"],
        row["used_seconds_ago"],
        None if row["successor"] is None else bytes(row["successor"]),
    )


_WAS_USED = named("SELECT used_at IS NOT NULL FROM refresh_tokens WHERE token_hash = :refresh_hash")


async def was_used(conn: asyncpg.Connection, refresh_hash: bytes) -> bool:
    """Whether that refresh token was used (read now, after any lock the caller waited for)."""
    used: bool | None = await conn.fetchval(
        _WAS_USED.sql, *_WAS_USED.args(refresh_hash=refresh_hash)
    )
    return bool(used)


_ROTATE = named("""
    UPDATE refresh_tokens SET used_at = clock_timestamp(), successor = :replacement
     WHERE token_hash = :used
    RETURNING extract(epoch FROM used_at)::float8
""")


async def rotate(
    conn: asyncpg.Connection, used: bytes, session_id: UUID, replacement: bytes, ttl_seconds: int
) -> float:
    """Mark `used` as used now, with `replacement` as its successor, and keep `replacement`:
    when it was used (epoch seconds, the clock now: after the locks the caller waited for)."""
    await add_refresh(conn, session_id, replacement, ttl_seconds)
    at: float = await conn.fetchval(_ROTATE.sql, *_ROTATE.args(used=used, replacement=replacement))
    return at


_LIVE_REFRESH = named("""
    SELECT EXISTS (
        SELECT 1 FROM refresh_tokens r JOIN sessions s USING (session_id)
                 JOIN players p USING (player_id)
         WHERE r.token_hash = :refresh_hash AND s.player_id = :player_id AND s.revoked_at IS NULL
           AND s.created_at > coalesce(p.tokens_after, '-infinity')
           AND r.used_at IS NULL AND r.expires_at > now())
""")


async def live_refresh(conn: asyncpg.Connection, player_id: UUID, refresh_hash: bytes) -> bool:
    """Whether the refresh token is the player's, unused, unexpired, of a live session."""
    args = _LIVE_REFRESH.args(refresh_hash=refresh_hash, player_id=player_id)
    found: bool = await conn.fetchval(_LIVE_REFRESH.sql, *args)
    return found


_REVOKE_SESSION = named(
    "UPDATE sessions SET revoked_at = now() WHERE session_id = :session_id AND revoked_at IS NULL"
)


async def revoke_session(conn: asyncpg.Connection, session_id: UUID) -> None:
    await conn.execute(_REVOKE_SESSION.sql, *_REVOKE_SESSION.args(session_id=session_id))


_SIGN_OUT_EVERYWHERE = named("""
    UPDATE players SET tokens_after = clock_timestamp() WHERE player_id = :player_id
    RETURNING extract(epoch FROM tokens_after)::float8
""")


async def sign_out_everywhere(conn: asyncpg.Connection, player_id: UUID) -> float:
    """Refuse every token issued to the player until now, and end every session it opened: one
    row, however many sessions. The time (epoch seconds): the clock at this statement, so that
    it is later than every token issued before it."""
    at: float = await conn.fetchval(
        _SIGN_OUT_EVERYWHERE.sql, *_SIGN_OUT_EVERYWHERE.args(player_id=player_id)
    )
    return at


@dataclass(frozen=True)
class Revoked:
    """Sessions revoked and players' `tokens_after` since the times asked, with their times (in
    epoch seconds), and the database's clock when they were read."""

    sessions: dict[UUID, float]
    players: dict[UUID, float]
    # The start of the reading statement's transaction: no later than its snapshot.
    read_at: float


def _revoked(rows: list[asyncpg.Record]) -> Revoked:
    sessions = {r["id"]: r["at"] for r in rows if r["kind"] == "s"}
    players = {r["id"]: r["at"] for r in rows if r["kind"] == "p"}
    read_at = next(r["at"] for r in rows if r["kind"] == "n")
    return Revoked(sessions, players, read_at)


# What was revoked after the times `sessions_since` and `players_since`, in epoch seconds,
# through `sessions_revoked_idx` and `players_tokens_after_idx`, with the clock of the read.
_REVOCATIONS = """
    SELECT 's' AS kind, session_id AS id, extract(epoch FROM revoked_at)::float8 AS at
      FROM sessions WHERE revoked_at > to_timestamp({sessions_since})
    UNION ALL
    SELECT 'p', player_id, extract(epoch FROM tokens_after)::float8
      FROM players WHERE tokens_after > to_timestamp({players_since})
    UNION ALL
    SELECT 'n', NULL, extract(epoch FROM now())::float8
"""

_REVOCATIONS_AT_START = named(
    _REVOCATIONS.format(sessions_since=":sessions_since", players_since=":players_since")
)


async def revocations_at_start(
    pool: asyncpg.Pool, sessions_since: float, players_since: float
) -> Revoked:
    """Everything revoked after those times (epoch seconds): a process's first read, as large
    as the revocations within them."""
    args = _REVOCATIONS_AT_START.args(sessions_since=sessions_since, players_since=players_since)
    rows = await pool.fetch(_REVOCATIONS_AT_START.sql, *args)
    return _revoked(rows)


# One time for both: a single parameter.
_REVOCATIONS_SINCE = named(_REVOCATIONS.format(sessions_since=":since", players_since=":since"))


async def revocations_since(pool: asyncpg.Pool, since: float) -> Revoked:
    """What was revoked after `since` (epoch seconds): each later read, a few rows."""
    rows = await pool.fetch(_REVOCATIONS_SINCE.sql, *_REVOCATIONS_SINCE.args(since=since))
    return _revoked(rows)
