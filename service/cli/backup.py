"""`backup` takes a base backup; `restore --to TIME|latest --into DIR` restores one.

`backup` copies the database with pg_basebackup into BACKUP_DIR/base/<UTC time>/, while the
service runs (over the embedded server's socket, found in its postmaster.pid) or not (the
embedded server is started for it), or from DATABASE_URL when set; then keeps the newest
BACKUP_KEEP base backups and the archived WAL from the oldest of them on.

`restore` rebuilds a database in the new directory DIR from the newest base backup that
ended before TIME (ISO 8601 with a time zone: 2027-01-05T14:30:00+00:00) or the newest of all
(`latest`), replays the WAL archive up to TIME or to its end, and promotes it. Start the
service on DIR afterwards (docs/operations.md#backups-and-recovery). An interrupted restore is
finished with `restore --into DIR` alone.
"""

import argparse
import sys
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TextIO

from service.cli.settings import settings_or_explain
from service.config import Settings
from service.runtime.backups import (
    BackupError,
    archive_of,
    restore,
    take_base_backup,
)
from service.runtime.embedded_db import EmbeddedDatabaseBusy, EmbeddedPostgres, running_uri


def parse_target(text: str) -> datetime | None:
    """`latest` (None), or an ISO 8601 time with its time zone."""
    if text == "latest":
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"an ISO 8601 time or latest, not {text!r}") from exc
    if when.tzinfo is None:
        raise argparse.ArgumentTypeError(f"{text!r} names no time zone (add +00:00 or Z)")
    return when


def _backup_parser() -> argparse.ArgumentParser:
    return argparse.ArgumentParser(
        prog="python -m service backup",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def _take(settings: Settings, url: str, out: TextIO) -> None:
    backup, pruned = take_base_backup(url, settings.backups, settings.backup_keep)
    print(
        f"base backup {backup.path}: {backup.size_bytes} bytes,"
        f" {backup.started.isoformat()} .. {backup.finished.isoformat()},"
        f" WAL from {backup.start_wal}",
        file=out,
    )
    for path in pruned.backups:
        print(f"removed base backup {path}", file=out)
    if pruned.segments:
        print(f"removed {pruned.segments} archived WAL segments", file=out)


def backup_main(argv: Sequence[str], out: TextIO = sys.stdout) -> int:
    _backup_parser().parse_args(argv)
    settings = settings_or_explain()
    if settings is None:
        return 2
    try:
        url = settings.database_url or running_uri(settings.pgdata)
        if url is not None:
            _take(settings, url, out)
            return 0
        # No server runs: start the embedded one for the backup, as the service would.
        embedded = EmbeddedPostgres(settings.pgdata, archive_of(settings))
        try:
            url = embedded.start()
        except EmbeddedDatabaseBusy as exc:
            print(f"cannot open the embedded database: {exc}; try again", file=sys.stderr)
            return 2
        try:
            _take(settings, url, out)
        finally:
            embedded.release()
    except BackupError as exc:
        print(f"backup failed: {exc}", file=sys.stderr)
        return 1
    return 0


def _restore_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m service restore",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--to",
        type=parse_target,
        default=argparse.SUPPRESS,
        metavar="TIME|latest",
        help="the time to recover to (ISO 8601 with a time zone), or latest",
    )
    parser.add_argument(
        "--into", type=Path, required=True, metavar="DIR", help="a new, empty directory"
    )
    return parser


def restore_main(argv: Sequence[str], out: TextIO = sys.stdout) -> int:
    parser = _restore_parser()
    args = parser.parse_args(argv)
    # Without --to, the restore already in DIR is finished.
    finish = not hasattr(args, "to")
    settings = settings_or_explain()
    if settings is None:
        return 2
    try:
        target = None if finish else args.to
        done = restore(settings.backups, args.into, target, settings.pgdata, finish=finish)
    except EmbeddedDatabaseBusy as exc:
        print(f"cannot restore: {exc}", file=sys.stderr)
        return 2
    except BackupError as exc:
        print(f"restore failed: {exc}", file=sys.stderr)
        return 1
    source = "an unfinished restore" if done.backup is None else f"base backup {done.backup.path}"
    target = "the end of the archive" if done.target is None else done.target.isoformat()
    recovered = "no transaction" if done.recovered_to is None else done.recovered_to.isoformat()
    print(
        f"restored {source} into {done.into} up to {target}"
        f" (last transaction replayed: {recovered}) in {done.seconds:.1f} s",
        file=out,
    )
    print(
        f"to serve it: stop the service, move it to {settings.pgdata} (keeping DATA_DIR's"
        " secret_key and ops_token), and start the service",
        file=out,
    )
    return 0
