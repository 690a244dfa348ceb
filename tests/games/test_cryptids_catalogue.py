"""The cryptids' catalogue: every species and token as an entry, its abilities as effects read
from the ruleset, and English text that names their numbers."""

import re
import tomllib
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from service.games.cryptids import catalogue
from service.games.cryptids.catalogue import TARGETS, TEMPLATES, TRIGGERS, ruleset_catalogue
from service.games.cryptids.content import (
    DEATH_TRIGGERS,
    EFFECTS,
    PARAM_TRIGGERS,
    REACTION_TRIGGERS,
    ROLL_TRIGGERS,
    Ability,
    available_rulesets,
    load_ruleset,
    ruleset_from_dict,
)
from service.games.cryptids.content import TARGETS as TARGET_RULES
from service.games.kernel.catalogue import catalogue_schema
from service.games.kernel.content import ContentError
from service.usecases import catalogue as usecase

DOC = Path(__file__).parents[2] / "docs" / "rules" / "cryptids.md"
RULESETS = available_rulesets()


def _entries(ruleset_id: str) -> dict[str, dict[str, Any]]:
    body = ruleset_catalogue(load_ruleset(ruleset_id))
    return {entry["id"]: entry for entry in body["entries"]}


def _raw(ruleset_id: str) -> dict[str, Any]:
    folder = resources.files("service.games.cryptids").joinpath("rulesets")
    return tomllib.loads(folder.joinpath(f"{ruleset_id}.toml").read_text(encoding="utf-8"))


def _effect_matches(effect: dict[str, Any], ability: Ability, index: int) -> None:
    assert effect["kind"] == ability.effect
    assert effect["ability"] == index
    assert effect["timing"] == ability.trigger
    assert effect["target"] == ability.target
    assert effect.get("token") == ability.token
    kind, _, value = ability.trigger.partition(":")
    assert effect["trigger"] == kind
    assert effect.get("trigger_value") == (int(value) if value else None)
    if ability.effect == "reroll":
        assert not {"amount", "magnitude", "levels"} & set(effect)
    else:
        assert effect["amount"] == ability.magnitude[0]
        assert effect["magnitude"] == list(ability.magnitude)


@pytest.mark.parametrize("ruleset_id", RULESETS)
def test_every_species_and_token_is_an_entry_with_its_printed_numbers(ruleset_id: str) -> None:
    ruleset = load_ruleset(ruleset_id)
    entries = _entries(ruleset_id)
    assert set(entries) == set(ruleset.species) | set(ruleset.tokens)
    for s in ruleset.species.values():
        e = entries[s.id]
        assert (e["name"], e["kind"], e["family"]) == (s.name, "species", f"tier-{s.tier}")
        assert e["numbers"] == {
            "tier": s.tier,
            "cost": s.cost,
            "health": s.health,
            "threat": s.threat,
        }
        assert len(e["effects"]) == 2
        for i, (effect, ability) in enumerate(zip(e["effects"], s.abilities, strict=True)):
            _effect_matches(effect, ability, i)
    for t in ruleset.tokens.values():
        e = entries[t.id]
        assert (e["name"], e["kind"], e["family"]) == (t.name, "token", None)
        assert e["numbers"] == {"health": t.health, "threat": t.threat}
        [effect] = e["effects"]
        _effect_matches(effect, t.ability, 0)


@pytest.mark.parametrize("ruleset_id", RULESETS)
def test_the_text_names_the_numbers_of_every_effect(ruleset_id: str) -> None:
    ruleset = load_ruleset(ruleset_id)
    for e in _entries(ruleset_id).values():
        sentences = e["text"].split(". ")
        assert len(sentences) == len(e["effects"]), e["text"]
        for sentence, effect in zip(sentences, e["effects"], strict=True):
            numbers = [int(n) for n in re.findall(r"\d+", sentence)]
            expected = [effect["trigger_value"]] if "trigger_value" in effect else []
            if effect["kind"] != "reroll":
                # A token always plays at level 1, a species at any level up to max_level.
                levels = effect["magnitude"][:1] if e["kind"] == "token" else effect["magnitude"]
                expected += levels if len(set(levels)) > 1 else levels[:1]
                assert len(effect["magnitude"]) == ruleset.run.max_level
            assert numbers == expected, sentence
            if effect.get("token"):
                assert ruleset.tokens[effect["token"]].name in sentence


def test_the_docs_example_is_the_text_of_its_species() -> None:
    doc = " ".join(DOC.read_text(encoding="utf-8").split())
    text = _entries("cryptids-2027.01")["chupacabra"]["text"]
    assert f'Chupacabra in `cryptids-2027.01`: "{text}"' in doc


def test_a_summon_and_a_dice_ability_read_in_english() -> None:
    entries = _entries("cryptids-2027.01")
    assert entries["kraken"]["text"].endswith("When it dies: summon 2/2/3 Tentacle token(s).")
    assert (
        "When the dice sum to 5 or less: restore up to 2/3/4 health to the ally with the "
        "lowest health (itself included)." in entries["alux"]["text"]
    )
    assert "For each die showing 2: add 1/1/2 to the dice sum." in entries["alux"]["text"]
    assert entries["tentacle"]["text"] == (
        "When the sum is even: deal 2 damage to the enemy with the highest threat."
    )


def test_every_code_the_content_accepts_has_english_text() -> None:
    assert set(TEMPLATES) == set(EFFECTS)
    triggers = ROLL_TRIGGERS + PARAM_TRIGGERS + REACTION_TRIGGERS + DEATH_TRIGGERS
    assert set(TRIGGERS) == set(triggers)
    assert set(TARGETS) == set(TARGET_RULES)
    for kind in PARAM_TRIGGERS:
        assert "{n}" in TRIGGERS[kind]


@pytest.mark.parametrize(
    ("table", "code", "named"),
    [
        (TEMPLATES, "damage", "effect 'damage'"),
        (TRIGGERS, "face", "trigger 'face'"),
        (TARGETS, "highest_threat", "target 'highest_threat'"),
    ],
)
@pytest.mark.parametrize("ruleset_id", RULESETS)
def test_a_ruleset_using_a_code_without_text_is_refused(
    monkeypatch: pytest.MonkeyPatch, ruleset_id: str, table: dict[str, str], code: str, named: str
) -> None:
    monkeypatch.delitem(table, code)
    with pytest.raises(ContentError, match=f"no English text for .*{named}"):
        ruleset_catalogue(load_ruleset(ruleset_id))


@pytest.fixture
def fresh_usecase_cache() -> Iterator[None]:
    usecase._catalogue.cache_clear()
    yield
    usecase._catalogue.cache_clear()


@pytest.mark.usefixtures("fresh_usecase_cache")
def test_start_up_stops_on_an_ability_kind_without_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(catalogue.TEMPLATES, "summon")
    with pytest.raises(ContentError, match="effect 'summon'"):
        usecase.load_all()


def test_a_token_id_that_reads_as_a_target_rule_is_refused() -> None:
    data = _raw("cryptids-2027.01")
    for token in data["token"]:
        if token["id"] == "tentacle":
            token["id"] = "leftmost"
    for species in data["species"]:
        for ability in species["abilities"]:
            if ability.get("token") == "tentacle":
                ability["token"] = "leftmost"
    with pytest.raises(ContentError, match="leftmost"):
        ruleset_catalogue(ruleset_from_dict(data))


def test_the_effects_come_from_the_data_not_from_the_species() -> None:
    data = _raw("cryptids-2027.01")
    mothman = next(s for s in data["species"] if s["id"] == "mothman")
    mothman["abilities"][0] = {
        "trigger": "sum_at_most:3",
        "effect": "heal",
        "target": "all_allies",
        "magnitude": [5, 5, 5],
    }
    entry = next(
        e for e in ruleset_catalogue(ruleset_from_dict(data))["entries"] if e["id"] == "mothman"
    )
    assert entry["effects"][0] == {
        "kind": "heal",
        "ability": 0,
        "timing": "sum_at_most:3",
        "trigger": "sum_at_most",
        "trigger_value": 3,
        "target": "all_allies",
        "amount": 5,
        "magnitude": [5, 5, 5],
        "levels": "5",
    }
    assert entry["text"].startswith(
        "When the dice sum to 3 or less: restore up to 5 health to every ally (itself included)."
    )


@pytest.mark.parametrize("ruleset_id", RULESETS)
def test_the_served_catalogue_keeps_its_keys_and_adds_the_common_shape(ruleset_id: str) -> None:
    served = usecase.cryptid_catalogue(ruleset_id)
    assert set(served) == {
        "game",
        "ruleset",
        "engine",
        "rulesets",
        "battle",
        "shop",
        "run",
        "species",
        "tokens",
        "entries",
        "rules",
    }
    assert served["game"] == "cryptids"
    ruleset = load_ruleset(ruleset_id)
    rules = served["rules"]
    assert rules["battle"] == served["battle"]
    assert rules["run"] == served["run"]
    assert rules["shop"]["tier_unlock_rounds"] == list(ruleset.shop.tier_unlock_rounds)
    assert {**rules["shop"], "tier_unlock_rounds": None} == {
        **served["shop"],
        "tier_unlock_rounds": None,
    }
    jsonschema.validate(served, catalogue_schema("cryptids", dict(served)))


def test_a_token_text_gives_its_level_1_magnitude_only() -> None:
    # docs/rules/cryptids.md: "`magnitude` times: the token (level 1) joins the owner's side".
    data = _raw("cryptids-2027.01")
    tentacle = next(t for t in data["token"] if t["id"] == "tentacle")
    tentacle["ability"]["magnitude"] = [2, 5, 7]
    entries = ruleset_catalogue(ruleset_from_dict(data))["entries"]
    entry = next(e for e in entries if e["id"] == "tentacle")
    assert entry["effects"][0]["magnitude"] == [2, 5, 7]
    assert entry["effects"][0]["levels"] == "2"
    assert (
        entry["text"] == "When the sum is even: deal 2 damage to the enemy with the highest threat."
    )
