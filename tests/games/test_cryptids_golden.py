"""The golden corpus: stored battles must re-simulate to byte-identical replays."""

import json
from typing import Any

import pytest

from service.games.cryptids import load_ruleset, simulate
from tests.games.golden.gen import BATTLES, corpus_path, replay_digest

DOCUMENT = json.loads(corpus_path("cryptids-2026.12").read_text(encoding="utf-8"))


def test_the_corpus_holds_at_least_50_battles_of_its_ruleset() -> None:
    assert DOCUMENT["ruleset"] == "cryptids-2026.12"
    assert len(DOCUMENT["battles"]) == BATTLES >= 50


@pytest.mark.parametrize("entry", DOCUMENT["battles"], ids=lambda e: str(e["seed"]))
def test_golden_battle_resimulates_byte_for_byte(entry: dict[str, Any]) -> None:
    result = simulate(load_ruleset(DOCUMENT["ruleset"]), entry["seed"], entry["a"], entry["b"])
    assert result.replay is not None
    assert (result.winner, result.rolls) == (entry["winner"], entry["rolls"])
    assert replay_digest(result.replay.to_wire()) == entry["replay_sha256"]
