"""The sweeper: turn timers that ran out, bot moves left over, and waiting matches that never
filled, on every instance.

Each due match is claimed with FOR UPDATE SKIP LOCKED in a transaction of its own, so any
number of instances can sweep at once without touching the same match.
"""

import asyncio
from uuid import UUID

import asyncpg
import structlog

from service.store import matches as store
from service.store.database import is_unavailable
from service.usecases.matches.progress import WAITING, Progress

log = structlog.get_logger("service.matches")

# A match whose sweep failed (a bug, not the database) is retried after this long.
SWEEP_RETRY_SECONDS = 60.0
MAX_SWEEPS_PER_TICK = 200


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


async def run_sweeper(pool: asyncpg.Pool, interval_s: float) -> None:
    """Sweep every `interval_s` until cancelled; database outages are logged and waited out."""
    while True:
        try:
            await sweep(pool)
        except Exception as exc:
            if is_unavailable(exc):
                log.warning("sweep_database_unavailable", error=type(exc).__name__)
            else:
                log.exception("sweep_failed")
        await asyncio.sleep(interval_s)
