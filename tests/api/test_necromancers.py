"""Duelo de Nigromantes through real HTTP, as a client meets it: the refusal codes of
docs/rules/necromancers.md#refusals, the view of docs/rules/necromancers.md#what-everyone-sees
and the catalogue that names what it shows (docs/rules/necromancers.md#catalogue)."""

from typing import Any

from tests.api.matches_helpers import act, new_players, read, start_match
from tests.http import Api


def _named(tree: Any) -> set[str]:
    if isinstance(tree, dict):
        own = {tree["card"]} if isinstance(tree.get("id"), str) and "card" in tree else set()
        return own.union(*(_named(value) for value in tree.values()))
    if isinstance(tree, list):
        return set().union(*(_named(item) for item in tree))
    return set()


async def test_a_refused_target_names_the_rule_it_breaks(api: Api) -> None:
    a, b = await new_players(api, 2)
    match_id = await start_match(api, [a, b])
    tokens = [a, b]
    seen = await read(api, a, match_id)
    (seat,) = seen["to_act"]
    mover = tokens[seat]
    version = (await read(api, mover, match_id))["version"]
    for action, code, details in [
        ({"type": "target", "seat": seat}, "cannot_target_self", {}),
        ({"type": "target", "seat": 7}, "no_such_seat", {"seat": 7}),
        ({"type": "target", "seat": "1"}, "bad_param", {"field": "seat"}),
    ]:
        answer = await act(api, mover, match_id, version, action)
        assert (answer.status, answer.error_code) == (422, "illegal_action"), answer.body
        error = answer.body["error"]
        assert error["details"]["reason"] == code, error
        assert error["details"].items() >= details.items()
    assert await read(api, a, match_id) == seen


async def test_the_view_names_only_what_the_catalogue_lists(api: Api) -> None:
    a, b, c = await new_players(api, 3)
    match_id = await start_match(api, [a, b, c])
    tokens = [a, b, c]
    catalogue = await api.get("/v1/content/necromancers")
    assert catalogue.status == 200, catalogue.body
    listed = {entry["id"] for entry in catalogue.body["entries"]}
    (seat,) = (await read(api, a, match_id))["to_act"]
    mine = await read(api, tokens[seat], match_id)
    answer = await act(api, tokens[seat], match_id, mine["version"], mine["legal_actions"][0])
    assert answer.status == 200, answer.body
    view = (await read(api, a, match_id))["view"]
    assert (view["game"], view["seat"]) == ("necromancers", 0)
    assert view["order_rolls"][0][0].keys() == {"seat", "roll"}
    assert view["dice"] and view["defence"] is not None
    assert _named(view) <= listed
    assert {"skeletons", "zombies", "necromancer", "defence-die"} <= _named(view)
