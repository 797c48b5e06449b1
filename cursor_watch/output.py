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
