"""Every game's catalogue over HTTP, cacheable, with its schema in the OpenAPI document
(docs/architecture.md#catalogues), and every view's schema beside it
(docs/architecture.md#views)."""

import pytest

from tests.http import Api

GAMES = ["necromancers", "fate-duel", "loyalty", "medianokte"]


@pytest.mark.parametrize("game", GAMES)
async def test_each_game_serves_its_catalogue_in_one_envelope(api: Api, game: str) -> None:
    answer = await api.get(f"/v1/content/{game}")
    assert answer.status == 200, answer.body
    body = answer.body
    assert body["game"] == game and body["ruleset"] in body["rulesets"]
    assert body["entries"] and all(entry["text"] for entry in body["entries"])
    assert len({entry["id"] for entry in body["entries"]}) == len(body["entries"])
    document = (await api.get("/v1/openapi.json")).body
    assert f"Catalogue_{game}" in document["components"]["schemas"]
    assert f"View_{game}" in document["components"]["schemas"]


async def test_a_named_ruleset_is_cached_for_good_and_the_default_revalidates(api: Api) -> None:
    current = await api.get("/v1/content/loyalty")
    assert current.headers["Cache-Control"] == "public, no-cache"
    etag = current.headers["ETag"]
    unchanged = await api.get("/v1/content/loyalty", headers={"If-None-Match": etag})
    assert (unchanged.status, unchanged.raw) == (304, b"")
    named = await api.get(f"/v1/content/loyalty?ruleset={current.body['ruleset']}")
    assert "immutable" in named.headers["Cache-Control"]
    assert named.body == current.body
    packed = await api.get("/v1/content/loyalty", fmt="msgpack")
    assert packed.body == current.body and packed.headers["ETag"] != etag
    cryptids = await api.get("/v1/content/cryptids")
    assert cryptids.headers["ETag"] and cryptids.body["game"] == "cryptids"


async def test_an_unknown_game_is_404_and_an_unknown_ruleset_422(api: Api) -> None:
    missing = await api.get("/v1/content/chess")
    assert (missing.status, missing.error_code) == (404, "not_found")
    wrong = await api.get("/v1/content/medianokte?ruleset=medianokte-0")
    assert (wrong.status, wrong.error_code) == (422, "invalid_field")


async def test_a_match_view_is_documented_as_one_of_the_games_views(api: Api) -> None:
    document = (await api.get("/v1/openapi.json")).body
    state = document["components"]["schemas"]["MatchState"]["properties"]["view"]
    views, waiting = state["anyOf"]
    assert waiting == {"type": "null"}
    refs = {ref["$ref"].rsplit("/", 1)[-1] for ref in views["oneOf"]}
    assert {f"View_{game}" for game in GAMES} <= refs
    for game in GAMES:
        view = document["components"]["schemas"][f"View_{game}"]
        assert view["properties"]["game"] == {"const": game}
        assert {"game", "ruleset", "seat"} <= set(view["required"])
