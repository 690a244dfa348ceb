"""The compiled build of the cryptid battle engine: the same sources, compiled by mypyc.

`pip install .` (or `-e`) compiles the modules of the battle's hot loop when a C compiler is
found, and installs the pure-Python sources alone, with a one-line notice, when it is not or
when CRYPTIDS_PURE=1. A built package also carries the web apps' files (web/), copied from
the top of the tree, and the migrations (package data of service.store).
Everything else about the package is in pyproject.toml.
"""

import os
import shlex
import shutil
import sys
import sysconfig
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

# The modules a battle runs through; the rest of the package stays Python.
COMPILED = [
    "service/games/cryptids/compiled.py",
    "service/games/cryptids/engine.py",
    "service/games/cryptids/hashing.py",
    "service/games/cryptids/warband.py",
]
# mypyc puts the compiled code of all of them in one top-level module, <GROUP>__mypyc.
GROUP = "cryptid_engine"
BUILDS = {"build", "build_ext", "bdist_wheel", "editable_wheel", "install", "develop"}
HERE = Path(__file__).resolve().parent
# The web apps (ops, watch, play): the files each serves are those at the top of its folder
# (service/api/pages.py), not its sources below; the package reads them from service/web.
WEB = "web"
PACKAGED_WEB = "service/web"
SERVED = {".html", ".css", ".js", ".svg"}


def _web_files() -> list[str]:
    return sorted(
        str(path.relative_to(HERE))
        for path in (HERE / WEB).glob("*/*")
        if path.is_file() and path.suffix in SERVED and path.parent.name != "node_modules"
    )


def _notice(reason: str) -> None:
    print(f"cryptid engine: {reason}; installing the pure-Python engine", file=sys.stderr)


def _compiler() -> str | None:
    """The C compiler setuptools would call, if it exists."""
    command = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    words = shlex.split(command)
    return shutil.which(words[0]) if words else None


def _remove_in_place_builds() -> None:
    """An editable install builds in place: a former build's compiled modules, left beside the
    sources, would still be imported before them."""
    if "editable_wheel" not in sys.argv:
        return
    for name in [*(path.removesuffix(".py") for path in COMPILED), f"{GROUP}__mypyc"]:
        for suffix in EXTENSION_SUFFIXES:
            (HERE / f"{name}{suffix}").unlink(missing_ok=True)


def _extensions() -> list[Extension]:
    # pip runs this file for metadata too (egg_info, dist_info): only a build compiles.
    if not BUILDS & set(sys.argv[1:]):
        return []
    if os.environ.get("CRYPTIDS_PURE") == "1":
        _notice("CRYPTIDS_PURE=1")
        _remove_in_place_builds()
        return []
    if _compiler() is None:
        _notice("no C compiler found")
        _remove_in_place_builds()
        return []
    from mypyc.build import mypycify

    # The project's mypy settings are for `make lint` (they name plugins the build lacks).
    return mypycify(["--config-file=", *COMPILED], opt_level="3", group_name=GROUP)


class _OptionalBuildExt(build_ext):
    """All the extensions or none: a failed compile (no Python headers, say) installs the
    pure engine instead of failing the install, and leaves no half-built modules behind."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # distutils raises several unrelated types for one failure
            _notice(f"compiling failed ({type(exc).__name__}, see the compiler's output above)")
            for extension in self.extensions:
                Path(self.get_ext_fullpath(extension.name)).unlink(missing_ok=True)
            _remove_in_place_builds()


class _BuildPyWithWeb(build_py):
    """The package's modules and data, and the web apps as package data (service.api.pages
    reads them there). An editable install builds none of them: it reads the tree's."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        built = Path(self.build_lib)
        for name in _web_files():
            target = built / PACKAGED_WEB / Path(name).relative_to(WEB)
            self.mkpath(str(target.parent))
            self.copy_file(str(HERE / name), str(target))

    def get_source_files(self) -> list[str]:
        # What an sdist takes: the web apps with the sources, so a build from it has them too.
        return [*super().get_source_files(), *_web_files()]


setup(
    ext_modules=_extensions(),
    cmdclass={"build_ext": _OptionalBuildExt, "build_py": _BuildPyWithWeb},
)
