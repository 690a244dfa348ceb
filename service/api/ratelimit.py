"""Per-player token buckets, kept in the process (each instance limits what it serves)."""

import time
from collections import OrderedDict


class RateLimiter:
    """`rate` tokens per second refill a bucket of `burst`; each request takes one."""

    def __init__(self, rate: float, burst: int, max_keys: int = 100_000) -> None:
        self.rate = rate
        self.burst = burst
        self._max_keys = max_keys
        # key -> (tokens, last refill time); ordered by last use so the stalest is evicted first.
        self._buckets: OrderedDict[object, tuple[float, float]] = OrderedDict()

    def take(self, key: object, now: float | None = None) -> float:
        """0.0 when allowed; otherwise the seconds until a token is available."""
        now = time.monotonic() if now is None else now
        tokens, last = self._buckets.pop(key, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - last) * self.rate)
        if tokens >= 1.0:
            self._buckets[key] = (tokens - 1.0, now)
            wait = 0.0
        else:
            self._buckets[key] = (tokens, now)
            wait = (1.0 - tokens) / self.rate
        if len(self._buckets) > self._max_keys:
            self._buckets.popitem(last=False)
        return wait
