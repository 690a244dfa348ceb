"""Choosing the ghost (DESIGN §4.4): a ladder of ever wider searches, then a bot.

Same round and ruleset, never the player, never an opponent already met in this run, only
fresh snapshots; the nearest rating with the band widening ±100, ±200, ±400, then any; then
the previous round, then the next; then a bot. Among the candidates inside the band of the
nearest one, the pick is seeded from (run seed, round), so a replayed decision is the same.
"""

from dataclasses import dataclass
from uuid import UUID

import asyncpg

from service.games.rng import SplitMix64, derive_seed
from service.store import snapshots
from service.store.snapshots import Candidate

BANDS = (100, 200, 400)
CANDIDATES_PER_SIDE = 8
PAIR_SALT = 0x9A12_0000_0000_0000

RUNG_BOT = "bot"
RUNGS = (
    "same_round_100",
    "same_round_200",
    "same_round_400",
    "same_round_any",
    "previous_round",
    "next_round",
    RUNG_BOT,
)


@dataclass(frozen=True)
class Ghost:
    snapshot_id: int
    player_id: UUID
    rating: int
    round: int
    rung: str


def _band_of(gap: int) -> int | None:
    return next((band for band in BANDS if gap <= band), None)


def _pick(
    candidates: list[Candidate], rating: int, rng: SplitMix64
) -> tuple[Candidate, int | None]:
    """A seeded pick among the candidates within the band of the nearest; and that band."""
    band = _band_of(abs(candidates[0].rating - rating))
    eligible = [c for c in candidates if band is None or abs(c.rating - rating) <= band]
    return rng.pick(eligible), band


async def find_ghost(
    conn: asyncpg.Connection,
    *,
    run_seed: int,
    ruleset: str,
    round_: int,
    rating: int,
    exclude_players: list[UUID],
    ttl_seconds: float,
) -> Ghost | None:
    """The ghost for this round, or None when only a bot is left."""
    rng = SplitMix64(derive_seed(run_seed, PAIR_SALT ^ round_))
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
            limit=CANDIDATES_PER_SIDE,
        )
        if candidates:
            chosen, band = _pick(candidates, rating, rng)
            if rung is None:
                rung = f"same_round_{band if band is not None else 'any'}"
            return Ghost(chosen.snapshot_id, chosen.player_id, chosen.rating, search_round, rung)
    return None
