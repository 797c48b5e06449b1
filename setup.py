"""The build: the same source, with the hot path compiled by mypyc when it can be.

``pip install .`` compiles the modules listed under ``[tool.cursor-watch] compiled`` in
pyproject.toml with mypyc (mypy's compiler: it turns type-annotated Python into C extensions) when
a C compiler and Python's headers are there. Otherwise, or when ``CURSOR_WATCH_PURE=1`` asks for it,
or when compiling fails, the package installs as pure Python: the same modules, interpreted. One
line on stderr says which and why (``pip install -v`` shows it), and the wheel records it in
``cursor_watch/_build.json``: ``cursor-watch --version`` reads it (``compiled`` or ``pure``).
Editable installs (``pip install -e``) are always pure: the source must stay what runs.
"""

from __future__ import annotations

import json
import os
import sys
import sysconfig
import tempfile
import tomllib
from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
COMPILED = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["cursor-watch"]["compiled"]
BUILD = {"build": "pure", "reason": "", "modules": []}


def say(message: str) -> None:
    """The one line the build prints about itself (stderr; ``pip install -v`` shows it)."""
    print(f"cursor-watch: {message}", file=sys.stderr, flush=True)


def compiler_missing() -> str:
    """Why a C extension can't be built here ("" if it can): a trial compile of a file that
    includes Python.h, with the compiler and flags Python was built with."""
    from setuptools._distutils.ccompiler import new_compiler
    from setuptools._distutils.sysconfig import customize_compiler

    compiler = new_compiler()
    customize_compiler(compiler)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp, "probe.c")
        src.write_text("#include <Python.h>\nint main(void) { return 0; }\n")
        try:
            compiler.compile([str(src)], output_dir=tmp, include_dirs=[sysconfig.get_paths()["include"]])
        except Exception as err:  # noqa: BLE001 - CompileError, or no compiler at all
            first = str(err).strip().splitlines()
            return f"no working C compiler with Python's headers ({first[0] if first else type(err).__name__})"
    return ""


def editable() -> bool:
    """True in ``pip install -e`` (PEP 660: setuptools runs its editable_wheel command)."""
    return any(arg.startswith("editable_wheel") for arg in sys.argv)


def ext_modules() -> list:
    """The mypyc extensions, or [] for a pure build (``BUILD`` says why)."""
    if editable():
        BUILD["reason"] = "an editable install runs the source"
        return []
    if os.environ.get("CURSOR_WATCH_PURE", "") not in ("", "0"):
        BUILD["reason"] = "CURSOR_WATCH_PURE=1 at install"
        return []
    if not {"bdist_wheel", "build_ext", "build", "install"} & set(sys.argv):
        return []  # metadata, sdist: nothing is compiled
    missing = compiler_missing()
    if missing:
        BUILD["reason"] = missing
        return []
    from mypyc.build import mypycify

    say(f"compiling {len(COMPILED)} modules with mypyc (about a minute; CURSOR_WATCH_PURE=1 skips it)")
    os.chdir(ROOT)
    try:
        return mypycify(COMPILED, opt_level="3", debug_level="0")
    except (Exception, SystemExit) as err:  # noqa: BLE001 - mypyc refused the source: the build goes on pure
        first = str(err).strip().splitlines()
        what = first[0] if first and not isinstance(err, SystemExit) else "its errors are above: pip install -v shows them"
        BUILD["reason"] = f"mypyc could not compile the source ({what})"
        return []


class BuildExt(build_ext):
    """Builds the compiled modules; if compiling fails, the build goes on pure."""

    def run(self) -> None:
        if not self.extensions:
            return
        try:
            super().run()
        except Exception as err:  # noqa: BLE001 - CompileError, LinkError...: fall back to pure
            first = str(err).strip().splitlines()
            BUILD.update(build="pure", modules=[], reason=f"compiling failed ({first[0] if first else type(err).__name__})")
            self.extensions = []
            return
        BUILD.update(build="compiled", modules=[m.removesuffix(".py").replace("/", ".") for m in COMPILED])


class BuildPy(build_py):
    """Writes ``cursor_watch/_build.json`` (compiled or pure, and why) into the build.

    An extension module left in the build directory by an earlier build of this tree (``pip
    install .`` builds in the tree) is removed first: one for a module no longer compiled would go
    into the wheel, and the compiled package would import two copies of its classes."""

    def run(self) -> None:
        lib = Path(self.build_lib)
        if lib.is_dir():
            for stale in [*lib.rglob("*.so"), *lib.rglob("*.pyd")]:
                stale.unlink()
        super().run()
        self.distribution.run_command("build_ext") if self.distribution.ext_modules else None
        if BUILD["build"] == "pure":
            say(f"installing pure Python ({BUILD['reason'] or 'nothing compiled'})")
        else:
            say(f"compiled {len(BUILD['modules'])} modules with mypyc")
        out = Path(self.build_lib, "cursor_watch", "_build.json")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(BUILD), "utf-8")


setup(
    packages=find_packages(include=["cursor_watch", "cursor_watch.*"]) + ["cursor_watch.sample_streams"],
    package_dir={"cursor_watch.sample_streams": "sample_streams"},
    package_data={
        "cursor_watch": ["tui/screens/run.tcss", "data/*.toml", "tui/web/templates/*.html", "_build.json"],
        "cursor_watch.sample_streams": ["*.jsonl", "README.md"],
    },
    ext_modules=ext_modules(),
    cmdclass={"build_ext": BuildExt, "build_py": BuildPy},
)
