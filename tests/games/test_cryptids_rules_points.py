"""The points of docs/rules/cryptids.md that a re-implementation most easily reads otherwise.

Each test names its rule and re-simulates its golden case (tests/games/golden/rules-points.json)
byte for byte, and checks that the replay holds the events the rule produces (`shows`). Each case
was chosen so that the other reading of its rule gives other replay bytes (checked against an
engine changed to that reading); `why` in the case says what the other reading would record.
Cases under `rules-points` use the test content of rules-points.toml beside the corpus.
"""

import json
from typing import Any

from service.games.cryptids import Ruleset, load_ruleset, simulate
from service.games.cryptids.content import ruleset_from_toml
from tests.games.golden.gen import HERE, replay_digest

CASES: dict[str, dict[str, Any]] = json.loads(
    (HERE / "rules-points.json").read_text(encoding="utf-8")
)
TEST_CONTENT = ruleset_from_toml((HERE / "rules-points.toml").read_text(encoding="utf-8"))


def _ruleset(ruleset_id: str) -> Ruleset:
    return TEST_CONTENT if ruleset_id == TEST_CONTENT.id else load_ruleset(ruleset_id)


def _replays(name: str) -> list[list[Any]]:
    """The case re-simulated byte for byte; returns its events as lists."""
    case = CASES[name]
    result = simulate(_ruleset(case["ruleset"]), case["seed"], case["a"], case["b"])
    assert result.replay is not None
    assert (result.winner, result.rolls) == (case["winner"], case["rolls"])
    assert replay_digest(result.replay.to_wire()) == case["replay_sha256"]
    events = [list(e) for e in result.replay.events]
    shows = case["shows"]
    assert any(events[i : i + len(shows)] == shows for i in range(len(events))), case["why"]
    return events


def test_every_case_has_a_test() -> None:
    tests = {name.removeprefix("test_") for name in globals() if name.startswith("test_")}
    assert set(CASES) <= tests


def test_tie_break_by_roll_number() -> None:
    _replays("tie_break_by_roll_number")


def test_on_death_summon_at_zero_health() -> None:
    events = _replays("on_death_summon_at_zero_health")
    assert ["summon", 0, 10, "jackalope_kit", 0] in events


def test_killed_reactor_does_not_react() -> None:
    events = _replays("killed_reactor_does_not_react")
    assert ["trigger", 5] not in events[events.index(["damage", 0, 5, 1, 0, 0]) :]


def test_stun_skip_counts_toward_reaction_limit() -> None:
    _replays("stun_skip_counts_toward_reaction_limit")


def test_poison_list_fixed_at_step_start() -> None:
    _replays("poison_list_fixed_at_step_start")


def test_shield_absorbs_poison_tick() -> None:
    _replays("shield_absorbs_poison_tick")


def test_stack_lost_before_tick_damage() -> None:
    _replays("stack_lost_before_tick_damage")


def test_face_twice_back_to_back() -> None:
    _replays("face_twice_back_to_back")


def test_odd_even_sum_after_add_to_sum() -> None:
    _replays("odd_even_sum_after_add_to_sum")


def test_no_chain_limit_for_dead_reactor() -> None:
    events = _replays("no_chain_limit_for_dead_reactor")
    assert ["chain_limit", 6] not in events


def test_death_wave_chain_limit_after_deaths() -> None:
    _replays("death_wave_chain_limit_after_deaths")


def test_adjacent_allies_no_reach_across_gaps() -> None:
    events = _replays("adjacent_allies_no_reach_across_gaps")
    assert not any(e[0] == "shield" and e[2] == 5 for e in events)
