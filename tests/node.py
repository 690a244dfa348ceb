"""Node.js tools of the repository's npm packages (clients/typescript, web), run by the suite."""

import asyncio
import os
import shutil
from pathlib import Path

import pytest


def node_for(package: Path) -> str:
    """The `node` to run the package's tools with; failing, not skipping, when it or the
    package's dependencies are missing, so that a package that no longer builds cannot pass."""
    node = shutil.which("node")
    if node is None or not (package / "node_modules" / ".package-lock.json").is_file():
        pytest.fail(
            f"these tests need Node.js and {package.name}'s packages: `make test` installs them"
        )
    return node


async def run(
    *args: str, cwd: Path, seconds: float, env: dict[str, str] | None = None
) -> tuple[int, str]:
    """Run a command in `cwd`, with its output (both streams) and exit code, killed after
    `seconds`.

    Asynchronous, so that the services of this event loop go on answering it meanwhile.
    """
    process = await asyncio.create_subprocess_exec(
        *args,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        async with asyncio.timeout(seconds):
            output, _ = await process.communicate()
    except TimeoutError:
        process.kill()
        output, _ = await process.communicate()
        text = output.decode(errors="replace")
        raise AssertionError(f"{' '.join(args)} ran past {seconds} s:\n{text}") from None
    return process.returncode or 0, output.decode(errors="replace")
