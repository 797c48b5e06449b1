"""Writing what cursor-watch produces: private files written whole, and one-line errors.

Streams hold file contents and secrets, so every file cursor-watch writes (``--json-out``,
``--export``) is created readable by the owner only (0600), and written to a temporary
file beside it that is renamed into place: a reader never sees half a file.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from typing import IO


def served_in_browser() -> bool:
    """True when textual-serve runs this process for a browser tab (``--serve``): its web
    driver talks over stdin/stdout and is named in ``TEXTUAL_DRIVER``."""
    return "web_driver" in os.environ.get("TEXTUAL_DRIVER", "")


class OutputClosed(Exception):
    """stdout was closed by the reader (``cursor-watch --plain | head``)."""


def error_line(message: str) -> None:
    """``cursor-watch: MESSAGE`` on stderr (one line: the format of every error)."""
    sys.stderr.write(f"cursor-watch: {message}\n")
    sys.stderr.flush()


def write_private(path: str, write: Callable[[IO[bytes]], None]) -> None:
    """Create ``path`` (mode 0600) with what ``write(file)`` writes, atomically.

    Raises:
        OSError: the file could not be written (the temporary file is removed).
    """
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def unique_path(path: str, n: int) -> str:
    """``path`` for ``n`` = 1, else ``n`` before its extension: ``run.html`` -> ``run-2.html``."""
    if n == 1:
        return path
    stem, ext = os.path.splitext(path)
    return f"{stem}-{n}{ext}"


def write_private_new(path: str, write: Callable[[IO[bytes]], None], tries: int = 10_000) -> str:
    """Like :func:`write_private`, but never replaces a file: the first of ``path``,
    ``PATH-2.EXT``, ``PATH-3.EXT``... that does not exist is created. Returns the path written.

    The whole file is written to a temporary name first, then linked to the new name, which
    fails if that name exists (so two writers never take the same one); on a file system
    without hard links the name is reserved with ``O_EXCL`` and the file renamed onto it.

    Raises:
        OSError: the file could not be written, or ``tries`` names were all taken.
    """
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            write(f)
        for n in range(1, tries + 1):
            target = unique_path(path, n)
            try:
                os.link(tmp, target)
            except FileExistsError:
                continue
            except OSError:  # no hard links here: reserve the name, then move the file onto it
                try:
                    os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
                except FileExistsError:
                    continue
                os.replace(tmp, target)
                return target
            os.unlink(tmp)
            return target
        raise FileExistsError(f"{path} and {tries - 1:,} numbered names beside it exist")
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
