"""A match's numbered events: read past a cursor, whole, and pushed through LISTEN/NOTIFY.

matches.py writes them with the match's changes; each NOTIFY on CHANNEL names the match.
"""

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import asyncpg

from service.store.database import Conn
from service.store.params import named

CHANNEL = "match_events"


@dataclass(frozen=True)
class EventRow:
    seq: int
    version: int
    kind: str
    data: dict[str, Any]
    visible_to: list[int] | None


def _event(row: asyncpg.Record) -> EventRow:
    visible = row["visible_to"]
    return EventRow(
        row["seq"],
        row["version"],
        row["kind"],
        json.loads(row["data"]),
        None if visible is None else list(visible),
    )


@dataclass(frozen=True)
class EventsRead:
    """A follower's read: the match's figures and the events past a cursor, from one snapshot."""

    status: str
    version: int
    last_seq: int
    seat: int | None
    events: list[EventRow]


_FOR_READER = named("""
    SELECT m.status, m.version AS match_version, m.last_seq, s.seat AS reader,
           e.seq, e.version, e.kind, e.data::text AS data, e.visible_to
    FROM matches m
    CROSS JOIN LATERAL (
        SELECT min(seat) AS seat FROM match_seats
        WHERE match_id = m.match_id AND player_id = :player_id
    ) s
    LEFT JOIN LATERAL (
        SELECT seq, version, kind, data, visible_to FROM match_events
        WHERE match_id = m.match_id AND seq > :after
          AND (visible_to IS NULL OR s.seat = ANY (visible_to))
        ORDER BY seq
        LIMIT :limit
    ) e ON true
    WHERE m.match_id = :match_id
    ORDER BY e.seq
""")


async def events_for(
    conn: Conn, match_id: UUID, player_id: UUID, after: int, limit: int
) -> EventsRead | None:
    """Events past `after` that the player's seat may see (a spectator: public ones only).

    One statement, so the version and status read belong to the same commits as the events:
    a page never carries an action's events with the version from before it.
    """
    args = _FOR_READER.args(match_id=match_id, player_id=player_id, after=after, limit=limit)
    rows = await conn.fetch(_FOR_READER.sql, *args)
    if not rows:
        return None
    first = rows[0]
    events = [] if first["seq"] is None else [_event(r) for r in rows]
    return EventsRead(
        first["status"], first["match_version"], first["last_seq"], first["reader"], events
    )


@dataclass(frozen=True)
class EventsAfter:
    """Every event past a cursor, whoever may see it, with the match's figures and the seat of
    each player seated, from one snapshot: one read that each follower of the match redacts
    for its own seat."""

    status: str
    version: int
    last_seq: int
    seat_of: dict[UUID, int]
    events: list[EventRow]


_UNREDACTED = named("""
    SELECT m.status, m.version AS match_version, m.last_seq, s.seats, s.players,
           e.seq, e.version, e.kind, e.data::text AS data, e.visible_to
    FROM matches m
    CROSS JOIN LATERAL (
        SELECT array_agg(seat) AS seats, array_agg(player_id) AS players
        FROM match_seats
        WHERE match_id = m.match_id AND player_id IS NOT NULL
    ) s
    LEFT JOIN LATERAL (
        SELECT seq, version, kind, data, visible_to FROM match_events
        WHERE match_id = m.match_id AND seq > :after
        ORDER BY seq
        LIMIT :limit
    ) e ON true
    WHERE m.match_id = :match_id
    ORDER BY e.seq
""")


async def events_after(conn: Conn, match_id: UUID, after: int, limit: int) -> EventsAfter | None:
    """Up to `limit` events past `after`, unredacted and with their `visible_to`; None when
    there is no such match. One statement, for the same reason as `events_for`."""
    args = _UNREDACTED.args(match_id=match_id, after=after, limit=limit)
    rows = await conn.fetch(_UNREDACTED.sql, *args)
    if not rows:
        return None
    first = rows[0]
    seat_of = dict(zip(first["players"] or (), first["seats"] or (), strict=True))
    events = [] if first["seq"] is None else [_event(r) for r in rows]
    return EventsAfter(first["status"], first["match_version"], first["last_seq"], seat_of, events)


_SWEPT = named("SELECT events_swept_at IS NOT NULL FROM matches WHERE match_id = :match_id")


async def events_swept(conn: Conn, match_id: UUID) -> bool:
    """Whether the match's events were swept after its retention (its action log is kept)."""
    swept = await conn.fetchval(_SWEPT.sql, *_SWEPT.args(match_id=match_id))
    return bool(swept)


_ALL = named(
    "SELECT seq, version, kind, data::text, visible_to FROM match_events"
    " WHERE match_id = :match_id ORDER BY seq"
)


async def all_events(conn: Conn, match_id: UUID) -> list[EventRow]:
    rows = await conn.fetch(_ALL.sql, *_ALL.args(match_id=match_id))
    return [_event(r) for r in rows]


async def listen(
    url: str, on_notify: Callable[[str], None], on_lost: Callable[[], None], timeout_s: float
) -> asyncpg.Connection:
    """A dedicated connection listening on the match channel; `on_lost` runs if it drops."""
    conn = await asyncpg.connect(url, timeout=timeout_s)

    def received(_conn: object, _pid: int, _channel: str, payload: str) -> None:
        on_notify(payload)

    def terminated(_conn: object) -> None:
        on_lost()

    conn.add_termination_listener(terminated)
    await conn.add_listener(CHANNEL, received)
    return conn
