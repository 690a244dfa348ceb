"""Use-cases of a run: start it, shop, end the turn (snapshot, pair, fight), finish it.

Every call is one transaction holding the run's row lock, so concurrent requests on one run
are serialised and exactly one battle can exist per (run, round).
"""

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import asyncpg

from service import idempotency, metrics, pairing
from service.errors import Conflict, Illegal, NotFound
from service.games.cryptids import shop as shops
from service.games.cryptids.content import DEFAULT_RULESET, Ruleset, load_ruleset
from service.games.cryptids.engine import simulate
from service.games.cryptids.rating import elo_change
from service.games.cryptids.shop import Shop, ShopError
from service.games.rng import MASK64, derive_seed
from service.store import battles, players, runs, snapshots, stats
from service.store.battles import BattleRow
from service.store.runs import RunRow

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


def battle_to_wire(
    battle: BattleRow, ghost_is_bot: bool, ghost_rating: int, ghost_round: int
) -> dict[str, Any]:
    return {
        "battle_id": battle.battle_id,
        "round": battle.round,
        "opponent": {
            "snapshot_id": battle.ghost_snapshot_id,
            "rating": ghost_rating,
            "is_bot": ghost_is_bot,
            "round": ghost_round,
        },
        "pairing": battle.pairing,
        "winner": battle.winner,
        "lives": battle.lives_after,
        "wins": battle.wins_after,
        "status": battle.status_after,
        "rating_change_pending": round(battle.rating_pending, 2),
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
        shop = _apply(move, load_ruleset(run.ruleset), Shop.from_dict(run.shop))
        await runs.save_shop(conn, run_id, shop.to_dict())
    return run_to_wire(RunRow(**{**run.__dict__, "shop": shop.to_dict()}))


async def _answer_of(conn: asyncpg.Connection, battle: BattleRow) -> dict[str, Any]:
    ghost = await snapshots.get(conn, battle.ghost_snapshot_id)
    return battle_to_wire(battle, ghost.is_bot, ghost.rating, ghost.round)


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
    warband = [[m.species, m.ability, m.level] for m in shop.warband]
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
    ghost = await pairing.find_ghost(
        conn,
        run_seed=run.seed,
        ruleset=run.ruleset,
        round_=round_,
        rating=run.rating_at_start,
        exclude_players=[run.player_id, *await battles.opponents_met(conn, run.run_id)],
        ttl_seconds=policy.snapshot_ttl_seconds,
    )
    pairing_ms = (time.perf_counter() - started) * 1000
    if ghost is None:
        ghost_warband = [
            [m.species, m.ability, m.level] for m in shops.bot_warband(ruleset, run.seed, round_)
        ]
        ghost_snapshot = await snapshots.insert(
            conn,
            run_id=None,
            player_id=None,
            round_=round_,
            ruleset=run.ruleset,
            rating=run.rating_at_start,
            wins=0,
            lives=0,
            warband=ghost_warband,
            is_bot=True,
        )
        ghost_player, ghost_rating, ghost_round, rung = (
            None,
            run.rating_at_start,
            round_,
            pairing.RUNG_BOT,
        )
    else:
        ghost_warband = (await snapshots.get(conn, ghost.snapshot_id)).warband
        ghost_snapshot, ghost_player = ghost.snapshot_id, ghost.player_id
        ghost_rating, ghost_round, rung = ghost.rating, ghost.round, ghost.rung

    gap = abs(ghost_rating - run.rating_at_start)
    await stats.count_pairing(conn, round_, rung, shard, gap, pairing_ms)
    metrics.PAIRINGS.labels(rung).inc()
    metrics.PAIRING_GAP.observe(gap)
    metrics.PAIRING_SECONDS.observe(pairing_ms / 1000)

    seed = battle_seed(run.seed, round_)
    started = time.perf_counter()
    result = simulate(ruleset, seed, warband, ghost_warband, record=False)
    metrics.BATTLE_SECONDS.labels("end_turn").observe(time.perf_counter() - started)
    metrics.BATTLES.labels("end_turn").inc()
    winner = WINNERS[result.winner]
    # Bots are not players: a battle against one does not move the rating.
    change = 0.0 if ghost is None else elo_change(run.rating_at_start, ghost_rating, winner)
    lives = run.lives - (winner == "ghost")
    wins = run.wins + (winner == "player")
    status = SHOPPING
    if wins >= ruleset.run.wins_to_finish:
        status = "won"
    elif lives <= 0:
        status = "lost"
    pending = run.rating_change + change
    await runs.save_after_battle(
        conn,
        run.run_id,
        status=status,
        lives=lives,
        wins=wins,
        shop=shops.next_round(ruleset, shop).to_dict(),
        rating_change=pending,
    )
    if status != SHOPPING:
        await players.add_rating(conn, run.player_id, round(pending))
    battle_id = await battles.insert(
        conn,
        run_id=run.run_id,
        round_=round_,
        player_snapshot_id=player_snapshot,
        ghost_snapshot_id=ghost_snapshot,
        ghost_player_id=ghost_player,
        ruleset=run.ruleset,
        seed=seed,
        pairing=rung,
        rating_gap=gap,
        pairing_ms=pairing_ms,
        winner=winner,
        rolls=result.rolls,
        health_player=result.health_a,
        health_ghost=result.health_b,
        rating_change=change,
        lives_after=lives,
        wins_after=wins,
        status_after=status,
        rating_pending=pending,
    )
    stored = await battles.get(conn, battle_id)
    assert stored is not None
    return battle_to_wire(stored, ghost is None, ghost_rating, ghost_round)
