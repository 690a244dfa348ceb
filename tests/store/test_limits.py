"""The shared token buckets (service/store/limits.py), on a database of their own."""

import asyncpg
import pytest

from service.store import limits

# A token every 100 s: nothing refills within a test.
SLOW = 0.01


@pytest.fixture
def pool(fresh_pool: asyncpg.Pool) -> asyncpg.Pool:
    return fresh_pool


async def test_a_bucket_gives_its_burst_then_tells_the_wait_for_a_token(
    pool: asyncpg.Pool,
) -> None:
    take = limits.Take("kind", "key", SLOW, 3.0)
    waits = [(await limits.take(pool, [take]))[0] for _ in range(5)]
    assert waits[:3] == [0.0, 0.0, 0.0]
    # A refusal spends nothing: the second one waits as long as the first (less the refill).
    assert 99.0 < waits[4] <= waits[3] <= 100.0


async def test_a_look_spends_nothing_and_each_take_is_answered_in_its_place(
    pool: asyncpg.Pool,
) -> None:
    spent = limits.Take("spent", "a", SLOW, 1.0)
    looked = limits.Take("looked", "a", SLOW, 1.0, cost=0.0)
    assert await limits.take(pool, [spent, looked]) == [0.0, 0.0]
    waits = await limits.take(pool, [looked, spent])
    assert waits[0] == 0.0 and waits[1] > 0.0


async def test_spending_may_go_below_zero_and_every_taker_then_waits(pool: asyncpg.Pool) -> None:
    balances = await limits.spend(pool, "requests", SLOW, 5.0, {"p1": 8, "p2": 1})
    assert balances["p1"] == pytest.approx(-3.0, abs=0.01)
    assert balances["p2"] == pytest.approx(4.0, abs=0.01)
    (wait,) = await limits.take(pool, [limits.Take("requests", "p1", SLOW, 5.0)])
    assert wait == pytest.approx(400.0, abs=1.0)
