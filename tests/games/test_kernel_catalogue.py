"""Catalogue entries whose text is written from their effects (docs/architecture.md#catalogues)."""

import jsonschema
import pytest

from service.games.kernel.catalogue import catalogue, catalogue_schema, effect_text, entry
from service.games.kernel.content import ContentError

TEMPLATES = {"damage": "deal {amount} damage to {target}", "heal": "heal {amount}"}
WORDS = {"enemy": "an enemy character", "on_play": "When played", "loyalty": "loyalty"}


def test_the_text_is_the_template_filled_from_the_effect_with_its_timing_and_cost() -> None:
    effect = {"kind": "damage", "amount": 2, "target": "enemy", "timing": "on_play",
              "cost": {"loyalty": 1}}  # fmt: skip
    assert effect_text(effect, TEMPLATES, WORDS) == (
        "When played: pay 1 loyalty: deal 2 damage to an enemy character"
    )
    effects = [effect, {"kind": "heal", "amount": 1}]
    made = entry(
        "bolt", "Bolt", "spell", None, {"cost": 1}, effects, templates=TEMPLATES, words=WORDS
    )
    assert made["text"] == (
        "When played: pay 1 loyalty: deal 2 damage to an enemy character. Heal 1."
    )
    plain = entry("rock", "Rock", "thing", None, {}, [], templates=TEMPLATES, words=WORDS)
    assert plain["text"] == "No effect."


@pytest.mark.parametrize(
    ("effect", "words"),
    [({"kind": "teleport"}, "no text template"), ({"kind": "damage", "amount": 1}, "lacks target")],
)
def test_an_effect_the_templates_cannot_write_stops_the_content(effect: dict, words: str) -> None:
    with pytest.raises(ContentError, match=words):
        effect_text(effect, TEMPLATES, WORDS)


def test_a_catalogue_refuses_a_repeated_id_and_its_schema_fits_it() -> None:
    one = entry("a", "A", "card", "red", {"cost": 1}, [], templates={}, words={})
    with pytest.raises(ContentError, match="twice"):
        catalogue([one, one], {})
    other = entry("b", "B", "card", None, {"cost": 2, "attack": 1}, [], templates={}, words={})
    body = catalogue([other, one], {"hand": 5})
    assert [e["id"] for e in body["entries"]] == ["a", "b"]
    schema = catalogue_schema("demo", body)
    answer = {"game": "demo", "ruleset": "demo-1", "rulesets": ["demo-1"], **body}
    jsonschema.validate(answer, schema)
    answer["entries"][0]["numbers"]["cost"] = "one"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(answer, schema)
