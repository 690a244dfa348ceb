"""Use-cases of a run: start it, shop, end the turn (snapshot, pair, fight), finish it.

Every call is one transaction holding the run's row lock, so concurrent requests on one run
are serialised and exactly one battle can exist per (run, round).
"""

import dataclasses
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple
from uuid import UUID

import asyncpg

from service.games.cryptids import shop as shops
from service.games.cryptids.content import DEFAULT_RULESET, Ruleset, load_ruleset
from service.games.cryptids.engine import simulate
from service.games.cryptids.rating import elo_change
from service.games.cryptids.shop import Shop, ShopError
from service.games.kernel.rng import MASK64, derive_seed
from service.runtime import metrics
from service.store import battles, players, runs, snapshots, stats
from service.store.battles import BattleRow
from service.store.runs import RunRow
from service.usecases import idempotency, pairing
from service.usecases.errors import Conflict, Illegal, NotFound

BATTLE_SALT = 0xBA77_1E00_0000_0000
SHOPPING = "shopping"
WINNERS = {"a": "player", "b": "ghost", "draw": "draw"}

ShopMove = Callable[[Ruleset, Shop], Shop]


@dataclass(frozen=True)
class PairingPolicy:
    snapshot_ttl_seconds: float


def battle_seed(run_seed: int, round_: int) -> int:
    return derive_seed(run_seed, BATTLE_SALT ^ round_)


def run_to_wire(run: RunRow) -> dict[str, Any]:
    shop = Shop.from_dict(run.shop)
    return {
        "run_id": str(run.run_id),
        "ruleset": run.ruleset,
        "round": shop.round,
        "lives": run.lives,
        "wins": run.wins,
        "gold": shop.gold,
        "status": run.status,
        "shop": [
            None
            if offer is None
            else {
                "slot": slot,
                "species": offer.species,
                "tier": offer.tier,
                "cost": offer.cost,
                "frozen": offer.frozen,
            }
            for slot, offer in enumerate(shop.offers)
        ],
        "warband": [
            {"position": i, "species": m.species, "ability": m.ability, "level": m.level}
            for i, m in enumerate(shop.warband)
        ],
        "rating_change_pending": round(run.rating_change, 2),
        "created_at": run.created_at.isoformat(),
    }


class RunAfter(NamedTuple):
    """The run as a battle left it."""

    lives: int
    wins: int
    status: str
    pending: float


@dataclass(frozen=True)
class Opponent:
    """The ghost a battle was fought against: a player's snapshot or a bot's."""

    snapshot_id: int
    player_id: UUID | None
    rating: int
    round: int
    rung: str
    warband: list[list[Any]]

    @property
    def is_bot(self) -> bool:
        return self.player_id is None


def turn_answer(
    battle_id: int,
    round_: int,
    opponent: Opponent,
    winner: str,
    after: RunAfter,
) -> dict[str, Any]:
    return {
        "battle_id": battle_id,
        "round": round_,
        "opponent": {
            "snapshot_id": opponent.snapshot_id,
            "rating": opponent.rating,
            "is_bot": opponent.is_bot,
            "round": opponent.round,
        },
        "pairing": opponent.rung,
        "winner": winner,
        "lives": after.lives,
        "wins": after.wins,
        "status": after.status,
        "rating_change_pending": round(after.pending, 2),
    }


async def start(pool: asyncpg.Pool, player_id: UUID, seed: int | None = None) -> dict[str, Any]:
    """A new run under the current ruleset; the seed is random unless given (tests, tools)."""
    ruleset = load_ruleset(DEFAULT_RULESET)
    run_seed = secrets.randbits(64) if seed is None else seed & MASK64
    shop = shops.new_shop(ruleset, run_seed)
    async with pool.acquire() as conn:
        row = await runs.insert(
            conn, player_id, ruleset.id, run_seed, ruleset.run.lives, shop.to_dict()
        )
    return run_to_wire(row)


async def get(pool: asyncpg.Pool, player_id: UUID, run_id: UUID) -> dict[str, Any]:
    row = await runs.get(pool, run_id, player_id)
    if row is None:
        raise NotFound(f"no run {run_id}")
    return run_to_wire(row)


async def list_own(pool: asyncpg.Pool, player_id: UUID, limit: int) -> list[dict[str, Any]]:
    return [run_to_wire(row) for row in await runs.list_for(pool, player_id, limit)]


async def _locked(conn: asyncpg.Connection, player_id: UUID, run_id: UUID) -> RunRow:
    row = await runs.get(conn, run_id, player_id, lock=True)
    if row is None:
        raise NotFound(f"no run {run_id}")
    return row


def _refuse_finished(run: RunRow) -> None:
    if run.status != SHOPPING:
        raise Conflict(f"the run is over ({run.status})", code="run_over")


def _apply(move: ShopMove, ruleset: Ruleset, shop: Shop) -> Shop:
    try:
        return move(ruleset, shop)
    except ShopError as exc:
        raise Illegal(exc.message, code=exc.code) from exc


async def shop_move(
    pool: asyncpg.Pool, player_id: UUID, run_id: UUID, move: ShopMove
) -> dict[str, Any]:
    """Apply one shop move under the run's lock; an illegal move changes nothing."""
    async with pool.acquire() as conn, conn.transaction():
        run = await _locked(conn, player_id, run_id)
        _refuse_finished(run)
        shop = _apply(move, load_ruleset(run.ruleset), Shop.from_dict(run.shop)).to_dict()
        await runs.save_shop(conn, run_id, shop)
    return run_to_wire(dataclasses.replace(run, shop=shop))


async def _answer_of(conn: asyncpg.Connection, battle: BattleRow) -> dict[str, Any]:
    ghost = await snapshots.get(conn, battle.ghost_snapshot_id)
    opponent = Opponent(
        ghost.snapshot_id, ghost.player_id, ghost.rating, ghost.round, battle.pairing, []
    )
    after = RunAfter(
        battle.lives_after, battle.wins_after, battle.status_after, battle.rating_pending
    )
    return turn_answer(battle.battle_id, battle.round, opponent, battle.winner, after)


async def end_turn(
    pool: asyncpg.Pool,
    player_id: UUID,
    run_id: UUID,
    *,
    round_: int | None,
    order: list[int] | None,
    abilities: list[int] | None,
    policy: PairingPolicy,
    idempotency_key: str | None = None,
    request: Any = None,
) -> dict[str, Any]:
    """Snapshot the warband, pair it, fight, and move the run on; retries get the same battle."""
    async with pool.acquire() as conn, conn.transaction():
        if idempotency_key is not None:
            stored = await idempotency.begin(
                conn, player_id, idempotency_key, f"end-turn:{run_id}", request
            )
            if stored is not None:
                return dict(stored.body)
        run = await _locked(conn, player_id, run_id)
        shop = Shop.from_dict(run.shop)
        if round_ is not None and round_ != shop.round:
            earlier = await battles.of_round(conn, run_id, round_) if round_ < shop.round else None
            if earlier is None:
                raise Illegal(
                    f"round {round_} is not this run's current round ({shop.round})",
                    code="wrong_round",
                )
            answer = await _answer_of(conn, earlier)
        else:
            _refuse_finished(run)
            answer = await _fight(conn, run, shop, order, abilities, policy)
        if idempotency_key is not None:
            await idempotency.finish(conn, player_id, idempotency_key, 200, answer)
    return answer


def _warband(members: Sequence[shops.Member]) -> list[list[Any]]:
    return [[m.species, m.ability, m.level] for m in members]


async def _find_opponent(
    conn: asyncpg.Connection, run: RunRow, ruleset: Ruleset, round_: int, policy: PairingPolicy
) -> Opponent:
    """A player's ghost from the pairing ladder, or else a bot stored as a snapshot."""
    ghost = await pairing.find_ghost(
        conn,
        run_seed=run.seed,
        ruleset=run.ruleset,
        rules=ruleset.pairing,
        round_=round_,
        rating=run.rating_at_start,
        exclude_players=[run.player_id, *await battles.opponents_met(conn, run.run_id)],
        ttl_seconds=policy.snapshot_ttl_seconds,
    )
    if ghost is not None:
        warband = (await snapshots.get(conn, ghost.snapshot_id)).warband
        return Opponent(
            ghost.snapshot_id, ghost.player_id, ghost.rating, ghost.round, ghost.rung, warband
        )
    warband = _warband(shops.bot_warband(ruleset, run.seed, round_))
    # A bot is rated like the player, so the rating gap reads 0 and nothing is won or lost.
    snapshot_id = await snapshots.insert(
        conn,
        run_id=None,
        player_id=None,
        round_=round_,
        ruleset=run.ruleset,
        rating=run.rating_at_start,
        wins=0,
        lives=0,
        warband=warband,
        is_bot=True,
    )
    return Opponent(snapshot_id, None, run.rating_at_start, round_, pairing.RUNG_BOT, warband)


def _run_after(run: RunRow, ruleset: Ruleset, winner: str, change: float) -> RunAfter:
    """The run once this battle is counted."""
    lives = run.lives - (winner == "ghost")
    wins = run.wins + (winner == "player")
    status = SHOPPING
    if wins >= ruleset.run.wins_to_finish:
        status = "won"
    elif lives <= 0:
        status = "lost"
    return RunAfter(lives, wins, status, run.rating_change + change)


async def _fight(
    conn: asyncpg.Connection,
    run: RunRow,
    shop: Shop,
    order: list[int] | None,
    abilities: list[int] | None,
    policy: PairingPolicy,
) -> dict[str, Any]:
    ruleset = load_ruleset(run.ruleset)
    shop = _apply(lambda _, s: shops.arrange(s, order, abilities), ruleset, shop)
    if not shop.warband:
        raise Illegal("the warband is empty: buy a cryptid first", code="empty_warband")
    warband = _warband(shop.warband)
    round_ = shop.round
    shard = run.run_id.int
    await stats.count_snapshot(conn, run.ruleset, round_, shard)
    player_snapshot = await snapshots.insert(
        conn,
        run_id=run.run_id,
        player_id=run.player_id,
        round_=round_,
        ruleset=run.ruleset,
        rating=run.rating_at_start,
        wins=run.wins,
        lives=run.lives,
        warband=warband,
        is_bot=False,
    )

    started = time.perf_counter()
    opponent = await _find_opponent(conn, run, ruleset, round_, policy)
    pairing_ms = (time.perf_counter() - started) * 1000
    gap = abs(opponent.rating - run.rating_at_start)
    await stats.count_pairing(conn, round_, opponent.rung, shard, gap, pairing_ms)
    metrics.PAIRINGS.labels(opponent.rung).inc()
    metrics.PAIRING_GAP.observe(gap)
    metrics.PAIRING_SECONDS.observe(pairing_ms / 1000)

    seed = battle_seed(run.seed, round_)
    started = time.perf_counter()
    result = simulate(ruleset, seed, warband, opponent.warband, record=False)
    metrics.BATTLE_SECONDS.labels("end_turn").observe(time.perf_counter() - started)
    metrics.BATTLES.labels("end_turn").inc()
    winner = WINNERS[result.winner]
    # Bots are not players: a battle against one does not move the rating.
    change = (
        0.0
        if opponent.is_bot
        else elo_change(run.rating_at_start, opponent.rating, winner, ruleset.run.elo_k)
    )
    after = _run_after(run, ruleset, winner, change)
    await runs.save_after_battle(
        conn,
        run.run_id,
        status=after.status,
        lives=after.lives,
        wins=after.wins,
        shop=shops.next_round(ruleset, shop).to_dict(),
        rating_change=after.pending,
    )
    if after.status != SHOPPING:
        await players.add_rating(conn, run.player_id, round(after.pending))
    battle_id = await battles.insert(
        conn,
        run_id=run.run_id,
        round_=round_,
        player_snapshot_id=player_snapshot,
        ghost_snapshot_id=opponent.snapshot_id,
        ghost_player_id=opponent.player_id,
        ruleset=run.ruleset,
        seed=seed,
        pairing=opponent.rung,
        rating_gap=gap,
        pairing_ms=pairing_ms,
        winner=winner,
        rolls=result.rolls,
        health_player=result.health_a,
        health_ghost=result.health_b,
        rating_change=change,
        lives_after=after.lives,
        wins_after=after.wins,
        status_after=after.status,
        rating_pending=after.pending,
    )
    return turn_answer(battle_id, round_, opponent, winner, after)
