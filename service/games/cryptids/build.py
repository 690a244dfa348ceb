"""Which build of the engine runs: `compiled` (mypyc, see setup.py) or `pure` (the .py sources).

Both are the same source and give byte-identical battles. Where a compiled build is installed,
Python imports it in preference to the .py files beside it; CRYPTIDS_ENGINE=pure in the
environment makes this package import its .py sources instead. The package imports this module
before any other of its modules, so the switch acts before the engine is loaded; it is read once
per process.
"""

import importlib.machinery
import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Literal

SWITCH = "CRYPTIDS_ENGINE"
Build = Literal["compiled", "pure"]

_PACKAGE = __name__.rpartition(".")[0]


class _SourceFinder:
    """Finds this package's modules as their .py files, ahead of compiled ones beside them."""

    def __init__(self, folder: str) -> None:
        self._finder = importlib.machinery.FileFinder(
            folder, (importlib.machinery.SourceFileLoader, importlib.machinery.SOURCE_SUFFIXES)
        )

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname.rpartition(".")[0] != _PACKAGE:
            return None
        return self._finder.find_spec(fullname, target)


def build_of(module: ModuleType) -> Build:
    """`compiled` if `module` was loaded from an extension module, `pure` from its source."""
    loader = getattr(module, "__loader__", None)
    return "compiled" if isinstance(loader, importlib.machinery.ExtensionFileLoader) else "pure"


if os.environ.get(SWITCH) == "pure":
    sys.meta_path.insert(0, _SourceFinder(os.path.dirname(__file__)))
