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

What one player may cost, and what only an operator may do:
- A player's match has a seat for that player: bots alone would be the server's work from
  start to end for nobody (422 `bots_only`). An operator's match (`create_for_operator`) may
  seat bots only, or leave every seat to the players who join.
- A public deal (an option whose value chooses the cards, `PUBLIC_DEALS`) reveals every hand and
  draw to anyone who knows it, and would let a creator search offline for a deal that favours
  its own seat: only an operator sets one (422 `public_deal` for a player), and the lobby says
  what it reveals (`notices`).
- A player holds seats in at most `max_waiting` waiting matches and `max_open` matches not over
  (waiting or active, so that a match filling up never puts anyone over); a create or join past
  either is a 409 naming the cap and the matches held. Counted under a lock of the player's row,
  which every write of a player holds before the match's (a deleted player's is refused,
  `usecases/player_lock.py`).
- The lists are pages newest first after an opaque cursor: the lobby by the match's creation,
  your own list by when you took your seat, both read from an index.
"""

import base64
import binascii
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple, cast
from uuid import UUID

import asyncpg

from service.games.kernel.loadouts import LoadoutError
from service.games.kernel.protocol import Event, Game, GameError
from service.games.registry import describe, get_game
from service.store import match_lists
from service.store import matches as store
from service.store.database import transaction
from service.store.match_lists import After, ListedMatch
from service.store.matches import SeatRow
from service.usecases import idempotency, player_lock
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

# Per game, the option that makes its deal public when it is not the default: whoever knows the
# value can compute every hand and draw (docs/rules/fate-duel.md#the-fate-deck).
PUBLIC_DEALS = {"fate-duel": "deal"}


@dataclass(frozen=True)
class Caps:
    """Seats one player may hold: in waiting matches, and in matches not over."""

    max_waiting: int
    max_open: int


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


def _public_deal(game: Game[Any], options: dict[str, Any]) -> int | None:
    """The match's public deal, or None when its chance comes from the secret seed."""
    option = PUBLIC_DEALS.get(game.id)
    if option is None:
        return None
    value = options.get(option)
    default = game.options_schema()[option].get("default")
    return None if value == default else cast(int, value)


def notices(match: ListedMatch) -> list[str]:
    """What a joiner should know before joining, in plain words."""
    deal = _public_deal(get_game(match.game, match.ruleset), match.options)
    if deal is None:
        return []
    return [
        f"public deal {deal}: anyone who knows this number can compute every hand, deck and"
        " draw of this match"
    ]


def refuse_over_caps(held: store.HeldSeats, caps: Caps, waits: bool) -> None:
    """409 when one more seat, in a match that `waits` for players or not, breaks a cap; a
    searching ticket counts as a seat in a waiting match."""
    open_matches = held.waiting + held.active
    if len(open_matches) + len(held.searching) >= caps.max_open:
        raise Conflict(
            f"you hold seats in {len(open_matches)} matches not over and"
            f" {len(held.searching)} searching tickets, the most one player may",
            _held_details(caps.max_open, open_matches, held.searching),
            code="too_many_open_matches",
        )
    if waits and len(held.waiting) + len(held.searching) >= caps.max_waiting:
        raise Conflict(
            f"you hold seats in {len(held.waiting)} waiting matches and"
            f" {len(held.searching)} searching tickets, the most one player may",
            _held_details(caps.max_waiting, held.waiting, held.searching),
            code="too_many_waiting_matches",
        )


def _held_details(limit: int, matches: list[UUID], tickets: list[UUID]) -> dict[str, Any]:
    return {
        "limit": limit,
        "matches": [str(m) for m in matches],
        "tickets": [str(t) for t in tickets],
    }


@dataclass(frozen=True)
class NewMatch:
    """What a create asks for, by a player or an operator."""

    game_id: str
    ruleset: str | None
    seats: int
    options: dict[str, Any]
    bots: list[int]
    turn_seconds: int | None
    wait_seconds: float


def _checked(new: NewMatch) -> tuple[Game[Any], dict[str, Any]]:
    """The game and the options resolved; a bad game, option or bot seat is a 422."""
    game = _game(new.game_id, new.ruleset)
    try:
        resolved = game.check_options(new.seats, new.options)
    except GameError as exc:
        raise Illegal(exc.reason, code="invalid_match") from exc
    bad = [b for b in new.bots if not 0 <= b < new.seats]
    if bad or len(set(new.bots)) != len(new.bots):
        raise Illegal(
            f"bots must be distinct seat indexes in 0..{new.seats - 1}",
            {"bots": new.bots},
            code="invalid_bots",
        )
    return game, resolved


class PlayerMatch(NamedTuple):
    """A player's match as the rules accept it: the game, the options resolved, the player's
    seat (the first that is not a bot's) and its loadout as the rules normalise it."""

    game: Game[Any]
    options: dict[str, Any]
    seat: int
    loadout: Any


def check_player_match(new: NewMatch, loadout: Any) -> PlayerMatch:
    """Everything a player's match must pass before anything is stored; a refusal is a 422."""
    game, resolved = _checked(new)
    seat = next((s for s in range(new.seats) if s not in new.bots), None)
    if seat is None:
        raise Illegal(
            "a match needs a seat for you: only an operator makes a match of bots alone",
            {"bots": new.bots},
            code="bots_only",
        )
    deal = _public_deal(game, resolved)
    if deal is not None:
        raise Illegal(
            "a public deal reveals every hand and draw to anyone who knows it, and may be"
            " chosen to favour a seat: only an operator makes a match with one",
            {"option": PUBLIC_DEALS[game.id], "value": deal},
            code="public_deal",
        )
    return PlayerMatch(game, resolved, seat, _loadout(game, loadout, resolved))


class Creator(NamedTuple):
    """A player seated as the match is made, with its checked loadout."""

    player_id: UUID
    seat: int
    loadout: Any


async def insert(
    conn: asyncpg.Connection,
    new: NewMatch,
    game: Game[Any],
    resolved: dict[str, Any],
    seated: Sequence[Creator],
) -> Joined:
    """The match, with its bots and the `seated` players (the creator; the players matchmaking
    grouped; none for an operator's) in their seats; started at once when no seat is left free.
    The first seated player is the match's creator, and its seat is the answer's."""
    seed = secrets.randbits(64)
    players = {p.seat: p for p in seated}
    seat_rows = []
    for s in range(new.seats):
        if s in new.bots:
            bot = game.sample_loadout(bot_loadout_seed(seed, s), resolved)
            seat_rows.append(SeatRow(s, None, True, bot))
        elif s in players:
            seat_rows.append(SeatRow(s, players[s].player_id, False, players[s].loadout))
        else:
            seat_rows.append(SeatRow(s, None, False, None))
    creator = seated[0] if seated else None
    match_id = await store.insert_match(
        conn,
        game=game.id,
        ruleset=game.ruleset,
        seed=seed,
        seats=seat_rows,
        options=resolved,
        turn_seconds=new.turn_seconds,
        created_by=None if creator is None else creator.player_id,
        expires_in_seconds=new.wait_seconds,
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
    seat = None if creator is None else creator.seat
    return joined(match_id, seat, progress.version, progress.status)


async def create(
    pool: asyncpg.Pool,
    player_id: UUID,
    new: NewMatch,
    *,
    loadout: Any,
    caps: Caps,
    idempotency_key: str | None,
) -> Joined:
    """A new match; the creator takes the first non-bot seat, and there must be one."""
    checked = check_player_match(new, loadout)
    game, resolved = checked.game, checked.options
    creator = Creator(player_id, checked.seat, checked.loadout)
    request = {
        "game": new.game_id,
        "ruleset": new.ruleset,
        "seats": new.seats,
        "options": new.options,
        "bots": new.bots,
        "loadout": loadout,
        "turn_seconds": new.turn_seconds,
    }
    waits = len(new.bots) + 1 < new.seats
    async with transaction(pool) as conn:
        await player_lock.hold(conn, player_id)

        async def write() -> Joined:
            refuse_over_caps(await store.held_seats(conn, player_id), caps, waits)
            return await insert(conn, new, game, resolved, [creator])

        return await idempotency.write_once(
            conn, player_id, idempotency_key, "create-match", request, write
        )


async def create_for_operator(pool: asyncpg.Pool, new: NewMatch) -> Joined:
    """An operator's match: bots in `bots`, every other seat free for players to join; it may
    seat bots only and use a public deal. It belongs to no player and counts against nobody."""
    game, resolved = _checked(new)
    async with transaction(pool) as conn:
        return await insert(conn, new, game, resolved, [])


async def join(
    pool: asyncpg.Pool,
    player_id: UUID,
    match_id: UUID,
    loadout: Any,
    caps: Caps,
    idempotency_key: str | None = None,
) -> Joined:
    """Take the lowest free seat with `loadout`; a player already seated gets its seat back."""
    async with transaction(pool) as conn:
        await player_lock.hold(conn, player_id)

        async def write() -> Joined:
            return await _take_seat(conn, player_id, match_id, loadout, caps)

        scope = f"join:{match_id}"
        request = {"loadout": loadout}
        return await idempotency.write_once(conn, player_id, idempotency_key, scope, request, write)


async def _take_seat(
    conn: asyncpg.Connection, player_id: UUID, match_id: UUID, loadout: Any, caps: Caps
) -> Joined:
    """The lowest free seat, taken under the match's lock (the player's row is held already);
    the last one starts the match."""
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
    refuse_over_caps(await store.held_seats(conn, player_id), caps, waits=len(free) > 1)
    seat = free[0]
    await store.take_seat(conn, match_id, seat, player_id, mine)
    seats[seat] = SeatRow(seat, player_id, False, mine)
    progress.emit([Event("seat_taken", {"seat": seat, "bot": False})])
    await progress.save(conn, _start_if_full(progress))
    return joined(match_id, seat, progress.version, progress.status)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def _cursor(mine: bool, match: ListedMatch) -> str:
    """An opaque cursor past `match`: the list it belongs to, its time in µs and its id."""
    micros = (match.listed_at - _EPOCH) // _MICROSECOND
    text = f"{'m' if mine else 'w'}.{micros}.{match.match_id.hex}"
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _after(mine: bool, cursor: str | None) -> After | None:
    """Where the page after `cursor` starts; a cursor not given by this list is a 422."""
    if cursor is None:
        return None
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        kind, micros, match_id = text.split(".")
        if kind != ("m" if mine else "w"):
            raise ValueError(kind)
        return After(_EPOCH + int(micros) * _MICROSECOND, UUID(hex=match_id))
    except (ValueError, UnicodeDecodeError, binascii.Error, OverflowError) as exc:
        raise Illegal(
            "cursor: not a cursor this list gave (pass `next` from its last page as it is)",
            {"fields": [{"field": "query.cursor", "message": "not a cursor of this list"}]},
            code="invalid_cursor",
        ) from exc


async def list_matches(
    pool: asyncpg.Pool, player_id: UUID, mine: bool, limit: int, cursor: str | None = None
) -> MatchList:
    """Your matches (`mine`), or the waiting ones you could join; newest first, `limit` of them
    past `cursor`, with the cursor of the next page when there is one."""
    after = _after(mine, cursor)
    if mine:
        listed = await match_lists.list_for_player(pool, player_id, after, limit + 1)
    else:
        listed = await match_lists.list_waiting(pool, player_id, after, limit + 1)
    page = listed[:limit]
    return {
        "matches": [summary(m, notices(m)) for m in page],
        "next": _cursor(mine, page[-1]) if len(listed) > limit else None,
    }
