"""A match being changed inside one transaction: start it, apply actions, play bots, then save.

Everything a write appends (actions, numbered events with their visibility and hidden marks)
is collected here and stored by `save` in the same transaction, with the NOTIFY that PostgreSQL
delivers on commit. Events are stored as the kernel marks them and redacted per seat on the way
out (`event_for`), so every path (answers, GET, long-poll, WebSocket) shows a seat the same.
"""

import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import asyncpg
from typing_extensions import TypedDict

from service.games.kernel.prompts import Prompt, prompt_fingerprint
from service.games.kernel.protocol import PREFER, RESIGN, Event, Game, event_for
from service.games.kernel.rng import one_way_seed
from service.games.registry import get_game
from service.runtime import metrics
from service.store import matches as store
from service.store.database import within_transaction
from service.store.idempotency import AnswerToKeep
from service.store.match_events import EventRow
from service.store.matches import ActionRow, MatchRow, SeatRow
from service.usecases import game_ratings

# Bot moves applied in one transaction; the sweeper plays the rest.
MAX_BOT_ACTIONS = 50
WAITING, ACTIVE, FINISHED, EXPIRED = "waiting", "active", "finished", "expired"


class WireEvent(TypedDict):
    seq: int
    version: int
    kind: str
    data: dict[str, Any]


def stored_event(event: EventRow) -> dict[str, Any]:
    """The event as the kernel reads it: marks in JSON form, routing in `visible_to`."""
    return {
        "seq": event.seq,
        "version": event.version,
        "kind": event.kind,
        "data": event.data,
        "visible_to": event.visible_to,
    }


def event_wire(event: EventRow, seat: int | None) -> WireEvent | None:
    """The event as `seat` receives it, or None when it may not see it."""
    shown = event_for(stored_event(event), seat)
    if shown is None:
        return None
    return {"seq": event.seq, "version": event.version, "kind": event.kind, "data": shown["data"]}


def events_wire(events: Iterable[EventRow], seat: int | None) -> list[WireEvent]:
    return [wire for event in events if (wire := event_wire(event, seat)) is not None]


def bot_loadout_seed(match_seed: int, seat: int) -> int:
    """The seed of a bot's loadout: one-way, so the loadout tells nothing of the match seed."""
    return one_way_seed(match_seed, b"bot-loadout:" + str(seat).encode())


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
    # What each seat is asked in the current state, computed once: the answer, the guards and
    # the bots all read it, and a prompt may enumerate many moves.
    _asked: list[Prompt | None] | None = field(default=None, repr=False)

    @classmethod
    def of(cls, row: MatchRow, seats: list[SeatRow]) -> "Progress":
        game = get_game(row.game, row.ruleset)
        # A match that never started (waiting, or expired while waiting) has no state.
        state = game.load_state(row.state) if row.status in (ACTIVE, FINISHED) else None
        return cls(row, seats, game, state, row.status, row.version, row.last_seq, row.outcome)

    @property
    def bots(self) -> set[int]:
        return {s.seat for s in self.seats if s.bot}

    def _prompts(self) -> list[Prompt | None]:
        if self._asked is None:
            active = self.status == ACTIVE
            self._asked = [
                self.game.prompt(self.state, s.seat) if active else None for s in self.seats
            ]
        return self._asked

    def to_act(self) -> list[int]:
        """Seats asked something now (the kernel's `to_act`, from the prompts computed once)."""
        return [s.seat for s, prompt in zip(self.seats, self._prompts(), strict=True) if prompt]

    def emit(self, events: Iterable[Event]) -> None:
        for event in events:
            self.last_seq += 1
            stored = event.to_json()
            self.events.append(
                EventRow(
                    self.last_seq, self.version, event.kind, stored["data"], stored["visible_to"]
                )
            )

    def _count(self, seat: int, action: dict[str, Any], source: str) -> None:
        self._asked = None
        self.version += 1
        self.restart_timer = True
        self.actions.append(ActionRow(self.version, seat, action, source))

    def _check_over(self) -> None:
        outcome = self.game.outcome(self.state)
        if outcome is not None:
            self.status = FINISHED
            self._asked = None
            self.outcome = dict(outcome)

    def apply(self, seat: int, action: dict[str, Any], source: str) -> None:
        """Apply one action; `IllegalAction` leaves everything as it was."""
        self.state, events = self.game.apply(self.state, seat, action)
        self._count(seat, action, source)
        self.emit(events)
        self._check_over()

    def resign(self, seat: int) -> None:
        """`seat` gives up, by the game's rule; logged so that a rebuild replays it."""
        self.state, events = self.game.resign(self.state, seat)
        self._count(seat, RESIGN, "resign")
        self.emit(events)
        self._check_over()

    def prefer(self, seat: int, preferences: dict[str, Any]) -> None:
        """`seat` sets its preferences, by the game's rule; logged so that a rebuild replays it.

        The turn timer restarts only if someone else is now asked (a window passed at once):
        setting preferences again and again must not hold a turn open.
        """
        asked = self.to_act()
        self.state, events = self.game.prefer(self.state, seat, preferences)
        self._count(seat, {"type": PREFER, **preferences}, "preference")
        self.restart_timer = self.to_act() != asked
        self.emit(events)
        self._check_over()

    def activate(self) -> None:
        """Every seat is taken: set the game up with the seats' loadouts and start it."""
        loadouts = [s.loadout for s in self.seats]
        self.state = self.game.setup(self.row.seed, self.row.seats, self.row.options, loadouts)
        self.status = ACTIVE
        self._asked = None
        self.restart_timer = True
        self.emit([Event("match_started"), *self.game.setup_events(self.state)])

    def expire(self) -> None:
        self.status = EXPIRED
        self._asked = None
        self.emit([Event("match_expired")])

    def run_bots(self) -> bool:
        """Play bot seats until a human must act; True when the bound left bot moves undone."""
        for _ in range(MAX_BOT_ACTIONS):
            seat = next((s for s in self.to_act() if s in self.bots), None)
            if seat is None:
                return False
            choice = self.game.bot_move(self.state, seat, secrets.randbits(64))
            self.apply(seat, choice, "bot")
        return any(s in self.bots for s in self.to_act())

    def prompt_of(self, seat: int | None) -> dict[str, Any] | None:
        prompt = None if seat is None else self._prompts()[seat]
        return None if prompt is None else prompt.as_dict()

    def _changed_prompts(self) -> list[tuple[int, int, str | None]]:
        """(seat, guard, fingerprint) of each seat whose prompt is not what it was."""
        changed = []
        for seat, prompt in zip(self.seats, self._prompts(), strict=True):
            fingerprint = None if prompt is None else prompt_fingerprint(prompt)
            if fingerprint != seat.prompt:
                changed.append((seat.seat, self.version, fingerprint))
        return changed

    def changes(self, bots_pending: bool) -> store.Changes:
        due = 0.0 if bots_pending else self.row.turn_seconds
        return store.Changes(
            status=self.status,
            version=self.version,
            last_seq=self.last_seq,
            state={} if self.state is None else self.game.dump_state(self.state),
            outcome=self.outcome,
            due_in_seconds=due,
            reset_due=self.restart_timer or bots_pending,
            prompts=self._changed_prompts(),
            actions=self.actions,
            events=self.events,
        )

    async def save_if_unmoved(
        self,
        conn: asyncpg.Connection,
        bots_pending: bool,
        player_id: UUID | None = None,
        to_keep: AnswerToKeep | None = None,
    ) -> store.Changes | None:
        """Store everything this write did, in one statement, if the match is still as it was
        read (and keep `to_keep` under `player_id`): the changes stored, or None when it has
        moved."""
        changes = self.changes(bots_pending)
        if self.row.status != FINISHED and self.status == FINISHED:
            # The match's end and its ratings are stored together or not at all: a match read
            # as finished is never rated again.
            async with within_transaction(conn):
                if not await store.save(conn, self.row, changes, player_id, to_keep):
                    return None
                await game_ratings.rate_finished(conn, self.row.game, changes.outcome, self.seats)
        elif not await store.save(conn, self.row, changes, player_id, to_keep):
            return None
        self._count_actions()
        return changes

    async def save(self, conn: asyncpg.Connection, bots_pending: bool) -> None:
        """Store everything this write did; the caller holds the match's lock."""
        if await self.save_if_unmoved(conn, bots_pending) is None:
            raise RuntimeError(f"match {self.row.match_id} moved while its lock was held")

    def _count_actions(self) -> None:
        for action in self.actions:
            metrics.child(metrics.MATCH_ACTIONS, self.row.game, action.source).inc()
            if action.source == "timeout":
                metrics.child(metrics.MATCH_TIMEOUTS, self.row.game).inc()

    def events_for(self, seat: int | None) -> list[WireEvent]:
        return events_wire(self.events, seat)
