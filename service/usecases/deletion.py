"""Deleting a player (docs/api.md#deleting-an-account).

Everything happens in one transaction, so a process that dies halfway leaves nothing done and
the same request can be sent again; once it commits, every token of the player is refused, so
a repeat is a 401. Its locks come first, in the order every write takes them
(service/store/player_lock.py), and the changes that write rows other matches and runs share
(roll-ups, ratings) only once it holds them all:

0. its turn among deletions: they go one at a time, since each may end several matches, whose
   roll-ups and ratings share rows with other matches' in crossing orders;
1. the player's row: a write of the player in flight commits first, and what it left is ended
   below; one that comes later waits and is refused (401), so nothing of the player lands
   after this;
2. its tickets in the matchmaking queue are cancelled (a matcher holding one is waited for, and
   the match it made is then seen);
3. every waiting or active match where it holds a seat, then every open run, each in id order;

then, holding them all:

4. each match: an active one is resigned by the game's rule (its opponent wins, or the others
   play on), a waiting one is left (`play.resign_seat`);
5. each open run ends as an abandoned run ends, settling its rating (`idle_runs.ending`);
6. the player is anonymised: no name, no device, no session, no refresh token.

What others rely on stays: its ghosts and the battles fought against them, and finished
matches with their replays.
"""

from dataclasses import dataclass
from uuid import UUID

import asyncpg
from typing_extensions import TypedDict

from service.games.cryptids import run as rules
from service.store import deletion as store
from service.store import runs
from service.store.database import transaction
from service.usecases import player_lock, sessions
from service.usecases.errors import Illegal
from service.usecases.idle_runs import ending
from service.usecases.matches import play

# How recent a sign-in must be to delete without a refresh token: as for every change of who
# holds the account.
FRESH_SIGN_IN_SECONDS = sessions.FRESH_SIGN_IN_SECONDS


class Deleted(TypedDict):
    player_id: str
    runs_ended: int
    matches_resigned: int
    matches_left: int


@dataclass(frozen=True)
class Deletion:
    """The answer, and the time (epoch seconds, the database's clock) before which every token
    of the player is refused, for this process to refuse them at once."""

    answer: Deleted
    tokens_after: float


async def _refuse_stale(
    conn: asyncpg.Connection, player_id: UUID, signed_in_ago: float, refresh_token: str | None
) -> None:
    """A recent sign-in, or a refresh token of a live session, shows that whoever deletes holds
    more than an access token that may have leaked."""
    proof = sessions.Proof(signed_in_ago, refresh_token)
    await sessions.require_recent_sign_in(conn, player_id, proof, "deleting")


async def _leave_matches(
    conn: asyncpg.Connection, player_id: UUID, matches: list[UUID]
) -> tuple[int, int]:
    """(active matches resigned, waiting matches left), of the matches locked."""
    resigned = left = 0
    for match_id in matches:
        try:
            done = await play.resign_seat(conn, player_id, match_id)
        except Illegal:
            # The seat is already out of a match the others play on. Nothing was written.
            continue
        # A waiting match stays waiting, or expires with no player left.
        if done["status"] in ("active", "finished"):
            resigned += 1
        else:
            left += 1
    return resigned, left


async def _end_runs(conn: asyncpg.Connection, player_id: UUID, opened: list[store.OpenRun]) -> int:
    if not opened:
        return 0
    ended = [ending(r.run_id, player_id, r.ruleset, r.rating_change) for r in opened]
    return await runs.abandon(conn, ended, rules.ABANDONED)


async def delete_player(
    pool: asyncpg.Pool, player_id: UUID, *, signed_in_ago: float, refresh_token: str | None
) -> Deletion:
    """Delete the player, as the module says; `signed_in_ago` is the age of the access token
    the request came with, in seconds."""
    async with transaction(pool) as conn:
        await _refuse_stale(conn, player_id, signed_in_ago, refresh_token)
        await store.take_turn(conn)
        # A deletion that committed while this one waited: the player is gone (401).
        await player_lock.hold(conn, player_id)
        await store.cancel_tickets(conn, player_id)
        matches = await store.lock_seated_matches(conn, player_id)
        opened = await store.lock_open_runs(conn, player_id)
        resigned, left = await _leave_matches(conn, player_id, matches)
        ended = await _end_runs(conn, player_id, opened)
        tokens_after = await store.anonymise(conn, player_id)
    answer: Deleted = {
        "player_id": str(player_id),
        "runs_ended": ended,
        "matches_resigned": resigned,
        "matches_left": left,
    }
    return Deletion(answer, tokens_after)
