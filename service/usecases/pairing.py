"""Choosing the ghost (docs/rules/cryptids.md#pairing): a ladder of ever wider searches, then a bot.

Same round and ruleset, never the player, never an opponent already met in this run, only
fresh snapshots; the nearest rating with the band widening through the ruleset's
`pairing.bands` (±100, ±200, ±400), then any; then the previous round, then the next; then a
bot. Among the candidates inside the band of the nearest one, the pick is seeded from (run
seed, round), so a replayed decision is the same.
"""

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import asyncpg

from service.games.cryptids.content import PairingRules
from service.games.kernel.rng import SplitMix64, one_way_seed
from service.store import snapshots
from service.store.snapshots import Candidate

PAIR_SALT = "cryptids:pair:{round}"

RUNG_BOT = "bot"
FALLBACK_RUNGS = ("previous_round", "next_round", RUNG_BOT)


def rungs(rules: PairingRules) -> tuple[str, ...]:
    """The ladder's rung names, narrowest first, as `pairing` reports them."""
    return (
        *(f"same_round_{band}" for band in rules.bands),
        "same_round_any",
        *FALLBACK_RUNGS,
    )


@dataclass(frozen=True)
class Ghost:
    snapshot_id: int
    snapshot_at: datetime
    player_id: UUID
    rating: int
    round: int
    rung: str
    warband: list[list[Any]]


def _pick(
    candidates: list[Candidate], rating: int, bands: tuple[int, ...], rng: SplitMix64
) -> tuple[Candidate, int | None]:
    """A seeded pick among the candidates within the band of the nearest; and that band."""
    gap = abs(candidates[0].rating - rating)
    band = next((band for band in bands if gap <= band), None)
    eligible = [c for c in candidates if band is None or abs(c.rating - rating) <= band]
    return rng.pick(eligible), band


async def find_ghost(
    conn: asyncpg.Connection,
    *,
    run_seed: int,
    ruleset: str,
    rules: PairingRules,
    round_: int,
    rating: int,
    exclude_players: list[UUID],
    ttl_seconds: float,
) -> Ghost | None:
    """The ghost for this round, or None when only a bot is left."""
    rng = SplitMix64(one_way_seed(run_seed, PAIR_SALT.format(round=round_).encode()))
    searches = [(round_, None), (round_ - 1, "previous_round"), (round_ + 1, "next_round")]
    for search_round, rung in searches:
        if search_round < 1:
            continue
        candidates = await snapshots.nearest(
            conn,
            ruleset=ruleset,
            round_=search_round,
            rating=rating,
            exclude_players=exclude_players,
            ttl_seconds=ttl_seconds,
            limit=rules.candidates_per_side,
        )
        if candidates:
            chosen, band = _pick(candidates, rating, rules.bands, rng)
            if rung is None:
                rung = f"same_round_{band if band is not None else 'any'}"
            return Ghost(
                chosen.snapshot_id,
                chosen.snapshot_at,
                chosen.player_id,
                chosen.rating,
                search_round,
                rung,
                chosen.warband(),
            )
    return None
