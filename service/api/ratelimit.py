"""Rate limits that hold across worker processes and instances (docs/operations.md#limits).

Two kinds, by what a request costs:

- **Every request** is limited per player (per address when unauthenticated) by `RateLimiter`,
  which decides in the process, with no round trip: a bucket per key, as a single process
  would keep it. Every `RATE_LIMIT_SYNC_SECONDS` the process adds what it let through to the
  key's shared bucket in PostgreSQL and takes the shared balance back, which already counts
  what every other process let through. So a client spread over many processes drains one
  bucket: between two syncs a process may let through what its own copy allows, and the
  shared balance then goes below zero, which keeps every process refusing until it has
  refilled. Over time the key gets the rate once, not once per process.
- **Rare requests that are costly to abuse** (registering, signing in, failed
  authentications, wrong ops tokens, WebSocket handshakes) take their tokens in PostgreSQL
  directly, one round trip each, by `SharedLimits`. A refusal is remembered in the process
  until its Retry-After, so that a client hammering a closed door costs no round trip.
"""

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import asyncpg
import structlog

from service.api.errors import rate_limited
from service.config import Settings
from service.store import limits
from service.store.database import is_unavailable

log = structlog.get_logger("service.api.ratelimit")

REQUESTS = "requests"
MINUTE = 60.0
HOUR = 3600.0
DAY = 86400.0
# How often each instance deletes the buckets that are full again.
SWEEP_SECONDS = 60.0


class RateLimiter:
    """`rate` tokens per second refill a bucket of `burst`; each request takes one."""

    def __init__(self, rate: float, burst: int, max_keys: int = 100_000) -> None:
        self.rate = rate
        self.burst = burst
        self._max_keys = max_keys
        # key -> (tokens, last refill time); ordered by last use so the stalest is evicted first.
        self._buckets: OrderedDict[object, tuple[float, float]] = OrderedDict()
        # Tokens taken per key since the last sync.
        self._taken: dict[object, int] = {}

    def take(self, key: object, now: float | None = None) -> float:
        """0.0 when allowed; otherwise the seconds until a token is available."""
        now = time.monotonic() if now is None else now
        tokens, last = self._buckets.pop(key, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - last) * self.rate)
        if tokens >= 1.0:
            self._buckets[key] = (tokens - 1.0, now)
            self._taken[key] = self._taken.get(key, 0) + 1
            wait = 0.0
        else:
            self._buckets[key] = (tokens, now)
            wait = (1.0 - tokens) / self.rate
        if len(self._buckets) > self._max_keys:
            self._buckets.popitem(last=False)
        return wait

    async def sync(self, pool: asyncpg.Pool) -> None:
        """Spend what this process let through from the shared buckets; take their balances."""
        taken, self._taken = self._taken, {}
        if not taken:
            return
        try:
            balances = await limits.spend(
                pool, REQUESTS, self.rate, self.burst, {str(k): n for k, n in taken.items()}
            )
        except BaseException:
            for key, count in taken.items():
                self._taken[key] = self._taken.get(key, 0) + count
            raise
        now = time.monotonic()
        for key in taken:
            if key in self._buckets:
                # What was let through while the statement ran is not in the balance yet.
                balance = balances[str(key)] - self._taken.get(key, 0)
                self._buckets[key] = (min(float(self.burst), balance), now)


@dataclass(frozen=True)
class Limit:
    """`count` at once, then `count` every `period` seconds, per key."""

    name: str
    count: int
    period: float

    def take(self, key: str, cost: float = 1.0) -> limits.Take:
        return limits.Take(self.name, key, self.count / self.period, float(self.count), cost)


class SharedLimits:
    """The buckets of rare requests, in PostgreSQL; refusals remembered in the process.

    A key that lies in a wider block (`site_of`: an IPv6 client's /64 in its /48) spends from
    the block's bucket too, which holds `ipv6_site_budgets` times as much: walking through the
    keys of one block gains at most that many budgets. (`site_of` is given rather than
    imported: service.api.address reads the settings through the application's keys, which
    hold this class.)
    """

    def __init__(
        self,
        settings: Settings,
        site_of: Callable[[str], str | None],
        max_refusals: int = 10_000,
    ) -> None:
        self._site_of = site_of
        self._site_budgets = settings.ipv6_site_budgets
        self.registrations_per_hour = Limit(
            "registrations_per_address_per_hour", settings.registrations_per_address_per_hour, HOUR
        )
        self.registrations_per_day = Limit(
            "registrations_per_address_per_day", settings.registrations_per_address_per_day, DAY
        )
        self.sign_ins = Limit(
            "sign_ins_per_address_per_minute", settings.sign_ins_per_address_per_minute, MINUTE
        )
        self.auth_failures = Limit(
            "auth_failures_per_address_per_minute",
            settings.auth_failures_per_address_per_minute,
            MINUTE,
        )
        self.handshakes_per_address = Limit(
            "ws_handshakes_per_address_per_minute",
            settings.ws_handshakes_per_address_per_minute,
            MINUTE,
        )
        self.handshakes_per_player = Limit(
            "ws_handshakes_per_player_per_minute",
            settings.ws_handshakes_per_player_per_minute,
            MINUTE,
        )
        self._max_refusals = max_refusals
        # (limit, key) -> when the refusal ends (monotonic).
        self._refused: dict[tuple[str, str], float] = {}

    async def take(
        self, pool: asyncpg.Pool, *takes: limits.Take, outage_allows: bool = False
    ) -> None:
        """Take every bucket's token, or raise a 429 naming the limit that refused.

        With `outage_allows`, a database that cannot be reached lets the request through
        instead of failing it (for requests that need no database otherwise).
        """
        takes = tuple(self._with_sites(takes))
        now = time.monotonic()
        for wanted in takes:
            until = self._refused.get((wanted.kind, wanted.key), 0.0)
            if until > now:
                raise rate_limited(until - now, wanted.kind)
        try:
            waits = await limits.take(pool, takes)
        except Exception as exc:
            if not (outage_allows and is_unavailable(exc)):
                raise
            log.warning("shared_limit_unavailable", limits=[t.kind for t in takes])
            return
        refused = [(wait, wanted) for wait, wanted in zip(waits, takes, strict=True) if wait > 0]
        if not refused:
            return
        now = time.monotonic()
        for wait, wanted in refused:
            self._remember((wanted.kind, wanted.key), now + wait, now)
        wait, wanted = max(refused, key=lambda refusal: refusal[0])
        raise rate_limited(wait, wanted.kind)

    def _with_sites(self, takes: tuple[limits.Take, ...]) -> Iterator[limits.Take]:
        for wanted in takes:
            yield wanted
            site = self._site_of(wanted.key)
            if site is not None:
                budgets = self._site_budgets
                yield limits.Take(
                    wanted.kind, site, wanted.rate * budgets, wanted.burst * budgets, wanted.cost
                )

    def _remember(self, refusal: tuple[str, str], until: float, now: float) -> None:
        self._refused.pop(refusal, None)
        self._refused[refusal] = until
        if len(self._refused) > self._max_refusals:
            self._refused = {k: v for k, v in self._refused.items() if v > now}
            while len(self._refused) > self._max_refusals:
                del self._refused[next(iter(self._refused))]


async def keep_shared(pool: asyncpg.Pool, limiter: RateLimiter, sync_seconds: float) -> None:
    """Sync the per-request buckets every `sync_seconds`, and sweep full buckets, until
    cancelled. A failure is logged and tried again at the next turn: meanwhile the process
    goes on deciding alone."""
    swept = time.monotonic()
    while True:
        await asyncio.sleep(sync_seconds)
        try:
            await limiter.sync(pool)
            if time.monotonic() - swept >= SWEEP_SECONDS:
                swept = time.monotonic()
                await limits.sweep(pool)
        except Exception as exc:
            log.warning("rate_limit_sync_failed", error=type(exc).__name__)
