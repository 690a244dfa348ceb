"""The backups' ages, as /metrics and the ops report give them, read from a backup directory
in the layout of service/runtime/backups.py with files of known times."""

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from service.config import Settings
from service.usecases.ops import watched_backups
from tests.conftest import TEST_OPS_TOKEN, running_service
from tests.http import Api

GAUGES = ("backup_last_base_age_seconds", "backup_last_wal_age_seconds")
# Seconds a test's own steps may take between writing the files and reading the ages.
SLACK = 10.0


def add_base_backup(backup_dir: Path, finished: datetime, *, whole: bool = True) -> Path:
    """A base backup folder named by its start; only a whole one has its record."""
    started = finished - timedelta(minutes=2)
    folder = backup_dir / "base" / started.strftime("%Y%m%dT%H%M%SZ")
    folder.mkdir(parents=True)
    (folder / "base.tar.gz").write_bytes(b"")
    if whole:
        record = {
            "started": started.isoformat(),
            "finished": finished.isoformat(),
            "start_wal": "000000010000000000000002",
            "size_bytes": 0,
        }
        (folder / "backup.json").write_text(json.dumps(record))
    return folder


def add_segment(backup_dir: Path, name: str, archived: datetime) -> None:
    segment = backup_dir / "wal" / name
    segment.parent.mkdir(parents=True, exist_ok=True)
    segment.write_bytes(b"\0" * 64)
    os.utime(segment, (archived.timestamp(), archived.timestamp()))


def backup_dir_of_known_ages(root: Path) -> Path:
    """The newest whole base backup finished 30 h ago, the newest segment archived 40 s ago;
    around them, what is not yet (or never was) a backup or a segment, all newer."""
    now = datetime.now(UTC)
    add_base_backup(root, now - timedelta(hours=54))
    add_base_backup(root, now - timedelta(hours=30))
    add_base_backup(root, now - timedelta(minutes=1), whole=False)  # being taken, or failed
    (root / "base" / ".20990101T000000Z.partial").mkdir()
    add_segment(root, "000000010000000000000002", now - timedelta(minutes=10))
    add_segment(root, "000000010000000000000003", now - timedelta(seconds=40))
    add_segment(root, "000000010000000000000004.tmp", now)  # still being copied
    return root


def scraped(text: str) -> dict[str, float]:
    return {
        sample.name: sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name in GAUGES
    }


async def report(api: Api) -> dict[str, Any]:
    answer = await api.get("/v1/ops/matchmaking", headers={"X-Ops-Token": TEST_OPS_TOKEN})
    assert answer.status == 200, answer.body
    body: dict[str, Any] = answer.body
    return body


async def test_the_gauges_give_the_age_of_the_newest_whole_backup_and_segment(
    make_settings: Any, tmp_path: Path
) -> None:
    backups = backup_dir_of_known_ages(tmp_path / "backups")
    async with running_service(make_settings(backup_dir=backups)) as api:
        ages = scraped((await api.get("/metrics")).raw.decode())
        assert 30 * 3600 <= ages["backup_last_base_age_seconds"] <= 30 * 3600 + SLACK
        assert 40 <= ages["backup_last_wal_age_seconds"] <= 40 + SLACK
        # Read at every scrape, not cached with the database's gauges: a new segment shows.
        add_segment(backups, "000000010000000000000005", datetime.now(UTC))
        ages = scraped((await api.get("/metrics")).raw.decode())
        assert ages["backup_last_wal_age_seconds"] <= SLACK


async def test_backups_never_made_are_infinitely_old_and_unwatched_ones_absent(
    api: Api, make_settings: Any, tmp_path: Path
) -> None:
    async with running_service(make_settings(backup_dir=tmp_path / "none-yet")) as watched:
        ages = scraped((await watched.get("/metrics")).raw.decode())
        assert ages == dict.fromkeys(GAUGES, float("inf"))
        body = await report(watched)
        assert body["backups"]["alerts"] == ["stale_base_backup", "stale_wal_archive"]
        assert body["backups"]["base_age_seconds"] is None
    # The suite's service: an external database and no BACKUP_DIR, so nothing to report.
    assert scraped((await api.get("/metrics")).raw.decode()) == {}
    assert (await report(api))["backups"] is None


async def test_the_report_flags_each_age_over_its_setting(
    make_settings: Any, settings: Settings, tmp_path: Path
) -> None:
    backups = backup_dir_of_known_ages(tmp_path / "backups")
    defaults = make_settings(backup_dir=backups)
    async with running_service(defaults) as api:
        found = (await report(api))["backups"]
        # The defaults: a day and two hours for the base backup, five minutes for the WAL.
        assert found["base_max_age_seconds"] == 26 * 3600
        assert found["wal_max_age_seconds"] == 300
        assert found["alerts"] == ["stale_base_backup"]
        assert found["directory"] == str(backups)
        assert 30 * 3600 <= found["base_age_seconds"] <= 30 * 3600 + SLACK
        assert 40 <= found["wal_age_seconds"] <= 40 + SLACK
        finished = datetime.fromisoformat(found["last_base_at"])
        assert abs(datetime.now(UTC) - timedelta(hours=30) - finished) < timedelta(seconds=SLACK)
    lenient = make_settings(
        backup_dir=backups, ops_backup_max_age_seconds=31 * 3600.0, ops_wal_max_age_seconds=30.0
    )
    async with running_service(lenient) as api:
        assert (await report(api))["backups"]["alerts"] == ["stale_wal_archive"]
    # The embedded database's backups are watched without BACKUP_DIR: DATA_DIR/backups.
    embedded = make_settings(database_url=None, data_dir=tmp_path)
    assert watched_backups(embedded) == tmp_path / "backups"
    assert watched_backups(settings) is None
