"""Token buckets shared by every process and instance, one row per (kind, key) of `rate_buckets`.

A bucket holds up to `burst` tokens and refills at `rate` a second; the row keeps its balance
at `updated_at`, so the refill is computed when it is next touched, from the database's clock
(one clock for every instance). Each statement is one round trip and its own transaction. A
bucket that has refilled to the brim says nothing a missing row would not, so `sweep` deletes
it, and the table holds only the keys that spent something within their refill time.

Statements that touch several rows take them in (kind, key) order, so that two of them never
wait on each other's rows in opposite orders.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import asyncpg

from service.store.params import named

# The balance of a bucket now: its last balance plus what refilled since, up to the brim.
_LEVEL = """
    least(excluded.burst,
          b.tokens + greatest(0, extract(epoch FROM now() - b.updated_at)) * excluded.rate)
"""

# A new row starts full less its cost (`tokens` carries burst - cost, so that the update can
# read the cost back from `excluded`). A take is granted when the bucket holds a whole token;
# then it spends its cost (0: only look), otherwise it spends nothing.
_TAKE = named(
    f"""
    INSERT INTO rate_buckets AS b (kind, key, tokens, rate, burst, granted, updated_at)
    SELECT t.kind, t.key, t.burst - t.cost, t.rate, t.burst, true, now()
      FROM unnest(:kinds::text[], :keys::text[], :rates::float8[], :bursts::float8[],
                  :costs::float8[]) AS t(kind, key, rate, burst, cost)
    ON CONFLICT (kind, key) DO UPDATE SET (tokens, granted, rate, burst, updated_at) = (
        SELECT CASE WHEN r.level >= 1 THEN r.level - (excluded.burst - excluded.tokens)
                    ELSE r.level END,
               r.level >= 1, excluded.rate, excluded.burst, now()
          FROM (SELECT {_LEVEL} AS level) AS r)
    RETURNING kind, key, granted, tokens, rate
    """
)

# What processes let through on their own is spent whatever the balance: a bucket may go below
# zero, and then every process refuses the key until it has refilled.
_SPEND = named(
    f"""
    INSERT INTO rate_buckets AS b (kind, key, tokens, rate, burst, granted, updated_at)
    SELECT :kind, t.key, :burst - t.spent, :rate, :burst, true, now()
      FROM unnest(:keys::text[], :spent::float8[]) AS t(key, spent)
    ON CONFLICT (kind, key) DO UPDATE SET
        tokens = {_LEVEL} - (excluded.burst - excluded.tokens),
        rate = excluded.rate, burst = excluded.burst, updated_at = now()
    RETURNING key, tokens
    """
)

_SWEEP = named(
    """
    DELETE FROM rate_buckets
     WHERE updated_at + make_interval(secs => (burst - tokens) / rate) < now()
    """
)


@dataclass(frozen=True)
class Take:
    """One bucket to take from: `cost` 1 spends a token, 0 only asks that one be there."""

    kind: str
    key: str
    rate: float
    burst: float
    cost: float = 1.0


async def take(pool: asyncpg.Pool, takes: Sequence[Take]) -> list[float]:
    """Per take, in the order given: 0.0 when granted, else the seconds until a token is there.

    A refused take spends nothing; the others of the same call are spent all the same.
    """
    ordered = sorted(takes, key=lambda t: (t.kind, t.key))
    rows = await pool.fetch(
        _TAKE.sql,
        *_TAKE.args(
            kinds=[t.kind for t in ordered],
            keys=[t.key for t in ordered],
            rates=[t.rate for t in ordered],
            bursts=[t.burst for t in ordered],
            costs=[t.cost for t in ordered],
        ),
    )
    waits = {
        (row["kind"], row["key"]): 0.0 if row["granted"] else (1.0 - row["tokens"]) / row["rate"]
        for row in rows
    }
    return [waits[(t.kind, t.key)] for t in takes]


async def spend(
    pool: asyncpg.Pool, kind: str, rate: float, burst: float, spent: Mapping[str, float]
) -> dict[str, float]:
    """Spend `spent[key]` tokens of each key's bucket; each bucket's balance afterwards."""
    keys = sorted(spent)
    rows = await pool.fetch(
        _SPEND.sql,
        *_SPEND.args(kind=kind, rate=rate, burst=burst, keys=keys, spent=[spent[k] for k in keys]),
    )
    return {row["key"]: row["tokens"] for row in rows}


async def sweep(pool: asyncpg.Pool) -> int:
    """Delete the buckets that are full again; how many."""
    status = await pool.execute(_SWEEP.sql, *_SWEEP.args())
    return int(status.split()[-1])
