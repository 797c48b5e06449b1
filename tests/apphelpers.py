"""Helpers for the app's Pilot and snapshot tests: frozen clocks, screen text."""

from __future__ import annotations

import io
import re

from rich.console import Console

from cursor_watch.app import CursorWatchApp

FROZEN_MS = 1_790_000_000_000.0


def make_app(source, **kw) -> CursorWatchApp:
    """An app with frozen clocks and no signal handlers."""
    kw.setdefault("clock", lambda: FROZEN_MS)
    kw.setdefault("monotonic", lambda: 1000.0)
    return CursorWatchApp(source, install_signals=False, **kw)


def text_of(widget) -> str:
    """Plain text of a Static-like widget's content (Text, Group, Table...)."""
    content = getattr(widget, "content", None)
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    console = Console(file=io.StringIO(), width=200, color_system=None, record=True)
    console.print(content)
    return console.export_text()


def screen_text(screen) -> str:
    """All Static and Markdown text on a screen and the transcript's lines, in order, runs of spaces folded to one."""
    from textual.widgets import Markdown, Static

    parts = []
    for w in screen.query("*"):
        if hasattr(w, "rendered_text"):  # the transcript: a Line-API view
            parts.append(" ".join(line.strip() for line in w.rendered_text().splitlines()))  # unwrapped
        elif isinstance(w, Markdown):
            parts.append(w.source)
        elif isinstance(w, Static):
            parts.append(text_of(w))
    return re.sub(r"[ \t]+", " ", "\n".join(parts))


async def wait_until(pilot, predicate, timeout: float = 10.0) -> None:
    """Pause until ``predicate()`` is true (raises AssertionError on timeout)."""
    import time

    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        await pilot.pause(0.05)
    await pilot.pause(0.15)  # one more tick renders it
