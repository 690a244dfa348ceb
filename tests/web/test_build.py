"""The web client's committed bundle is what its sources build, and they type-check strictly."""

from pathlib import Path

from tests.node import node_for, run

WEB = Path(__file__).resolve().parents[2] / "web"
TOOL_SECONDS = 60


async def test_the_committed_bundle_is_built_from_the_sources(tmp_path: Path) -> None:
    code, output = await run(
        node_for(WEB), "build.mjs", str(tmp_path), cwd=WEB, seconds=TOOL_SECONDS
    )
    assert code == 0, output
    # The web client, and its match table built for the replay viewer (with its stylesheet).
    for bundle in ("play/play.js", "watch/match-view.js", "watch/match-view.css"):
        assert (tmp_path / bundle).read_bytes() == (WEB / bundle).read_bytes(), (
            f"web/{bundle} is not built from web/play/src: `npm run build --prefix web`"
        )


async def test_the_sources_type_check_strictly() -> None:
    tsc = str(WEB / "node_modules" / "typescript" / "bin" / "tsc")
    code, output = await run(
        node_for(WEB), tsc, "--noEmit", "-p", ".", cwd=WEB, seconds=TOOL_SECONDS
    )
    assert code == 0, output
