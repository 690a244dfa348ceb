"""Use-cases of a run: start it, shop, end the turn (snapshot, pair, fight), finish it.

A shop move or an end-turn reads the run (and its Idempotency-Key) in one statement, computes
its change with the pure rules, and writes everything in one statement that applies only if the
run is still at the version it read; if another request moved the run meanwhile, it is read
again under the run's lock (`writes.py`). So concurrent requests on one run never both apply,
and exactly one battle can exist per (run, round).

Every write holds the player's row before the run's, and a deleted player's is refused
(`player_lock.py`): the statement of a move writes only while its player is not deleted.
"""

import dataclasses
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal, cast
from uuid import UUID

import asyncpg
from pydantic import Field
from typing_extensions import TypedDict

from service.games.cryptids import run as rules
from service.games.cryptids import shop as shops
from service.games.cryptids.content import DEFAULT_RULESET, Ruleset, load_ruleset
from service.games.cryptids.engine import BattleResult, simulate
from service.games.cryptids.rating import (
    UNRATED_BOT,
    UNRATED_NEW_ACCOUNT,
    RatedGhosts,
    unrated_reason,
)
from service.games.cryptids.shop import Shop, ShopError
from service.games.kernel.rng import MASK64
from service.runtime import metrics
from service.store import battles, runs, snapshots, turns
from service.store.battles import BattleRow
from service.store.database import transaction
from service.store.runs import RunRow
from service.usecases import idempotency, pairing, player_lock
from service.usecases.errors import Conflict, Illegal, NotFound, invalid_field
from service.usecases.idle_runs import ending
from service.usecases.writes import checked_write

ShopMove = Callable[[Ruleset, Shop], Shop]
# A run ends won, lost, or abandoned when left idle (docs/rules/cryptids.md#abandoned-runs).
RunStatus = Literal["shopping", "won", "lost", "abandoned"]
TurnStatus = Literal["shopping", "won", "lost"]
# Why a battle moved no rating (docs/rules/cryptids.md#rated-ghosts).
UnratedReason = Literal["bot", "new_account", "rated_recently"]


class Offer(TypedDict):
    slot: int
    species: str
    tier: int
    cost: int
    frozen: bool


class Member(TypedDict):
    position: int
    species: str
    ability: int
    level: int


class Run(TypedDict):
    run_id: str
    version: Annotated[int, Field(description="send it with a move to refuse a run that moved")]
    ruleset: str
    round: int
    lives: int
    wins: int
    gold: int
    status: RunStatus
    shop: list[Offer | None]
    warband: list[Member]
    rating_change_pending: float
    created_at: str


class RunList(TypedDict):
    runs: list[Run]


class Opponent(TypedDict):
    snapshot_id: int
    rating: int
    is_bot: bool
    round: int


class TurnResult(TypedDict):
    battle_id: int
    version: Annotated[int, Field(description="the run's version after this battle")]
    run: Annotated[
        Run,
        Field(
            description="the run after this battle, in the next round's shop (a retry answered"
            " by its round: the run as it is now)"
        ),
    ]
    round: int
    opponent: Opponent
    pairing: str
    winner: str
    lives: int
    wins: int
    status: TurnStatus
    rating_change: Annotated[
        float, Field(description="this battle's rating change, applied when the run ends")
    ]
    rated: Annotated[
        bool,
        Field(
            description="whether this battle moves your rating; a battle that does not still"
            " counts for lives and wins"
        ),
    ]
    unrated_reason: Annotated[
        UnratedReason | None,
        Field(
            description="why it does not: a bot's ghost, an owner account not yet established,"
            " or an owner that already moved your rating in the last day"
        ),
    ]
    rating_change_pending: float


# No bar at all: for tools and benchmarks that start runs without the service's settings.
OPEN_BAR = RatedGhosts(min_age_seconds=0, min_runs=0, repeat_seconds=0)


@dataclass(frozen=True)
class PairingPolicy:
    snapshot_ttl_seconds: float
    rated: RatedGhosts = OPEN_BAR


@dataclass(frozen=True)
class Ghost:
    """The snapshot a battle was fought against: a player's or a bot's."""

    snapshot_id: int
    player_id: UUID | None
    rating: int
    round: int
    rung: str
    warband: list[list[Any]]
    # With the id, a player's snapshot's key; a bot's is stored with the turn, at its time.
    snapshot_at: datetime | None = None

    @property
    def is_bot(self) -> bool:
        return self.player_id is None


def _run_answer(run: RunRow) -> Run:
    shop = Shop.from_dict(run.shop)
    return {
        "run_id": str(run.run_id),
        "version": run.version,
        "ruleset": run.ruleset,
        "round": shop.round,
        "lives": run.lives,
        "wins": run.wins,
        "gold": shop.gold,
        "status": cast(RunStatus, run.status),
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


@dataclass(frozen=True)
class Rated:
    """What a battle did to the player's rating: its change, or why it made none."""

    change: float
    unrated: str | None


def _turn_answer(
    battle_id: int,
    run: Run,
    round_: int,
    ghost: Ghost,
    winner: str,
    after: rules.Standing,
    rated: Rated,
) -> TurnResult:
    return {
        "battle_id": battle_id,
        "version": run["version"],
        "run": run,
        "round": round_,
        "opponent": {
            "snapshot_id": ghost.snapshot_id,
            "rating": ghost.rating,
            "is_bot": ghost.is_bot,
            "round": ghost.round,
        },
        "pairing": ghost.rung,
        "winner": winner,
        "lives": after.lives,
        "wins": after.wins,
        "status": cast(TurnStatus, after.status),
        "rating_change": round(rated.change, 2),
        "rated": rated.unrated is None,
        "unrated_reason": cast(UnratedReason | None, rated.unrated),
        "rating_change_pending": round(after.pending, 2),
    }


async def start(
    pool: asyncpg.Pool,
    player_id: UUID,
    seed: int | None = None,
    idempotency_key: str | None = None,
    max_open: int | None = None,
) -> Run:
    """A new run under the current ruleset; the seed is random unless given (tests, tools).

    With `max_open`, a player who holds that many open runs is refused, and told which they
    are (docs/rules/cryptids.md#open-runs).
    """
    ruleset = load_ruleset(DEFAULT_RULESET)
    run_seed = secrets.randbits(64) if seed is None else seed & MASK64
    shop = shops.new_shop(ruleset, run_seed)
    async with transaction(pool) as conn:
        await player_lock.hold(conn, player_id)

        async def write() -> Run:
            if max_open is not None:
                await _refuse_too_many_open(conn, player_id, max_open)
            row = await runs.insert(
                conn, player_id, ruleset.id, run_seed, ruleset.run.lives, shop.to_dict()
            )
            return _run_answer(row)

        return await idempotency.write_once(
            conn, player_id, idempotency_key, "start-run", {}, write
        )


async def _refuse_too_many_open(conn: asyncpg.Connection, player_id: UUID, limit: int) -> None:
    opened = await runs.open_runs(conn, player_id, limit)
    if len(opened) >= limit:
        raise Conflict(
            f"you hold {len(opened)} open runs, the most allowed: finish one first (a run"
            " left idle ends abandoned)",
            {"open_runs": [str(run_id) for run_id in opened], "max_open_runs": limit},
            code="too_many_open_runs",
        )


async def get(pool: asyncpg.Pool, player_id: UUID, run_id: UUID) -> Run:
    row = await runs.get(pool, run_id, player_id)
    if row is None:
        raise NotFound(f"no run {run_id}")
    return _run_answer(row)


async def list_own(pool: asyncpg.Pool, player_id: UUID, limit: int) -> RunList:
    return {"runs": [_run_answer(row) for row in await runs.list_for(pool, player_id, limit)]}


async def _for_write(
    conn: asyncpg.Connection,
    player_id: UUID,
    run_id: UUID,
    keyed: idempotency.KeyedRequest | None,
    *,
    lock: bool,
    turn: bool = False,
) -> runs.ForWrite:
    """The run as a write reads it; with `lock`, the player's row is held first, then the
    run's."""
    if lock:
        await player_lock.hold(conn, player_id)
    found = await runs.for_write(
        conn, run_id, player_id, None if keyed is None else keyed.key, lock=lock, turn=turn
    )
    if found is None:
        raise NotFound(f"no run {run_id}")
    player_lock.refuse_gone(found.player_gone)
    return found


def _refuse_finished(run: RunRow) -> None:
    if run.status != rules.SHOPPING:
        raise Conflict(f"the run is over ({run.status})", code="run_over")


def _refuse_stale(run: RunRow, version: int | None) -> None:
    """A version sent must be the run's: an older one is stale, a newer one was never shown."""
    if version is None or version == run.version:
        return
    if version > run.version:
        raise Conflict(
            f"version {version} is ahead of the run, which is at version {run.version}",
            {"version": run.version},
            code="version_ahead",
        )
    raise Conflict(
        f"version {version} is stale; the run is at {run.version}",
        {"version": run.version},
        code="stale_version",
    )


def _apply(move: ShopMove, ruleset: Ruleset, shop: Shop) -> Shop:
    try:
        return move(ruleset, shop)
    except ShopError as exc:
        raise Illegal(exc.message, code=exc.code) from exc


def _apply_all(moves: Sequence[ShopMove], ruleset: Ruleset, shop: Shop) -> Shop:
    """The moves in order; the first refused one refuses them all, naming its index."""
    for index, move in enumerate(moves):
        try:
            shop = move(ruleset, shop)
        except ShopError as exc:
            raise Illegal(f"move {index}: {exc.message}", {"move": index}, code=exc.code) from exc
    return shop


@dataclass(frozen=True)
class Retry:
    """How a write is made safe to retry: the run's version it expects, an Idempotency-Key,
    and the request itself (a key reused with another request is refused)."""

    version: int | None = None
    key: str | None = None
    request: Any = None


async def shop_move(
    pool: asyncpg.Pool, player_id: UUID, run_id: UUID, name: str, move: ShopMove, retry: Retry
) -> Run:
    """Apply one shop move to the run as it is; an illegal or stale move changes nothing."""
    keyed = idempotency.keyed_request(retry.key, f"{name}:{run_id}", retry.request)

    async def attempt(conn: asyncpg.Connection, lock: bool) -> Run | None:
        found = await _for_write(conn, player_id, run_id, keyed, lock=lock)
        answered: Run | None = idempotency.answer_for_retry(keyed, found.kept)
        if answered is not None:
            return answered
        run = found.run
        _refuse_finished(run)
        _refuse_stale(run, retry.version)
        shop = _apply(move, load_ruleset(run.ruleset), Shop.from_dict(run.shop)).to_dict()
        answer = _run_answer(dataclasses.replace(run, shop=shop, version=run.version + 1))
        saved = await runs.save_shop(conn, run, shop, idempotency.answer_to_keep(keyed, answer))
        return answer if saved else None

    return await checked_write(pool, attempt, "the run")


async def abandon(pool: asyncpg.Pool, player_id: UUID, run_id: UUID, retry: Retry) -> Run:
    """End the run now, as a run left idle would end: `abandoned`, its pending rating change
    settled with one forfeited loss (docs/rules/cryptids.md#abandoned-runs)."""
    async with transaction(pool) as conn:
        await player_lock.hold(conn, player_id)

        async def write() -> Run:
            run = await runs.get(conn, run_id, player_id, lock=True)
            if run is None:
                raise NotFound(f"no run {run_id}")
            _refuse_finished(run)
            _refuse_stale(run, retry.version)
            ended = ending(run_id, player_id, run.ruleset, run.rating_change)
            await runs.abandon(conn, [ended], rules.ABANDONED)
            after = await runs.get(conn, run_id, player_id)
            assert after is not None
            return _run_answer(after)

        return await idempotency.write_once(
            conn, player_id, retry.key, f"abandon:{run_id}", retry.request, write
        )


async def _answer_of(conn: asyncpg.Connection, battle: BattleRow, run: RunRow) -> TurnResult:
    snapshot = await snapshots.get(conn, battle.ghost_snapshot_id)
    ghost = Ghost(
        snapshot.snapshot_id,
        snapshot.player_id,
        snapshot.rating,
        snapshot.round,
        battle.pairing,
        [],
    )
    after = rules.Standing(
        battle.lives_after, battle.wins_after, battle.status_after, battle.rating_pending
    )
    rated = Rated(battle.rating_change, UNRATED_BOT if ghost.is_bot else battle.unrated)
    return _turn_answer(
        battle.battle_id, _run_answer(run), battle.round, ghost, battle.winner, after, rated
    )


async def end_turn(
    pool: asyncpg.Pool,
    player_id: UUID,
    run_id: UUID,
    *,
    round_: int | None,
    moves: Sequence[ShopMove],
    order: list[int] | None,
    abilities: list[int] | None,
    policy: PairingPolicy,
    retry: Retry,
) -> TurnResult:
    """Make the shop moves, snapshot the warband, pair it, fight, and move the run on; retries
    get the same battle. The moves are part of the turn: applied with it, or not at all.

    The caller says which turn it ends (`round`, the run's `version`, or an Idempotency-Key),
    so that a repeated request can never play the next round. The turn is read, computed, and
    written by one statement that applies only if the run has not moved meanwhile.
    """
    if round_ is None and retry.version is None and retry.key is None:
        raise invalid_field(
            "round",
            "say which turn this ends: send round (or version, or an Idempotency-Key),"
            " so that a retry cannot play the next round",
        )
    keyed = idempotency.keyed_request(retry.key, f"end-turn:{run_id}", retry.request)

    async def attempt(conn: asyncpg.Connection, lock: bool) -> TurnResult | None:
        found = await _for_write(conn, player_id, run_id, keyed, lock=lock, turn=True)
        answered: TurnResult | None = idempotency.answer_for_retry(keyed, found.kept)
        if answered is not None:
            return answered
        run = found.run
        shop = Shop.from_dict(run.shop)
        if round_ is None or round_ == shop.round:
            _refuse_finished(run)
            _refuse_stale(run, retry.version)
            return await _fight(conn, found, shop, moves, order, abilities, policy, keyed)
        earlier = await battles.of_round(conn, run_id, round_) if round_ < shop.round else None
        if earlier is None:
            raise Illegal(
                f"round {round_} is not this run's current round ({shop.round})",
                code="wrong_round",
            )
        return await _answer_of(conn, earlier, run)

    return await checked_write(pool, attempt, "the run")


def _warband(members: Sequence[shops.Member]) -> list[list[Any]]:
    return [[m.species, m.ability, m.level] for m in members]


async def _ghost(
    conn: asyncpg.Connection,
    found: runs.ForWrite,
    ruleset: Ruleset,
    round_: int,
    policy: PairingPolicy,
) -> Ghost:
    """A player's ghost from the pairing ladder, or else a bot, stored as a snapshot with the
    turn."""
    run = found.run
    ghost = await pairing.find_ghost(
        conn,
        run_seed=run.seed,
        ruleset=run.ruleset,
        rules=ruleset.pairing,
        round_=round_,
        rating=run.rating_at_start,
        exclude_players=[run.player_id, *found.met],
        ttl_seconds=policy.snapshot_ttl_seconds,
    )
    if ghost is not None:
        return Ghost(
            ghost.snapshot_id,
            ghost.player_id,
            ghost.rating,
            ghost.round,
            ghost.rung,
            ghost.warband,
            ghost.snapshot_at,
        )
    warband = _warband(shops.bot_warband(ruleset, run.seed, round_))
    # A bot is rated like the player, so the rating gap reads 0.
    snapshot_id = await snapshots.next_id(conn)
    return Ghost(snapshot_id, None, run.rating_at_start, round_, pairing.RUNG_BOT, warband)


async def _unrated(
    conn: asyncpg.Connection, player_id: UUID, ghost: Ghost, bar: RatedGhosts
) -> str | None:
    """Why a battle against this ghost moves no rating, or None when it does
    (docs/rules/cryptids.md#rated-ghosts)."""
    if ghost.player_id is None:
        return UNRATED_BOT
    owner = await snapshots.owner(conn, player_id, ghost.player_id, bar.min_runs)
    if owner is None:
        return UNRATED_NEW_ACCOUNT
    return unrated_reason(
        bar,
        owner_age_seconds=owner.age_seconds,
        owner_finished_runs=owner.fought_runs,
        since_owner_rated=owner.since_rated,
    )


@dataclass(frozen=True)
class Pairing:
    ghost: Ghost
    gap: int
    ms: float


async def _pair(
    conn: asyncpg.Connection,
    found: runs.ForWrite,
    ruleset: Ruleset,
    round_: int,
    policy: PairingPolicy,
) -> Pairing:
    """The ghost, with the figures of how it was found (counted for the ops report)."""
    started = time.perf_counter()
    ghost = await _ghost(conn, found, ruleset, round_, policy)
    ms = (time.perf_counter() - started) * 1000
    return Pairing(ghost, abs(ghost.rating - found.run.rating_at_start), ms)


def _battle(ruleset: Ruleset, seed: int, warband: list[list[Any]], ghost: Ghost) -> BattleResult:
    started = time.perf_counter()
    result = simulate(ruleset, seed, warband, ghost.warband, record=False)
    metrics.child(metrics.BATTLE_SECONDS, "end_turn").observe(time.perf_counter() - started)
    metrics.child(metrics.BATTLES, "end_turn").inc()
    return result


def _count(paired: Pairing) -> None:
    metrics.child(metrics.PAIRINGS, paired.ghost.rung).inc()
    metrics.PAIRING_GAP.observe(paired.gap)
    metrics.PAIRING_SECONDS.observe(paired.ms / 1000)


async def _fight(
    conn: asyncpg.Connection,
    found: runs.ForWrite,
    shop: Shop,
    moves: Sequence[ShopMove],
    order: list[int] | None,
    abilities: list[int] | None,
    policy: PairingPolicy,
    keyed: idempotency.KeyedRequest | None,
) -> TurnResult | None:
    run = found.run
    ruleset = load_ruleset(run.ruleset)
    shop = _apply_all(moves, ruleset, shop)
    shop = _apply(lambda _, s: shops.arrange(s, order, abilities), ruleset, shop)
    if not shop.warband:
        raise Illegal("the warband is empty: buy a cryptid first", code="empty_warband")
    round_ = shop.round
    paired = await _pair(conn, found, ruleset, round_, policy)
    ghost = paired.ghost

    seed = rules.battle_seed(run.seed, round_)
    warband = _warband(shop.warband)
    result = _battle(ruleset, seed, warband, ghost)
    winner = rules.WINNERS[result.winner]
    unrated = await _unrated(conn, run.player_id, ghost, policy.rated)
    # An unrated battle still counts for lives and wins; only its rating change is withheld.
    change = (
        0.0
        if unrated is not None
        else rules.rating_change(
            ruleset.run, run.rating_at_start, ghost.rating, winner, ghost.is_bot
        )
    )
    before = rules.Standing(run.lives, run.wins, run.status, run.rating_change)
    after = rules.after_battle(ruleset.run, before, winner, change)
    next_shop = shops.next_round(ruleset, shop).to_dict()
    moved_on = dataclasses.replace(
        run,
        version=run.version + 1,
        status=after.status,
        lives=after.lives,
        wins=after.wins,
        shop=next_shop,
        rating_change=after.pending,
    )
    answer = _turn_answer(
        found.battle_id, _run_answer(moved_on), round_, ghost, winner, after, Rated(change, unrated)
    )
    turn = turns.Turn(
        run_id=run.run_id,
        player_id=run.player_id,
        version=run.version,
        round=round_,
        status=after.status,
        lives=after.lives,
        wins=after.wins,
        shop=next_shop,
        rating_pending=after.pending,
        rating_settled=round(after.pending) if after.over else None,
        snapshot_id=found.snapshot_id,
        lives_before=run.lives,
        wins_before=run.wins,
        warband=warband,
        ghost_snapshot_id=ghost.snapshot_id,
        ghost_snapshot_at=ghost.snapshot_at,
        ghost_player_id=ghost.player_id,
        bot_warband=ghost.warband if ghost.is_bot else None,
        battle_id=found.battle_id,
        seed=seed,
        pairing=ghost.rung,
        rating_gap=paired.gap,
        pairing_ms=paired.ms,
        winner=winner,
        rolls=result.rolls,
        health_player=result.health_a,
        health_ghost=result.health_b,
        rating_change=change,
        unrated=None if ghost.is_bot else unrated,
        shard=run.run_id.int,
    )
    if not await turns.save(conn, turn, idempotency.answer_to_keep(keyed, answer)):
        return None
    _count(paired)
    return answer
