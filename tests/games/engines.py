"""Battles on both builds of the engine: the one installed here, and the pure sources in a
subprocess (`python -m tests.games.engines`, with CRYPTIDS_ENGINE=pure).

A battle request is JSON: {"ruleset": an id or a ruleset document, "seed", "a", "b"}. Its
answer is the msgpack bytes of the result with its replay, then of the result simulated without
recording: the bytes the two builds must agree on.
"""

import json
import os
import subprocess
import sys
from functools import lru_cache
from pathlib import Path
from types import TracebackType
from typing import Any

import msgpack

from service.games.cryptids import ENGINE_BUILD, Ruleset, load_ruleset, result_to_wire, simulate
from service.games.cryptids.build import SWITCH, build_of
from service.games.cryptids.content import ruleset_from_dict

ROOT = Path(__file__).resolve().parents[2]


@lru_cache(maxsize=64)
def _ruleset(text: str) -> Ruleset:
    document = json.loads(text)
    return load_ruleset(document) if isinstance(document, str) else ruleset_from_dict(document)


def battle_bytes(request: dict[str, Any]) -> bytes:
    """The battle of `request` on the build loaded in this process, as bytes."""
    ruleset = _ruleset(json.dumps(request["ruleset"], sort_keys=True))
    seed, a, b = request["seed"], request["a"], request["b"]
    recorded = result_to_wire(simulate(ruleset, seed, a, b), include_replay=True)
    bare = result_to_wire(simulate(ruleset, seed, a, b, record=False), include_replay=False)
    return bytes(msgpack.packb([recorded, bare]))


class PureEngine:
    """The pure build in a subprocess, answering one battle at a time."""

    def __init__(self) -> None:
        env = os.environ | {SWITCH: "pure"}
        self._process = subprocess.Popen(
            [sys.executable, "-m", "tests.games.engines"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        # Its first line says which build it loaded.
        self.build = self._readline()

    def _readline(self) -> str:
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        if not line:
            raise RuntimeError(f"the pure engine exited with {self._process.wait()}")
        return line.strip()

    def battle_bytes(self, request: dict[str, Any]) -> bytes:
        assert self._process.stdin is not None
        self._process.stdin.write(json.dumps(request) + "\n")
        self._process.stdin.flush()
        return bytes.fromhex(self._readline())

    def close(self) -> None:
        assert self._process.stdin is not None
        self._process.stdin.close()
        self._process.wait(timeout=30)

    def __enter__(self) -> "PureEngine":
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def main() -> int:
    # Every module of the package from its source: no compiled module slipped in.
    ours = [m for name, m in sys.modules.items() if name.startswith("service.") or "mypyc" in name]
    builds = {build_of(module) for module in ours}
    print(ENGINE_BUILD if builds == {"pure"} else "mixed", flush=True)
    for line in sys.stdin:
        print(battle_bytes(json.loads(line)).hex(), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
