"""The golden corpus: stored battles must re-simulate to byte-identical replays, one corpus file
per shipped ruleset, each under its own ruleset (also after the default has moved on)."""

import json
from typing import Any

import pytest

from service.games.cryptids import available_rulesets, load_ruleset, simulate
from tests.games.golden.gen import BATTLES, corpus_path, replay_digest

DOCUMENTS = {
    ruleset_id: json.loads(corpus_path(ruleset_id).read_text(encoding="utf-8"))
    for ruleset_id in available_rulesets()
}
ENTRIES = [(ruleset_id, e) for ruleset_id, doc in DOCUMENTS.items() for e in doc["battles"]]


@pytest.mark.parametrize("ruleset_id", sorted(DOCUMENTS))
def test_every_shipped_ruleset_has_a_corpus_of_at_least_50_battles(ruleset_id: str) -> None:
    document = DOCUMENTS[ruleset_id]
    assert document["ruleset"] == ruleset_id
    assert len(document["battles"]) == BATTLES >= 50


@pytest.mark.parametrize(
    ("ruleset_id", "entry"), ENTRIES, ids=[f"{r}-{e['seed']}" for r, e in ENTRIES]
)
def test_golden_battle_resimulates_byte_for_byte(ruleset_id: str, entry: dict[str, Any]) -> None:
    result = simulate(load_ruleset(ruleset_id), entry["seed"], entry["a"], entry["b"])
    assert result.replay is not None
    assert (result.winner, result.rolls) == (entry["winner"], entry["rolls"])
    assert replay_digest(result.replay.to_wire()) == entry["replay_sha256"]
