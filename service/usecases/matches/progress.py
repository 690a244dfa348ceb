"""A match being changed inside one transaction: apply actions, play bots, then save.

Everything a write appends (actions, numbered events with their visibility) is collected here
and stored by `save` in the same transaction, with the NOTIFY that PostgreSQL delivers on commit.
"""

import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import asyncpg
from typing_extensions import TypedDict

from service.games.kernel.protocol import Event, Game
from service.games.registry import get_game
from service.runtime import metrics
from service.store import matches as store
from service.store.matches import ActionRow, EventRow, MatchRow, SeatRow

# Bot moves applied in one transaction; the sweeper plays the rest.
MAX_BOT_ACTIONS = 50


class WireEvent(TypedDict):
    seq: int
    version: int
    kind: str
    data: dict[str, Any]


def event_wire(event: EventRow) -> WireEvent:
    return {"seq": event.seq, "version": event.version, "kind": event.kind, "data": event.data}


def _visible(event: EventRow, seat: int | None) -> bool:
    return event.visible_to is None or (seat is not None and seat in event.visible_to)


@dataclass
class Progress:
    """A match being changed inside one transaction, and what to append to its logs."""

    row: MatchRow
    seats: list[SeatRow]
    game: Game[Any]
    state: Any
    status: str
    version: int
    last_seq: int
    outcome: dict[str, Any] | None
    actions: list[ActionRow] = field(default_factory=list)
    events: list[EventRow] = field(default_factory=list)
    restart_timer: bool = False

    @classmethod
    def of(cls, row: MatchRow, seats: list[SeatRow]) -> "Progress":
        game = get_game(row.game)
        return cls(
            row,
            seats,
            game,
            game.load_state(row.state),
            row.status,
            row.version,
            row.last_seq,
            row.outcome,
        )

    @property
    def bots(self) -> set[int]:
        return {s.seat for s in self.seats if s.bot}

    def to_act(self) -> list[int]:
        return self.game.to_act(self.state) if self.status == "active" else []

    def emit(self, events: Iterable[Event]) -> None:
        for event in events:
            self.last_seq += 1
            visible = None if event.visible_to is None else list(event.visible_to)
            self.events.append(
                EventRow(self.last_seq, self.version, event.kind, dict(event.data), visible)
            )

    def apply(self, seat: int, action: dict[str, Any], source: str) -> None:
        """Apply one action; `IllegalAction` leaves everything as it was."""
        self.state, events = self.game.apply(self.state, seat, action)
        self.version += 1
        self.restart_timer = True
        self.actions.append(ActionRow(self.version, seat, action, source))
        self.emit(events)
        outcome = self.game.outcome(self.state)
        if outcome is not None:
            self.status = "finished"
            self.outcome = dict(outcome)

    def activate(self) -> None:
        self.status = "active"
        self.restart_timer = True
        self.emit([Event("match_started"), *self.game.setup_events(self.state)])

    def run_bots(self) -> bool:
        """Play bot seats until a human must act; True when the bound left bot moves undone."""
        for _ in range(MAX_BOT_ACTIONS):
            seat = next((s for s in self.to_act() if s in self.bots), None)
            if seat is None:
                return False
            self.apply(seat, self.game.bot_action(self.state, seat, secrets.randbits(64)), "bot")
        return any(s in self.bots for s in self.to_act())

    async def save(self, conn: asyncpg.Connection, bots_pending: bool) -> None:
        due = 0.0 if bots_pending else self.row.turn_seconds
        await store.update(
            conn,
            self.row.match_id,
            status=self.status,
            version=self.version,
            last_seq=self.last_seq,
            state=self.game.dump_state(self.state),
            outcome=self.outcome,
            due_in_seconds=due,
            reset_due=self.restart_timer or bots_pending,
        )
        if self.actions:
            await store.insert_actions(conn, self.row.match_id, self.actions)
            for action in self.actions:
                metrics.MATCH_ACTIONS.labels(self.row.game, action.source).inc()
                if action.source == "timeout":
                    metrics.MATCH_TIMEOUTS.labels(self.row.game).inc()
        if self.events:
            await store.insert_events(conn, self.row.match_id, self.events)
            await store.notify(conn, self.row.match_id, self.last_seq)

    def events_for(self, seat: int | None) -> list[WireEvent]:
        return [event_wire(e) for e in self.events if _visible(e, seat)]
