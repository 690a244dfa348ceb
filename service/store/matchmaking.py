"""Matchmaking tickets: a player's place in the queue for one game, until matched or cancelled.

A ticket's changes are NOTIFYed on the match channel with the ticket's id as the payload, so the
push hub that wakes a match's followers wakes a ticket's long-polls the same way, on every
instance (service/store/notify.py); a match made is also NOTIFYed with each matched player's
id, which wakes that player's open match sockets.
"""

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import asyncpg

from service.store import jsonb
from service.store.database import Conn
from service.store.match_events import CHANNEL
from service.store.params import named

# The rating of a player who has none yet for the game this season: OpenSkill's starting mu.
UNRATED_MU = 25.0

_COLUMNS = (
    "ticket_id, player_id, game, ruleset, seats, options::text, loadout::text, rating, status,"
    " match_id, seat, created_at, matched_at"
)


@dataclass(frozen=True)
class Ticket:
    ticket_id: UUID
    player_id: UUID
    game: str
    ruleset: str
    seats: int
    options: dict[str, Any]
    loadout: Any
    rating: float
    status: str
    match_id: UUID | None
    seat: int | None
    created_at: datetime
    matched_at: datetime | None


def _ticket(row: asyncpg.Record) -> Ticket:
    return Ticket(
        ticket_id=row["ticket_id"],
        player_id=row["player_id"],
        game=row["game"],
        ruleset=row["ruleset"],
        seats=row["seats"],
        options=json.loads(row["options"]),
        loadout=json.loads(row["loadout"]),
        rating=row["rating"],
        status=row["status"],
        match_id=row["match_id"],
        seat=row["seat"],
        created_at=row["created_at"],
        matched_at=row["matched_at"],
    )


_RATING = named("""
SELECT coalesce(
    (SELECT r.mu FROM game_ratings r
      WHERE r.game = :game AND r.player_id = :player_id
        AND r.season = (SELECT name FROM seasons WHERE started_at <= now()
                         ORDER BY started_at DESC, name DESC LIMIT 1)),
    :unrated::float8)
""")


async def rating(conn: Conn, player_id: UUID, game: str) -> float:
    """The player's mu for `game` in the current season (the latest started), UNRATED_MU
    without one: what the matcher compares."""
    args = _RATING.args(player_id=player_id, game=game, unrated=UNRATED_MU)
    value: float = await conn.fetchval(_RATING.sql, *args)
    return value


_SEARCHING = named(
    "SELECT ticket_id FROM match_tickets"
    " WHERE player_id = :player_id AND game = :game AND status = 'searching'"
)


async def searching(conn: Conn, player_id: UUID, game: str) -> UUID | None:
    """The player's ticket still searching for `game`, if any."""
    found: UUID | None = await conn.fetchval(
        _SEARCHING.sql, *_SEARCHING.args(player_id=player_id, game=game)
    )
    return found


_INSERT = named(f"""
INSERT INTO match_tickets (player_id, game, ruleset, seats, options, loadout, rating)
VALUES (:player_id, :game, :ruleset, :seats, :options::jsonb, :loadout::jsonb, :rating)
RETURNING {_COLUMNS}
""")


async def insert(
    conn: asyncpg.Connection,
    *,
    player_id: UUID,
    game: str,
    ruleset: str,
    seats: int,
    options: dict[str, Any],
    loadout: Any,
    rating: float,
) -> Ticket:
    args = _INSERT.args(
        player_id=player_id,
        game=game,
        ruleset=ruleset,
        seats=seats,
        options=jsonb.dumps(options),
        loadout=jsonb.dumps(loadout),
        rating=rating,
    )
    row = await conn.fetchrow(_INSERT.sql, *args)
    assert row is not None
    return _ticket(row)


_GET = named(
    f"SELECT {_COLUMNS} FROM match_tickets WHERE ticket_id = :ticket_id AND player_id = :player_id"
)


async def get(conn: Conn, ticket_id: UUID, player_id: UUID) -> Ticket | None:
    """The ticket, if it is the player's."""
    row = await conn.fetchrow(_GET.sql, *_GET.args(ticket_id=ticket_id, player_id=player_id))
    return None if row is None else _ticket(row)


_LOCK = named(
    f"SELECT {_COLUMNS} FROM match_tickets"
    " WHERE ticket_id = :ticket_id AND player_id = :player_id FOR UPDATE"
)
_CANCEL = named(f"""
UPDATE match_tickets SET status = 'cancelled', cancelled_at = now()
 WHERE ticket_id = :ticket_id
RETURNING pg_notify('{CHANNEL}', ticket_id::text)
""")


async def cancel(conn: asyncpg.Connection, ticket_id: UUID, player_id: UUID) -> Ticket | None:
    """The player's ticket as it was before this call, cancelled now if it was searching. The
    row stays locked until the transaction ends: a matcher claiming it skips it, and a second
    cancel waits and finds it cancelled."""
    row = await conn.fetchrow(_LOCK.sql, *_LOCK.args(ticket_id=ticket_id, player_id=player_id))
    if row is not None and row["status"] == "searching":
        await conn.execute(_CANCEL.sql, *_CANCEL.args(ticket_id=ticket_id))
    return None if row is None else _ticket(row)


@dataclass(frozen=True)
class Bucket:
    """Tickets that may be matched together: the same game, ruleset, seats and options."""

    game: str
    ruleset: str
    seats: int
    options: dict[str, Any]


def bucket_key(bucket: Bucket) -> str:
    """The name of the lock under which the bucket's matchers take turns. The options' keys are
    sorted: a bucket read back from jsonb holds them in jsonb's order, not the request's."""
    options = json.dumps(bucket.options, sort_keys=True, separators=(",", ":"))
    return f"matchmaking:{bucket.game}:{bucket.ruleset}:{bucket.seats}:{options}"


async def buckets(conn: Conn) -> list[Bucket]:
    """The buckets with a searching ticket, the one of the longest wait first."""
    rows = await conn.fetch(
        """
        SELECT game, ruleset, seats, options::text FROM match_tickets WHERE status = 'searching'
         GROUP BY game, ruleset, seats, options ORDER BY min(created_at)
        """
    )
    return [Bucket(r["game"], r["ruleset"], r["seats"], json.loads(r["options"])) for r in rows]


@dataclass(frozen=True)
class Waiting:
    """A claimed ticket as the matcher sees it: its rating and how long it has waited."""

    ticket_id: UUID
    player_id: UUID
    loadout: Any
    rating: float
    waited_seconds: float


_BUCKET_TURN = named("SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))")
_CLAIM = named("""
SELECT ticket_id, player_id, loadout::text, rating,
       extract(epoch FROM clock_timestamp() - created_at)::float8 AS waited
  FROM match_tickets
 WHERE status = 'searching' AND game = :game AND ruleset = :ruleset AND seats = :seats
   AND options = :options::jsonb
 ORDER BY created_at, ticket_id
 LIMIT :limit
   FOR UPDATE SKIP LOCKED
""")


async def claim(conn: asyncpg.Connection, bucket: Bucket, limit: int) -> list[Waiting]:
    """The bucket's searching tickets no other transaction holds, oldest first, locked until
    this transaction ends: two matchers never claim the same ticket.

    Matchers of one bucket also take turns (a lock on the bucket until the transaction ends):
    two that ran at once would each skip the ticket the other holds, and two players queuing
    together would wait for the next turn of the matcher to be seen together. A ticket a cancel
    holds is still skipped."""
    await conn.execute(_BUCKET_TURN.sql, *_BUCKET_TURN.args(key=bucket_key(bucket)))
    args = _CLAIM.args(
        game=bucket.game,
        ruleset=bucket.ruleset,
        seats=bucket.seats,
        options=jsonb.dumps(bucket.options),
        limit=limit,
    )
    rows = await conn.fetch(_CLAIM.sql, *args)
    return [
        Waiting(r["ticket_id"], r["player_id"], json.loads(r["loadout"]), r["rating"], r["waited"])
        for r in rows
    ]


_MARK_MATCHED = named(f"""
WITH moved AS (
    UPDATE match_tickets m SET status = 'matched', match_id = :match_id, seat = s.seat,
                               matched_at = clock_timestamp()
      FROM unnest(:ticket_ids::uuid[], :seats::int[]) AS s (ticket_id, seat)
     WHERE m.ticket_id = s.ticket_id
    RETURNING m.ticket_id, m.player_id)
SELECT pg_notify('{CHANNEL}', ticket_id::text), pg_notify('{CHANNEL}', player_id::text)
  FROM moved
""")


async def mark_matched(
    conn: asyncpg.Connection, match_id: UUID, seats: list[tuple[UUID, int]]
) -> None:
    """The claimed tickets (ticket, seat) matched into `match_id`; each ticket's waiters and
    each player's sockets notified. The time matched is the clock's, not the transaction's
    start: a matcher that waited for its turn may have begun before the ticket was stored."""
    args = _MARK_MATCHED.args(
        match_id=match_id,
        ticket_ids=[ticket for ticket, _ in seats],
        seats=[seat for _, seat in seats],
    )
    await conn.execute(_MARK_MATCHED.sql, *args)


_MATCHED_LATELY = named(f"""
SELECT {_COLUMNS} FROM match_tickets
 WHERE player_id = :player_id AND status = 'matched'
   AND matched_at > now() - make_interval(secs => :seconds)
 ORDER BY matched_at, ticket_id
""")


async def matched_lately(conn: Conn, player_id: UUID, seconds: float) -> list[Ticket]:
    """The player's tickets matched in the last `seconds`, the earliest first."""
    args = _MATCHED_LATELY.args(player_id=player_id, seconds=seconds)
    rows = await conn.fetch(_MATCHED_LATELY.sql, *args)
    return [_ticket(row) for row in rows]


@dataclass(frozen=True)
class QueueHealth:
    """One game's queue: searching now, and the last hour's matched and cancelled tickets."""

    game: str
    searching: int
    matched: int
    wait_p50: float | None
    wait_p95: float | None
    wait_p99: float | None
    matches: int
    bot_matches: int
    spread_p50: float | None
    spread_max: float | None
    cancelled: int


async def queue_health(conn: asyncpg.Pool) -> list[QueueHealth]:
    """Per game, the queue's figures over the last hour (a match's rating spread: its tickets'
    highest rating less their lowest)."""
    rows = await conn.fetch(
        """
        WITH matched AS (
            SELECT game, match_id, rating,
                   extract(epoch FROM matched_at - created_at)::float8 AS waited
              FROM match_tickets
             WHERE status = 'matched' AND matched_at > now() - interval '1 hour'),
        groups AS (
            SELECT game, match_id, max(rating) - min(rating) AS spread,
                   EXISTS (SELECT 1 FROM match_seats s
                            WHERE s.match_id = matched.match_id AND s.bot) AS bots
              FROM matched GROUP BY game, match_id),
        waits AS (
            SELECT game, count(*) AS matched,
                   percentile_cont(0.5) WITHIN GROUP (ORDER BY waited) AS p50,
                   percentile_cont(0.95) WITHIN GROUP (ORDER BY waited) AS p95,
                   percentile_cont(0.99) WITHIN GROUP (ORDER BY waited) AS p99
              FROM matched GROUP BY game),
        spreads AS (
            SELECT game, count(*) AS matches, count(*) FILTER (WHERE bots) AS bot_matches,
                   percentile_cont(0.5) WITHIN GROUP (ORDER BY spread) AS spread_p50,
                   max(spread) AS spread_max
              FROM groups GROUP BY game),
        searching AS (
            SELECT game, count(*) AS searching FROM match_tickets
             WHERE status = 'searching' GROUP BY game),
        cancelled AS (
            SELECT game, count(*) AS cancelled FROM match_tickets
             WHERE status = 'cancelled' AND cancelled_at > now() - interval '1 hour'
             GROUP BY game),
        games AS (
            SELECT game FROM waits UNION SELECT game FROM searching
            UNION SELECT game FROM cancelled)
        SELECT g.game, coalesce(q.searching, 0) AS searching, coalesce(w.matched, 0) AS matched,
               w.p50 AS wait_p50, w.p95 AS wait_p95, w.p99 AS wait_p99,
               coalesce(s.matches, 0) AS matches,
               coalesce(s.bot_matches, 0) AS bot_matches, s.spread_p50, s.spread_max,
               coalesce(c.cancelled, 0) AS cancelled
          FROM games g
          LEFT JOIN waits w USING (game) LEFT JOIN spreads s USING (game)
          LEFT JOIN searching q USING (game) LEFT JOIN cancelled c USING (game)
         ORDER BY g.game
        """
    )
    return [QueueHealth(**dict(r)) for r in rows]
