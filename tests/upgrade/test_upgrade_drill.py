"""The upgrade drill: data written by the previous release upgrades intact.

The previous release's recorded database (tests/upgrade/releases/<version>, made by
tests/upgrade/record_release.py from that release's own code) is restored into a new database,
migrated by this release's runner, and served by this release. Then each test checks one
promise, through HTTP as the release's players read it back and through SQL: every row is
there, every session still refreshes, every run still adds up, every battle replays to the
same bytes, every match rebuilds from its action log to its stored state, a match in progress
can be finished, every rating and rank is unchanged, tickets are as they were, and a retried
Idempotency-Key answers what it answered before.
"""

import dataclasses
import random
import subprocess
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import asyncpg
import pytest

from service.config import Settings
from service.games.cryptids.content import load_ruleset
from service.games.cryptids.engine import simulate
from service.runtime.embedded_db import postgres_bin
from service.store.migrate import known, migrate
from tests.api.matches_helpers import cache_agrees_with_log
from tests.conftest import make_url, service_and_app
from tests.http import Api
from tests.upgrade.record_release import (
    CENTURY_SECONDS,
    GAMES,
    act_in,
    battle_observation,
    fetch_battle,
    leaderboards,
    observe_match,
    observe_run,
    observe_ticket,
    ok,
    player_ratings,
    replay_digest,
    retried,
    row_counts,
)
from tests.upgrade.release import Release, previous

# The matches the drill plays on to their end; the others are compared as they were recorded.
FINISHED_HERE = "in_progress_vs_bot"


@dataclass
class Upgraded:
    """The previous release's database, restored and migrated, served by this release."""

    release: Release
    url: str
    restored_rows: dict[str, int]
    applied: list[int]
    api: Api
    # Each player's access token, from a sign-in with its recorded device id.
    tokens: list[str]

    @property
    def manifest(self) -> dict[str, Any]:
        return self.release.manifest


def restore(release: Release, url: str) -> None:
    """pg_restore of the release's dump, with the programs of the server the suite runs."""
    restored = subprocess.run(
        [
            str(postgres_bin() / "pg_restore"),
            "--exit-on-error",
            "--no-owner",
            "--no-privileges",
            f"--dbname={url}",
            str(release.dump),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert restored.returncode == 0, restored.stderr


def upgraded_settings(settings: Settings, url: str, release: Release) -> Settings:
    """This release's settings for the restored database: the release's secret (its tokens
    and device ids must still be recognised) and its first season (so that starting makes no
    new one). The dump was written one day and is restored any later day: the sweeps that act on
    age would end its idle runs, forget its keys and events and seat its searching ticket with
    bots, each of which has tests of its own; here they wait a century."""
    manifest = release.manifest
    return dataclasses.replace(
        settings,
        database_url=url,
        secret_key=manifest["secret_key"],
        season=manifest["seasons"][0],
        run_idle_seconds=CENTURY_SECONDS,
        idempotency_key_ttl_seconds=CENTURY_SECONDS,
        match_events_retention_seconds=CENTURY_SECONDS,
        matchmaking_bot_after_seconds=CENTURY_SECONDS,
    )


async def signed_in(api: Api, player: dict[str, Any]) -> str:
    """The player signed in with its recorded device id: still that player."""
    answer = await api.post("/v1/auth/device", {"device_id": player["device_id"]})
    assert answer.status == 200, (player["name"], answer.body)
    assert answer.body["player_id"] == player["player_id"]
    token: str = answer.body["access_token"]
    return token


@pytest.fixture(scope="module")
async def upgraded(settings: Settings) -> AsyncIterator[Upgraded]:
    release = previous()
    assert settings.database_url is not None
    name = f"upgrade_{uuid.uuid4().hex}"
    admin = await asyncpg.connect(settings.database_url)
    await admin.execute(f'CREATE DATABASE "{name}"')
    url = make_url(settings.database_url, name)
    try:
        restore(release, url)
        rows = await row_counts(url)
        applied = [step.migration.version for step in await migrate(url)]
        served = upgraded_settings(settings, url, release)
        async with service_and_app(served) as (api, _):
            tokens = [await signed_in(api, p) for p in release.manifest["players"]]
            yield Upgraded(release, url, rows, applied, api, tokens)
    finally:
        await admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        await admin.close()


async def test_every_row_and_partition_is_restored(upgraded: Upgraded) -> None:
    """The dump restores every table's rows, snapshots and battles in the weekly partitions
    and the default one they were written to."""
    assert upgraded.restored_rows == upgraded.manifest["rows"]


async def test_the_release_database_is_adopted_then_migrated(upgraded: Upgraded) -> None:
    """Made by the release, the database is adopted at migration 1 without replaying it, and
    every later migration is applied once."""
    newest = len(known())
    assert upgraded.applied == list(range(2, newest + 1))
    conn = await asyncpg.connect(upgraded.url)
    try:
        ledger = await conn.fetch("SELECT version FROM schema_migrations ORDER BY version")
    finally:
        await conn.close()
    assert [row["version"] for row in ledger] == list(range(1, newest + 1))


async def test_every_session_still_refreshes(upgraded: Upgraded) -> None:
    """Each player's last refresh token gives a new pair that reads the player; a linked
    device still signs its player in; a signed-out session stays revoked."""
    api = upgraded.api
    for player in upgraded.manifest["players"]:
        pair = await api.post("/v1/auth/refresh", {"refresh_token": player["refresh_token"]})
        assert pair.status == 200, (player["name"], pair.body)
        me = ok(await api.get("/v1/players/me", token=pair.body["access_token"]))
        assert me["player_id"] == player["player_id"]
        if player["linked_device_id"] is not None:
            linked = {**player, "device_id": player["linked_device_id"]}
            await signed_in(api, linked)
    _, revoked = upgraded.manifest["revoked_refresh_token"]
    refused = await api.post("/v1/auth/refresh", {"refresh_token": revoked})
    assert refused.status == 401, refused.body


async def runs_not_adding_up(url: str) -> list[dict[str, Any]]:
    """Runs whose wins, lives and round disagree with their battles, or whose end does not
    follow from them."""
    conn = await asyncpg.connect(url)
    try:
        rows = await conn.fetch(
            """
            SELECT r.run_id, r.status, r.wins, r.lives, (r.shop -> 'round')::int AS round,
                   count(b.*) AS battles,
                   count(b.*) FILTER (WHERE b.winner = 'player') AS won,
                   count(b.*) FILTER (WHERE b.winner = 'ghost') AS lost
              FROM runs r LEFT JOIN battles b USING (run_id)
             GROUP BY r.run_id
            HAVING r.wins <> count(b.*) FILTER (WHERE b.winner = 'player')
                OR 5 - r.lives <> count(b.*) FILTER (WHERE b.winner = 'ghost')
                OR count(DISTINCT b.round) <> count(b.*)
                OR (r.shop -> 'round')::int <> count(b.*) + 1
                OR (r.status = 'won') <> (r.wins = 10)
                OR (r.status = 'lost') <> (r.lives = 0)
            """
        )
    finally:
        await conn.close()
    return [dict(row) for row in rows]


async def test_every_run_still_adds_up(upgraded: Upgraded) -> None:
    """Every run's wins, lives and round are its battles', and each reads as it was."""
    assert await runs_not_adding_up(upgraded.url) == []
    for run_id, recorded in upgraded.manifest["runs"].items():
        token = upgraded.tokens[recorded["owner"]]
        assert await observe_run(upgraded.api, token, run_id) == recorded["run"], recorded["stage"]


def resimulated(replay: dict[str, Any]) -> Any:
    """This release's engine, from the replay's own inputs (ruleset, seed, warbands): the
    replay it makes again, as a client re-simulating would."""
    result = simulate(
        load_ruleset(replay["ruleset"]), replay["seed"], replay["a"], replay["b"], record=True
    )
    assert result.replay is not None
    return result.replay.to_wire()


async def test_every_battle_replays_to_the_same_bytes(upgraded: Upgraded) -> None:
    """Every battle reads as it was, and its replay, served and simulated again here, has the
    bytes the release served."""
    for battle_id, recorded in upgraded.manifest["battles"].items():
        token = upgraded.tokens[recorded["owner"]]
        battle, replay = await fetch_battle(upgraded.api, token, int(battle_id))
        observed = {"owner": recorded["owner"], **battle_observation(battle, replay)}
        assert observed == recorded, battle_id
        assert replay_digest(resimulated(replay)) == recorded["replay_sha256"], battle_id


async def test_every_match_rebuilds_from_its_log_to_its_stored_state(upgraded: Upgraded) -> None:
    """Every match played rebuilds from its seed, loadouts and action log to the state stored,
    and reads (state, events, replay) as it did."""
    conn = await asyncpg.connect(upgraded.url)
    try:
        # A waiting match, and one that expired waiting, was never set up: no state to rebuild.
        played = await conn.fetch(
            "SELECT match_id FROM matches WHERE status IN ('active', 'finished')"
        )
        for row in played:
            assert await cache_agrees_with_log(conn, row["match_id"]), row["match_id"]
    finally:
        await conn.close()
    for match_id, recorded in upgraded.manifest["matches"].items():
        if recorded["stage"] != FINISHED_HERE:
            assert await observed_as_recorded(upgraded, match_id), recorded["stage"]


async def observed_as_recorded(upgraded: Upgraded, match_id: str) -> bool:
    recorded = upgraded.manifest["matches"][match_id]
    token = upgraded.tokens[recorded["reader"]]
    observed = await observe_match(upgraded.api, token, match_id)
    return all(recorded[key] == value for key, value in observed.items())


async def test_a_match_in_progress_can_be_finished(upgraded: Upgraded) -> None:
    """The match of each game left in progress against a bot reads as it was left, plays on
    to its end, and still rebuilds from its log."""
    in_progress = {
        match_id: recorded
        for match_id, recorded in upgraded.manifest["matches"].items()
        if recorded["stage"] == FINISHED_HERE
    }
    assert {m["game"] for m in in_progress.values()} == set(GAMES)
    conn = await asyncpg.connect(upgraded.url)
    try:
        for match_id, recorded in in_progress.items():
            assert await observed_as_recorded(upgraded, match_id), recorded["game"]
            tokens = {0: upgraded.tokens[recorded["reader"]]}
            ended = await act_in(upgraded.api, match_id, tokens, random.Random(match_id))
            assert ended["status"] == "finished", recorded["game"]
            assert await cache_agrees_with_log(conn, uuid.UUID(match_id)), recorded["game"]
    finally:
        await conn.close()


async def test_every_rating_and_rank_is_unchanged(upgraded: Upgraded) -> None:
    """The autobattler's board and every game's in every season, and each player's ratings."""
    manifest, api = upgraded.manifest, upgraded.api
    boards = await leaderboards(api, upgraded.tokens[0], manifest["seasons"])
    assert boards == manifest["leaderboards"]
    ratings = [await player_ratings(api, token) for token in upgraded.tokens]
    assert ratings == manifest["ratings"]


async def test_every_ticket_is_as_it_was(upgraded: Upgraded) -> None:
    """Matched, cancelled and searching tickets read as they did; the one searching is still
    in the queue and can be cancelled."""
    api = upgraded.api
    for ticket_id, recorded in upgraded.manifest["tickets"].items():
        token = upgraded.tokens[recorded["owner"]]
        assert await observe_ticket(api, token, ticket_id) == recorded["ticket"]
        if recorded["ticket"]["status"] == "searching":
            path = f"/v1/matchmaking/tickets/{ticket_id}"
            assert ok(await api.call("DELETE", path, token=token))["status"] == "cancelled"


async def test_a_retried_key_answers_what_it_answered_before(upgraded: Upgraded) -> None:
    """Every write sent with an Idempotency-Key, sent again, gets the answer it got before the
    upgrade, and applies nothing again."""
    for write in upgraded.manifest["keyed_writes"]:
        token = upgraded.tokens[write["player"]]
        answer = await retried(upgraded.api, token, write)
        assert answer == write["answer"], (write["method"], write["path"])
