"""The releases the upgrade drills start from stay in step with the release being made: the
newest heading of CHANGELOG.md is this version, and the one below it is the release whose
database the drills restore and whose code they run beside this one."""

import re
from pathlib import Path

from service.version import VERSION
from tests.upgrade.release import previous, version_key

CHANGELOG = Path(__file__).resolve().parents[2] / "CHANGELOG.md"
RELEASE_HEADING = re.compile(r"^## \[(\d+\.\d+\.\d+)\]", re.MULTILINE)


def test_the_changelog_opens_with_this_release() -> None:
    releases = RELEASE_HEADING.findall(CHANGELOG.read_text())
    assert releases[0] == VERSION, f"CHANGELOG.md has no entry for {VERSION} at its top"
    assert releases == sorted(releases, key=version_key, reverse=True)


def test_the_drills_start_from_the_release_before_this_one() -> None:
    before = RELEASE_HEADING.findall(CHANGELOG.read_text())[1]
    assert previous().version == before, (
        f"the upgrade drills start from {previous().version}, not from {before}: record"
        f" {before}'s database with `python -m tests.upgrade.record_release --commit <its"
        f" commit> --version {before}`"
    )
