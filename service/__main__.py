"""Command line: `python -m service serve` and the tools beside it."""

import argparse
import sys

from service.config import ConfigError, load_settings
from service.logs import configure_logging


def _serve(_: argparse.Namespace) -> int:
    from service.serve import serve

    try:
        settings = load_settings()
    except ConfigError as exc:
        print(f"configuration error: {exc}", file=sys.stderr)
        return 2
    configure_logging(settings.log_format, settings.log_level)
    serve(settings)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m service", description="The cryptid autobattler and match backend."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    serve = commands.add_parser(
        "serve", help="run the HTTP service (embedded PostgreSQL unless DATABASE_URL is set)"
    )
    serve.set_defaults(run=_serve)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    result: int = args.run(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
