"""Work every instance repeats in the background (sweeps), until the process stops it."""

import asyncio
from collections.abc import Awaitable, Callable

import structlog

from service.store.database import is_unavailable

log = structlog.get_logger("service.periodic")


async def every(interval_s: float, name: str, work: Callable[[], Awaitable[object]]) -> None:
    """`work` every `interval_s` until cancelled. A failure is logged as `{name}_failed` (a
    database outage as a warning, anything else with its traceback) and the loop goes on: one
    bad turn must not stop what every instance is trusted to keep doing."""
    while True:
        try:
            await work()
        except Exception as exc:
            if is_unavailable(exc):
                log.warning(f"{name}_database_unavailable", error=type(exc).__name__)
            else:
                log.exception(f"{name}_failed")
        await asyncio.sleep(interval_s)
