"""The sweeper: turn timers that ran out, bot moves left over, and waiting matches that never
filled, on every instance; and, in a loop of its own, what is kept no longer (`Retention`).

Each due match is claimed with FOR UPDATE SKIP LOCKED in a transaction of its own, so any
number of instances can sweep at once without touching the same match.

Retention, swept in batches of about `batch_rows` rows, each batch one statement whose rows are
claimed with FOR UPDATE SKIP LOCKED, at most MAX_BATCHES_PER_TICK batches of each kind a tick:
- idempotency keys first used more than `key_ttl_seconds` ago: a retry within that time gets
  its stored answer, a key older than that is forgotten and names a new request;
- the events of a match finished more than `events_seconds` ago: the match, its seats and its
  action log stay, and its replay is rebuilt from them (replay.py);
- a match that expired unfilled more than `events_seconds` ago, whole: it has no replay.
"""

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from uuid import UUID

import asyncpg
import structlog

from service.store import idempotency, match_sweeps
from service.store import matches as store
from service.store.database import is_unavailable
from service.usecases.matches.progress import WAITING, Progress
from service.usecases.periodic import every

log = structlog.get_logger("service.matches")

# A match whose sweep failed (a bug, not the database) is retried after this long.
SWEEP_RETRY_SECONDS = 60.0
MAX_SWEEPS_PER_TICK = 200
MAX_BATCHES_PER_TICK = 10


@dataclass(frozen=True)
class Retention:
    """How long what a write leaves behind is kept, and the rows one sweeping statement takes."""

    key_ttl_seconds: float
    events_seconds: float
    batch_rows: int


async def _sweep_one(conn: asyncpg.Connection) -> bool:
    """Run out one due match's timer or leftover bot moves; False when nothing is due."""
    claimed: UUID | None = None
    try:
        async with conn.transaction():
            row = await store.claim_due(conn)
            if row is None:
                return False
            claimed = row.match_id
            progress = Progress.of(row, await store.seats(conn, row.match_id))
            if row.status == WAITING:
                progress.expire()
                await progress.save(conn, False)
                return True
            to_act = progress.to_act()
            # No bot is to act, so the match is due because a turn timer ran out.
            if not progress.bots.intersection(to_act):
                for seat in to_act:
                    if seat in progress.to_act():
                        timeout = progress.game.timeout_action(progress.state, seat)
                        progress.apply(seat, timeout, "timeout")
            await progress.save(conn, progress.run_bots())
            return True
    except Exception as exc:
        if claimed is None or is_unavailable(exc):
            raise
        # A bug in one match must not starve the others: log it and look again later.
        log.exception("sweep_match_failed", match_id=str(claimed))
        await store.postpone(conn, claimed, SWEEP_RETRY_SECONDS)
        return True


async def sweep(pool: asyncpg.Pool) -> int:
    """Process the matches due now, each in its own transaction; instances may sweep at once."""
    done = 0
    async with pool.acquire() as conn:
        while done < MAX_SWEEPS_PER_TICK and await _sweep_one(conn):
            done += 1
    return done


async def _batches(sweep_batch: Callable[[], Awaitable[int]]) -> int:
    """Batches until one finds nothing or MAX_BATCHES_PER_TICK have run; what they took."""
    done = 0
    for _ in range(MAX_BATCHES_PER_TICK):
        swept = await sweep_batch()
        done += swept
        if swept == 0:
            break
    return done


async def sweep_retention(pool: asyncpg.Pool, retention: Retention) -> None:
    """Delete, in batches, what is kept no longer: old keys, old finished matches' events, old
    expired matches; logged when there was any."""
    rows = retention.batch_rows

    async def keys() -> int:
        return await idempotency.sweep(pool, retention.key_ttl_seconds, rows)

    async def finished() -> int:
        return await match_sweeps.sweep_finished_events(pool, retention.events_seconds, rows)

    async def expired() -> int:
        return await match_sweeps.delete_expired(pool, retention.events_seconds, rows)

    swept = {
        "keys": await _batches(keys),
        "finished_matches": await _batches(finished),
        "expired_matches": await _batches(expired),
    }
    if any(swept.values()):
        log.info("retention_swept", **swept)


async def run_sweeper(pool: asyncpg.Pool, interval_s: float, retention: Retention) -> None:
    """Sweep every `interval_s` until cancelled. Retention runs in a loop of its own, so that a
    backlog of old rows never delays a turn timer."""
    await asyncio.gather(
        every(interval_s, "sweep", lambda: sweep(pool)),
        every(interval_s, "retention_sweep", lambda: sweep_retention(pool, retention)),
    )
