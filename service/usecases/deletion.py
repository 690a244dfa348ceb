"""Deleting a player (docs/api.md#deleting-an-account).

Everything happens in one transaction, so a process that dies halfway leaves nothing done and
the same request can be sent again; once it commits, every token of the player is refused, so
a repeat is a 401. In order, each step taking its locks as every other write does (a match or
a run before the player's row):

0. its tickets in the matchmaking queue are cancelled;
1. every match where the player holds a seat: an active one is resigned by the game's rule
   (its opponent wins, or the others play on), a waiting one is left (`play.resign_seat`);
2. every open run ends as an abandoned run ends, settling its rating (`idle_runs.ending`);
3. the player is anonymised: no name, no device, no session, no refresh token.

What others rely on stays: its ghosts and the battles fought against them, and finished
matches with their replays. A request of the player still in flight when the deletion commits
may land after it (a run started, a seat taken): such a run ends when left idle and such a
seat times out, as any other.
"""

from dataclasses import dataclass
from uuid import UUID

import asyncpg
from typing_extensions import TypedDict

from service.games.cryptids import run as rules
from service.store import deletion as store
from service.store import runs
from service.store.database import transaction
from service.usecases.errors import Conflict, Forbidden, Illegal
from service.usecases.idle_runs import ending
from service.usecases.matches import play
from service.usecases.sessions import refresh_hash

# How recent a sign-in must be to delete without a refresh token.
FRESH_SIGN_IN_SECONDS = 600


class Deleted(TypedDict):
    player_id: str
    runs_ended: int
    matches_resigned: int
    matches_left: int


@dataclass(frozen=True)
class Deletion:
    """The answer, and the sessions the deletion revoked (for this process to refuse at once)."""

    answer: Deleted
    sessions_revoked: list[UUID]


async def _refuse_stale(
    conn: asyncpg.Connection, player_id: UUID, signed_in_ago: float, refresh_token: str | None
) -> None:
    """A recent sign-in, or a refresh token of a live session, shows that whoever deletes holds
    more than an access token that may have leaked."""
    if signed_in_ago <= FRESH_SIGN_IN_SECONDS:
        return
    if refresh_token is not None and await store.live_refresh(
        conn, player_id, refresh_hash(refresh_token)
    ):
        return
    raise Forbidden(
        f"deleting needs a sign-in within the last {FRESH_SIGN_IN_SECONDS // 60} minutes, or"
        " the refresh_token of one of your sessions in the body",
        {"fresh_seconds": FRESH_SIGN_IN_SECONDS},
        code="reauthentication_required",
    )


async def _leave_matches(conn: asyncpg.Connection, player_id: UUID) -> tuple[int, int]:
    """(active matches resigned, waiting matches left)."""
    resigned = left = 0
    for match_id in await store.seated_matches(conn, player_id):
        try:
            done = await play.resign_seat(conn, player_id, match_id)
        except (Conflict, Forbidden, Illegal):
            # Since it was read: the match ended, the seat was left, or the seat is already
            # out of a match the others play on. Nothing was written.
            continue
        # A waiting match stays waiting, or expires with no player left.
        if done["status"] in ("active", "finished"):
            resigned += 1
        else:
            left += 1
    return resigned, left


async def _end_runs(conn: asyncpg.Connection, player_id: UUID) -> int:
    opened = await store.lock_open_runs(conn, player_id)
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
        await store.cancel_tickets(conn, player_id)
        resigned, left = await _leave_matches(conn, player_id)
        ended = await _end_runs(conn, player_id)
        revoked = await store.anonymise(conn, player_id)
    answer: Deleted = {
        "player_id": str(player_id),
        "runs_ended": ended,
        "matches_resigned": resigned,
        "matches_left": left,
    }
    return Deletion(answer, revoked)
