"""The runs list: every run of every watched source, one row each (issue 9).

Enter opens a run in the run view (:class:`~cursor_watch.screens.run.RunScreen`); Escape there
comes back here, to the same row. The app fills the rows at its tick.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import Footer, Static

from ..widgets.runs_table import RunRow, RunsTable, RunsTableHeader


class RunsSummary(Static):
    """The line above the list: how many runs and sources, reading progress, attention."""

    DEFAULT_CSS = """
    RunsSummary { height: 1; background: $panel; padding: 0 1; }
    """


class RunsScreen(Screen):
    """The list of runs (the app's first screen when it watches several runs)."""

    BINDINGS = [Binding("enter", "open_run", "Open run", id="open_run", show=True)]
    DEFAULT_CSS = """
    RunsScreen RunsTableHeader { margin-top: 0; }
    """

    def compose(self) -> ComposeResult:
        yield RunsSummary(Text(" cursor-watch ", style="bold reverse"), id="runs-summary")
        yield RunsTableHeader()
        yield RunsTable(id="runs-table")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(RunsTable).focus()

    def show(self, rows: list[RunRow], summary: Text) -> bool:
        """Replace the rows and the summary line; False when the screen isn't composed yet."""
        try:
            table = self.query_one(RunsTable)
            line = self.query_one(RunsSummary)
        except NoMatches:
            return False
        table.set_rows(rows)
        line.update(summary, layout=False)  # one line high whatever it says: no layout
        return True

    def action_open_run(self) -> None:
        self.query_one(RunsTable).action_select()
