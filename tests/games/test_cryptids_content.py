"""Content loading and validation, and warband validation with field paths."""

import copy
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from service.games.cryptids import (
    DEFAULT_RULESET,
    ContentError,
    UnknownRulesetError,
    WarbandError,
    available_rulesets,
    load_ruleset,
    parse_warband,
    validate_warband,
)
from service.games.cryptids.content import ruleset_from_dict, ruleset_from_toml

RULESET_DIR = "service/games/cryptids/rulesets"


def test_the_default_ruleset_is_shipped_and_listed() -> None:
    assert DEFAULT_RULESET in available_rulesets()
    assert load_ruleset().id == DEFAULT_RULESET
    assert load_ruleset(DEFAULT_RULESET) is load_ruleset()


def test_the_catalogue_has_about_30_species_over_six_tiers() -> None:
    ruleset = load_ruleset()
    assert 28 <= len(ruleset.species) <= 32
    assert {s.tier for s in ruleset.species.values()} == {1, 2, 3, 4, 5, 6}
    for s in ruleset.species.values():
        assert re.fullmatch(r"[a-z][a-z0-9_]*", s.id)
        assert s.cost == 3 and len(s.abilities) == 2
    assert {"chupacabra", "mothman", "mapinguari", "caleuche", "trauco", "nahual"} <= set(
        ruleset.species
    )
    assert ruleset.tokens and not set(ruleset.tokens) & set(ruleset.species)


def test_shop_and_run_numbers_are_loaded_from_data() -> None:
    r = load_ruleset()
    assert (r.run.lives, r.run.wins_to_finish, r.run.max_level, r.run.merge_copies) == (5, 10, 3, 3)
    assert r.run.elo_k == 32
    assert (r.pairing.bands, r.pairing.candidates_per_side) == ((100, 200, 400), 8)
    assert (r.shop.gold_per_round, r.shop.buy_cost, r.shop.sell_refund, r.shop.reroll_cost) == (
        10,
        3,
        1,
        1,
    )
    assert (r.shop.offer_slots, r.shop.offer_slots_late, r.shop.offer_slots_late_from_round) == (
        3,
        5,
        5,
    )
    assert r.shop.tier_unlock_rounds == (1, 3, 5, 7, 9, 11)
    b = r.battle
    assert (b.board_size, b.roll_limit, b.sudden_death_start, b.chain_depth) == (5, 36, 16, 32)


def test_an_unknown_ruleset_is_a_clear_error() -> None:
    with pytest.raises(UnknownRulesetError, match=re.escape("cryptids-1999.01")):
        load_ruleset("cryptids-1999.01")


def _data() -> dict[str, Any]:
    path = Path(RULESET_DIR) / f"{DEFAULT_RULESET}.toml"
    return tomllib.loads(path.read_text(encoding="utf-8"))


def _broken(change: Any) -> str:
    data = copy.deepcopy(_data())
    change(data)
    with pytest.raises(ContentError) as info:
        ruleset_from_dict(data)
    return str(info.value)


@pytest.mark.parametrize("bands", [[], [200, 100], [100, 100], [0, 100], "100"])
def test_pairing_bands_must_ascend(bands: Any) -> None:
    def change(d: dict[str, Any]) -> None:
        d["pairing"]["bands"] = bands

    assert _broken(change).startswith("pairing.bands: ")


@pytest.mark.parametrize("trigger", ["face:x", "face:²", "sum:-1"])
def test_a_bad_trigger_names_the_species_and_field(trigger: str) -> None:
    def change(d: dict[str, Any]) -> None:
        d["species"][1]["abilities"][0]["trigger"] = trigger

    assert _broken(change) == (
        f"species 'mothman'.abilities[0].trigger: unknown trigger {trigger!r}"
    )


def test_a_bad_target_names_the_species_and_field() -> None:
    def change(d: dict[str, Any]) -> None:
        d["species"][0]["abilities"][1]["target"] = "everyone"

    message = _broken(change)
    assert message == "species 'chupacabra'.abilities[1].target: unknown target rule 'everyone'"


def test_a_missing_field_is_named() -> None:
    def change(d: dict[str, Any]) -> None:
        del d["species"][2]["health"]

    assert _broken(change) == "species 'trauco': missing field 'health'"


@pytest.mark.parametrize(
    ("field", "value", "needle"),
    [
        ("effect", "explode", "unknown effect 'explode'"),
        ("magnitude", [1, 2], "expected 3 integers >= 1"),
        ("magnitude", [0, 1, 2], "expected 3 integers >= 1"),
        ("token", "nobody", "only a summon names a token"),
    ],
)
def test_bad_ability_fields_are_named(field: str, value: Any, needle: str) -> None:
    def change(d: dict[str, Any]) -> None:
        d["species"][0]["abilities"][0][field] = value

    message = _broken(change)
    assert message.startswith(f"species 'chupacabra'.abilities[0].{field}: ")
    assert needle in message


def test_a_summon_of_an_unknown_token_is_named() -> None:
    def change(d: dict[str, Any]) -> None:
        d["species"][3]["abilities"][1]["token"] = "ghost"

    assert _broken(change) == "species 'jackalope'.abilities[1].token: unknown token 'ghost'"


def test_dice_effects_need_a_roll_trigger_and_target_self() -> None:
    def reaction(d: dict[str, Any]) -> None:
        d["species"][4]["abilities"][1]["trigger"] = "on_damaged"

    def target(d: dict[str, Any]) -> None:
        d["species"][4]["abilities"][1]["target"] = "leftmost"

    assert "needs a roll trigger" in _broken(reaction)
    assert "needs target 'self'" in _broken(target)


def test_duplicate_ids_and_bad_ids_are_rejected() -> None:
    def duplicate(d: dict[str, Any]) -> None:
        d["species"][1]["id"] = "chupacabra"

    def bad_id(d: dict[str, Any]) -> None:
        d["species"][1]["id"] = "Moth Man"

    assert _broken(duplicate) == "species 'chupacabra': duplicate id"
    assert "is not snake_case" in _broken(bad_id)


def test_missing_tables_and_bad_toml_are_rejected() -> None:
    assert "[battle]" in _broken(lambda d: d.pop("battle"))
    assert "tier_unlock_rounds" in _broken(lambda d: d["shop"].update(tier_unlock_rounds=[3, 1]))
    with pytest.raises(ContentError, match="invalid TOML"):
        ruleset_from_toml("ruleset = ")


# --- warbands -----------------------------------------------------------------------------


def _error(picks: Any) -> WarbandError:
    with pytest.raises(WarbandError) as info:
        validate_warband(load_ruleset(), picks, "a")
    return info.value


@pytest.mark.parametrize(
    ("picks", "field", "needle"),
    [
        ([("mothman", 0, 1), ("x", 0, 1)], "a.cryptids[1].species", "unknown species 'x'"),
        ([("jackalope_kit", 0, 1)], "a.cryptids[0].species", "unknown species"),
        ([("mothman", 2, 1)], "a.cryptids[0].ability", "expected 0 or 1"),
        ([("mothman", True, 1)], "a.cryptids[0].ability", "expected 0 or 1"),
        ([("mothman", 0, 4)], "a.cryptids[0].level", "expected 1..3"),
        ([("mothman", 0, 0)], "a.cryptids[0].level", "expected 1..3"),
        ([], "a.cryptids", "at least one"),
        ([("mothman", 0, 1)] * 6, "a.cryptids", "at most 5"),
        ([("mothman", 0)], "a.cryptids[0]", "expected (species, ability, level)"),
    ],
)
def test_warband_errors_carry_the_field_path(picks: Any, field: str, needle: str) -> None:
    error = _error(picks)
    assert error.field == field and needle in error.message


def test_parse_warband_reads_the_wire_shape_and_names_missing_fields() -> None:
    ruleset = load_ruleset()
    data = {"cryptids": [{"species": "mothman", "ability": 1, "level": 2}]}
    assert parse_warband(ruleset, data, "b") == (("mothman", 1, 2),)
    with pytest.raises(WarbandError) as info:
        parse_warband(ruleset, {"cryptids": [{"species": "mothman", "ability": 1}]}, "b")
    assert info.value.field == "b.cryptids[0].level"
    with pytest.raises(WarbandError) as info:
        parse_warband(ruleset, {"cryptids": "mothman"}, "b")
    assert info.value.field == "b.cryptids"
