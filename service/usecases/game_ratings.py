"""OpenSkill ratings of the turn-based games, per game and season (docs/api.md, "Ratings per
game and season").

A finished match rates its players' seats in the transaction that stores its end, in the
current season (the latest started); a player's first rated match of a season starts from the
previous season's rating, softly reset (`ratings.soft_reset`).
"""

from collections.abc import Mapping, Sequence
from typing import Any
from uuid import UUID

import asyncpg
from typing_extensions import TypedDict

from service.games.kernel.ratings import Skill, rate, rated_seats, soft_reset
from service.games.registry import REGISTRY
from service.store import game_ratings as store
from service.store.game_ratings import RankedRating
from service.store.matches import SeatRow
from service.usecases import names, players
from service.usecases.errors import Conflict, NotFound, invalid_field


class Rating(TypedDict):
    game: str
    season: str
    rating: int
    mu: float
    sigma: float
    matches: int


class BoardEntry(players.Entry, total=False):
    mu: float
    sigma: float
    matches: int


class Board(TypedDict, total=False):
    game: str
    season: str
    entries: list[BoardEntry]


class Season(TypedDict):
    name: str


def shown(ordinal: float) -> int:
    """The rating shown: the ordinal (mu - 3 sigma), rounded."""
    return round(ordinal)


async def start_season(conn: asyncpg.Pool | asyncpg.Connection, name: str) -> bool:
    """Start the season `name` now, unless it exists (then False)."""
    return await store.start_season(conn, name)


async def new_season(pool: asyncpg.Pool, name: str) -> Season:
    """The operator starts the season `name` now; `Conflict` if that name was used."""
    if not await store.start_season(pool, name):
        raise Conflict(f"season {name!r} exists", code="season_exists")
    return {"name": name}


async def rate_finished(
    conn: asyncpg.Connection,
    game: str,
    outcome: Mapping[str, Any] | None,
    seats: Sequence[SeatRow],
) -> None:
    """Rate the players of a match that has just finished (`outcome`; None: nothing to rate),
    in the caller's transaction.

    Bots are not rated and do not rate; nor is a match with fewer than two players, or one
    player holding two seats.
    """
    if outcome is None:
        return
    owners = {s.seat: s.player_id for s in seats if not s.bot and s.player_id is not None}
    placed = rated_seats(outcome["ranking"], set(owners))
    if not placed or len({owners[seat] for seat in placed}) < len(placed):
        return
    season = await store.current_season(conn)
    if season is None:
        return
    ids = [owners[seat] for seat in placed]
    previous = await store.previous_season(conn, season)
    earlier = {} if previous is None else await store.skills(conn, game, previous, ids)
    starting = {p: _pair(soft_reset(None if p not in earlier else Skill(*earlier[p]))) for p in ids}
    current = await store.lock_skills(conn, game, season, starting)
    new = rate(outcome["ranking"], {seat: Skill(*current[owners[seat]]) for seat in placed})
    await store.record_match(conn, game, season, {owners[s]: _pair(k) for s, k in new.items()})


def _pair(skill: Skill) -> tuple[float, float]:
    return (skill.mu, skill.sigma)


async def of_player(pool: asyncpg.Pool, player_id: UUID) -> list[Rating]:
    """The player's ratings of the current season, by game."""
    season = await store.current_season(pool)
    if season is None:
        return []
    return [
        {
            "game": r.game,
            "season": r.season,
            "rating": shown(r.ordinal),
            "mu": r.mu,
            "sigma": r.sigma,
            "matches": r.matches,
        }
        for r in await store.of_player(pool, player_id, season)
    ]


async def leaderboard(
    pool: asyncpg.Pool, game: str, season: str | None, limit: int, around: UUID | None
) -> Board:
    """The best `limit` ratings of `game` in `season` (None: the current one); with `around`,
    that player and those just above and below."""
    if game not in {g.id for g in REGISTRY.games()}:
        raise invalid_field("query.game", f"no turn-based game {game!r}")
    chosen = season or await store.current_season(pool)
    if chosen is None or not await store.season_exists(pool, chosen):
        raise NotFound(f"no season {season!r}", code="unknown_season")
    if around is not None:
        rows = await store.around(pool, game, chosen, around, limit // 2)
    else:
        rows = await store.top(pool, game, chosen, limit)
    return {"game": game, "season": chosen, "entries": [_entry(r) for r in rows]}


def _entry(r: RankedRating) -> BoardEntry:
    return {
        "rank": r.rank,
        "player_id": str(r.player_id),
        "name": r.name,
        "tag": names.tag_text(r.tag),
        "handle": names.handle(r.name, r.tag),
        "rating": shown(r.ordinal),
        "mu": r.mu,
        "sigma": r.sigma,
        "matches": r.matches,
    }


async def autobattler_leaderboard(pool: asyncpg.Pool, limit: int, around: UUID | None) -> Board:
    """The autobattler's Elo leaderboard, as it always was."""
    board = await players.leaderboard(pool, limit, around)
    return {
        "entries": [
            {
                "rank": e["rank"],
                "player_id": e["player_id"],
                "name": e["name"],
                "tag": e["tag"],
                "handle": e["handle"],
                "rating": e["rating"],
            }
            for e in board["entries"]
        ]
    }
