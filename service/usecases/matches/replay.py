"""A finished match's replay: seed, loadouts, the action log, and every event revealed.

A finished match's events are swept MATCH_EVENTS_RETENTION_SECONDS after its end (sweeper.py);
its seed, seats, loadouts and action log stay. Its replay then rebuilds the events: the rules
set the match up and play the log again (docs/architecture.md#replays), which gives the same
game events, with the version each was stored under; they are numbered afresh from 1, and the
seat events of the lobby (`seat_taken`, `seat_left`), which the log does not hold, are not among
them. `rebuilt` says which the answer is.
"""

import json
from typing import Annotated, Any
from uuid import UUID

import asyncpg
from pydantic import Field
from typing_extensions import TypedDict

from service.games.kernel.protocol import Event, Game, event_revealed, replay_step
from service.games.registry import get_game
from service.store import jsonb, match_events
from service.store import matches as store
from service.store.database import transaction
from service.store.match_events import EventRow
from service.store.matches import ActionRow, MatchRow, SeatRow
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
    rebuilt: Annotated[
        bool,
        Field(
            description=(
                "true once the stored events were swept (MATCH_EVENTS_RETENTION_SECONDS after"
                " the end): the events are then the rules' own, rebuilt from the seed, the"
                " loadouts and the action log and numbered from 1, without the seat events"
            )
        ),
    ]


def rebuilt_events(
    game: Game[Any], row: MatchRow, seats: list[SeatRow], actions: list[ActionRow]
) -> list[EventRow]:
    """The game's events of a match, from `match_started` on, by playing its log again."""
    state = game.setup(row.seed, row.seats, row.options, [s.loadout for s in seats])
    played: list[tuple[int, Event]] = [(0, Event("match_started"))]
    played += [(0, event) for event in game.setup_events(state)]
    for step in actions:
        state, events = replay_step(game, state, step.seat, step.action)
        played += [(step.version, event) for event in events]
    rows = []
    for seq, (version, event) in enumerate(played, start=1):
        stored = event.to_json()
        # Through the text the database would have kept, so that the two agree to the type.
        data = json.loads(jsonb.dumps(stored["data"]))
        rows.append(EventRow(seq, version, event.kind, data, stored["visible_to"]))
    return rows


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
        swept = await match_events.events_swept(conn, match_id)
        events = [] if swept else await match_events.all_events(conn, match_id)
    game = get_game(row.game, row.ruleset)
    if swept:
        events = rebuilt_events(game, row, seats, actions)
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
        "rebuilt": swept,
    }
