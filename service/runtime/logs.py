"""structlog set-up: JSON lines in production, pretty output in a terminal."""

import logging
import sys
from typing import TextIO

import orjson
import structlog


def configure_logging(
    log_format: str = "auto", level: str = "info", stream: TextIO | None = None
) -> None:
    """Configure structlog once per process; `request_id` and friends come from contextvars."""
    stream = stream or sys.stderr
    pretty = log_format == "console" or (log_format == "auto" and stream.isatty())
    renderer: structlog.typing.Processor = (
        structlog.dev.ConsoleRenderer()
        if pretty
        else structlog.processors.JSONRenderer(serializer=_json_line)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping().get(level.upper(), logging.INFO)
        ),
        logger_factory=structlog.PrintLoggerFactory(stream),
        cache_logger_on_first_use=False,
    )


def _json_line(event: object, **_: object) -> str:
    # orjson writes a request's line in a third of the json module's time; what it cannot
    # encode is written as its repr rather than losing the line.
    return orjson.dumps(event, default=repr).decode()
