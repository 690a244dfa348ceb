"""The releases recorded under tests/upgrade/releases, their source trees, and running one.

Each folder `releases/<version>/` holds `release.json` (what that release's database holds and
what an upgrade must find again, written by tests/upgrade/record_release.py) and
`database.dump` (pg_dump's custom format of the database it wrote).
"""

import json
import os
import subprocess
import sys
import tarfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RELEASES = Path(__file__).resolve().parent / "releases"
REPOSITORY = Path(__file__).resolve().parents[2]
MANIFEST = "release.json"
DUMP = "database.dump"
# How long a release's service may take to answer /healthz (it may create its schema first).
HEALTHY_WITHIN_SECONDS = 60.0


@dataclass(frozen=True)
class Release:
    version: str
    commit: str
    folder: Path
    manifest: dict[str, Any]

    @property
    def dump(self) -> Path:
        return self.folder / DUMP


def version_key(version: str) -> tuple[int, ...]:
    """A version's numbers, so that 0.10.0 sorts after 0.9.0."""
    return tuple(int(part) for part in version.split("."))


def recorded(version: str) -> Release:
    """The release recorded under releases/<version>."""
    folder = RELEASES / version
    manifest = json.loads((folder / MANIFEST).read_text())
    return Release(
        version=manifest["version"], commit=manifest["commit"], folder=folder, manifest=manifest
    )


def previous() -> Release:
    """The newest release recorded, by version order."""
    versions = [path.parent.name for path in RELEASES.glob(f"*/{MANIFEST}")]
    if not versions:
        raise FileNotFoundError(f"no release is recorded under {RELEASES}")
    return recorded(max(versions, key=version_key))


def source_tree(commit: str, into: Path) -> Path:
    """The release's tracked files at `commit`, extracted from this clone's git into `into`.

    Only tracked files come out: no compiled engine (the tree runs its pure-Python one, which
    gives byte-identical battles) and no build products.
    """
    known = subprocess.run(
        ["git", "cat-file", "-e", f"{commit}^{{commit}}"],
        cwd=REPOSITORY,
        capture_output=True,
    )
    if known.returncode != 0:
        raise LookupError(
            f"this clone lacks commit {commit}: fetch the release's history"
            " (a shallow clone needs `git fetch --unshallow` or `git fetch origin <commit>`)"
        )
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.Popen(["git", "archive", commit], cwd=REPOSITORY, stdout=subprocess.PIPE)
    assert archive.stdout is not None
    with tarfile.open(fileobj=archive.stdout, mode="r|") as tar:
        tar.extractall(into, filter="data")
    if archive.wait() != 0:
        raise RuntimeError(f"git archive {commit} failed")
    return into


def _tree_env(tree: Path, env: Mapping[str, str]) -> dict[str, str]:
    """This process's environment with `env` over it, importing `service` from `tree`.

    `python -m` puts the working directory first on sys.path, ahead of the editable install
    (whose finder comes after the path's), but PYTHONSAFEPATH would drop it: PYTHONPATH names
    the tree as well, so the tree's package wins either way.
    """
    inherited = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DATABASE_URL", "PORT", "PYTHONSAFEPATH", "PYTHONPATH")
    }
    return {**inherited, **env, "PYTHONPATH": str(tree)}


def _imports_from(tree: Path, env: Mapping[str, str]) -> None:
    """Fail unless a process started as serve() starts one imports `service` from `tree`."""
    found = subprocess.run(
        [sys.executable, "-c", "import service; print(service.__file__)"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.strip()
    if not Path(found).resolve().is_relative_to(tree.resolve()):
        raise RuntimeError(f"`service` is imported from {found}, not from the tree {tree}")


def _healthy(base: str) -> bool:
    try:
        with urllib.request.urlopen(base + "/healthz", timeout=2) as answer:
            return bool(answer.status == 200)
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def serve(tree: Path, env: Mapping[str, str], port: int, log: Path) -> subprocess.Popen[bytes]:
    """`python -m service serve` of `tree` with this interpreter, on 127.0.0.1:`port`, once
    its /healthz answers.

    `env` sets the service's settings (DATABASE_URL, SECRET_KEY, DATA_DIR...) over this
    process's environment; PORT is `port`. Its output goes to `log`: a file never fills up
    and stalls the service as an unread pipe would. The caller stops it (SIGTERM).
    """
    full = {**_tree_env(tree, env), "PORT": str(port)}
    _imports_from(tree, full)
    with log.open("ab") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "service", "serve"],
            cwd=tree,
            env=full,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + HEALTHY_WITHIN_SECONDS
    while not _healthy(base):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            process.wait()
            tail = log.read_text(errors="replace")[-4000:]
            raise RuntimeError(f"the service of {tree} did not become healthy:\n{tail}")
        time.sleep(0.1)
    return process
