"""`partitions list` and `partitions detach --older-than 30d [--drop]`: the weekly partitions
of snapshots and battles.

`detach` takes out of the tables every partition that ends more than the given age ago, battles
first, then the snapshots that no battle left in the table names (the others are kept and
reported `referenced`). A detached partition stays in the database as a plain table, for an
archive (`pg_dump -t`) or for a later DROP; `--drop` drops it at once. The age may not be under
SNAPSHOT_TTL_SECONDS, so the pairing pool is never cut. It runs against DATABASE_URL, or the
embedded database in DATA_DIR when the service that owns it is stopped.
"""

import argparse
import asyncio
import re
import sys
from collections.abc import Sequence
from datetime import timedelta
from typing import TextIO

import asyncpg

from service.cli.settings import settings_or_explain
from service.config import Settings
from service.runtime.embedded_db import EmbeddedDatabaseBusy, EmbeddedPostgres
from service.store import partitions

_AGE = re.compile(r"(\d+)([dh])")


def parse_age(text: str) -> timedelta:
    """`30d` or `12h`."""
    found = _AGE.fullmatch(text.strip())
    if found is None:
        raise argparse.ArgumentTypeError(f"an age like 30d or 12h, not {text!r}")
    amount, unit = int(found[1]), found[2]
    return timedelta(days=amount) if unit == "d" else timedelta(hours=amount)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m service partitions",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    commands.add_parser("list", help="every partition with its range and estimated rows")
    detach = commands.add_parser("detach", help="detach the partitions older than an age")
    detach.add_argument("--older-than", type=parse_age, required=True, metavar="AGE")
    detach.add_argument("--drop", action="store_true", help="drop them instead of keeping them")
    return parser


async def _run(url: str, args: argparse.Namespace, out: TextIO) -> None:
    conn = await asyncpg.connect(url)
    try:
        if args.action == "list":
            for part in await partitions.list_partitions(conn):
                if part.is_default:
                    span = "default"
                else:
                    lower = "-" if part.lower is None else part.lower.isoformat()
                    span = f"{lower} .. {part.upper.isoformat() if part.upper else '-'}"
                rows = "not analysed" if part.rows < 0 else f"~{part.rows} rows"
                print(f"{part.table:10} {part.name:28} {span:55} {rows}", file=out)
            return
        for done in await partitions.detach(conn, args.older_than, drop=args.drop):
            print(f"{done.table:10} {done.name:28} {done.outcome}", file=out)
    finally:
        await conn.close()


def _refusal(settings: Settings, args: argparse.Namespace) -> str | None:
    if args.action != "detach":
        return None
    ttl = timedelta(seconds=settings.snapshot_ttl_seconds)
    if args.older_than < ttl:
        return (
            f"--older-than {args.older_than} is under SNAPSHOT_TTL_SECONDS ({ttl}):"
            " it would take snapshots out of the pairing pool"
        )
    return None


def main(argv: Sequence[str], out: TextIO = sys.stdout) -> int:
    args = _parser().parse_args(argv)
    settings = settings_or_explain()
    if settings is None:
        return 2
    refusal = _refusal(settings, args)
    if refusal is not None:
        print(refusal, file=sys.stderr)
        return 2
    if settings.database_url is not None:
        asyncio.run(_run(settings.database_url, args, out))
        return 0
    embedded = EmbeddedPostgres(settings.pgdata)
    try:
        url = embedded.start()
    except EmbeddedDatabaseBusy as exc:
        print(f"cannot open the embedded database: {exc}; or set DATABASE_URL", file=sys.stderr)
        return 2
    try:
        asyncio.run(_run(url, args, out))
    finally:
        embedded.release()
    return 0
