from service.api.ratelimit import RateLimiter


def test_bucket_allows_a_burst_then_asks_to_wait() -> None:
    limiter = RateLimiter(rate=2.0, burst=3)
    assert [limiter.take("p", now=100.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.take("p", now=100.0) == 0.5


def test_bucket_refills_at_the_rate_up_to_the_burst() -> None:
    limiter = RateLimiter(rate=2.0, burst=3)
    for _ in range(3):
        limiter.take("p", now=0.0)
    assert limiter.take("p", now=0.5) == 0.0
    assert limiter.take("p", now=0.5) > 0.0
    for _ in range(3):
        assert limiter.take("p", now=1000.0) == 0.0
    assert limiter.take("p", now=1000.0) > 0.0


def test_keys_have_separate_buckets_and_the_stalest_is_evicted() -> None:
    limiter = RateLimiter(rate=1.0, burst=1, max_keys=2)
    assert limiter.take("a", now=0.0) == 0.0
    assert limiter.take("b", now=0.0) == 0.0
    assert limiter.take("c", now=0.0) == 0.0
    # "a" was evicted, so it starts with a full bucket again; "c" is still empty.
    assert limiter.take("a", now=0.0) == 0.0
    assert limiter.take("c", now=0.0) > 0.0
