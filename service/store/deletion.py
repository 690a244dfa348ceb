"""Deleting a player (docs/api.md#deleting-an-account): what it still holds, and forgetting who
it was.

The player's row stays, without a name: runs, snapshots, battles and matches that other players
rely on point at it. Locks are taken in the order every other write takes them
(service/store/player_lock.py): after the deletion's turn, the player's row, then its tickets,
its matches and its runs, so that a deletion never waits in a cycle with them.
"""

from dataclasses import dataclass
from uuid import UUID

import asyncpg

from service.store.params import named

# Deletions take turns: one may end several matches, each writing roll-up rows (schema.sql
# count_match_actions) and ratings that other matches share, in an order no other can follow.
_TURN = "deletion"


_TAKE_TURN = named("SELECT pg_advisory_xact_lock(hashtextextended(:turn, 0))")


async def take_turn(conn: asyncpg.Connection) -> None:
    """Wait for the deletions before this one; the turn is held until the transaction ends."""
    await conn.execute(_TAKE_TURN.sql, *_TAKE_TURN.args(turn=_TURN))


_SEATED_MATCHES = named("""
    SELECT m.match_id FROM matches m
     WHERE m.match_id IN (SELECT match_id FROM match_seats WHERE player_id = :player_id AND live)
       AND m.status IN ('waiting', 'active')
     ORDER BY m.match_id
       FOR UPDATE OF m
""")


async def lock_seated_matches(conn: asyncpg.Connection, player_id: UUID) -> list[UUID]:
    """The waiting and active matches where the player holds a seat, locked until the
    transaction ends, in id order; a move being made in one is waited for."""
    rows = await conn.fetch(_SEATED_MATCHES.sql, *_SEATED_MATCHES.args(player_id=player_id))
    return [row["match_id"] for row in rows]


@dataclass(frozen=True)
class OpenRun:
    run_id: UUID
    ruleset: str
    rating_change: float


_OPEN_RUNS = named("""
    SELECT run_id, ruleset, rating_change FROM runs
     WHERE player_id = :player_id AND status = 'shopping'
     ORDER BY run_id
       FOR UPDATE
""")


async def lock_open_runs(conn: asyncpg.Connection, player_id: UUID) -> list[OpenRun]:
    """The player's open runs, locked until the transaction ends, in id order; a move being
    made on one is waited for."""
    rows = await conn.fetch(_OPEN_RUNS.sql, *_OPEN_RUNS.args(player_id=player_id))
    return [OpenRun(r["run_id"], r["ruleset"], r["rating_change"]) for r in rows]


_CANCEL_TICKETS = named("""
    UPDATE match_tickets SET status = 'cancelled', cancelled_at = now()
     WHERE player_id = :player_id AND status = 'searching'
""")


async def cancel_tickets(conn: asyncpg.Connection, player_id: UUID) -> None:
    """Take the player out of the matchmaking queue, before its matches are locked: a matcher
    holding one of its tickets is waited for, and the match it made is then seen and left."""
    await conn.execute(_CANCEL_TICKETS.sql, *_CANCEL_TICKETS.args(player_id=player_id))


_ANONYMISE = named("""
    UPDATE players SET name = NULL, deleted_at = coalesce(deleted_at, now()),
           tokens_after = clock_timestamp()
     WHERE player_id = :player_id
    RETURNING extract(epoch FROM tokens_after)::float8
""")
_DELETE_DEVICES = named("DELETE FROM devices WHERE player_id = :player_id")
_DELETE_REFRESH_TOKENS = named("""
    DELETE FROM refresh_tokens r USING sessions s
     WHERE r.session_id = s.session_id AND s.player_id = :player_id
""")
_REVOKE_SESSIONS = named(
    "UPDATE sessions SET revoked_at = now() WHERE player_id = :player_id AND revoked_at IS NULL"
)


async def anonymise(conn: asyncpg.Connection, player_id: UUID) -> float:
    """Forget the player's name, devices and refresh tokens, and revoke its sessions. Every
    token of the player is refused by `tokens_after`, the time returned (epoch seconds): the
    clock at this statement, not the transaction's start, so that it is later than every token
    issued while the deletion ran. Done again, it changes nothing but `tokens_after`.

    The player leaves the leaderboard's counts as `deleted_at` is set (schema.sql
    count_ratings)."""
    at: float = await conn.fetchval(_ANONYMISE.sql, *_ANONYMISE.args(player_id=player_id))
    await conn.execute(_DELETE_DEVICES.sql, *_DELETE_DEVICES.args(player_id=player_id))
    # Refresh tokens before their sessions, the order a refresh locks them in.
    await conn.execute(
        _DELETE_REFRESH_TOKENS.sql, *_DELETE_REFRESH_TOKENS.args(player_id=player_id)
    )
    await conn.execute(_REVOKE_SESSIONS.sql, *_REVOKE_SESSIONS.args(player_id=player_id))
    return at
