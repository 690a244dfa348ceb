"""Every shell example of the README and of docs/ runs, as pasted, against a live service.

A reader pastes a file's examples in order into one shell while `make serve` runs, so that is
how they run here: each file's ```sh blocks in one bash session (a variable one block sets is
seen by the next), under `set -euo pipefail`, with `http://localhost:8080` replaced by the test
service's URL and nothing else changed. The examples call `curl -fsS`, so a refused request
fails its block. Blocks that start a service of their own (`make serve`, `make test`,
`make cluster`, `make bench`) are the only ones skipped. deploy/README.md is not read: its
commands need a registry and a cluster.

A `# →` comment shows what the command above it prints. Every key it names must be in what the
block printed, so that the answers shown keep the shape the service really gives.

The session has the virtual environment's `bin` first on PATH (for `python -m service ...`),
`OPS_TOKEN` set to the test service's ops token, and `DATABASE_URL` set to the test database
only for the blocks that run a command needing one (`python -m service partitions` or
`migrate`).
"""

import asyncio
import contextlib
import os
import re
import shlex
import shutil
import signal
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from service.config import Settings
from tests.http import Api

REPO = Path(__file__).resolve().parents[1]
DOCUMENTED_URL = "http://localhost:8080"
BLOCK_SECONDS = 60.0

SHELL_FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?:sh|bash|shell)[ \t]*$")
STARTS_A_SERVICE = re.compile(r"^\s*make\s+(?:serve|test|cluster|bench)\b", re.MULTILINE)
NEEDS_DATABASE = re.compile(r"\bpython\s+-m\s+service\s+(?:partitions|migrate)\b")
ANSWER = re.compile(r"^\s*#\s*→")
ANSWER_GOES_ON = re.compile(r"^\s*#\s{2,}\S")
KEY = re.compile(r'"([^"\s]+)"\s*:')


@dataclass(frozen=True)
class Block:
    line: int  # of its opening fence, counting from 1
    text: str


def shell_blocks(path: Path) -> list[Block]:
    """The fenced shell blocks of a Markdown file, with an indented fence's indent removed."""
    lines = path.read_text().splitlines()
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        opening = SHELL_FENCE.match(lines[index])
        index += 1
        if opening is None:
            continue
        indent, start, body = opening["indent"], index, []
        while index < len(lines) and lines[index].strip() != "```":
            line = lines[index]
            body.append(line[len(indent) :] if line.startswith(indent) else line)
            index += 1
        index += 1
        blocks.append(Block(start, "\n".join(body) + "\n"))
    return blocks


def shown_keys(block: str) -> list[str]:
    """The keys named by the block's `# →` lines (and the comment lines that continue them)."""
    keys: list[str] = []
    showing = False
    for line in block.splitlines():
        showing = bool(ANSWER.match(line)) or (showing and bool(ANSWER_GOES_ON.match(line)))
        if showing:
            keys += [key for key in KEY.findall(line) if key not in keys]
    return keys


def documents() -> list[Path]:
    candidates = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    return [path for path in candidates if shell_blocks(path)]


def test_the_readme_has_examples_to_run() -> None:
    # A fence the parser stopped recognising would otherwise pass by running nothing.
    blocks = shell_blocks(REPO / "README.md")
    assert [block for block in blocks if not STARTS_A_SERVICE.search(block.text)]


async def read_until(stream: asyncio.StreamReader, marker: bytes) -> tuple[str, bool]:
    """What the stream gives up to the marker's line, and whether the marker came (else EOF)."""
    data = bytearray()
    ending = b"\n" + marker + b"\n"
    while not data.endswith(ending):
        chunk = await stream.read(65536)
        if not chunk:
            return data.decode(errors="replace"), False
        data += chunk
    return data[: -len(ending)].decode(errors="replace"), True


class Session:
    """One bash process for one file's blocks. Each block is sourced from a file of its own, its
    stdin /dev/null (so that no command reads the next block), and then a marker is printed on
    stdout and stderr: what came before it is the block's output."""

    def __init__(self, process: asyncio.subprocess.Process, scripts: Path) -> None:
        self.process = process
        self.scripts = scripts

    async def run(self, name: str, script: str, setup: str) -> tuple[str, str, int | None]:
        """The block's stdout and stderr, and None, or the shell's exit status if it stopped.

        `setup` runs first, apart from the block, so that the line numbers bash gives in an
        error are the block's own (its file is named after the block, `README.md:70.sh`)."""
        assert self.process.stdin and self.process.stdout and self.process.stderr
        path = self.scripts / f"{name.replace('/', '_')}.sh"
        path.write_text(script)
        marker = f"end of {name} {uuid.uuid4().hex}"
        quoted = shlex.quote(marker)
        self.process.stdin.write(
            f"{setup}\n"
            f"source {shlex.quote(str(path))} < /dev/null\n"
            f"printf '\\n%s\\n' {quoted}\n"
            f"printf '\\n%s\\n' {quoted} >&2\n".encode()
        )
        await self.process.stdin.drain()
        (out, finished), (err, _) = await asyncio.gather(
            read_until(self.process.stdout, marker.encode()),
            read_until(self.process.stderr, marker.encode()),
        )
        return out, err, None if finished else await self.process.wait()

    def kill(self) -> None:
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
                os.killpg(self.process.pid, signal.SIGKILL)

    async def close(self) -> None:
        """Let the shell end at the end of its input; kill it if it does not."""
        if self.process.stdin and not self.process.stdin.is_closing():
            self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), 5)
        except TimeoutError:
            self.kill()
            await self.process.wait()


@pytest.mark.parametrize("path", documents(), ids=lambda path: str(path.relative_to(REPO)))
async def test_the_shell_examples_run_as_pasted(
    path: Path, api: Api, settings: Settings, tmp_path: Path
) -> None:
    name = path.relative_to(REPO)
    bin_dir = str(Path(sys.executable).parent)
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env["PATH"] = os.pathsep.join([bin_dir, env.get("PATH", "")])
    env["OPS_TOKEN"] = settings.ops_token
    env["DATA_DIR"] = str(tmp_path / "var")
    for tool in ("bash", "curl", "jq"):
        if shutil.which(tool, path=env["PATH"]) is None:
            pytest.fail(f"the examples need {tool}: apt-get install {tool}")
    # The examples' own files (a.json, ...) land in a directory of their own.
    workdir, scripts = tmp_path / "work", tmp_path / "blocks"
    workdir.mkdir()
    scripts.mkdir()

    process = await asyncio.create_subprocess_exec(
        "bash",
        "--noprofile",
        "--norc",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=workdir,
        env=env,
        start_new_session=True,  # its own process group, all of which a timeout stops
    )
    session = Session(process, scripts)
    try:
        assert process.stdin
        process.stdin.write(b"set -euo pipefail\n")
        for block in shell_blocks(path):
            if STARTS_A_SERVICE.search(block.text):
                continue
            where = f"{name}:{block.line}"
            if NEEDS_DATABASE.search(block.text):
                setup = f"export DATABASE_URL={shlex.quote(settings.database_url or '')}"
            else:
                setup = "unset DATABASE_URL"
            script = block.text.replace(DOCUMENTED_URL, api.base_url)
            try:
                out, err, status = await asyncio.wait_for(
                    session.run(where, script, setup), BLOCK_SECONDS
                )
            except TimeoutError:
                session.kill()
                pytest.fail(f"{where}: the block did not finish in {BLOCK_SECONDS:.0f} s")
            if status is not None:
                pytest.fail(
                    f"{where}: the block failed (exit status {status}); it printed on stderr:\n"
                    f"{err.strip() or '(nothing)'}\n--- the block:\n{block.text}"
                )
            for key in shown_keys(block.text):
                if not re.search(f'"{re.escape(key)}"\\s*:', out):
                    pytest.fail(
                        f"{where}: a `# →` line shows the key {key!r}, which the block did not"
                        f" print; it printed:\n{out.strip() or '(nothing)'}"
                    )
    finally:
        await session.close()
