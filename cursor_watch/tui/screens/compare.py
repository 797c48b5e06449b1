"""The comparison screen: ``c`` on two runs picked in the runs list.

It shows what ``cursor-watch --compare A B`` prints (:func:`cursor_watch.views.compare.render`), laid
out again for the screen's width when it changes; a live run is compared as it is when the
screen opens (``r`` reads both again). Escape goes back to the list.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from ...views.compare import Comparison, compare, render, side_of


class CompareScreen(Screen):
    """Runs ``a`` and ``b`` (:class:`~cursor_watch.core.runs.Run`) side by side, their differences marked."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="compare_back"),
                Binding("r", "refresh_comparison", "Read again", id="compare_refresh")]
    DEFAULT_CSS = """
    CompareScreen > VerticalScroll { padding: 0 1; }
    """

    def __init__(self, a: Any, b: Any) -> None:
        super().__init__()
        self.runs = (a, b)
        self.comparison: Comparison = self._compare()
        self._width = 0

    def _compare(self) -> Comparison:
        a, b = self.runs
        same = a.source == b.source  # two runs of one log: their numbers tell them apart
        return compare(side_of(a, a.label(same or a.index > 1)), side_of(b, b.label(same or b.index > 1)))

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="compare-scroll"):
            yield Static(id="compare-body")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#compare-scroll").focus()

    def on_resize(self, event: events.Resize) -> None:
        self._show(event.size.width)

    def _show(self, width: int) -> None:
        self._width = width
        body = self.query_one("#compare-body", Static)
        # the scroll's padding and a scrollbar take a few cells
        body.update(Group(*render(self.comparison, max(40, width - 4))))

    def action_refresh_comparison(self) -> None:
        """``r``: compare the runs again as they are now (a live run has moved on)."""
        self.comparison = self._compare()
        self._show(self._width or self.size.width)
