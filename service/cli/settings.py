"""The settings a command runs with, or the sentence that says why there are none."""

import sys

from service.config import ConfigError, Settings, load_settings


def settings_or_explain() -> Settings | None:
    """The environment's settings; None, once the configuration error is printed."""
    try:
        return load_settings()
    except ConfigError as exc:
        print(f"configuration error: {exc}", file=sys.stderr)
        return None
