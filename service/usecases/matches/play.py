"""Match use-cases: create, join, read, act, follow events, replay; timers and bots.

Every write is one transaction that locks the match row (SELECT … FOR UPDATE), checks the
caller's version, applies the game's pure rules, appends to the action log and the numbered
events, caches the new state, and sends NOTIFY, which PostgreSQL delivers only on commit.

Decisions where the issue is silent:
- `version` counts the actions applied (players', bots' and timeouts'); a stale one is 409.
- A player holds at most one seat; joining again answers the seat already held (200).
- Acting in a match that is waiting or finished is 409 `match_not_active`.
- Service events share the sequence with the game's: `seat_taken` {seat, bot} as seats fill,
  then `match_started` and the game's setup events when the last seat is filled.
- A turn timer restarts at every action; when it runs out, every human seat still asked to
  act gets the game's `timeout_action`.
- Bots act in the same transaction, at most MAX_BOT_ACTIONS of them (progress.py); the rest
  is left to the sweeper (sweeper.py: the match is marked due at once), so a bot-only match
  finishes in a few sweeps.
- A replay is open to any player once the match is finished.
"""

import asyncio
import secrets
from collections.abc import AsyncGenerator, Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import Annotated, Any, cast
from uuid import UUID

import asyncpg
from pydantic import Field
from typing_extensions import TypedDict

from service.games.kernel.protocol import Event, Game, GameError, IllegalAction, rebuild
from service.games.registry import describe, get_game
from service.store import matches as store
from service.store.matches import MatchRow, SeatRow
from service.store.notify import Hub
from service.usecases import idempotency
from service.usecases.errors import Conflict, Forbidden, Illegal, NotFound
from service.usecases.matches.progress import Progress, WireEvent, event_wire

EVENT_PAGE = 500
# A follower re-reads this often even without a notification, in case one was lost.
RECHECK_SECONDS = 15.0


class GameInfo(TypedDict):
    id: str
    ruleset: str
    min_seats: int
    max_seats: int
    options: dict[str, Any]


class GameList(TypedDict):
    games: list[GameInfo]


class Joined(TypedDict):
    match_id: str
    seat: Annotated[int | None, Field(description="your seat; null when every seat is a bot")]
    version: int
    status: str


class SeatInfo(TypedDict):
    seat: int
    player_id: str | None
    bot: bool


class MatchState(TypedDict):
    match_id: str
    game: str
    ruleset: str
    status: str
    version: int
    seat: Annotated[int | None, Field(description="your seat; null for a spectator")]
    seats: list[SeatInfo]
    to_act: list[int]
    view: dict[str, Any]
    legal_actions: list[dict[str, Any]]
    turn_seconds: int | None
    turn_deadline: str | None
    outcome: dict[str, Any] | None


class ActionDone(TypedDict):
    version: int
    status: str
    events: list[WireEvent]
    view: dict[str, Any]
    to_act: list[int]
    legal_actions: list[dict[str, Any]]
    outcome: dict[str, Any] | None


class EventBatch(TypedDict):
    events: list[WireEvent]
    last_seq: Annotated[int, Field(description="pass as `after` next time")]
    status: str
    version: int


class ReplayEvent(WireEvent):
    visible_to: list[int] | None


class ReplayAction(TypedDict):
    version: int
    seat: int
    action: dict[str, Any]
    source: str


class MatchReplay(TypedDict):
    match_id: str
    game: str
    ruleset: str
    seed: int
    seats: list[SeatInfo]
    options: dict[str, Any]
    actions: list[ReplayAction]
    events: list[ReplayEvent]
    final: dict[str, Any]
    outcome: dict[str, Any] | None


def games() -> GameList:
    return {"games": cast(list[GameInfo], describe())}


def _seat_of(seats: Sequence[SeatRow], player_id: UUID) -> int | None:
    return next((s.seat for s in seats if s.player_id == player_id), None)


def _seats_wire(seats: Sequence[SeatRow]) -> list[SeatInfo]:
    return [
        {
            "seat": s.seat,
            "player_id": None if s.player_id is None else str(s.player_id),
            "bot": s.bot,
        }
        for s in seats
    ]


def _match_view(
    row: MatchRow, seats: Sequence[SeatRow], game: Game[Any], state: Any, player_id: UUID
) -> MatchState:
    seat = _seat_of(seats, player_id)
    active = row.status == "active"
    return {
        "match_id": str(row.match_id),
        "game": row.game,
        "ruleset": row.ruleset,
        "status": row.status,
        "version": row.version,
        "seat": seat,
        "seats": _seats_wire(seats),
        "to_act": game.to_act(state) if active else [],
        "view": game.view(state, seat),
        "legal_actions": game.legal_actions(state, seat) if active and seat is not None else [],
        "turn_seconds": row.turn_seconds,
        "turn_deadline": _deadline(row),
        "outcome": row.outcome,
    }


def _deadline(row: MatchRow) -> str | None:
    if row.turn_seconds is None or row.due_at is None:
        return None
    return row.due_at.isoformat()


def _joined(match_id: UUID, seat: int | None, version: int, status: str) -> Joined:
    return {"match_id": str(match_id), "seat": seat, "version": version, "status": status}


async def create(
    pool: asyncpg.Pool,
    player_id: UUID,
    *,
    game_id: str,
    seats: int,
    options: dict[str, Any],
    bots: list[int],
    turn_seconds: int | None,
    idempotency_key: str | None,
) -> Joined:
    """A new match; the creator takes the first non-bot seat (none if every seat is a bot)."""
    try:
        game = get_game(game_id)
    except GameError as exc:
        raise Illegal(exc.reason, code="unknown_game") from exc
    seed = secrets.randbits(64)
    try:
        state = game.setup(seed, seats, options)
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
    seat_rows = [SeatRow(s, player_id if s == creator else None, s in bots) for s in range(seats)]
    request = {
        "game": game_id,
        "seats": seats,
        "options": options,
        "bots": bots,
        "turn_seconds": turn_seconds,
    }
    async with pool.acquire() as conn, conn.transaction():

        async def write() -> Joined:
            match_id = await store.insert_match(
                conn,
                game=game.id,
                ruleset=game.ruleset,
                seed=seed,
                seats=seat_rows,
                options=options,
                state=game.dump_state(state),
                turn_seconds=turn_seconds,
                created_by=player_id,
            )
            row = await store.lock(conn, match_id)
            assert row is not None
            progress = Progress.of(row, seat_rows)
            progress.emit(
                Event("seat_taken", {"seat": s.seat, "bot": s.bot})
                for s in seat_rows
                if s.bot or s.player_id is not None
            )
            bots_pending = False
            if creator is None or seats - len(bots) == 1:
                progress.activate()
                bots_pending = progress.run_bots()
            await progress.save(conn, bots_pending)
            return _joined(match_id, creator, progress.version, progress.status)

        return await idempotency.once(
            conn, player_id, idempotency_key, "create-match", request, write
        )


async def join(pool: asyncpg.Pool, player_id: UUID, match_id: UUID) -> Joined:
    """Take the lowest free seat; a player already seated gets its seat back."""
    async with pool.acquire() as conn, conn.transaction():
        row = await store.lock(conn, match_id)
        if row is None:
            raise NotFound("no such match")
        seats = await store.seats(conn, match_id)
        held = _seat_of(seats, player_id)
        if held is not None:
            return _joined(match_id, held, row.version, row.status)
        free = [s.seat for s in seats if not s.bot and s.player_id is None]
        if not free:
            raise Conflict("every seat of this match is taken", code="match_full")
        seat = free[0]
        await store.take_seat(conn, match_id, seat, player_id)
        seats[seat] = SeatRow(seat, player_id, False)
        progress = Progress.of(row, seats)
        progress.emit([Event("seat_taken", {"seat": seat, "bot": False})])
        bots_pending = False
        if len(free) == 1:
            progress.activate()
            bots_pending = progress.run_bots()
        await progress.save(conn, bots_pending)
        return _joined(match_id, seat, progress.version, progress.status)


async def read(pool: asyncpg.Pool, player_id: UUID, match_id: UUID) -> MatchState:
    """The match as `player_id` may see it: its seat's view, or a spectator's."""
    async with pool.acquire() as conn, conn.transaction(isolation="repeatable_read"):
        row = await store.get(conn, match_id)
        if row is None:
            raise NotFound("no such match")
        seats = await store.seats(conn, match_id)
    game = get_game(row.game)
    return _match_view(row, seats, game, game.load_state(row.state), player_id)


async def act(
    pool: asyncpg.Pool,
    player_id: UUID,
    match_id: UUID,
    *,
    version: int,
    action: dict[str, Any],
    idempotency_key: str | None,
) -> ActionDone:
    """Apply the caller's action at `version`, then any bot moves it leads to."""
    async with pool.acquire() as conn, conn.transaction():

        async def write() -> ActionDone:
            row = await store.lock(conn, match_id)
            if row is None:
                raise NotFound("no such match")
            seats = await store.seats(conn, match_id)
            seat = _seat_of(seats, player_id)
            if seat is None:
                raise Forbidden("you hold no seat in this match", code="not_seated")
            if row.status != "active":
                raise Conflict(f"the match is {row.status}", code="match_not_active")
            if version != row.version:
                raise Conflict(
                    f"version {version} is stale; the match is at {row.version}",
                    {"version": row.version},
                    code="stale_version",
                )
            progress = Progress.of(row, seats)
            to_act = progress.to_act()
            if seat not in to_act:
                raise Forbidden(
                    f"seat {seat} may not act now", {"to_act": to_act}, code="not_your_turn"
                )
            try:
                progress.apply(seat, action, "player")
            except IllegalAction as exc:
                raise Illegal(exc.reason, {"reason": exc.reason}, code="illegal_action") from exc
            bots_pending = progress.run_bots()
            await progress.save(conn, bots_pending)
            game, state = progress.game, progress.state
            active = progress.status == "active"
            return {
                "version": progress.version,
                "status": progress.status,
                "events": progress.events_for(seat),
                "view": game.view(state, seat),
                "to_act": progress.to_act(),
                "legal_actions": game.legal_actions(state, seat) if active else [],
                "outcome": progress.outcome,
            }

        request = {"version": version, "action": action}
        return await idempotency.once(
            conn, player_id, idempotency_key, f"match-action:{match_id}", request, write
        )


async def ensure_exists(pool: asyncpg.Pool, match_id: UUID) -> None:
    if await store.get(pool, match_id) is None:
        raise NotFound("no such match")


@dataclass(frozen=True)
class EventPage:
    """Events past a cursor that the caller may see; pass `last_seq` as the next cursor."""

    events: list[WireEvent]
    last_seq: int
    status: str
    version: int
    more: bool

    def wire(self) -> EventBatch:
        return {
            "events": self.events,
            "last_seq": self.last_seq,
            "status": self.status,
            "version": self.version,
        }


async def events_page(
    pool: asyncpg.Pool, player_id: UUID, match_id: UUID, after: int, limit: int = EVENT_PAGE
) -> EventPage:
    async with pool.acquire() as conn:
        row = await store.get(conn, match_id)
        if row is None:
            raise NotFound("no such match")
        seat = _seat_of(await store.seats(conn, match_id), player_id)
        # Read after the row: events up to row.last_seq were committed before this query.
        rows = await store.events_after(conn, match_id, after, seat, limit)
    more = len(rows) == limit
    last = rows[-1].seq if more else max([after, row.last_seq, *(r.seq for r in rows)])
    return EventPage([event_wire(r) for r in rows], last, row.status, row.version, more)


async def wait_events(
    pool: asyncpg.Pool, hub: Hub, player_id: UUID, match_id: UUID, after: int, wait_s: float
) -> EventPage:
    """Long-poll: the events past `after`, waiting up to `wait_s` for some to arrive."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait_s
    with hub.subscribe(match_id) as signal:
        while True:
            signal.clear()
            page = await events_page(pool, player_id, match_id, after)
            remaining = deadline - loop.time()
            if page.events or page.status == "finished" or remaining <= 0:
                return page
            with suppress(TimeoutError):
                await asyncio.wait_for(signal.wait(), remaining)


async def follow(
    pool: asyncpg.Pool, hub: Hub, player_id: UUID, match_id: UUID, after: int
) -> AsyncGenerator[EventPage, None]:
    """Pages of new events as they come; ends once a finished match has nothing more to send."""
    with hub.subscribe(match_id) as signal:
        while True:
            signal.clear()
            page = await events_page(pool, player_id, match_id, after)
            after = page.last_seq
            if page.events:
                yield page
            if page.more:
                continue
            if page.status == "finished":
                return
            with suppress(TimeoutError):
                await asyncio.wait_for(signal.wait(), RECHECK_SECONDS)


async def replay(pool: asyncpg.Pool, match_id: UUID) -> MatchReplay:
    """Everything about a finished match: seed, seats, the full action log, every event."""
    async with pool.acquire() as conn, conn.transaction(isolation="repeatable_read"):
        row = await store.get(conn, match_id)
        if row is None:
            raise NotFound("no such match")
        if row.status != "finished":
            raise Conflict(
                "the replay is available once the match is finished", code="match_not_finished"
            )
        seats = await store.seats(conn, match_id)
        actions = await store.actions(conn, match_id)
        events = await store.all_events(conn, match_id)
    game = get_game(row.game)
    return {
        "match_id": str(row.match_id),
        "game": row.game,
        "ruleset": row.ruleset,
        "seed": row.seed,
        "seats": _seats_wire(seats),
        "options": row.options,
        "actions": [
            {"version": a.version, "seat": a.seat, "action": a.action, "source": a.source}
            for a in actions
        ],
        "events": [{**event_wire(e), "visible_to": e.visible_to} for e in events],
        "final": game.replay_view(game.load_state(row.state)),
        "outcome": row.outcome,
    }


async def cache_agrees_with_log(db: store.Conn, match_id: UUID) -> bool:
    """True when replaying the seed and the action log gives exactly the cached state."""
    row = await store.get(db, match_id)
    if row is None:
        raise NotFound("no such match")
    log_rows = await store.actions(db, match_id)
    game = get_game(row.game)
    state = rebuild(game, row.seed, row.seats, row.options, [(a.seat, a.action) for a in log_rows])
    return bool(game.dump_state(state) == row.state)
