"""Helpers for the app's Pilot and snapshot tests: frozen clocks, screen text."""

from __future__ import annotations

import io
import re

from rich.console import Console

from cursor_watch.tui.app import CursorWatchApp

FROZEN_MS = 1_790_000_000_000.0


def make_app(source, **kw) -> CursorWatchApp:
    """An app with frozen clocks and no signal handlers; ``app.view_ticks`` counts its view ticks
    (:func:`wait_ticks`)."""
    kw.setdefault("clock", lambda: FROZEN_MS)
    kw.setdefault("monotonic", lambda: 1000.0)
    return count_ticks(CursorWatchApp(source, install_signals=False, **kw))


def count_ticks(app: CursorWatchApp) -> CursorWatchApp:
    """``app``, its view ticks counted in ``app.view_ticks`` (:func:`wait_ticks`); before it runs."""
    app.view_ticks = 0
    refresh_view = app.refresh_view

    def counted() -> None:  # the interval set on mount calls this one
        refresh_view()
        app.view_ticks += 1

    app.refresh_view = counted
    return app


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


async def wait_until(pilot, predicate, timeout: float = 30.0, what: str | None = None) -> None:
    """Pause until ``predicate()`` is true.

    Raises:
        AssertionError: not true within ``timeout`` seconds (the message names ``what``, else
            the predicate's source line).
    """
    import inspect
    import time

    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            if what is None:
                try:
                    what = inspect.getsource(predicate).strip()
                except (OSError, TypeError):
                    what = repr(predicate)
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        await pilot.pause(0.05)
    # what the predicate saw is drawn: a view tick has applied it (an app of make_app or
    # count_ticks), and the screen has handled every message that sent it (Pilot.pause());
    # an app that is exiting has no more ticks
    if hasattr(pilot.app, "view_ticks") and not await _ticks(pilot, pilot.app, 1, timeout):
        return
    if _running(pilot.app):
        await pilot.pause()


def _running(app) -> bool:
    return app.is_running and app.return_code is None


async def _ticks(pilot, app, n: int, timeout: float) -> bool:
    """Wait for ``n`` more view ticks: True, or False when the app exits first (no more ticks)."""
    import time

    start, deadline = app.view_ticks, time.monotonic() + timeout
    while app.view_ticks < start + n:
        if not _running(app):
            return False
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {n} view ticks")
        await pilot.pause(0.02)
    return True


async def wait_ticks(pilot, app, n: int = 2, timeout: float = 30.0) -> None:
    """Pause until the app's view tick (``refresh_view``, 15 Hz: it checks stalls, raises alerts,
    refreshes the screen) has run ``n`` more times and the screen has handled what they sent it:
    whatever the app would do with the state as it is now, it has done. A negative check
    ("nothing was raised") waits for this, then asserts."""
    if not await _ticks(pilot, app, n, timeout):
        raise AssertionError(f"the app exited before {n} more view ticks")
    await pilot.pause()


async def search_status(app, pilot, text: str) -> str:
    """Type ``/`` and ``text`` in the run view, wait for the search to finish; the bar's status (``1/3``, ``no matches``)."""
    from cursor_watch.tui.widgets.query_bar import QueryBar

    await pilot.press("slash")
    for ch in text:
        await pilot.press(ch)
    screen = app.run_view()
    await wait_until(pilot, lambda: screen.search is not None and screen.search.query.text == text
                     and screen.search.done)
    bar = screen.query_one("#search-bar", QueryBar)
    return str(bar.query_one(".query-bar--status").content)
