"""Cross-instance push: one LISTEN connection per process fans notifications out to local waiters.

Every write that adds events sends NOTIFY (payload "match_id:seq") in its transaction. Waiters
never trust the payload for content: a wake-up only means "read the events again", so a lost or
duplicated notification costs at most one read (and waiters re-read on a timer anyway). The
payload's sequence only lets a waiter that already holds those events skip the read.
"""

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from uuid import UUID

import structlog

from service.store import match_events

log = structlog.get_logger("service.matches.notify")

# How often an idle listening connection is checked, and how long to wait before reconnecting.
CHECK_SECONDS = 10.0
RETRY_SECONDS = 1.0


UNKNOWN = float("inf")


class Waiter:
    """Set whenever the match may have new events; clear it before each read.

    `seq` is the highest sequence notified since the last clear: UNKNOWN when the wake-up says
    nothing of it (a reconnect, a payload without a number).
    """

    def __init__(self) -> None:
        self._set = asyncio.Event()
        self.seq = -1.0

    def set(self, seq: float = UNKNOWN) -> None:
        self.seq = max(self.seq, seq)
        self._set.set()

    def clear(self) -> None:
        self.seq = -1.0
        self._set.clear()

    async def wait(self) -> None:
        await self._set.wait()


class Hub:
    """Local waiters by match; `publish` wakes those of one match."""

    def __init__(self) -> None:
        self._waiters: dict[UUID, set[Waiter]] = {}

    @contextmanager
    def subscribe(self, match_id: UUID) -> Iterator[Waiter]:
        """A waiter woken whenever the match may have new events."""
        signal = Waiter()
        self._waiters.setdefault(match_id, set()).add(signal)
        try:
            yield signal
        finally:
            waiters = self._waiters[match_id]
            waiters.discard(signal)
            if not waiters:
                del self._waiters[match_id]

    def publish(self, payload: str) -> None:
        match_text, _, seq_text = payload.partition(":")
        try:
            match_id = UUID(match_text)
        except ValueError:
            log.warning("bad_notification", payload=payload)
            return
        seq = float(seq_text) if seq_text.isdigit() else UNKNOWN
        for signal in self._waiters.get(match_id, ()):
            signal.set(seq)

    def wake_all(self) -> None:
        for waiters in self._waiters.values():
            for signal in waiters:
                signal.set()


async def listen_forever(url: str, hub: Hub, timeout_s: float) -> None:
    """Keep one listening connection up until cancelled, reconnecting when it drops."""
    while True:
        lost = asyncio.Event()
        try:
            conn = await match_events.listen(url, hub.publish, lost.set, timeout_s)
        except Exception as exc:
            log.warning("listen_connect_failed", error=type(exc).__name__)
            await asyncio.sleep(RETRY_SECONDS)
            continue
        # Whatever was notified while no connection listened is found by re-reading.
        hub.wake_all()
        try:
            while not lost.is_set():
                try:
                    await asyncio.wait_for(lost.wait(), CHECK_SECONDS)
                except TimeoutError:
                    await conn.execute("SELECT 1", timeout=timeout_s)
        except Exception as exc:
            log.warning("listen_connection_lost", error=type(exc).__name__)
        finally:
            with suppress(Exception):
                await conn.close(timeout=timeout_s)
        await asyncio.sleep(RETRY_SECONDS)
