from aiohttp import web

from service.api.keys import POOL
from tests.http import Api


async def _player_rated(api: Api, app: web.Application, name: str, rating: int) -> str:
    player_id, token = await api.new_player(name)
    await app[POOL].execute(
        "UPDATE players SET rating = $2 WHERE player_id = $1::uuid", player_id, rating
    )
    return token


async def test_leaderboard_ranks_by_rating_with_shared_ranks_for_ties(
    fresh_service: tuple[Api, web.Application],
) -> None:
    api, app = fresh_service
    token = ""
    for name, rating in [("low", 900), ("top", 1300), ("mid1", 1100), ("mid2", 1100), ("me", 1000)]:
        token = await _player_rated(api, app, name, rating)
    board = (await api.get("/v1/leaderboard?limit=4", token=token)).body["entries"]
    assert [(e["rank"], e["rating"]) for e in board] == [(1, 1300), (2, 1100), (2, 1100), (4, 1000)]
    assert board[0]["name"] == "top"


async def test_leaderboard_around_me_shows_neighbours_and_my_rank(
    fresh_service: tuple[Api, web.Application],
) -> None:
    api, app = fresh_service
    tokens = {}
    for i in range(9):
        tokens[i] = await _player_rated(api, app, f"p{i}", 1000 + 10 * i)
    board = (await api.get("/v1/leaderboard?around=me&limit=4", token=tokens[4])).body
    entries = board["entries"]
    assert [e["name"] for e in entries] == ["p6", "p5", "p4", "p3", "p2"]
    assert [e["rank"] for e in entries] == [3, 4, 5, 6, 7]
    edge = (await api.get("/v1/leaderboard?around=me&limit=4", token=tokens[8])).body
    assert [e["name"] for e in edge["entries"]] == ["p8", "p7", "p6"]


async def test_leaderboard_rejects_bad_query_values(api: Api) -> None:
    _, token = await api.new_player()
    for query in ("limit=0", "limit=101", "limit=ten", "around=you"):
        answer = await api.get(f"/v1/leaderboard?{query}", token=token)
        assert answer.status == 422, query
        assert answer.body["error"]["details"]["fields"][0]["field"].startswith("query.")


async def test_leaderboard_around_me_inside_a_tie_walks_by_id_and_shares_the_rank(
    fresh_service: tuple[Api, web.Application],
) -> None:
    api, app = fresh_service
    await _player_rated(api, app, "above", 1200)
    tokens = [await _player_rated(api, app, "tied", 1000) for _ in range(7)]
    await _player_rated(api, app, "below", 900)
    by_id = {(await api.get("/v1/players/me", token=t)).body["player_id"]: t for t in tokens}
    order = ["above", *sorted(by_id), "below"]
    for at in (1, 4, 7):  # the first, the middle and the last of the tie
        me = order[at]
        board = (await api.get("/v1/leaderboard?around=me&limit=4", token=by_id[me])).body
        entries = board["entries"]
        # Two on each side: those tied with me first, in id order, then the next ratings.
        names = [e["player_id"] if e["name"] == "tied" else e["name"] for e in entries]
        assert names == order[max(0, at - 2) : at + 3]
        rank_of = {"above": 1, "tied": 2, "below": 9}
        assert [e["rank"] for e in entries] == [rank_of[e["name"]] for e in entries]
