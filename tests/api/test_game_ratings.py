"""OpenSkill ratings per game and season, through HTTP: a finished match moves its players'
ratings once, bots rate nobody, and a new season starts from a soft reset."""

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from service.config import ConfigError, Settings, load_settings
from service.games.kernel.ratings import Skill, rate, soft_reset
from tests.api.matches_helpers import OPS, create, new_players, start_match
from tests.conftest import service_and_app
from tests.http import Api

BOARD = "/v1/leaderboard?game=necromancers"


async def _resign(api: Api, token: str, match_id: str, key: str) -> dict[str, Any]:
    answer = await api.post(
        f"/v1/matches/{match_id}/resign", token=token, headers={"Idempotency-Key": key}
    )
    assert answer.status == 200, answer.body
    body: dict[str, Any] = answer.body
    return body


async def _ratings(api: Api, token: str) -> dict[str, dict[str, Any]]:
    me = (await api.get("/v1/players/me", token=token)).body
    return {r["game"]: r for r in me["ratings"]}


async def _board(api: Api, token: str, query: str = "") -> dict[str, Any]:
    answer = await api.get(BOARD + query, token=token)
    assert answer.status == 200, answer.body
    body: dict[str, Any] = answer.body
    return body


async def test_a_finished_match_rates_both_players_once(
    fresh_service: tuple[Api, web.Application],
) -> None:
    api, _ = fresh_service
    loser, winner = await new_players(api, 2)
    assert await _ratings(api, loser) == {}
    match_id = await start_match(api, [loser, winner])
    first = await _resign(api, loser, match_id, "give-up")
    # The same resignation again is answered as before and rates nobody a second time.
    assert await _resign(api, loser, match_id, "give-up") == first
    again = await api.post(
        f"/v1/matches/{match_id}/resign", token=winner, headers={"Idempotency-Key": "late"}
    )
    assert again.status >= 400

    lost, won = (
        (await _ratings(api, loser))["necromancers"],
        (await _ratings(api, winner))["necromancers"],
    )
    assert lost["matches"] == won["matches"] == 1
    assert won["rating"] > 0 > lost["rating"]
    expected = rate([[1], [0]], {0: Skill(), 1: Skill()})
    assert won["mu"] == pytest.approx(expected[1].mu)
    assert lost["mu"] == pytest.approx(expected[0].mu)
    assert lost["season"] == won["season"] == "2026-12"

    board = await _board(api, winner)
    assert board["game"] == "necromancers" and board["season"] == "2026-12"
    assert [(e["rank"], e["rating"], e["matches"]) for e in board["entries"]] == [
        (1, won["rating"], 1),
        (2, lost["rating"], 1),
    ]
    me = (await api.get("/v1/players/me", token=loser)).body
    around = (await _board(api, loser, "&around=me&limit=2"))["entries"]
    assert [e["player_id"] for e in around] == [board["entries"][0]["player_id"], me["player_id"]]
    assert [e["rank"] for e in around] == [1, 2]
    # The autobattler's board is as it was: Elo, no OpenSkill fields.
    elo = (await api.get("/v1/leaderboard", token=loser)).body
    assert "game" not in elo and all("mu" not in e for e in elo["entries"])


async def test_a_deleted_player_leaves_the_board_and_no_rank_counts_it(
    fresh_service: tuple[Api, web.Application],
) -> None:
    api, _ = fresh_service
    ana, bea, cid, dan = await new_players(api, 4)
    # bea and dan win their first matches, against ana and cid: two ties, one above the other.
    await _resign(api, ana, await start_match(api, [ana, bea]), "first")
    await _resign(api, cid, await start_match(api, [cid, dan]), "second")
    ids = {t: (await api.get("/v1/players/me", token=t)).body["player_id"] for t in (bea, dan)}
    board = (await _board(api, ana))["entries"]
    assert [e["rank"] for e in board] == [1, 1, 3, 3]

    deleted = await api.call("DELETE", "/v1/players/me", token=bea)
    assert deleted.status == 200, deleted.body
    for token in (ana, cid):
        for query in ("", "&around=me&limit=4"):
            entries = (await _board(api, token, query))["entries"]
            assert ids[bea] not in {e["player_id"] for e in entries}
            assert [(e["rank"], e["rating"]) for e in entries] == [
                (1, board[0]["rating"]),
                (2, board[2]["rating"]),
                (2, board[2]["rating"]),
            ]
            assert entries[0]["player_id"] == ids[dan]


async def test_a_match_against_a_bot_rates_nobody(
    fresh_service: tuple[Api, web.Application],
) -> None:
    api, _ = fresh_service
    (token,) = await new_players(api, 1)
    created = await create(api, token, bots=[1])
    assert created.status == 201, created.body
    await _resign(api, token, created.body["match_id"], "bot-match")
    assert await _ratings(api, token) == {}
    assert (await _board(api, token))["entries"] == []
    assert (await _board(api, token, "&around=me"))["entries"] == []


async def test_unknown_game_or_season_is_refused(api: Api) -> None:
    (token,) = await new_players(api, 1)
    unknown_game = await api.get("/v1/leaderboard?game=chess", token=token)
    assert unknown_game.status == 422
    assert unknown_game.body["error"]["details"]["fields"][0]["field"] == "query.game"
    unknown_season = await api.get(BOARD + "&season=1999-01", token=token)
    assert unknown_season.status == 404
    assert unknown_season.error_code == "unknown_season"


async def test_a_new_season_starts_from_a_soft_reset(
    fresh_service: tuple[Api, web.Application],
) -> None:
    api, _ = fresh_service
    ana, bea = await new_players(api, 2)
    # ana loses the first season's only match.
    await _resign(api, ana, await start_match(api, [ana, bea]), "season-1")
    old = {
        name: (await _ratings(api, t))["necromancers"] for name, t in (("ana", ana), ("bea", bea))
    }

    started = await api.post("/v1/ops/seasons", {"name": "2027-01"}, headers=OPS)
    assert started.status == 201 and started.body == {"name": "2027-01"}
    twice = await api.post("/v1/ops/seasons", {"name": "2027-01"}, headers=OPS)
    assert twice.status == 409 and twice.error_code == "season_exists"
    assert (await api.post("/v1/ops/seasons", {"name": "no spaces"}, headers=OPS)).status == 422
    assert (await api.post("/v1/ops/seasons", {"name": "2027-02"})).status == 401

    # The new season is the current one: nobody is rated in it yet.
    assert await _ratings(api, ana) == {}
    assert (await _board(api, ana))["season"] == "2027-01"
    assert (await _board(api, ana))["entries"] == []

    # This time bea loses: both start from their soft-reset ratings.
    await _resign(api, bea, await start_match(api, [ana, bea]), "season-2")
    reset = {n: soft_reset(Skill(old[n]["mu"], old[n]["sigma"])) for n in old}
    expected = rate([[0], [1]], {0: reset["ana"], 1: reset["bea"]})
    now = {
        name: (await _ratings(api, t))["necromancers"] for name, t in (("ana", ana), ("bea", bea))
    }
    assert now["ana"]["mu"] == pytest.approx(expected[0].mu)
    assert now["bea"]["sigma"] == pytest.approx(expected[1].sigma)
    assert now["ana"]["season"] == "2027-01" and now["ana"]["matches"] == 1

    # The past season stays readable, as it ended.
    past = await _board(api, ana, "&season=2026-12")
    assert past["season"] == "2026-12"
    assert [(e["rating"], e["mu"]) for e in past["entries"]] == [
        (old["bea"]["rating"], old["bea"]["mu"]),
        (old["ana"]["rating"], old["ana"]["mu"]),
    ]


async def test_the_season_setting_starts_its_season(
    settings: Settings, fresh_database_url: str, tmp_path: Path
) -> None:
    later = dataclasses.replace(settings, database_url=fresh_database_url, season="2027-05")
    async with service_and_app(later) as (api, _):
        (token,) = await new_players(api, 1)
        assert (await _board(api, token))["season"] == "2027-05"
    with pytest.raises(ConfigError, match="SEASON"):
        load_settings({"DATA_DIR": str(tmp_path), "SEASON": "two words"})
