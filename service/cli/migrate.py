"""`migrate [--to N] [--dry-run]`: the database brought to this release's migrations, or shown.

It reaches PostgreSQL at LISTEN_DATABASE_URL when set (the direct URL beside a transaction
pooler, which would not keep the session's lock), else DATABASE_URL, else the embedded
database of DATA_DIR (its running server, or started for the command). `--dry-run` prints the
level found and each migration that would be applied, with its text, and applies nothing.
Migrations only go forward: to undo an upgrade, restore the backup taken before it
(deploy/README.md#if-an-upgrade-fails).
"""

import argparse
import asyncio
import sys
from collections.abc import Sequence
from typing import TextIO

from service.cli.settings import settings_or_explain
from service.config import Settings
from service.runtime.backups import archive_of
from service.runtime.embedded_db import EmbeddedDatabaseBusy, EmbeddedPostgres, running_uri
from service.store import migrate
from service.store.database import is_unavailable
from service.version import VERSION


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m service migrate",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--to", type=int, metavar="N", help="stop after migration N (default: the newest)"
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="show what would be applied; apply nothing"
    )
    return parser


def _mode(migration: migrate.Migration) -> str:
    mode = "in a transaction" if migration.transactional else "statement by statement"
    if migration.writers_from:
        mode += f"; code before migration {migration.writers_from} can no longer write"
    return mode


async def _run(url: str, target: int | None, dry_run: bool, out: TextIO) -> None:
    plan = await migrate.plan(url, target)
    print(f"{plan.level}", file=out)
    if plan.adopt_baseline:
        print("migration 1 adopted: release 0.1.0 made this database", file=out)
    if dry_run:
        for migration in plan.pending:
            print(f"\n-- would apply {migration.title} ({_mode(migration)})", file=out)
            print(migration.sql.rstrip(), file=out)
        if not plan.pending:
            print("nothing to apply", file=out)
        return
    applied = await migrate.migrate(url, target)
    for step in applied:
        print(
            f"applied {step.migration.title} ({_mode(step.migration)}) in {step.seconds:.3f} s",
            file=out,
        )
    if not applied:
        print("nothing to apply", file=out)


def _url(settings: Settings) -> str | None:
    return settings.listen_database_url or settings.database_url or running_uri(settings.pgdata)


def main(argv: Sequence[str], out: TextIO = sys.stdout) -> int:
    args = _parser().parse_args(argv)
    settings = settings_or_explain()
    if settings is None:
        return 2
    embedded: EmbeddedPostgres | None = None
    try:
        url = _url(settings)
        if url is None:
            # No server runs: start the embedded one for the command, as the service would.
            embedded = EmbeddedPostgres(settings.pgdata, archive_of(settings))
            url = embedded.start()
        asyncio.run(_run(url, args.to, args.dry_run, out))
    except EmbeddedDatabaseBusy as exc:
        print(f"cannot open the embedded database: {exc}; try again", file=sys.stderr)
        return 2
    except migrate.MigrationError as exc:
        print(f"cannot migrate ({VERSION}): {exc}", file=sys.stderr)
        return 1
    except Exception as exc:
        if not is_unavailable(exc):
            raise
        print(f"cannot reach the database: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    finally:
        if embedded is not None:
            embedded.release()
    return 0
