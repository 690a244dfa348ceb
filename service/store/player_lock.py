"""The player's row lock: how every write of a player is ordered against its deletion
(docs/api.md#deleting-an-account).

A write of a player (a run started or moved, a match created, joined or acted in, a ticket
queued or cancelled) takes its player's row FOR NO KEY UPDATE before any other lock, and
writes nothing if the player is deleted. A deletion takes the same lock first (after its turn
among deletions, store/deletion.py), so a write either commits before the deletion reads what
it must end, or waits for it and finds the player deleted.

The lock order, the same in every transaction, so that none waits in a cycle:
1. a deletion's turn among deletions (deletions only);
2. the player's row;
3. what the write changes: a ticket, a match or a run (a deletion: its tickets, then all of its
   matches, then all of its runs, each in id order);
4. last, rows many matches and runs share: roll-ups, ratings, the leaderboard's counts.

The idle-run sweep, which finds a run before its player, takes both together (in its turn
among sweeps) and skips either when another transaction holds it (store/runs.py
`claim_idle`), so it never waits out of order.
FOR NO KEY UPDATE does not conflict with the key checks of rows that point at the player (a
matcher seating it, another player's battle against its ghost), so those never wait for it.
"""

from uuid import UUID

import asyncpg

from service.store.params import named

# The first CTE of a write made in one statement, holding the lock `hold` takes: the rest of
# the statement writes only `WHERE EXISTS (SELECT FROM alive)`. Referenced once, from a
# condition that needs no row of the table written, it is read before any row is locked.
ALIVE = """alive AS (
    SELECT FROM players WHERE player_id = :player_id::uuid AND deleted_at IS NULL
       FOR NO KEY UPDATE)"""


_HOLD = named(
    "SELECT true FROM players WHERE player_id = :player_id AND deleted_at IS NULL FOR NO KEY UPDATE"
)


async def hold(conn: asyncpg.Connection, player_id: UUID) -> bool:
    """Lock the player's row until the transaction ends; False, locking nothing, when the player
    is deleted (a deletion that commits while this waits is seen)."""
    found = await conn.fetchval(_HOLD.sql, *_HOLD.args(player_id=player_id))
    return bool(found)
