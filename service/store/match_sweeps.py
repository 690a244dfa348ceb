"""The sweeps of matches: events of ended matches past their retention, and expired matches."""

from service.store.database import Conn
from service.store.params import named

# The ended matches past their retention, oldest end first, as many as fit in `rows` rows
# (events and seats, counted from `last_seq` and `seats`) and at least one; each is claimed with
# FOR UPDATE SKIP LOCKED, so that instances sweeping at once take different matches.
_ENDED_BATCH = """
WITH due AS (
    SELECT match_id, sum(last_seq + seats) OVER (ORDER BY finished_at, match_id) AS running
      FROM (SELECT match_id, last_seq, seats, finished_at FROM matches
             WHERE status = :status AND events_swept_at IS NULL
               AND finished_at < now() - make_interval(secs => :older_than::float8)
             ORDER BY finished_at, match_id
             LIMIT :rows) oldest),
claimed AS (
    SELECT m.match_id FROM matches m JOIN due USING (match_id)
     WHERE (due.running <= :rows OR due.running = (SELECT min(running) FROM due))
       AND m.status = :status AND m.events_swept_at IS NULL
     FOR UPDATE OF m SKIP LOCKED),
events_gone AS (
    DELETE FROM match_events e USING claimed WHERE e.match_id = claimed.match_id)
"""


_SWEEP_EVENTS = named(
    _ENDED_BATCH
    + """
    UPDATE matches m SET events_swept_at = now() FROM claimed
     WHERE m.match_id = claimed.match_id
    RETURNING m.match_id
    """
)

# The foreign keys are checked at the end of the statement, when the rows that point at a match
# are gone with it.
_DELETE_EXPIRED = named(
    _ENDED_BATCH
    + """,
    seats_gone AS (
        DELETE FROM match_seats s USING claimed WHERE s.match_id = claimed.match_id),
    actions_gone AS (
        DELETE FROM match_actions a USING claimed WHERE a.match_id = claimed.match_id)
    DELETE FROM matches m USING claimed WHERE m.match_id = claimed.match_id
    RETURNING m.match_id
    """
)


async def sweep_finished_events(conn: Conn, older_than_seconds: float, rows: int) -> int:
    """Delete the events of matches finished more than `older_than_seconds` ago, one batch of
    about `rows` rows in one statement; the match, its seats and its action log stay. The number
    of matches swept."""
    args = _SWEEP_EVENTS.args(status="finished", older_than=older_than_seconds, rows=rows)
    return len(await conn.fetch(_SWEEP_EVENTS.sql, *args))


async def delete_expired(conn: Conn, older_than_seconds: float, rows: int) -> int:
    """Delete matches that expired unfilled more than `older_than_seconds` ago, with their seats
    and events, one batch of about `rows` rows in one statement. The number of matches deleted."""
    args = _DELETE_EXPIRED.args(status="expired", older_than=older_than_seconds, rows=rows)
    return len(await conn.fetch(_DELETE_EXPIRED.sql, *args))
