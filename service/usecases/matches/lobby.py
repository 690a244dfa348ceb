"""Finding and filling matches: the games on offer, create, join, and the lists of matches.

Decisions where the issue is silent:
- A player holds at most one seat; joining again answers the seat already held (200).
- A seat's loadout is checked by the game's rules when the seat is taken: a refusal is a 422
  whose code names the rule and whose details name the card. A game with a loadout schema
  needs one from every player; bots bring the game's sample loadout, seeded one-way from the
  match seed and their seat.
- The game is set up when the last seat is taken, with every seat's loadout: until then the
  match has no state. A waiting match that does not fill within `wait_seconds` expires.
- Service events share the sequence with the game's: `seat_taken` {seat, bot} as seats fill,
  then `match_started` and the game's setup events when the last seat is filled.
"""

import secrets
from typing import Any, cast
from uuid import UUID

import asyncpg

from service.games.kernel.loadouts import LoadoutError
from service.games.kernel.protocol import Event, Game, GameError
from service.games.registry import describe, get_game
from service.store import matches as store
from service.store.database import transaction
from service.store.matches import SeatRow
from service.usecases import idempotency
from service.usecases.errors import Conflict, Illegal, NotFound
from service.usecases.matches.answers import (
    GameInfo,
    GameList,
    Joined,
    MatchList,
    joined,
    seat_of,
    summary,
)
from service.usecases.matches.progress import Progress, bot_loadout_seed


def games() -> GameList:
    return {"games": cast(list[GameInfo], describe())}


def _game(game_id: str, ruleset: str | None) -> Game[Any]:
    try:
        return get_game(game_id, ruleset)
    except GameError as exc:
        raise Illegal(exc.reason, code="unknown_game") from exc


def _loadout(game: Game[Any], loadout: Any, options: dict[str, Any]) -> Any:
    """The seat's loadout as the rules normalise it; a refusal names the rule and the card."""
    if loadout is None and game.loadout_schema() is not None:
        raise Illegal(f"{game.id} needs a loadout for each seat", code="missing_loadout")
    try:
        return game.validate_loadout(loadout, options)
    except LoadoutError as exc:
        raise Illegal(exc.message, exc.details, code=exc.code) from exc


def _start_if_full(progress: Progress) -> bool:
    """Start the match once no seat is free; True when bots still have moves to make."""
    if any(s.player_id is None and not s.bot for s in progress.seats):
        return False
    progress.activate()
    return progress.run_bots()


async def create(
    pool: asyncpg.Pool,
    player_id: UUID,
    *,
    game_id: str,
    ruleset: str | None,
    seats: int,
    options: dict[str, Any],
    bots: list[int],
    loadout: Any,
    turn_seconds: int | None,
    wait_seconds: float,
    idempotency_key: str | None,
) -> Joined:
    """A new match; the creator takes the first non-bot seat (none if every seat is a bot)."""
    game = _game(game_id, ruleset)
    try:
        resolved = game.check_options(seats, options)
    except GameError as exc:
        raise Illegal(exc.reason, code="invalid_match") from exc
    bad = [b for b in bots if not 0 <= b < seats]
    if bad or len(set(bots)) != len(bots):
        raise Illegal(
            f"bots must be distinct seat indexes in 0..{seats - 1}",
            {"bots": bots},
            code="invalid_bots",
        )
    creator = next((s for s in range(seats) if s not in bots), None)
    seed = secrets.randbits(64)
    loadouts = [
        game.sample_loadout(bot_loadout_seed(seed, s), resolved)
        if s in bots
        else _loadout(game, loadout, resolved)
        if s == creator
        else None
        for s in range(seats)
    ]
    seat_rows = [
        SeatRow(s, player_id if s == creator else None, s in bots, loadouts[s])
        for s in range(seats)
    ]
    request = {
        "game": game_id,
        "ruleset": ruleset,
        "seats": seats,
        "options": options,
        "bots": bots,
        "loadout": loadout,
        "turn_seconds": turn_seconds,
    }
    async with transaction(pool) as conn:

        async def write() -> Joined:
            match_id = await store.insert_match(
                conn,
                game=game.id,
                ruleset=game.ruleset,
                seed=seed,
                seats=seat_rows,
                options=resolved,
                turn_seconds=turn_seconds,
                created_by=player_id,
                expires_in_seconds=wait_seconds,
            )
            row = await store.lock(conn, match_id)
            assert row is not None
            progress = Progress.of(row, seat_rows)
            progress.emit(
                Event("seat_taken", {"seat": s.seat, "bot": s.bot})
                for s in seat_rows
                if s.bot or s.player_id is not None
            )
            await progress.save(conn, _start_if_full(progress))
            return joined(match_id, creator, progress.version, progress.status)

        return await idempotency.write_once(
            conn, player_id, idempotency_key, "create-match", request, write
        )


async def join(
    pool: asyncpg.Pool,
    player_id: UUID,
    match_id: UUID,
    loadout: Any,
    idempotency_key: str | None = None,
) -> Joined:
    """Take the lowest free seat with `loadout`; a player already seated gets its seat back."""
    async with transaction(pool) as conn:

        async def write() -> Joined:
            return await _take_seat(conn, player_id, match_id, loadout)

        scope = f"join:{match_id}"
        request = {"loadout": loadout}
        return await idempotency.write_once(conn, player_id, idempotency_key, scope, request, write)


async def _take_seat(
    conn: asyncpg.Connection, player_id: UUID, match_id: UUID, loadout: Any
) -> Joined:
    """The lowest free seat, taken under the match's lock; the last one starts the match."""
    row = await store.lock(conn, match_id)
    if row is None:
        raise NotFound("no such match")
    seats = await store.seats(conn, match_id)
    held = seat_of(seats, player_id)
    if held is not None:
        return joined(match_id, held, row.version, row.status)
    free = [s.seat for s in seats if not s.bot and s.player_id is None]
    if not free:
        raise Conflict("every seat of this match is taken", code="match_full")
    if row.status != "waiting":
        raise Conflict(f"the match is {row.status}", code="match_not_open")
    progress = Progress.of(row, seats)
    mine = _loadout(progress.game, loadout, row.options)
    seat = free[0]
    await store.take_seat(conn, match_id, seat, player_id, mine)
    seats[seat] = SeatRow(seat, player_id, False, mine)
    progress.emit([Event("seat_taken", {"seat": seat, "bot": False})])
    await progress.save(conn, _start_if_full(progress))
    return joined(match_id, seat, progress.version, progress.status)


async def list_matches(pool: asyncpg.Pool, player_id: UUID, mine: bool, limit: int) -> MatchList:
    """Your matches (`mine`), or the waiting ones you could join; newest first."""
    if mine:
        listed = await store.list_for_player(pool, player_id, limit)
    else:
        listed = await store.list_waiting(pool, player_id, limit)
    return {"matches": [summary(m) for m in listed]}
