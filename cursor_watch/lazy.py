"""Modules imported on first use.

``--summary`` of files read to their end runs no event loop (:meth:`cursor_watch.stream.watch.Watch.replay`),
yet the modules it needs (the runner, the sources, the command line) also drive the ones that
do. They bind :mod:`asyncio` with :func:`lazy_module`: its import (with ``ssl``, ``socket``,
``concurrent.futures``, ``logging``...) was ~2 % of a 200 MB ``--summary --json``'s CPU time.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy_module(name: str) -> ModuleType:
    """The module ``name``, executed on first use of one of its attributes.

    The module already imported is returned as it is. Otherwise a module whose code runs when
    an attribute is first read (:class:`importlib.util.LazyLoader`) is put in ``sys.modules``, so
    every later ``import name`` gets the same module, the real one from its first use on.

    Raises:
        ModuleNotFoundError: no module ``name`` can be found.
    """
    module = sys.modules.get(name)
    if module is not None:
        return module
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module
