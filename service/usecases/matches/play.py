"""Playing a match: read it, act at the version you saw, resign.

An action reads the match, its seats and the request's key in one statement, checks the
caller's seat and version, applies the game's pure rules, and stores everything in a second
statement that is its own transaction: the new cached state, the action log, the numbered
events, the seats' prompts, the key's answer and the NOTIFY (delivered on commit), all only if
the match is still at the version and sequence it was read at; otherwise it is read again
under its lock (`usecases/writes.py`). On a match this instance wrote last, the first attempt
decides on that copy instead of reading (cache.py). Resigning locks the match row
(SELECT … FOR UPDATE) for its transaction. Every write of a player holds its row before the
match's, and a deleted player's is refused (`usecases/player_lock.py`).

Decisions where the issue is silent:
- `version` counts the actions applied (players', bots', timeouts', resignations). A seat's
  action carries the version it saw; it is stale (409) when that seat's prompt has changed
  since (the seat's `guard`), not when only other seats have moved on. A version the match
  has not reached is `version_ahead`, not stale.
- Acting in a match that is waiting, finished or expired is 409 `match_not_active`.
- Resigning an active match applies the game's rule (the seat loses or leaves; the others go
  on or the match ends); resigning a waiting match frees the seat, and a player's waiting
  match left with no player expires at once (an operator's waits for its players until due).
- A turn timer restarts at every action; when it runs out, every human seat still asked to
  act gets the game's `timeout_action` (sweeper.py).
- Bots act in the same transaction, at most MAX_BOT_ACTIONS of them (progress.py); the rest
  is left to the sweeper, so a bot-only match finishes in a few sweeps.
"""

from dataclasses import dataclass
from typing import Any
from uuid import UUID

import asyncpg

from service.games.kernel.protocol import Event, GameError, IllegalAction
from service.store import matches as store
from service.store.database import transaction
from service.store.matches import MatchRow, SeatRow
from service.usecases import idempotency, player_lock
from service.usecases.errors import Conflict, Forbidden, Illegal, NotFound
from service.usecases.matches.answers import (
    ActionDone,
    MatchState,
    action_done,
    match_state,
    seat_of,
)
from service.usecases.matches.cache import MatchCache
from service.usecases.matches.progress import Progress
from service.usecases.writes import checked_write


async def read(pool: asyncpg.Pool, player_id: UUID, match_id: UUID) -> MatchState:
    """The match as `player_id` may see it: its seat's view and prompt, or a spectator's."""
    async with transaction(pool, isolation="repeatable_read") as conn:
        row = await store.get(conn, match_id)
        if row is None:
            raise NotFound("no such match")
        seats = await store.seats(conn, match_id)
    return match_state(Progress.of(row, seats), player_id)


async def _seated(
    conn: asyncpg.Connection, player_id: UUID, match_id: UUID
) -> tuple[MatchRow, list[SeatRow], int]:
    row = await store.lock(conn, match_id)
    if row is None:
        raise NotFound("no such match")
    seats = await store.seats(conn, match_id)
    return row, seats, _seat_of_caller(seats, player_id)


def _seat_of_caller(seats: list[SeatRow], player_id: UUID) -> int:
    seat = seat_of(seats, player_id)
    if seat is None:
        raise Forbidden("you hold no seat in this match", code="not_seated")
    return seat


def _refuse_inactive(row: MatchRow) -> None:
    if row.status != "active":
        raise Conflict(f"the match is {row.status}", code="match_not_active")


def _refuse_stale(row: MatchRow, seat: SeatRow, version: int) -> None:
    """The seat must have seen its prompt as it is now: not older than its guard, and not a
    version the match has not reached (which no answer ever showed, so it is not stale)."""
    if version > row.version:
        raise Conflict(
            f"version {version} is ahead of the match, which is at version {row.version}",
            {"version": row.version, "guard": seat.guard},
            code="version_ahead",
        )
    if version < seat.guard:
        raise Conflict(
            f"version {version} is stale for seat {seat.seat}: its prompt changed at"
            f" version {seat.guard}; the match is at {row.version}",
            {"version": row.version, "guard": seat.guard},
            code="stale_version",
        )


@dataclass(frozen=True)
class Acted:
    """An action's answer, and which of the match's events it holds for the acting seat."""

    answer: ActionDone
    # Every event past `since` up to `last_seq` that the seat may see; None for an answer kept
    # under its key and returned again, which may be older than events already delivered.
    covers: tuple[int, int] | None


async def act(
    pool: asyncpg.Pool,
    player_id: UUID,
    match_id: UUID,
    *,
    version: int,
    action: dict[str, Any],
    idempotency_key: str | None,
    cache: MatchCache | None = None,
) -> Acted:
    """Apply the caller's action at `version`, then any bot moves it leads to.

    With a `cache` holding the match, the first attempt decides on it instead of reading: its
    write lands only if the match has not moved since, and a refusal is decided again on a read.
    """
    request = {"version": version, "action": action}
    keyed = idempotency.keyed_request(idempotency_key, f"match-action:{match_id}", request)

    async def attempt(conn: asyncpg.Connection, lock: bool) -> Acted | None:
        if lock:
            await player_lock.hold(conn, player_id)
        elif cache is not None and (cached := cache.get(match_id)) is not None:
            try:
                return await decide(conn, cached.row, list(cached.seats))
            except (Conflict, Forbidden, Illegal):
                # The cached match may be behind the one that refuses, or not refuse at all.
                cache.drop(match_id)
        found = await store.for_write(
            conn, match_id, player_id, None if keyed is None else keyed.key, lock=lock
        )
        if found is None:
            raise NotFound("no such match")
        player_lock.refuse_gone(found.player_gone)
        answered: ActionDone | None = idempotency.answer_for_retry(keyed, found.kept)
        if answered is not None:
            return Acted(answered, None)
        return await decide(conn, found.row, found.seats)

    async def decide(conn: asyncpg.Connection, row: MatchRow, seats: list[SeatRow]) -> Acted | None:
        seat = _seat_of_caller(seats, player_id)
        _refuse_inactive(row)
        _refuse_stale(row, seats[seat], version)
        progress = Progress.of(row, seats)
        to_act = progress.to_act()
        if seat not in to_act:
            raise Forbidden(
                f"seat {seat} may not act now", {"to_act": to_act}, code="not_your_turn"
            )
        try:
            progress.apply(seat, action, "player")
        except IllegalAction as exc:
            raise refused(exc) from exc
        bots_pending = progress.run_bots()
        answer = action_done(progress, seat)
        to_keep = idempotency.answer_to_keep(keyed, answer)
        saved = await progress.save_if_unmoved(conn, bots_pending, player_id, to_keep)
        if cache is not None:
            if saved is None:
                cache.drop(match_id)
            else:
                cache.keep(*store.after_save(row, seats, saved))
        return None if saved is None else Acted(answer, (row.last_seq, progress.last_seq))

    return await checked_write(pool, attempt, "the match")


async def prefer(
    pool: asyncpg.Pool,
    player_id: UUID,
    match_id: UUID,
    preferences: dict[str, Any],
    *,
    idempotency_key: str | None,
) -> ActionDone:
    """Set your seat's standing preferences in an active match (the game's
    `preferences_schema`); the game acts on them at once where they already apply."""
    async with transaction(pool) as conn:
        await player_lock.hold(conn, player_id)

        async def write() -> ActionDone:
            row, seats, seat = await _seated(conn, player_id, match_id)
            _refuse_inactive(row)
            progress = Progress.of(row, seats)
            try:
                progress.prefer(seat, preferences)
            except IllegalAction as exc:
                raise refused(exc) from exc
            await progress.save(conn, progress.run_bots())
            return action_done(progress, seat)

        return await idempotency.write_once(
            conn, player_id, idempotency_key, f"match-prefer:{match_id}", preferences, write
        )


def refused(exc: IllegalAction) -> Illegal:
    """A rules refusal on the wire: `details.reason` is its stable code, with what helps."""
    return Illegal(exc.reason, {"reason": exc.code, **exc.details}, code="illegal_action")


async def resign_seat(conn: asyncpg.Connection, player_id: UUID, match_id: UUID) -> ActionDone:
    """Give up the player's seat, the match locked until the transaction ends: by the game's
    rule in an active match; a waiting one frees it."""
    row, seats, seat = await _seated(conn, player_id, match_id)
    progress = Progress.of(row, seats)
    if row.status == "waiting":
        await store.leave_seat(conn, match_id, seat)
        seats[seat] = SeatRow(seat, None, False)
        progress.emit([Event("seat_left", {"seat": seat})])
        # A player's match left with no player expires; an operator's waits for its
        # players until it is due (a lesson is not ended by one who leaves it).
        if row.created_by is not None and all(s.player_id is None for s in seats):
            progress.expire()
        await progress.save(conn, False)
        return action_done(progress, seat)
    _refuse_inactive(row)
    try:
        progress.resign(seat)
    except GameError as exc:
        raise Illegal(exc.reason, code="cannot_resign") from exc
    await progress.save(conn, progress.run_bots())
    return action_done(progress, seat)


async def resign(
    pool: asyncpg.Pool, player_id: UUID, match_id: UUID, *, idempotency_key: str | None
) -> ActionDone:
    """Give up your seat: by the game's rule in an active match; a waiting one frees it."""
    async with transaction(pool) as conn:
        await player_lock.hold(conn, player_id)

        async def write() -> ActionDone:
            return await resign_seat(conn, player_id, match_id)

        return await idempotency.write_once(
            conn, player_id, idempotency_key, f"match-resign:{match_id}", {}, write
        )
