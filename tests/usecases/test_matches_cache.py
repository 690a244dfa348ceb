"""Actions decided on the match this process last wrote, instead of a read: never on a stale one."""

from collections.abc import AsyncIterator
from typing import Any
from uuid import UUID

import asyncpg
import pytest

from service.config import Settings
from service.store import matches as store
from service.store.matches import MatchRow, SeatRow
from service.usecases.errors import Conflict
from service.usecases.matches import play
from service.usecases.matches.cache import MatchCache
from tests.usecases.matches_helpers import duel_against_bot, own_pool


@pytest.fixture
async def pool(settings: Settings) -> AsyncIterator[asyncpg.Pool]:
    async with own_pool(settings, 4) as pool:
        yield pool


async def _match(pool: asyncpg.Pool, name: str) -> tuple[UUID, UUID, int, dict[str, Any]]:
    """A player against a bot in Duelo: the player, the match, its version and a legal action."""
    player, match_id = await duel_against_bot(pool, name)
    seen = await play.read(pool, player, match_id)
    return player, match_id, seen["version"], seen["legal_actions"][0]


async def _act(
    pool: asyncpg.Pool,
    player: UUID,
    match_id: UUID,
    version: int,
    action: dict[str, Any],
    cache: MatchCache | None,
) -> tuple[int, dict[str, Any]]:
    done = (
        await play.act(
            pool,
            player,
            match_id,
            version=version,
            action=action,
            idempotency_key=None,
            cache=cache,
        )
    ).answer
    return done["version"], done["legal_actions"][0]


async def _logged_versions(pool: asyncpg.Pool, match_id: UUID) -> list[int]:
    return [a.version for a in await store.actions(pool, match_id)]


async def _refused(
    pool: asyncpg.Pool,
    player: UUID,
    match_id: UUID,
    version: int,
    action: dict[str, Any],
    cache: MatchCache,
) -> str:
    """The code of the action's 409, once it is checked that nothing of it was stored."""
    logged = await _logged_versions(pool, match_id)
    with pytest.raises(Conflict) as refused:
        await _act(pool, player, match_id, version, action, cache)
    assert await _logged_versions(pool, match_id) == logged
    return refused.value.code


def _copy(cache: MatchCache, match_id: UUID) -> MatchRow:
    cached = cache.get(match_id)
    assert cached is not None
    return cached.row


async def test_an_action_on_a_cached_match_skips_the_read_and_lands(
    pool: asyncpg.Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    player, match_id, version, action = await _match(pool, "cache-hit")
    cache = MatchCache()
    version, action = await _act(pool, player, match_id, version, action, cache)
    assert _copy(cache, match_id).version == version
    reads = 0
    read = store.for_write

    async def counted(*args: Any, **kwargs: Any) -> store.ForWrite | None:
        nonlocal reads
        reads += 1
        return await read(*args, **kwargs)

    monkeypatch.setattr(store, "for_write", counted)
    after, _ = await _act(pool, player, match_id, version, action, cache)
    assert reads == 0
    assert after > version
    assert await _logged_versions(pool, match_id) == list(range(1, after + 1))
    stored = await store.get(pool, match_id)
    assert stored is not None
    assert (stored.version, stored.state) == (after, _copy(cache, match_id).state)


async def test_a_match_moved_by_another_instance_is_read_again_not_refused(
    pool: asyncpg.Pool,
) -> None:
    """The cache is behind; the client's version, from the other instance's answer, is right."""
    player, match_id, version, action = await _match(pool, "cache-behind")
    here = MatchCache()
    version, action = await _act(pool, player, match_id, version, action, here)
    version, action = await _act(pool, player, match_id, version, action, None)
    assert _copy(here, match_id).version < version
    after, _ = await _act(pool, player, match_id, version, action, here)
    assert after > version
    assert await _logged_versions(pool, match_id) == list(range(1, after + 1))
    assert _copy(here, match_id).version == after


async def test_a_write_decided_on_a_stale_cache_stores_nothing(pool: asyncpg.Pool) -> None:
    """The client is as far behind as the cache: the cached match would let the action pass,
    its write finds the match moved, and the read behind it refuses as a read always did."""
    player, match_id, version, action = await _match(pool, "cache-stale")
    here = MatchCache()
    behind, stale_action = await _act(pool, player, match_id, version, action, here)
    moved, _ = await _act(pool, player, match_id, behind, stale_action, None)
    code = await _refused(pool, player, match_id, behind, stale_action, here)
    assert code == "stale_version"
    assert here.get(match_id) is None
    stored = await store.get(pool, match_id)
    assert stored is not None and stored.version == moved


async def test_a_resignation_behind_the_cache_ends_the_match_for_it_too(
    pool: asyncpg.Pool,
) -> None:
    player, match_id, version, action = await _match(pool, "cache-resigned")
    here = MatchCache()
    version, action = await _act(pool, player, match_id, version, action, here)
    await play.resign(pool, player, match_id, idempotency_key=None)
    code = await _refused(pool, player, match_id, version, action, here)
    assert code == "match_not_active"


def _row(number: int, status: str = "active") -> MatchRow:
    return MatchRow(UUID(int=number), "g", "r", 0, 2, {}, status, 1, 1, {}, None, None, None)


def test_the_cache_forgets_the_least_recently_written_and_the_matches_that_ended() -> None:
    cache = MatchCache(capacity=2)
    seats = (SeatRow(0, None, True),)
    for number in (1, 2, 3):
        cache.keep(_row(number), seats)
    assert [cache.get(UUID(int=n)) is not None for n in (1, 2, 3)] == [False, True, True]
    cache.keep(_row(2), seats)
    cache.keep(_row(4), seats)
    assert [cache.get(UUID(int=n)) is not None for n in (2, 3, 4)] == [True, False, True]
    cache.keep(_row(4, "finished"), seats)
    assert cache.get(UUID(int=4)) is None and len(cache) == 1
