"""The idle-run sweep (docs/rules/cryptids.md#abandoned-runs), on every instance: open runs
nobody touched for RUN_IDLE_SECONDS end abandoned and settle their rating; remembered ratings
past the once-a-day window (docs/rules/cryptids.md#rated-ghosts) are forgotten.

A batch of runs is claimed, with their players' rows, FOR UPDATE SKIP LOCKED and ended in the
transaction that claimed it, so any number of instances can sweep (their batches take turns) and
each run is ended, and its rating settled, exactly once. A run whose player a write holds is
left to the next tick. A move on a run being ended waits for the sweep and then finds the run
over (409 `run_over`).
"""

from uuid import UUID

import asyncpg
import structlog

from service.games.cryptids import run as rules
from service.games.cryptids.content import load_ruleset
from service.games.cryptids.rating import abandoned_settlement, forfeit_change
from service.store import runs, snapshots
from service.store.database import transaction
from service.usecases.periodic import every

log = structlog.get_logger("service.runs")

BATCH = 200
# A tick ends at most this many batches; the rest wait for the next tick.
MAX_BATCHES_PER_TICK = 10


def ending(run_id: UUID, player_id: UUID, ruleset: str, pending: float) -> runs.Ending:
    """How an abandoned run ends: its final pending change, with one forfeited loss, and what
    it settles on the player's rating."""
    k = load_ruleset(ruleset).run.elo_k
    return run_id, player_id, pending + forfeit_change(k), abandoned_settlement(pending, k)


async def _end_batch(pool: asyncpg.Pool, idle_seconds: float, limit: int) -> tuple[int, int]:
    """Claim and end one batch; (runs claimed, runs ended)."""
    async with transaction(pool) as conn:
        claimed = await runs.claim_idle(conn, idle_seconds, limit)
        if not claimed:
            return 0, 0
        ended = [ending(i.run_id, i.player_id, i.ruleset, i.rating_change) for i in claimed]
        return len(claimed), await runs.abandon(conn, ended, rules.ABANDONED)


async def sweep(
    pool: asyncpg.Pool, idle_seconds: float, repeat_seconds: float, batch: int = BATCH
) -> int:
    """End the runs idle now, batch by batch, and forget stale remembered ratings; how many
    runs this call ended."""
    ended = 0
    for _ in range(MAX_BATCHES_PER_TICK):
        claimed, done = await _end_batch(pool, idle_seconds, batch)
        ended += done
        if claimed < batch:
            break
    async with pool.acquire() as conn:
        for _ in range(MAX_BATCHES_PER_TICK):
            if await snapshots.forget_rated(conn, repeat_seconds, batch) < batch:
                break
    if ended:
        log.info("runs_abandoned", runs=ended)
    return ended


async def run_idle_sweeper(
    pool: asyncpg.Pool, idle_seconds: float, repeat_seconds: float, interval_s: float
) -> None:
    """Sweep every `interval_s` until cancelled."""
    await every(interval_s, "idle_sweep", lambda: sweep(pool, idle_seconds, repeat_seconds))
