"""The running release's version: pyproject.toml's, as installed."""

from importlib.metadata import version

VERSION = version("cryptid-backend")
