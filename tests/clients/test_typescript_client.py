"""The TypeScript client library, clients/typescript/, against a real service.

`node --test clients/typescript/test/` runs the library's own tests, written against its built
bundle, with `CRYPTID_BASE_URL` naming a service started here and `CRYPTID_SHORT_TOKEN_BASE_URL`
a second one, on the same database, whose access tokens last 2 seconds (the refresh tests). They
play a run to its end, a match of each turn-based game against a bot, drop a match's socket and
check that no event is missed or repeated, retry writes and check they were applied once, and
send a seed of 2^64 - 1 and check it comes back exact.

The other tests check that what is committed is what the package's own tools make: the types
from the running service's OpenAPI document, the bundle from src/, a clean `tsc --noEmit`, and
the README's example is examples/first-turn.mjs (which the Node tests run), in both READMEs.

`make test` installs the package's dependencies from its lockfile first (`npm ci`).
"""

import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import running_service
from tests.http import Api
from tests.node import node_for, run

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "clients" / "typescript"
EXAMPLE = PACKAGE / "examples" / "first-turn.mjs"
NODE_TESTS_SECONDS = 180
TOOL_SECONDS = 60


def _node() -> str:
    return node_for(PACKAGE)


async def _run(*args: str, seconds: float, env: dict[str, str] | None = None) -> tuple[int, str]:
    return await run(*args, cwd=PACKAGE, seconds=seconds, env=env)


async def test_the_library_plays_against_a_real_service(make_settings: Any) -> None:
    node = _node()
    async with (
        running_service(make_settings()) as service,
        running_service(make_settings(access_token_ttl_seconds=2)) as short_lived,
    ):
        code, output = await _run(
            node,
            "--test",
            str(PACKAGE / "test"),
            seconds=NODE_TESTS_SECONDS,
            env={
                "CRYPTID_BASE_URL": service.base_url,
                "CRYPTID_SHORT_TOKEN_BASE_URL": short_lived.base_url,
            },
        )
    assert code == 0, output
    summary = dict(re.findall(r"^# (tests|pass|fail|skipped) (\d+)$", output, re.MULTILINE))
    assert summary["fail"] == "0" and summary["skipped"] == "0", output
    assert int(summary["pass"]) >= 30, output


async def test_the_committed_types_are_those_of_the_services_openapi_document(
    api: Api, service_process: tuple[str, Any], tmp_path: Path
) -> None:
    node = _node()
    # The document of a service of its own, which knows only the games it ships: the suite's
    # in-process services also serve the games some tests register.
    base, _ = service_process
    document = await Api(api.session, base).get("/v1/openapi.json")
    assert document.status == 200
    (tmp_path / "openapi.json").write_bytes(document.raw)
    generated = tmp_path / "schema.d.ts"
    code, output = await _run(
        node,
        "scripts/generate.mjs",
        str(tmp_path / "openapi.json"),
        str(generated),
        seconds=TOOL_SECONDS,
    )
    assert code == 0, output
    assert generated.read_text() == (PACKAGE / "src" / "schema.d.ts").read_text(), (
        "src/schema.d.ts is not what the service's OpenAPI document gives: with the service"
        " running, `curl -fsS http://localhost:8080/v1/openapi.json > /tmp/openapi.json` and"
        " `npm run generate --prefix clients/typescript -- /tmp/openapi.json`, then"
        " `npm run build --prefix clients/typescript`"
    )


async def test_the_committed_bundle_is_built_from_the_sources(tmp_path: Path) -> None:
    node = _node()
    built = tmp_path / "cryptid-client.js"
    code, output = await _run(node, "scripts/build.mjs", str(built), seconds=TOOL_SECONDS)
    assert code == 0, output
    assert built.read_bytes() == (PACKAGE / "dist" / "cryptid-client.js").read_bytes(), (
        "dist/cryptid-client.js is not built from src/ (and web/watch/resim.js):"
        " `npm run build --prefix clients/typescript`"
    )


async def test_the_sources_type_check_strictly() -> None:
    node = _node()
    tsc = str(PACKAGE / "node_modules" / "typescript" / "bin" / "tsc")
    code, output = await _run(node, tsc, "--noEmit", "-p", ".", seconds=TOOL_SECONDS)
    assert code == 0, output


def _fenced_after(path: Path, heading: str) -> str:
    """The first fenced code block after `heading` in a Markdown file, as its text."""
    text = path.read_text()
    start = text.index(f"\n{heading}\n")
    block = re.compile(r"^```[\w]*\n(.*?)^```$", re.MULTILINE | re.DOTALL).search(text, start)
    assert block is not None, f"{path.name}: no code block after {heading!r}"
    return block.group(1)


@pytest.mark.parametrize(
    ("readme", "heading"),
    [
        (PACKAGE / "README.md", "## Twenty lines"),
        (REPO / "README.md", "## A client library"),
    ],
    ids=["clients/typescript/README.md", "README.md"],
)
def test_the_readme_example_is_the_one_the_suite_runs(readme: Path, heading: str) -> None:
    assert _fenced_after(readme, heading) == EXAMPLE.read_text()
