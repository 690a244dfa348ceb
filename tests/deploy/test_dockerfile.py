"""The image's recipe: hadolint finds nothing in it, and it builds what deploy/k8s assumes.

No image is built here (no registry for the base image); the recipe is linted by hadolint and
read with dockerfile-parse, the build context is computed by docker's own .dockerignore rules,
and the HEALTHCHECK command is run against a real service.
"""

import asyncio
import json
import re
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

from docker.utils.build import exclude_paths
from dockerfile_parse import DockerfileParser

from service.config import load_settings
from tests.http import Api

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = REPO / "deploy/Dockerfile"
HADOLINT = Path(sys.executable).parent / "hadolint"
COMPILERS = re.compile(r"\b(gcc|g\+\+|clang|cc|build-essential|libc6-dev|python3?-dev)\b")
BASE = "python:3.11-slim"

Instruction = dict[str, Any]


def stages() -> list[list[Instruction]]:
    """The instructions of each stage, each list starting with its FROM."""
    found: list[list[Instruction]] = []
    for line in DockerfileParser(path=str(DOCKERFILE)).structure:
        if line["instruction"] == "FROM":
            found.append([])
        if line["instruction"] != "COMMENT":
            found[-1].append(line)
    return found


def values(stage: list[Instruction], instruction: str) -> list[str]:
    return [str(line["value"]) for line in stage if line["instruction"] == instruction]


def hadolint(path: Path) -> list[dict[str, Any]]:
    done = subprocess.run(
        [str(HADOLINT), "--no-color", "--format", "json", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    findings: list[dict[str, Any]] = json.loads(done.stdout)
    return findings


def build_context() -> set[str]:
    """The files `docker build .` sends, by the same rules as the docker CLI."""
    lines = (REPO / ".dockerignore").read_text().splitlines()
    patterns = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    return set(exclude_paths(str(REPO), patterns, dockerfile="deploy/Dockerfile"))


def test_hadolint_finds_nothing() -> None:
    assert hadolint(DOCKERFILE) == []


def test_hadolint_does_flag_a_careless_recipe(tmp_path: Path) -> None:
    careless = tmp_path / "Dockerfile"
    careless.write_text("FROM python:latest\nRUN apt-get install -y gcc\nUSER root\n")
    codes = {finding["code"] for finding in hadolint(careless)}
    assert {"DL3007", "DL3015", "DL3002"} <= codes  # :latest, recommends, root user


def test_a_builder_compiles_and_the_runtime_has_no_compiler() -> None:
    builder, *_, runtime = stages()
    assert len(stages()) >= 2
    assert values(builder, "FROM") == [f"{BASE} AS builder"]
    assert any(COMPILERS.search(run) and "gcc" in run for run in values(builder, "RUN"))
    assert any(run.startswith("pip install .") for run in values(builder, "RUN"))
    # The runtime starts afresh from the slim image and takes only the virtual environment.
    assert values(runtime, "FROM") == [BASE]
    assert not [run for run in values(runtime, "RUN") if COMPILERS.search(run)]
    assert values(runtime, "COPY") == ["--from=builder /opt/venv /opt/venv"]


def test_the_runtime_runs_as_a_numeric_non_root_user() -> None:
    runtime = stages()[-1]
    (user,) = values(runtime, "USER")
    uid, gid = user.split(":")
    # Numeric, so that Kubernetes' runAsNonRoot can check it without /etc/passwd.
    assert uid.isdigit() and gid.isdigit() and int(uid) != 0 and int(gid) != 0
    (adduser,) = values(runtime, "RUN")
    assert f"--uid {uid}" in adduser and f"--gid {gid}" in adduser


def test_the_runtime_listens_everywhere_with_one_worker_by_default() -> None:
    runtime = stages()[-1]
    env = DockerfileParser(path=str(DOCKERFILE)).envs
    assert values(runtime, "EXPOSE") == [env["PORT"]]
    assert values(runtime, "STOPSIGNAL") == ["SIGTERM"]
    assert json.loads(values(runtime, "CMD")[0]) == ["python", "-m", "service", "serve"]
    settings = load_settings(
        {**env, "SECRET_KEY": secrets.token_urlsafe(36), "OPS_TOKEN": secrets.token_urlsafe(24)}
    )
    assert (settings.host, settings.workers) == ("0.0.0.0", 1)


async def healthcheck_status(command: list[str], port: str) -> int:
    # Run beside the service, which answers on this same event loop.
    process = await asyncio.create_subprocess_exec(
        sys.executable, *command[1:], env={"PORT": port}, stderr=asyncio.subprocess.DEVNULL
    )
    return await asyncio.wait_for(process.wait(), timeout=30)


async def test_the_healthcheck_asks_healthz_with_python_alone(api: Api) -> None:
    (healthcheck,) = values(stages()[-1], "HEALTHCHECK")
    command = json.loads(healthcheck.split(" CMD ", 1)[1])
    assert command[0] == "python" and "/healthz" in command[-1]
    assert await healthcheck_status(command, api.base_url.rsplit(":", 1)[1]) == 0
    assert await healthcheck_status(command, "1") != 0  # nothing listens there: unhealthy


def test_the_build_context_is_what_pip_install_reads_and_no_more() -> None:
    context = build_context()
    # Every COPY from the context names something in it (`.`: the context itself).
    for stage in stages():
        for copy in values(stage, "COPY"):
            if not copy.startswith("--from="):
                *sources, _ = copy.split()
                assert all(source == "." or source in context for source in sources), copy
    package = {
        str(path.relative_to(REPO))
        for path in (REPO / "service").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix not in {".so", ".pyc"}
    }
    build_inputs = {"pyproject.toml"} | {name for name in ["setup.py"] if (REPO / name).exists()}
    # The pages' files, which the build copies into the package (setup.py); not their sources.
    pages = {
        str(path.relative_to(REPO))
        for path in (REPO / "web").glob("*/*")
        if path.is_file() and path.suffix in {".html", ".css", ".js", ".svg"}
    }
    assert package | build_inputs | pages <= context
    # The pages' files and their folders only: not their sources, build or npm packages.
    folders = {"web", *(str(Path(page).parent) for page in pages)}
    assert {path for path in context if path.split("/")[0] == "web"} == pages | folders
    assert not {path for path in context if path.endswith((".so", ".pyc"))}
    assert not {
        path for path in context if path.split("/")[0] in {".git", ".venv", "var", "tests", "bench"}
    }
