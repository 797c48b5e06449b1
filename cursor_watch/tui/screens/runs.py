"""The runs list: every run of every watched source, one row each.

Enter opens a run in the run view (:class:`~cursor_watch.tui.screens.run.RunScreen`); Escape there
comes back here, to the same row. Space picks runs (A, then B) and ``c`` compares them
(:mod:`cursor_watch.views.compare`). The app fills the rows at its tick. ``/`` filters the rows
by prompt, model, source and state (the search's smart-case rule).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import Footer, Static

from ...fmt import plural
from ...query.match import Query, QueryError
from ...safe import view_redaction
from ..messages import CompareRequested
from ..widgets.query_bar import QueryBar
from ..widgets.runs_table import RunRow, RunsTable, RunsTableHeader


class RunsSummary(Static):
    """The line above the list: how many runs and sources, reading progress, attention."""

    DEFAULT_CSS = """
    RunsSummary { height: 1; background: $panel; padding: 0 1; }
    """


class RunsScreen(Screen):
    """The list of runs (the app's first screen when it watches several runs)."""

    BINDINGS = [Binding("enter", "open_run", "Open run", id="open_run", show=True),
                Binding("slash", "filter_runs", "Filter runs", id="filter_runs"),
                Binding("c", "compare_runs", "Compare", id="compare_runs")]
    DEFAULT_CSS = """
    RunsScreen RunsTableHeader { margin-top: 0; }
    """

    def __init__(self) -> None:
        super().__init__()
        self._all: list[RunRow] = []
        self._query: Query | None = None
        self._query_error = ""

    def compose(self) -> ComposeResult:
        yield RunsSummary(Text(" cursor-watch ", style="bold reverse"), id="runs-summary")
        yield RunsTableHeader()
        yield RunsTable(id="runs-table")
        yield QueryBar("runs /", "filter runs by prompt, model, source or state", id="runs-filter")
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
        self._all = rows
        table.set_rows(self.filtered(rows))
        line.update(summary, layout=False)  # one line high whatever it says: no layout
        return True

    def filtered(self, rows: list[RunRow]) -> list[RunRow]:
        """``rows`` as the list shows them: those its filter (``/``) keeps, all without one."""
        query = self._query
        if query is None:
            return rows
        return [r for r in rows if query.matches(row_text(r))]

    def action_open_run(self) -> None:
        self.query_one(RunsTable).action_select()

    def action_compare_runs(self) -> None:
        """``c``: compare the two runs picked with space (one picked: it and the run under the
        cursor); the app opens :class:`~cursor_watch.tui.screens.compare.CompareScreen`."""
        table = self.query_one(RunsTable)
        keys = list(table.picked)
        cursor = table.selected_key()
        if len(keys) == 1 and cursor is not None and cursor not in keys:
            keys.append(cursor)
        if len(keys) != 2:
            self.notify("pick two runs with space, then c compares them (A: the first picked)", timeout=3)
            return
        self.post_message(CompareRequested(keys[0], keys[1]))

    def action_filter_runs(self) -> None:
        """``/``: type to keep the runs whose prompt, model, source or state match."""
        self.query_one("#runs-filter", QueryBar).open()

    def on_query_bar_changed(self, event: QueryBar.Changed) -> None:
        event.stop()
        bar = event.bar
        try:
            self._query = Query(event.value, redact=view_redaction()) if event.value else None
        except QueryError as err:
            bar.set_status(str(err), error=True)
            return
        rows = self.filtered(self._all)
        self.query_one(RunsTable).set_rows(rows)
        if self._query is None:
            bar.set_status("")
        elif rows:
            bar.set_status(f"{len(rows):,} of {plural(len(self._all), 'run')}")
        else:
            bar.set_status("no runs match")

    def on_query_bar_submitted(self, event: QueryBar.Submitted) -> None:
        event.stop()
        self.query_one(RunsTable).focus()

    def on_query_bar_cleared(self, event: QueryBar.Cleared) -> None:
        event.stop()
        self._query = None
        self.query_one(RunsTable).set_rows(self._all)
        self.query_one(RunsTable).focus()


def row_text(row: RunRow) -> str:
    """What ``/`` on the runs list searches: source, state, model and prompt."""
    return f"{row.source}\n{row.state}\n{row.model}\n{row.prompt}"
