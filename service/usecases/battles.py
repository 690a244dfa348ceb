"""Use-cases of battles: simulate one on demand, read a stored one and its replay."""

import time
from typing import cast
from uuid import UUID

import asyncpg
from typing_extensions import TypedDict

from service.games.cryptids.content import DEFAULT_RULESET, UnknownRulesetError, load_ruleset
from service.games.cryptids.engine import simulate
from service.games.cryptids.outcome import BattleOutcome, result_to_wire
from service.games.cryptids.rating import UNRATED_BOT
from service.games.cryptids.replay import ReplayWire
from service.games.cryptids.warband import WarbandError
from service.runtime import metrics
from service.store import battles, snapshots
from service.store.battles import BattleRow
from service.store.snapshots import SnapshotRow
from service.usecases.errors import NotFound, invalid_field
from service.usecases.runs import UnratedReason


class SnapshotCryptid(TypedDict):
    species: str
    ability: int
    level: int


class BattleSide(TypedDict):
    snapshot_id: int
    round: int
    rating: int
    wins: int
    lives: int
    is_bot: bool
    cryptids: list[SnapshotCryptid]


class BattleHealth(TypedDict):
    player: int
    ghost: int


class Battle(TypedDict):
    battle_id: int
    round: int
    ruleset: str
    seed: int
    pairing: str
    rating_gap: int
    winner: str
    rolls: int
    health: BattleHealth
    rating_change: float
    # Whether it moved the player's rating, and if not why (docs/rules/cryptids.md#rated-ghosts).
    rated: bool
    unrated_reason: UnratedReason | None
    player: BattleSide
    ghost: BattleSide
    created_at: str


def simulate_battle(
    ruleset_id: str | None,
    seed: int,
    a: list[tuple[str, int, int]],
    b: list[tuple[str, int, int]],
    include_replay: bool,
) -> BattleOutcome:
    """One battle on demand, nothing stored; a field the ruleset refuses is named."""
    try:
        ruleset = load_ruleset(ruleset_id or DEFAULT_RULESET)
    except UnknownRulesetError as exc:
        raise invalid_field("ruleset", str(exc)) from exc
    started = time.perf_counter()
    try:
        result = simulate(ruleset, seed, a, b, record=include_replay)
    except WarbandError as exc:
        raise invalid_field(exc.field, exc.message) from exc
    metrics.child(metrics.BATTLE_SECONDS, "simulate").observe(time.perf_counter() - started)
    metrics.child(metrics.BATTLES, "simulate").inc()
    return result_to_wire(result, include_replay)


def _snapshot_to_wire(snapshot: SnapshotRow) -> BattleSide:
    return {
        "snapshot_id": snapshot.snapshot_id,
        "round": snapshot.round,
        "rating": snapshot.rating,
        "wins": snapshot.wins,
        "lives": snapshot.lives,
        "is_bot": snapshot.is_bot,
        "cryptids": [
            {"species": species, "ability": ability, "level": level}
            for species, ability, level in snapshot.warband
        ],
    }


async def _readable(pool: asyncpg.Pool, player_id: UUID, battle_id: int) -> BattleRow:
    """The battle, if this player fought it or owns its ghost; otherwise it does not exist."""
    battle = await battles.get(pool, battle_id)
    if battle is None or player_id not in (battle.player_id, battle.ghost_player_id):
        raise NotFound(f"no battle {battle_id}")
    return battle


async def get(pool: asyncpg.Pool, player_id: UUID, battle_id: int) -> Battle:
    battle = await _readable(pool, player_id, battle_id)
    mine = await snapshots.get(pool, battle.player_snapshot_id)
    ghost = await snapshots.get(pool, battle.ghost_snapshot_id)
    unrated = UNRATED_BOT if ghost.is_bot else battle.unrated
    return {
        "battle_id": battle.battle_id,
        "round": battle.round,
        "ruleset": battle.ruleset,
        "seed": battle.seed,
        "pairing": battle.pairing,
        "rating_gap": battle.rating_gap,
        "winner": battle.winner,
        "rolls": battle.rolls,
        "health": {"player": battle.health_player, "ghost": battle.health_ghost},
        "rating_change": round(battle.rating_change, 2),
        "rated": unrated is None,
        "unrated_reason": cast(UnratedReason | None, unrated),
        "player": _snapshot_to_wire(mine),
        "ghost": _snapshot_to_wire(ghost),
        "created_at": battle.created_at.isoformat(),
    }


async def replay(pool: asyncpg.Pool, player_id: UUID, battle_id: int) -> ReplayWire:
    """Re-simulated from the stored inputs under the stored ruleset: the same bytes every time."""
    battle = await _readable(pool, player_id, battle_id)
    mine = await snapshots.get(pool, battle.player_snapshot_id)
    ghost = await snapshots.get(pool, battle.ghost_snapshot_id)
    ruleset = load_ruleset(battle.ruleset)
    result = simulate(ruleset, battle.seed, mine.warband, ghost.warband, record=True)
    assert result.replay is not None
    return result.replay.to_wire()
