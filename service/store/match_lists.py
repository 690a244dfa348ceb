"""Lists of matches: those a player sits in, and those waiting for players (the lobby)."""

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import asyncpg

from service.store.database import Conn
from service.store.params import Statement, named


@dataclass(frozen=True)
class ListedMatch:
    """A match as a list shows it, with the listing player's seat and whether it is asked."""

    match_id: UUID
    game: str
    ruleset: str
    status: str
    version: int
    seats: int
    options: dict[str, Any]
    free_seats: int
    seat: int | None
    asked: bool
    created_at: datetime
    by_operator: bool
    # What the list is ordered by: the match's creation in the lobby, the seat's join in yours.
    listed_at: datetime


def _listed(row: asyncpg.Record) -> ListedMatch:
    return ListedMatch(
        row["match_id"],
        row["game"],
        row["ruleset"],
        row["status"],
        row["version"],
        row["seats"],
        json.loads(row["options"]),
        row["free_seats"],
        row["seat"],
        row["asked"],
        row["created_at"],
        row["by_operator"],
        row["listed_at"],
    )


_LISTED = """
    SELECT m.match_id, m.game, m.ruleset, m.status, m.version, m.seats, m.options::text,
           m.created_at, m.created_by IS NULL AS by_operator,
           (SELECT count(*) FROM match_seats f
             WHERE f.match_id = m.match_id AND f.player_id IS NULL AND NOT f.bot) AS free_seats,
           mine.seat, coalesce(m.status = 'active' AND mine.prompt IS NOT NULL, false) AS asked
"""


# A first page starts below every (time, id): a bound rather than ":after_at IS NULL OR …", so
# that the plan PostgreSQL caches for the statement walks the index on every page.
_LAST_ID = UUID(int=2**128 - 1)


@dataclass(frozen=True)
class After:
    """Where a page starts: below this (time, match) in a list ordered newest first."""

    at: datetime
    match_id: UUID


_FOR_PLAYER = named(
    _LISTED
    + """, mine.joined_at AS listed_at
      FROM match_seats mine JOIN matches m USING (match_id)
     WHERE mine.player_id = :player_id
       AND (mine.joined_at, mine.match_id)
           < (coalesce(:after_at::timestamptz, 'infinity'),
              coalesce(:after_id::uuid, :last_id::uuid))
     ORDER BY mine.joined_at DESC, mine.match_id DESC
     LIMIT :limit
    """
)

_WAITING = named(
    _LISTED
    + """, m.created_at AS listed_at
      FROM matches m
      LEFT JOIN LATERAL (
          SELECT seat, prompt FROM match_seats
           WHERE match_id = m.match_id AND player_id = :player_id LIMIT 1) mine ON true
     WHERE m.status = 'waiting'
       AND (m.created_at, m.match_id)
           < (coalesce(:after_at::timestamptz, 'infinity'),
              coalesce(:after_id::uuid, :last_id::uuid))
     ORDER BY m.created_at DESC, m.match_id DESC
     LIMIT :limit
    """
)


async def _page(
    conn: Conn, statement: Statement, player_id: UUID, after: After | None, limit: int
) -> list[ListedMatch]:
    args = statement.args(
        player_id=player_id,
        after_at=None if after is None else after.at,
        after_id=None if after is None else after.match_id,
        last_id=_LAST_ID,
        limit=limit,
    )
    return [_listed(r) for r in await conn.fetch(statement.sql, *args)]


async def list_for_player(
    conn: Conn, player_id: UUID, after: After | None, limit: int
) -> list[ListedMatch]:
    """The player's matches, the seat taken last first; `limit` of them past `after`."""
    return await _page(conn, _FOR_PLAYER, player_id, after, limit)


async def list_waiting(
    conn: Conn, player_id: UUID, after: After | None, limit: int
) -> list[ListedMatch]:
    """Matches still waiting for players, newest first: a lobby to join from; `limit` of them
    past `after`."""
    return await _page(conn, _WAITING, player_id, after, limit)
