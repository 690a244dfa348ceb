"""The compiled build and the pure sources give the same battles, byte for byte.

This process runs the installed build, which must be the compiled one wherever setup.py can
build it (a C compiler is found and CRYPTIDS_PURE is not 1): a silent fallback to the pure
engine fails here. The pure build runs in a subprocess with CRYPTIDS_ENGINE=pure.
"""

import ast
import importlib.machinery
import json
import os
import shlex
import shutil
import sys
import sysconfig
import tomllib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.games.cryptids import ENGINE_BUILD, available_rulesets, load_ruleset
from service.games.cryptids.content import (
    DEATH_TRIGGERS,
    EFFECTS,
    ENEMY_TARGETS,
    PARAM_TRIGGERS,
    REACTION_TRIGGERS,
    ROLL_TRIGGERS,
    TARGETS,
)
from service.games.kernel.rng import SplitMix64
from tests.games.engines import ROOT, PureEngine, battle_bytes
from tests.games.golden.gen import HERE, corpus_path, replay_digest
from tests.games.helpers import TEST_RUN, TEST_SHOP


def _compiled_modules() -> list[str]:
    """The modules setup.py compiles, read from its COMPILED list."""
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "COMPILED":
            paths: list[str] = ast.literal_eval(node.value)
            return [p.removesuffix(".py").replace("/", ".") for p in paths]
    raise AssertionError("setup.py has no COMPILED list")


def _compiled_build_expected() -> bool:
    """What setup.py decides: compile unless CRYPTIDS_PURE=1 or no C compiler is found."""
    command = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    return (
        os.environ.get("CRYPTIDS_PURE") != "1" and bool(command) and bool(shutil.which(command[0]))
    )


COMPILED = _compiled_modules()
needs_compiled = pytest.mark.skipif(
    not _compiled_build_expected(),
    reason="no compiled build here: no C compiler, or CRYPTIDS_PURE=1",
)


@needs_compiled
def test_this_process_runs_the_compiled_build_of_every_compiled_module() -> None:
    assert ENGINE_BUILD == "compiled"
    for name in COMPILED:
        module = sys.modules[name]
        assert isinstance(module.__loader__, importlib.machinery.ExtensionFileLoader), name


@needs_compiled
def test_an_editable_build_is_not_older_than_its_sources() -> None:
    # In a source tree (pip install -e) the compiled modules sit beside the .py files and win
    # over them: an edited source needs a rebuild, or the tests would test the old code.
    for name in COMPILED:
        built = Path(str(sys.modules[name].__file__))
        source = built.parent / (name.rpartition(".")[2] + ".py")
        assert built.stat().st_mtime >= source.stat().st_mtime, (
            f"{built.name} is older than {source.name}: pip install -e . (or make test) rebuilds it"
        )


@pytest.fixture(scope="module")
def pure() -> Iterator[PureEngine]:
    with PureEngine() as engine:
        assert engine.build == "pure"
        yield engine


def _golden() -> list[tuple[dict[str, Any], str]]:
    """Every stored battle with its replay digest: each shipped ruleset's corpus, and the rules
    points (some on the test content beside them)."""
    cases = []
    for ruleset_id in available_rulesets():
        document = json.loads(corpus_path(ruleset_id).read_text(encoding="utf-8"))
        cases += [({"ruleset": ruleset_id} | e, e["replay_sha256"]) for e in document["battles"]]
    points = json.loads((HERE / "rules-points.json").read_text(encoding="utf-8"))
    content = tomllib.loads((HERE / "rules-points.toml").read_text(encoding="utf-8"))
    for case in points.values():
        ruleset = content if case["ruleset"] == content["ruleset"] else case["ruleset"]
        cases.append(({**case, "ruleset": ruleset}, case["replay_sha256"]))
    return [({k: c[k] for k in ("ruleset", "seed", "a", "b")}, digest) for c, digest in cases]


@needs_compiled
def test_the_golden_battles_are_byte_identical_on_both_builds(pure: PureEngine) -> None:
    golden = _golden()
    assert len(golden) >= 120
    for request, digest in golden:
        here = battle_bytes(request)
        assert pure.battle_bytes(request) == here, request["seed"]
        recorded, _ = msgpack.unpackb(here)
        assert replay_digest(recorded["replay"]) == digest, request["seed"]


# --- random content: every trigger, effect and target, small limits -----------------------

MAX_LEVEL = 3
Integer = Callable[[int, int], int]
"""integer(low, high): a number in low..high, drawn by hypothesis or by a seeded generator"""

# Summons weigh more: one needs its token and, to fail, a full board.
_EFFECTS = [*EFFECTS, "summon", "summon"]


def _ability(integer: Integer, faces: int, tokens: int, harmful: bool) -> dict[str, Any]:
    """Any valid ability; `harmful`: one that damages or poisons the other side."""

    def one(options: Sequence[str]) -> str:
        return options[integer(0, len(options) - 1)]

    effect = one(("damage", "poison") if harmful else _EFFECTS)
    kinds = [*ROLL_TRIGGERS, *PARAM_TRIGGERS]
    if effect not in ("add_to_sum", "reroll"):
        # Twice: chains of reactions and of death waves need several of them.
        kinds += [*REACTION_TRIGGERS, *DEATH_TRIGGERS] * 2
    trigger = one(kinds)
    if trigger in PARAM_TRIGGERS:
        trigger = f"{trigger}:{integer(1, faces if trigger == 'face' else 2 * faces)}"
    if effect in ("add_to_sum", "reroll", "summon"):
        target = "self"
    else:
        target = one(ENEMY_TARGETS if harmful else TARGETS)
    ability = {
        "trigger": trigger,
        "effect": effect,
        "target": target,
        "magnitude": [integer(1, 4) for _ in range(MAX_LEVEL)],
    }
    if effect == "summon":
        ability["token"] = f"t{integer(0, tokens - 1)}"
    return ability


def random_battle(integer: Integer) -> dict[str, Any]:
    """A battle request on a random ruleset: few species, small limits, so that chain limits,
    death waves, summons on full boards, re-rolls and sudden death all come up."""
    faces = integer(2, 6)
    size = integer(1, 6)
    n_tokens = integer(1, 2)

    def cryptid(kind: str, i: int) -> dict[str, Any]:
        return {"id": f"{kind}{i}", "name": f"{kind}{i}", "health": integer(1, 8)} | {
            "threat": integer(0, 4)
        }

    species = [
        cryptid("s", i)
        | {
            "tier": 1,
            "cost": 3,
            # Ability 0 can harm, so that most battles get past their first roll.
            "abilities": [
                _ability(integer, faces, n_tokens, True),
                _ability(integer, faces, n_tokens, False),
            ],
        }
        for i in range(integer(1, 5))
    ]
    tokens = [
        cryptid("t", i) | {"ability": _ability(integer, faces, n_tokens, False)}
        for i in range(n_tokens)
    ]
    ruleset = {
        "ruleset": "random",
        "battle": {
            "board_size": size,
            "roll_limit": integer(1, 40),
            "sudden_death_start": integer(1, 20),
            "chain_depth": integer(1, 2),
            "reaction_limit": integer(1, 10),
            "die_faces": faces,
        },
        "shop": TEST_SHOP,
        "run": TEST_RUN | {"max_level": MAX_LEVEL},
        "pairing": {"bands": [100], "candidates_per_side": 8},
        "species": species,
        "token": tokens,
    }

    def warband() -> list[tuple[str, int, int]]:
        return [
            (f"s{integer(0, len(species) - 1)}", integer(0, 1), integer(1, MAX_LEVEL))
            for _ in range(integer(1, size))
        ]

    return {"ruleset": ruleset, "seed": integer(0, 2**64 - 1), "a": warband(), "b": warband()}


@st.composite
def battles(draw: st.DrawFn) -> dict[str, Any]:
    return random_battle(lambda low, high: draw(st.integers(low, high)))


def seeded_battles(count: int, seed: int) -> Iterator[dict[str, Any]]:
    rng = SplitMix64(seed)
    for _ in range(count):
        yield random_battle(lambda low, high: low + rng.below(high - low + 1))


SHIPPED = load_ruleset()
shipped_battles = st.fixed_dictionaries(
    {
        "ruleset": st.just(SHIPPED.id),
        "seed": st.integers(0, 2**64 - 1),
        "a": st.lists(
            st.tuples(
                st.sampled_from(sorted(SHIPPED.species)), st.integers(0, 1), st.integers(1, 3)
            ),
            min_size=1,
            max_size=5,
        ),
        "b": st.lists(
            st.tuples(
                st.sampled_from(sorted(SHIPPED.species)), st.integers(0, 1), st.integers(1, 3)
            ),
            min_size=1,
            max_size=5,
        ),
    }
)

COVERAGE_BATTLES = 2000
EVERY_EVENT = {
    "roll",
    "sudden_death",
    "tick",
    "trigger",
    "skip",
    "reroll",
    "sum",
    "damage",
    "heal",
    "shield",
    "poison",
    "stun",
    "threat",
    "max_health",
    "summon",
    "summon_failed",
    "death",
    "chain_limit",
    "end",
}


def _events(data: bytes) -> Iterator[tuple[Any, ...]]:
    recorded, _ = msgpack.unpackb(data)
    return (tuple(e) for e in recorded["replay"]["events"])


@needs_compiled
def test_random_content_gives_the_same_bytes_on_both_builds_and_shows_every_event(
    pure: PureEngine,
) -> None:
    seen: set[str] = set()
    cut_waves = False
    for request in seeded_battles(COVERAGE_BATTLES, 0xB17E):
        here = battle_bytes(request)
        assert pure.battle_bytes(request) == here, request
        for event in _events(here):
            seen.add(event[0])
            cut_waves |= event == ("chain_limit", -1)
    assert seen == EVERY_EVENT
    assert cut_waves, "no death wave was cut by the chain limit"


@needs_compiled
@settings(max_examples=150, deadline=None)
@given(request=st.one_of(battles(), shipped_battles))
def test_property_both_builds_give_the_same_bytes(
    pure: PureEngine, request: dict[str, Any]
) -> None:
    assert pure.battle_bytes(request) == battle_bytes(request)
