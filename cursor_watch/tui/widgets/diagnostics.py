"""The diagnostics pane: invalid lines, unknown events, child stderr, source notices."""

from __future__ import annotations

from textual.binding import Binding
from textual.widgets import Log

from ...safe import visible_line


class DiagnosticsPane(Log):
    """A log of what was not a normal event. Hidden until shown (``d``: the run view's
    ``diagnostics`` toggle, ``run.tcss``).

    Every line is escaped first: ``Log`` passes ESC sequences through.
    """

    DEFAULT_CSS = """
    DiagnosticsPane { height: 10; border-top: solid $error; display: none; }
    """

    BINDINGS = [Binding("tab", "app.focus_next", "Pane", show=False)]

    def __init__(self, **kwargs) -> None:
        super().__init__(max_lines=20_000, **kwargs)
        self.border_title = "diagnostics"

    def add(self, lines: list[str]) -> None:
        """Append lines (escaped here)."""
        if lines:
            self.write_lines([visible_line(line) for line in lines])
