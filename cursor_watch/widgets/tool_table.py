"""The tool-call table: one row per ``call_id``, updated in place."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable

from ..model import Session, ToolCall
from ..plain import STATUS_STYLE, format_ms
from ..safe import visible_line
from ..tools import STATUS_RUNNING

COLUMNS = (("#", 4), ("status", 12), ("tool", 11), ("summary", 38), ("time", 8))


class ToolTable(DataTable):
    """Rows keyed by ``call_id`` in order of first appearance; fixed column widths.

    Running calls show a live elapsed time (refreshed by :meth:`tick`).
    """

    DEFAULT_CSS = """
    ToolTable { height: 1fr; }
    """
    BINDINGS = [
        Binding("enter", "select_cursor", "Detail"),
        Binding("end", "app.jump_end", "Latest"),
        Binding("tab", "app.focus_next", "Pane"),
    ]

    def __init__(self, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self._rows: set[str] = set()

    def on_mount(self) -> None:
        for label, width in COLUMNS:
            self.add_column(label, width=width, key=label)

    def upsert(self, call: ToolCall, now_ms: float) -> None:
        """Add the call's row, or update its cells."""
        cells = row_cells(call, now_ms)
        if call.call_id not in self._rows:
            self._rows.add(call.call_id)
            self.add_row(*cells, key=call.call_id)
            return
        for (label, _), value in zip(COLUMNS[1:], cells[1:], strict=True):
            self.update_cell(call.call_id, label, value)

    def tick(self, session: Session, now_ms: float) -> None:
        """Refresh the elapsed time of running calls."""
        for call in session.running_calls():
            if call.call_id in self._rows:
                self.update_cell(call.call_id, "time", time_cell(call, now_ms))

    def selected_call_id(self) -> str | None:
        """``call_id`` of the row under the cursor, or None when empty."""
        if not self.row_count:
            return None
        return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value


def time_cell(call: ToolCall, now_ms: float) -> Text:
    """Duration when done; live elapsed (``12.3 s…``) while running."""
    if call.status == STATUS_RUNNING:
        if call.started_ms is None:
            return Text("")
        return Text(format_ms(max(0.0, now_ms - call.started_ms)) + "…", style="cyan")
    return Text(format_ms(call.duration_ms), style="dim")


def row_cells(call: ToolCall, now_ms: float) -> tuple[Text, ...]:
    """The row's cells as Rich Text (never markup)."""
    symbol, style = STATUS_STYLE.get(call.status, ("?", ""))
    summary = visible_line(call.summary)
    if call.detail and call.status != "success":
        summary = f"{summary} ({visible_line(call.detail)})" if summary else visible_line(call.detail)
    return (
        Text(str(call.index), style="dim", justify="right"),
        Text(f"{symbol} {call.status}", style=style),
        Text(visible_line(call.tool), style="bold"),
        Text(summary),
        time_cell(call, now_ms),
    )
