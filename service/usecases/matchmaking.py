"""Play now: queue a ticket for a game, and the matcher that seats queued players together.

Decisions (docs/api.md#play-now-the-matchmaking-queue):
- A ticket is checked as a player's match is (the game, seats, options and loadout, by the
  lobby's own checks) before it is stored, so a bad ticket is the same 422 and never queues.
  Queuing counts against the lobby's caps as taking a seat in a waiting match does; a player has
  at most one searching ticket per game (409 `ticket_exists` naming it).
- Tickets match only within one bucket: the same game, ruleset, seat count and options.
  Within it, the longest-waiting ticket is matched first, with the tickets whose ratings lie
  within its band of its own, nearest first; the band is MATCHMAKING_BAND wide and grows by
  MATCHMAKING_BAND_GROWTH_PER_SECOND for every second that ticket has waited. A ticket that
  has waited MATCHMAKING_BOT_AFTER_SECONDS takes whoever is in its band and bots fill the rest.
- Seats are dealt at random, so that waiting longest wins no seat of its own; every match made
  here has a turn timer of MATCHMAKING_TURN_SECONDS, so that a stranger who walks away does not
  hold the others' game.
- A bucket's tickets are claimed FOR UPDATE SKIP LOCKED and matched in the transaction that
  claimed them, so any number of instances match and a ticket is matched exactly once; the
  matchers of one bucket take turns, so that two never skip each other's tickets; a cancel
  locks its ticket, so it either comes first (the matcher skips it) or finds it matched.
- The matcher runs for a ticket's bucket as soon as the ticket is stored, so two players who
  queue together are matched at once, and on every instance every MATCHMAKING_INTERVAL_SECONDS.
  That first turn runs after the ticket's commit: its failure is the matcher's, not the
  request's, whose answer stays the ticket stored (a 503 would say nothing was written).
"""

import asyncio
import secrets
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass, replace
from typing import Annotated, Any
from uuid import UUID

import asyncpg
import structlog
from pydantic import Field
from typing_extensions import TypedDict

from service.games.registry import get_game
from service.store import matches as match_store
from service.store import matchmaking as store
from service.store.database import CommitUnknown, is_unavailable, transaction
from service.store.matchmaking import Bucket, Ticket, Waiting
from service.store.notify import Hub
from service.usecases import idempotency, player_lock
from service.usecases.errors import Conflict, NotFound
from service.usecases.matches import lobby
from service.usecases.periodic import every

log = structlog.get_logger("service.matchmaking")

SEARCHING, CANCELLED = "searching", "cancelled"
# Tickets of one bucket one matcher's transaction claims; the rest wait for the next turn.
CLAIM_LIMIT = 500
_RANDOM = secrets.SystemRandom()


@dataclass(frozen=True)
class Tuning:
    """How far apart matched ratings may be, and when bots complete a ticket."""

    band: float
    band_growth_per_second: float
    bot_after_seconds: float
    # The turn timer of every match made here.
    turn_seconds: int
    # How long a match made here may wait for players: it never does, every seat is filled.
    match_wait_seconds: float

    def band_after(self, waited_seconds: float) -> float:
        return self.band + self.band_growth_per_second * waited_seconds


def groups(waiting: Sequence[Waiting], seats: int, tuning: Tuning) -> list[list[Waiting]]:
    """The matches to make from a bucket's tickets, oldest first: each a list of tickets, the
    seats left over going to bots. The oldest ticket not yet grouped takes the `seats - 1`
    others nearest its rating within its band; with too few of them it waits, unless it has
    waited past the bot delay."""
    taken: set[UUID] = set()
    formed = []
    for anchor in waiting:
        if anchor.ticket_id in taken:
            continue
        width = tuning.band_after(anchor.waited_seconds)
        near = sorted(
            (
                t
                for t in waiting
                if t.ticket_id not in taken
                and t.ticket_id != anchor.ticket_id
                and abs(t.rating - anchor.rating) <= width
            ),
            key=lambda t: (abs(t.rating - anchor.rating), -t.waited_seconds),
        )[: seats - 1]
        if len(near) == seats - 1 or anchor.waited_seconds >= tuning.bot_after_seconds:
            group = [anchor, *near]
            formed.append(group)
            taken.update(t.ticket_id for t in group)
    return formed


class TicketState(TypedDict):
    ticket_id: str
    status: Annotated[str, Field(description="searching, matched or cancelled")]
    game: str
    ruleset: str
    seats: int
    options: dict[str, Any]
    created_at: str
    match_id: Annotated[str | None, Field(description="the match, once matched")]
    seat: Annotated[int | None, Field(description="your seat in it, once matched")]


def _wire(ticket: Ticket) -> TicketState:
    return {
        "ticket_id": str(ticket.ticket_id),
        "status": ticket.status,
        "game": ticket.game,
        "ruleset": ticket.ruleset,
        "seats": ticket.seats,
        "options": ticket.options,
        "created_at": ticket.created_at.isoformat(),
        "match_id": None if ticket.match_id is None else str(ticket.match_id),
        "seat": ticket.seat,
    }


@dataclass(frozen=True)
class TicketRequest:
    game_id: str
    ruleset: str | None
    seats: int
    options: dict[str, Any]
    loadout: Any


async def queue(
    pool: asyncpg.Pool,
    player_id: UUID,
    request: TicketRequest,
    *,
    caps: lobby.Caps,
    tuning: Tuning,
    idempotency_key: str | None,
) -> TicketState:
    """A new searching ticket, then a matcher's turn for its bucket."""
    new = lobby.NewMatch(
        game_id=request.game_id,
        ruleset=request.ruleset,
        seats=request.seats,
        options=request.options,
        bots=[],
        turn_seconds=tuning.turn_seconds,
        wait_seconds=tuning.match_wait_seconds,
    )
    checked = lobby.check_player_match(new, request.loadout)
    game = checked.game
    body = {
        "game": request.game_id,
        "ruleset": request.ruleset,
        "seats": request.seats,
        "options": request.options,
        "loadout": request.loadout,
    }
    async with transaction(pool) as conn:
        # Two queues of one player go one at a time, and none lands after its deletion.
        await player_lock.hold(conn, player_id)

        async def write() -> TicketState:
            held = await match_store.held_seats(conn, player_id)
            lobby.refuse_over_caps(held, caps, waits=True)
            existing = await store.searching(conn, player_id, game.id)
            if existing is not None:
                raise Conflict(
                    f"you already have a ticket searching for {game.id}: cancel it first",
                    {"ticket_id": str(existing)},
                    code="ticket_exists",
                )
            ticket = await store.insert(
                conn,
                player_id=player_id,
                game=game.id,
                ruleset=game.ruleset,
                seats=request.seats,
                options=checked.options,
                loadout=checked.loadout,
                rating=await store.rating(conn, player_id, game.id),
            )
            return _wire(ticket)

        answer = await idempotency.write_once(
            conn, player_id, idempotency_key, "queue-ticket", body, write
        )
    await _match_stored(pool, Bucket(game.id, game.ruleset, request.seats, checked.options), tuning)
    return answer


async def _match_stored(pool: asyncpg.Pool, bucket: Bucket, tuning: Tuning) -> None:
    """A matcher's turn for the bucket of a ticket just stored. A failure is logged and left to
    the matcher's next turn on any instance, which finds the ticket searching."""
    try:
        await match_once(pool, bucket, tuning)
    except Exception as exc:
        if is_unavailable(exc) or isinstance(exc, CommitUnknown):
            log.warning("matcher_turn_database_unavailable", error=type(exc).__name__)
        else:
            log.exception("matcher_turn_failed")


async def read(pool: asyncpg.Pool, player_id: UUID, ticket_id: UUID) -> TicketState:
    """The player's ticket; another player's is as unknown as a ticket that never was."""
    ticket = await store.get(pool, ticket_id, player_id)
    if ticket is None:
        raise NotFound("no such ticket")
    return _wire(ticket)


async def wait(
    pool: asyncpg.Pool, hub: Hub, player_id: UUID, ticket_id: UUID, wait_s: float
) -> TicketState:
    """Long-poll: the ticket at once unless it is searching, else once it is not or after
    `wait_s`, woken by the NOTIFY of its change on any instance."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait_s
    with hub.subscribe(ticket_id) as signal:
        while True:
            signal.clear()
            ticket = await read(pool, player_id, ticket_id)
            remaining = deadline - loop.time()
            if ticket["status"] != SEARCHING or remaining <= 0:
                return ticket
            with suppress(TimeoutError):
                await asyncio.wait_for(signal.wait(), remaining)


# How far back a match socket looks for the player's tickets matched since it last looked: a
# wake-up comes within moments of the match being made.
ANNOUNCE_WINDOW_SECONDS = 60.0


async def matched_lately(pool: asyncpg.Pool, player_id: UUID) -> list[TicketState]:
    """The player's tickets matched in the last ANNOUNCE_WINDOW_SECONDS, what a match socket
    the player follows announces."""
    return [_wire(t) for t in await store.matched_lately(pool, player_id, ANNOUNCE_WINDOW_SECONDS)]


async def cancel(
    pool: asyncpg.Pool, player_id: UUID, ticket_id: UUID, idempotency_key: str | None
) -> TicketState:
    """Cancel a searching ticket; one matched or cancelled already is a 409."""
    async with transaction(pool) as conn:
        await player_lock.hold(conn, player_id)

        async def write() -> TicketState:
            before = await store.cancel(conn, ticket_id, player_id)
            if before is None:
                raise NotFound("no such ticket")
            if before.status != SEARCHING:
                raise Conflict(
                    f"the ticket is {before.status}, not searching",
                    {"ticket_id": str(ticket_id), "status": before.status},
                    code="ticket_not_searching",
                )
            return _wire(replace(before, status=CANCELLED))

        scope = f"cancel-ticket:{ticket_id}"
        return await idempotency.write_once(conn, player_id, idempotency_key, scope, {}, write)


async def _seat(
    conn: asyncpg.Connection, bucket: Bucket, tuning: Tuning, group: list[Waiting]
) -> None:
    """One match with the group's players in seats dealt at random, bots in the rest."""
    places = list(range(bucket.seats))
    _RANDOM.shuffle(places)
    seated = [
        lobby.Creator(t.player_id, seat, t.loadout) for t, seat in zip(group, places, strict=False)
    ]
    new = lobby.NewMatch(
        game_id=bucket.game,
        ruleset=bucket.ruleset,
        seats=bucket.seats,
        options=bucket.options,
        bots=sorted(places[len(group) :]),
        turn_seconds=tuning.turn_seconds,
        wait_seconds=tuning.match_wait_seconds,
    )
    game = get_game(bucket.game, bucket.ruleset)
    joined = await lobby.insert(conn, new, game, bucket.options, seated)
    match_id = UUID(joined["match_id"])
    await store.mark_matched(
        conn, match_id, [(t.ticket_id, s.seat) for t, s in zip(group, seated, strict=True)]
    )


async def match_once(pool: asyncpg.Pool, bucket: Bucket, tuning: Tuning) -> int:
    """Claim the bucket's free tickets and make the matches they allow, in one transaction;
    how many matches were made."""
    async with transaction(pool) as conn:
        claimed = await store.claim(conn, bucket, CLAIM_LIMIT)
        formed = groups(claimed, bucket.seats, tuning)
        for group in formed:
            await _seat(conn, bucket, tuning, group)
    if formed:
        log.info("tickets_matched", game=bucket.game, matches=len(formed))
    return len(formed)


async def match_all(pool: asyncpg.Pool, tuning: Tuning) -> int:
    """One matcher's turn over every bucket with a searching ticket; the matches made."""
    made = 0
    for bucket in await store.buckets(pool):
        made += await match_once(pool, bucket, tuning)
    return made


async def run_matcher(pool: asyncpg.Pool, tuning: Tuning, interval_s: float) -> None:
    """Match every `interval_s` until cancelled."""
    await every(interval_s, "matchmaking", lambda: match_all(pool, tuning))
