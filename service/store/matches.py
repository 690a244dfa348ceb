"""Matches: the match row (cached state), its seats, and the action log that rebuilds it.

The numbered events are match_events.py's, the lists of matches match_lists.py's, and the
sweeps of ended matches match_sweeps.py's. JSON columns travel as text and are parsed here, so
the pool needs no type codecs.
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from decimal import Decimal
from typing import Any
from uuid import UUID

import asyncpg

from service.store import jsonb
from service.store.database import Conn
from service.store.idempotency import KEEP_ANSWER, AnswerToKeep, KeptAnswer, write_keeping
from service.store.match_events import CHANNEL, EventRow
from service.store.params import named
from service.store.player_lock import ALIVE

_MATCH_COLUMNS = (
    "match_id, game, ruleset, seed, seats, options::text, status, version, last_seq,"
    " state::text, outcome::text, turn_seconds, due_at, created_by"
)


@dataclass(frozen=True)
class MatchRow:
    match_id: UUID
    game: str
    ruleset: str
    seed: int
    seats: int
    options: dict[str, Any]
    status: str
    version: int
    last_seq: int
    state: dict[str, Any]
    outcome: dict[str, Any] | None
    turn_seconds: int | None
    due_at: datetime | None
    # None for a match an operator made (a lesson, a tournament).
    created_by: UUID | None = None


@dataclass(frozen=True)
class SeatRow:
    seat: int
    player_id: UUID | None
    bot: bool
    loadout: Any = None
    guard: int = 0
    prompt: str | None = None


@dataclass(frozen=True)
class ActionRow:
    version: int
    seat: int
    action: dict[str, Any]
    source: str


def _match(row: asyncpg.Record) -> MatchRow:
    return MatchRow(
        match_id=row["match_id"],
        game=row["game"],
        ruleset=row["ruleset"],
        seed=int(row["seed"]),
        seats=row["seats"],
        options=json.loads(row["options"]),
        status=row["status"],
        version=row["version"],
        last_seq=row["last_seq"],
        state=json.loads(row["state"]),
        outcome=None if row["outcome"] is None else json.loads(row["outcome"]),
        turn_seconds=row["turn_seconds"],
        due_at=row["due_at"],
        created_by=row["created_by"],
    )


_INSERT_MATCH = named("""
INSERT INTO matches (game, ruleset, seed, seats, options, status, state, turn_seconds,
                     created_by, due_at)
VALUES (:game, :ruleset, :seed, :seats, :options::jsonb, 'waiting', '{}', :turn_seconds,
        :created_by, now() + make_interval(secs => :expires_in::float8))
RETURNING match_id
""")
_INSERT_SEAT = named("""
INSERT INTO match_seats (match_id, seat, player_id, bot, joined_at, loadout)
VALUES (:match_id, :seat, :player_id, :bot,
        CASE WHEN :player_id::uuid IS NULL THEN NULL ELSE now() END, :loadout::jsonb)
""")


async def insert_match(
    conn: asyncpg.Connection,
    *,
    game: str,
    ruleset: str,
    seed: int,
    seats: Sequence[SeatRow],
    options: dict[str, Any],
    turn_seconds: int | None,
    created_by: UUID | None,
    expires_in_seconds: float,
) -> UUID:
    """A waiting match (no state until every seat is taken), due to expire if it never fills;
    `created_by` None is an operator's match."""
    args = _INSERT_MATCH.args(
        game=game,
        ruleset=ruleset,
        seed=Decimal(seed),
        seats=len(seats),
        options=jsonb.dumps(options),
        turn_seconds=turn_seconds,
        created_by=created_by,
        expires_in=expires_in_seconds,
    )
    match_id: UUID = await conn.fetchval(_INSERT_MATCH.sql, *args)
    await conn.executemany(
        _INSERT_SEAT.sql,
        [
            _INSERT_SEAT.args(
                match_id=match_id,
                seat=s.seat,
                player_id=s.player_id,
                bot=s.bot,
                loadout=jsonb.dumps(s.loadout),
            )
            for s in seats
        ],
    )
    return match_id


_GET = named(f"SELECT {_MATCH_COLUMNS} FROM matches WHERE match_id = :match_id")
_EXISTS = named("SELECT true FROM matches WHERE match_id = :match_id")
_LOCK = named(f"SELECT {_MATCH_COLUMNS} FROM matches WHERE match_id = :match_id FOR UPDATE")


async def get(conn: Conn, match_id: UUID) -> MatchRow | None:
    row = await conn.fetchrow(_GET.sql, *_GET.args(match_id=match_id))
    return None if row is None else _match(row)


async def exists(conn: Conn, match_id: UUID) -> bool:
    found = await conn.fetchval(_EXISTS.sql, *_EXISTS.args(match_id=match_id))
    return bool(found)


async def lock(conn: asyncpg.Connection, match_id: UUID) -> MatchRow | None:
    """The match row, locked until the transaction ends: writes to one match are serialised."""
    row = await conn.fetchrow(_LOCK.sql, *_LOCK.args(match_id=match_id))
    return None if row is None else _match(row)


async def claim_due(conn: asyncpg.Connection) -> MatchRow | None:
    """One open match whose due time has passed, locked; rows other instances hold are skipped."""
    row = await conn.fetchrow(
        f"""
        SELECT {_MATCH_COLUMNS} FROM matches
        WHERE status IN ('waiting', 'active') AND due_at <= now()
        ORDER BY due_at
        LIMIT 1
        FOR UPDATE SKIP LOCKED
        """
    )
    return None if row is None else _match(row)


_SEATS = named(
    "SELECT seat, player_id, bot, loadout::text, guard, prompt FROM match_seats"
    " WHERE match_id = :match_id ORDER BY seat"
)


async def seats(conn: Conn, match_id: UUID) -> list[SeatRow]:
    rows = await conn.fetch(_SEATS.sql, *_SEATS.args(match_id=match_id))
    return [
        SeatRow(
            r["seat"],
            r["player_id"],
            r["bot"],
            None if r["loadout"] is None else json.loads(r["loadout"]),
            r["guard"],
            r["prompt"],
        )
        for r in rows
    ]


_TAKE_SEAT = named(
    "UPDATE match_seats SET player_id = :player_id, joined_at = now(), loadout = :loadout::jsonb"
    " WHERE match_id = :match_id AND seat = :seat"
)
_LEAVE_SEAT = named(
    "UPDATE match_seats SET player_id = NULL, joined_at = NULL, loadout = NULL"
    " WHERE match_id = :match_id AND seat = :seat"
)


async def take_seat(
    conn: asyncpg.Connection, match_id: UUID, seat: int, player_id: UUID, loadout: Any
) -> None:
    args = _TAKE_SEAT.args(
        match_id=match_id, seat=seat, player_id=player_id, loadout=jsonb.dumps(loadout)
    )
    await conn.execute(_TAKE_SEAT.sql, *args)


async def leave_seat(conn: asyncpg.Connection, match_id: UUID, seat: int) -> None:
    """A player leaves a match that has not started: the seat is free again."""
    await conn.execute(_LEAVE_SEAT.sql, *_LEAVE_SEAT.args(match_id=match_id, seat=seat))


@dataclass(frozen=True)
class HeldSeats:
    """The matches not over in which a player holds a seat, by status, and the player's tickets
    still searching (each a seat to come)."""

    waiting: list[UUID]
    active: list[UUID]
    searching: list[UUID]


_HELD = named("""
SELECT s.match_id AS id, m.status, m.created_at
  FROM match_seats s,
       -- One look-up by key per seat (LIMIT keeps it from being made a join, for which the
       -- planner may prefer to walk every match in play).
       LATERAL (SELECT status, created_at FROM matches
                 WHERE match_id = s.match_id LIMIT 1) AS m
 WHERE s.player_id = :player_id AND s.live AND m.status IN ('waiting', 'active')
UNION ALL
SELECT ticket_id, status, created_at FROM match_tickets
 WHERE player_id = :player_id AND status = 'searching'
 ORDER BY created_at, id
""")


async def held_seats(conn: asyncpg.Connection, player_id: UUID) -> HeldSeats:
    """The player's waiting and active matches and searching tickets. The caller holds the
    player's row until its transaction ends (service/store/player_lock.py), so that two
    requests cannot both take the last place."""
    rows = await conn.fetch(_HELD.sql, *_HELD.args(player_id=player_id))
    by_status: dict[str, list[UUID]] = {"waiting": [], "active": [], "searching": []}
    for row in rows:
        by_status[row["status"]].append(row["id"])
    return HeldSeats(**by_status)


@dataclass(frozen=True)
class ForWrite:
    """What a write of a match reads in one round trip: the row, its seats, and what is kept
    under the request's Idempotency-Key when it has one and the key is claimed."""

    row: MatchRow
    seats: list[SeatRow]
    kept: KeptAnswer | None
    # Whether the acting player is deleted: its request is refused, whatever the match's state.
    player_gone: bool


_FOR_WRITE = (
    "SELECT "
    + ", ".join(f"m.{column.strip()}" for column in _MATCH_COLUMNS.split(","))
    + """, k.request_hash, k.response,
       (SELECT json_agg(json_build_array(s.seat, s.player_id, s.bot, s.loadout, s.guard, s.prompt)
                        ORDER BY s.seat)
          FROM match_seats s WHERE s.match_id = m.match_id)::text AS seat_rows,
       NOT EXISTS (SELECT FROM players p WHERE p.player_id = :player_id AND p.deleted_at IS NULL)
           AS player_gone
  FROM matches m LEFT JOIN idempotency_keys k ON k.player_id = :player_id AND k.key = :key
 WHERE m.match_id = :match_id"""
)
_FOR_WRITE_UNLOCKED = named(_FOR_WRITE)
_FOR_WRITE_LOCKED = named(_FOR_WRITE + " FOR UPDATE OF m")


async def for_write(
    conn: asyncpg.Connection, match_id: UUID, player_id: UUID, key: str | None, *, lock: bool
) -> ForWrite | None:
    """The match, its seats and the key's kept answer; with `lock`, the match stays locked until the
    transaction ends."""
    statement = _FOR_WRITE_LOCKED if lock else _FOR_WRITE_UNLOCKED
    row = await conn.fetchrow(
        statement.sql, *statement.args(match_id=match_id, player_id=player_id, key=key)
    )
    if row is None:
        return None
    seats = [
        SeatRow(seat, None if player is None else UUID(player), bot, loadout, guard, prompt)
        for seat, player, bot, loadout, guard, prompt in json.loads(row["seat_rows"])
    ]
    hashed = row["request_hash"]
    kept = None if hashed is None else KeptAnswer(bytes(hashed), row["response"])
    return ForWrite(_match(row), seats, kept, row["player_gone"])


@dataclass(frozen=True)
class Changes:
    """What one write did to a match, stored together by `save`."""

    status: str
    version: int
    last_seq: int
    state: dict[str, Any]
    outcome: dict[str, Any] | None
    due_in_seconds: float | None
    reset_due: bool
    prompts: Sequence[tuple[int, int, str | None]]  # (seat, guard, fingerprint) that changed
    actions: Sequence[ActionRow]
    events: Sequence[EventRow]


_SAVE = named(f"""
WITH {ALIVE},
moved AS (
    UPDATE matches SET
        status = :status, version = :version, last_seq = :last_seq, state = :state::jsonb,
        outcome = :outcome::jsonb,
        due_at = CASE
            WHEN :status NOT IN ('waiting', 'active') THEN NULL
            WHEN NOT :reset_due THEN due_at
            WHEN :due_in_seconds::float8 IS NULL THEN NULL
            ELSE now() + make_interval(secs => :due_in_seconds::float8)
        END,
        finished_at = CASE WHEN :status IN ('finished', 'expired') THEN now() ELSE finished_at END
     WHERE match_id = :match_id AND version = :read_version AND last_seq = :read_last_seq
       AND (:player_id::uuid IS NULL OR EXISTS (SELECT FROM alive))
    RETURNING match_id, :player_id::uuid AS player_id),
prompted AS (
    UPDATE match_seats s SET guard = p.guard, prompt = p.prompt
      FROM moved, unnest(:prompt_seats::int[], :prompt_guards::int[], :prompts::text[])
               AS p (seat, guard, prompt)
     WHERE s.match_id = moved.match_id AND s.seat = p.seat),
acted AS (
    INSERT INTO match_actions (match_id, version, seat, action, source)
    SELECT moved.match_id, a.version, a.seat, a.action, a.source
      FROM moved, unnest(:action_versions::int[], :action_seats::int[], :actions::jsonb[],
                         :action_sources::text[])
               AS a (version, seat, action, source)),
told AS (
    INSERT INTO match_events (match_id, seq, version, kind, data, visible_to)
    SELECT moved.match_id, e.seq, e.version, e.kind, e.data, e.visible_to::int[]
      FROM moved, unnest(:event_seqs::bigint[], :event_versions::int[], :event_kinds::text[],
                         :event_data::jsonb[], :event_visible_to::text[])
               AS e (seq, version, kind, data, visible_to)),
kept AS ({KEEP_ANSWER})
SELECT count(*),
       (SELECT pg_notify('{CHANNEL}', :notify) FROM moved WHERE :notify::text IS NOT NULL)
  FROM moved
""")


def _array(seats: list[int] | None) -> str | None:
    return None if seats is None else "{" + ",".join(map(str, seats)) + "}"


async def save(
    conn: asyncpg.Connection,
    read: MatchRow,
    changes: Changes,
    player_id: UUID | None = None,
    to_keep: AnswerToKeep | None = None,
) -> bool:
    """Store a write's changes, and keep `to_keep` under `player_id`, if the match is still at the
    version and sequence it was `read` at, and `player_id` (who acts, if a player) is not
    deleted, its row locked first (service/store/player_lock.py); False (nothing stored) if not.
    New events are NOTIFYed, which PostgreSQL delivers only on commit."""
    events = changes.events
    moved = await write_keeping(
        conn,
        to_keep,
        _SAVE,
        match_id=read.match_id,
        read_version=read.version,
        read_last_seq=read.last_seq,
        status=changes.status,
        version=changes.version,
        last_seq=changes.last_seq,
        state=jsonb.dumps(changes.state),
        outcome=None if changes.outcome is None else jsonb.dumps(changes.outcome),
        due_in_seconds=changes.due_in_seconds,
        reset_due=changes.reset_due,
        player_id=player_id,
        prompt_seats=[seat for seat, _, _ in changes.prompts],
        prompt_guards=[guard for _, guard, _ in changes.prompts],
        prompts=[prompt for _, _, prompt in changes.prompts],
        action_versions=[a.version for a in changes.actions],
        action_seats=[a.seat for a in changes.actions],
        actions=[jsonb.dumps(a.action) for a in changes.actions],
        action_sources=[a.source for a in changes.actions],
        event_seqs=[e.seq for e in events],
        event_versions=[e.version for e in events],
        event_kinds=[e.kind for e in events],
        event_data=[jsonb.dumps(e.data) for e in events],
        event_visible_to=[_array(e.visible_to) for e in events],
        notify=f"{read.match_id}:{changes.last_seq}" if events else None,
    )
    return bool(moved)


def after_save(
    read: MatchRow, seats: Sequence[SeatRow], changes: Changes
) -> tuple[MatchRow, tuple[SeatRow, ...]]:
    """The match and its seats as the next read would give them once `changes` are stored.

    The JSON fields go through the text a read decodes, so the two agree to the type. The due
    time is set by the database's clock and left unknown here (None): an action never reads it.
    """
    row = replace(
        read,
        status=changes.status,
        version=changes.version,
        last_seq=changes.last_seq,
        state=json.loads(jsonb.dumps(changes.state)),
        outcome=None if changes.outcome is None else json.loads(jsonb.dumps(changes.outcome)),
        due_at=None,
    )
    prompted = {seat: (guard, prompt) for seat, guard, prompt in changes.prompts}
    after = tuple(
        replace(s, guard=prompted[s.seat][0], prompt=prompted[s.seat][1])
        if s.seat in prompted
        else s
        for s in seats
    )
    return row, after


_POSTPONE = named(
    "UPDATE matches SET due_at = now() + make_interval(secs => :seconds::float8)"
    " WHERE match_id = :match_id AND status IN ('waiting', 'active')"
)


async def postpone(conn: Conn, match_id: UUID, seconds: float) -> None:
    await conn.execute(_POSTPONE.sql, *_POSTPONE.args(match_id=match_id, seconds=seconds))


_ACTIONS = named(
    "SELECT version, seat, action::text, source FROM match_actions"
    " WHERE match_id = :match_id ORDER BY version"
)


async def actions(conn: Conn, match_id: UUID) -> list[ActionRow]:
    rows = await conn.fetch(_ACTIONS.sql, *_ACTIONS.args(match_id=match_id))
    return [ActionRow(r["version"], r["seat"], json.loads(r["action"]), r["source"]) for r in rows]
