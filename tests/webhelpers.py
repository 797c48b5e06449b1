"""Shared by the browser tests and ``screenshots/make_web_screenshots.py``: which Chromium to
drive (Debian's ``chromium``, never a downloaded one), its flags, and a ``--serve`` server."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = next((p for p in ("/usr/bin/chromium", shutil.which("chromium"), shutil.which("chromium-browser"))
                 if p and os.access(p, os.X_OK)), None)
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (now)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serving(*args: str, timeout: float = 30.0) -> Iterator[int]:
    """Run ``cursor-watch --serve --port P ARGS`` and yield ``P`` once it listens.

    The server (and each app it started for a browser tab) runs in its own process group,
    stopped with SIGTERM (SIGKILL after 10 s) at the end.

    Raises:
        RuntimeError: it did not listen within ``timeout`` seconds (its stderr is in the message).
    """
    port = free_port()
    log = tempfile.TemporaryFile()  # not a pipe: a server that logs a lot must never block on it
    server = subprocess.Popen([sys.executable, "-m", "cursor_watch", "--serve", "--port", str(port), *args],
                              cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log, start_new_session=True)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    log.seek(0)
                    raise RuntimeError(f"--serve did not listen: {log.read(4000)!r}") from None
                time.sleep(0.2)
        yield port
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        log.close()
