"""Command line: `python -m service serve` and the tools beside it."""

import argparse
import os
import sys

from service.config import ConfigError, load_settings
from service.runtime.logs import configure_logging


def _serve(_: argparse.Namespace) -> int:
    from service.runtime.embedded_db import EmbeddedDatabaseBusy, RecoveryUnfinished
    from service.runtime.serve import serve
    from service.store.migrate import MigrationError
    from service.usecases.schema_level import CannotServe

    try:
        settings = load_settings()
    except ConfigError as exc:
        print(f"configuration error: {exc}", file=sys.stderr)
        return 2
    configure_logging(settings.log_format, settings.log_level)
    try:
        return serve(settings)
    except EmbeddedDatabaseBusy as exc:
        print(f"cannot start: {exc}; stop that service or set DATA_DIR", file=sys.stderr)
        return 2
    except (RecoveryUnfinished, CannotServe, MigrationError) as exc:
        print(f"cannot start: {exc}", file=sys.stderr)
        return 2


def _simulate(args: argparse.Namespace) -> int:
    from service.cli.simulate import main as simulate_main

    return simulate_main(args.args)


def _balance(args: argparse.Namespace) -> int:
    from service.cli.balance import main as balance_main

    return balance_main(args.args)


def _partitions(args: argparse.Namespace) -> int:
    from service.cli.partitions import main as partitions_main

    return partitions_main(args.args)


def _backup(args: argparse.Namespace) -> int:
    from service.cli.backup import backup_main

    return backup_main(args.args)


def _restore(args: argparse.Namespace) -> int:
    from service.cli.backup import restore_main

    return restore_main(args.args)


def _migrate(args: argparse.Namespace) -> int:
    from service.cli.migrate import main as migrate_main

    return migrate_main(args.args)


OWN_OPTIONS = (_simulate, _balance, _partitions, _backup, _restore, _migrate)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m service", description="The cryptid autobattler and match backend."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    serve = commands.add_parser(
        "serve", help="run the HTTP service (embedded PostgreSQL unless DATABASE_URL is set)"
    )
    serve.set_defaults(run=_serve)
    simulate = commands.add_parser(
        "simulate",
        help="watch a battle: simulate --seed N A.json B.json [--json] [--ruleset ID] | --version",
        add_help=False,
    )
    simulate.set_defaults(run=_simulate)
    balance = commands.add_parser(
        "balance",
        help="win rates of every build against every other: balance [-n N] [--level L] [--json]",
        add_help=False,
    )
    balance.set_defaults(run=_balance)
    partitions = commands.add_parser(
        "partitions",
        help="the weekly partitions of snapshots and battles: list | detach --older-than 30d",
        add_help=False,
    )
    partitions.set_defaults(run=_partitions)
    backup = commands.add_parser(
        "backup",
        help="a base backup into BACKUP_DIR, keeping the newest BACKUP_KEEP",
        add_help=False,
    )
    backup.set_defaults(run=_backup)
    restore = commands.add_parser(
        "restore",
        help="a database rebuilt from the backups: restore --to TIME|latest --into DIR",
        add_help=False,
    )
    restore.set_defaults(run=_restore)
    migrate = commands.add_parser(
        "migrate",
        help="the database brought to this release's migrations: migrate [--to N] [--dry-run]",
        add_help=False,
    )
    migrate.set_defaults(run=_migrate)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    # Every command but `serve` parses its own options; `serve` takes none.
    args, rest = parser.parse_known_args(argv)
    if args.run in OWN_OPTIONS:
        args.args = rest
    elif rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    result: int = args.run(args)
    return result


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:
        # The reader went away (`| head`): stop quietly, like other command-line tools.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
