"""Which build of cursor-watch is running: ``compiled`` (the hot path compiled by mypyc) or
``pure`` (the same source, interpreted).

The build writes ``cursor_watch/_build.json`` into a wheel (setup.py): ``{"build": "compiled" |
"pure", "reason": why pure ("" when compiled), "modules": the compiled modules' dotted names}``.
What runs is then checked, not trusted: a module counts as compiled only if it was imported from
a C extension (its ``__file__`` ends in the platform's extension suffix). A source checkout or an
editable install has no ``_build.json``: pure, "running from the source".
"""

from __future__ import annotations

import importlib
import importlib.machinery
import json
from pathlib import Path

_BUILD_FILE = Path(__file__).with_name("_build.json")


def compiled_modules() -> list[str]:
    """The dotted names of the modules the build compiled that are running compiled now
    (importing each; [] for a pure build)."""
    try:
        info = json.loads(_BUILD_FILE.read_text("utf-8"))
    except (OSError, ValueError):
        return []
    names = info.get("modules") if isinstance(info, dict) else None
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    out = []
    for name in names if isinstance(names, list) else []:
        if isinstance(name, str) and str(getattr(importlib.import_module(name), "__file__", "")).endswith(suffixes):
            out.append(name)
    return out


def build_kind() -> str:
    """``"compiled"`` when every module the build compiled runs compiled, else ``"pure"``
    (a partly compiled install, which setup.py never makes, counts as pure)."""
    try:
        info = json.loads(_BUILD_FILE.read_text("utf-8"))
    except (OSError, ValueError):
        return "pure"
    expected = info.get("modules") if isinstance(info, dict) else None
    if not isinstance(expected, list) or not expected:
        return "pure"
    return "compiled" if len(compiled_modules()) == len(expected) else "pure"


def describe() -> str:
    """The build in one phrase, for ``--version``: ``compiled (mypyc: 4 modules)`` or
    ``pure Python (CURSOR_WATCH_PURE=1 at install)``."""
    try:
        info = json.loads(_BUILD_FILE.read_text("utf-8"))
    except (OSError, ValueError):
        return "pure Python (running from the source)"
    if build_kind() == "compiled":
        return f"compiled (mypyc: {len(compiled_modules())} modules)"
    reason = info.get("reason") if isinstance(info, dict) else ""
    return f"pure Python ({reason or 'the compiled modules were not loaded'})"


class CompiledTypeError(RuntimeError):
    """A compiled module was given a value of a type its annotations don't allow: a defect of
    cursor-watch, never of the stream. Raised in place of the ``TypeError`` mypyc's run-time
    check raised (its ``__cause__``), by the handlers that turn a malformed event into a
    diagnostic, so that it stops the watch loudly instead of passing as one."""


# mypyc's run-time type check says "<type> object expected; got <type>" (mypyc/lib-rt CPy_TypeError);
# CPython's own TypeErrors never do
_COMPILED_CHECK = " object expected; got "


def raise_if_compiled_type_error(err: BaseException) -> None:
    """Raise :class:`CompiledTypeError` from ``err`` if it is a failed run-time type check of a
    compiled module; else return (the caller goes on: a malformed event is a diagnostic)."""
    if isinstance(err, TypeError) and _COMPILED_CHECK in str(err):
        raise CompiledTypeError(f"a compiled module's type check failed ({err}): a defect of cursor-watch, "
                                "not of the stream; please report it (CURSOR_WATCH_PURE=1 pip install . "
                                "installs the pure build)") from err
