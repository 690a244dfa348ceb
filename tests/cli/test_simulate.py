"""The terminal renderer: `simulate --seed N A.json B.json [--json] [--ruleset ID]`."""

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from service.cli.simulate import main
from service.games.cryptids import ENGINE_BUILD, load_ruleset, result_to_wire, simulate

A = {
    "cryptids": [
        {"species": "trauco", "ability": 1, "level": 1},
        {"species": "chupacabra", "ability": 1, "level": 1},
    ]
}
B = {
    "cryptids": [
        {"species": "mothman", "ability": 0, "level": 1},
        {"species": "nahual", "ability": 0, "level": 1},
    ]
}


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(A))
    b.write_text(json.dumps(B))
    return str(a), str(b)


def test_json_prints_the_result_with_its_replay(files: tuple[str, str]) -> None:
    out = io.StringIO()
    assert main(["--seed", "1197", *files, "--json"], out) == 0
    expected = simulate(
        load_ruleset(),
        1197,
        [("trauco", 1, 1), ("chupacabra", 1, 1)],
        [("mothman", 0, 1), ("nahual", 0, 1)],
    )
    wire = result_to_wire(expected, include_replay=True)
    assert json.loads(out.getvalue()) == json.loads(json.dumps(wire))
    assert json.loads(out.getvalue())["replay"]["events"][0][0] == "roll"


def test_the_human_view_has_one_line_per_event_and_no_colour_off_a_terminal(
    files: tuple[str, str],
) -> None:
    out = io.StringIO()
    assert main(["--seed", "1197", *files], out) == 0
    text = out.getvalue()
    assert "\x1b[" not in text
    lines = text.splitlines()
    assert lines[0].startswith("Side A: Trauco L1 4hp")
    assert lines[1].startswith("Side B: ")
    assert lines[2].startswith("Roll  1  [3] [6]")
    assert any("Mothman (B) deals 2 damage to Chupacabra (A)" in line for line in lines)
    assert any("Chupacabra (A) dies" in line for line in lines)
    assert lines[-1] == "Side B wins (wipe): health A 0, B 7"


def test_a_bad_warband_exits_with_status_2_and_names_the_field(
    files: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"cryptids": [{"species": "bigfoot_jr", "ability": 0, "level": 1}]}))
    assert main(["--seed", "1", files[0], str(bad)]) == 2
    assert "b.cryptids[0].species" in capsys.readouterr().err


def test_an_unknown_ruleset_exits_with_status_2(files: tuple[str, str]) -> None:
    assert main(["--seed", "1", *files, "--ruleset", "nope"]) == 2


@pytest.mark.parametrize("switch", [None, "pure"])
def test_version_says_which_build_of_the_engine_runs(switch: str | None) -> None:
    env = {k: v for k, v in os.environ.items() if k != "CRYPTIDS_ENGINE"}
    if switch is not None:
        env["CRYPTIDS_ENGINE"] = switch
    done = subprocess.run(
        [sys.executable, "-m", "service", "simulate", "--version"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout == f"cryptid engine: {switch or ENGINE_BUILD}\n"
