"""A finished match's replay: seed, loadouts, the action log, and every event revealed."""

from typing import Any
from uuid import UUID

import asyncpg
from typing_extensions import TypedDict

from service.games.kernel.protocol import event_revealed
from service.games.registry import get_game
from service.store import matches as store
from service.store.database import transaction
from service.usecases.errors import Conflict, NotFound
from service.usecases.matches.answers import SeatInfo, seats_wire
from service.usecases.matches.progress import FINISHED, WireEvent, stored_event


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
    loadouts: list[Any]
    actions: list[ReplayAction]
    events: list[ReplayEvent]
    final: dict[str, Any]
    outcome: dict[str, Any] | None


async def replay(pool: asyncpg.Pool, match_id: UUID) -> MatchReplay:
    """Everything about a finished match, hidden information included; 409 before the end."""
    async with transaction(pool, isolation="repeatable_read") as conn:
        row = await store.get(conn, match_id)
        if row is None:
            raise NotFound("no such match")
        if row.status != FINISHED:
            raise Conflict(
                "the replay is available once the match is finished", code="match_not_finished"
            )
        seats = await store.seats(conn, match_id)
        actions = await store.actions(conn, match_id)
        events = await store.all_events(conn, match_id)
    game = get_game(row.game, row.ruleset)
    revealed = [event_revealed(stored_event(e)) for e in events]
    return {
        "match_id": str(row.match_id),
        "game": row.game,
        "ruleset": row.ruleset,
        "seed": row.seed,
        "seats": seats_wire(seats),
        "options": row.options,
        "loadouts": [s.loadout for s in seats],
        "actions": [
            {"version": a.version, "seat": a.seat, "action": a.action, "source": a.source}
            for a in actions
        ],
        "events": [
            {
                "seq": e["seq"],
                "version": e["version"],
                "kind": e["kind"],
                "data": e["data"],
                "visible_to": e["visible_to"],
            }
            for e in revealed
        ],
        "final": game.replay_view(game.load_state(row.state)),
        "outcome": row.outcome,
    }
