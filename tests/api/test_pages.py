"""The web apps live in web/ at the top of the tree; a built package carries what they serve."""

import json
import os
import subprocess
import sys
from pathlib import Path

from service.api import pages

REPO = Path(__file__).resolve().parents[2]
# Run in the built package's place: where the pages are read from, and what each app serves.
READ_PAGES = (
    "import json; from service.api import pages;"
    " print(json.dumps([str(pages.WEB)] + sorted("
    "f'{app.name}/{name}' for app in pages.WEB.iterdir() if app.is_dir()"
    " for name in pages.load(app))))"
)
# The pages' folders in the tree; beside them, their build's files and its npm packages.
APPS = ("ops", "watch", "play")


def test_the_source_tree_serves_the_top_level_web_folder() -> None:
    assert pages.WEB == REPO / "web"
    assert set(APPS) <= {app.name for app in pages.WEB.iterdir()}


def test_the_built_package_serves_the_top_level_web_files(
    built_package: Path, tmp_path: Path
) -> None:
    read = subprocess.run(
        [sys.executable, "-P", "-c", READ_PAGES],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(built_package)},
        check=True,
        capture_output=True,
        timeout=60,
    )
    where, *served = json.loads(read.stdout)
    assert Path(where) == built_package / "service/web"
    expected = sorted(f"{app}/{name}" for app in APPS for name in pages.load(REPO / "web" / app))
    assert served == expected
    assert {"watch/resim.js", "play/play.js", "play/play.html"} <= set(served)
    for name in served:
        packaged = (built_package / "service/web" / name).read_bytes()
        assert packaged == (REPO / "web" / name).read_bytes(), name
