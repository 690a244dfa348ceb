"""Helpers for the deletion tests: a match where the player is asked to act, and what a deleted
player still holds."""

import uuid
from typing import Any

import asyncpg

from tests.api.matches_helpers import act, read, start_match
from tests.http import Api


async def asked_match(api: Api, token: str, rival: str) -> tuple[str, dict[str, Any]]:
    """An active match of the player and its rival, moved on until the player is asked to act;
    (its id, the player's view of it)."""
    match_id = await start_match(api, [token, rival])
    while not (mine := await read(api, token, match_id))["legal_actions"]:
        theirs = await read(api, rival, match_id)
        moved = await act(api, rival, match_id, theirs["version"], theirs["legal_actions"][0])
        assert moved.status == 200, moved.body
    return match_id, mine


async def left_behind(pool: asyncpg.Pool, player_id: uuid.UUID) -> dict[str, int]:
    """What the player still holds in play: seats in matches not over, searching tickets, open
    runs, and whether it is alive."""
    row = await pool.fetchrow(
        """
        SELECT (SELECT count(*) FROM match_seats s JOIN matches m USING (match_id)
                 WHERE s.player_id = $1 AND m.status IN ('waiting', 'active')) AS seats,
               (SELECT count(*) FROM match_tickets
                 WHERE player_id = $1 AND status = 'searching') AS tickets,
               (SELECT count(*) FROM runs WHERE player_id = $1 AND status = 'shopping') AS runs,
               (SELECT count(*) FROM players
                 WHERE player_id = $1 AND deleted_at IS NULL) AS alive
        """,
        player_id,
    )
    return dict(row)


NOTHING = {"seats": 0, "tickets": 0, "runs": 0, "alive": 0}
