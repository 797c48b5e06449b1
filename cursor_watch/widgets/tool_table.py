"""The tool-call table: one row per ``call_id``, updated in place, virtual.

A ``DataTable`` costs more than 10 ms per frame past ~10k rows (``design.md``), and
long agent runs reach 100k tool calls, so this is a Line-API view: only the rows on
screen are rendered, each row's strip is cached until its call changes, and an
update or a new row costs the same with 10 rows or 100,000.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Static

from ..model import Session, ToolCall
from ..plain import STATUS_STYLE, format_ms
from ..safe import visible_line
from ..tools import STATUS_RUNNING

COLUMNS = (("#", 5, "right"), ("status", 12, "left"), ("tool", 11, "left"), ("summary", 38, "left"), ("time", 9, "right"))
GAP = 1  # spaces between columns


def header_text() -> Text:
    """The column titles, laid out like the rows."""
    return _layout([Text(label, style="bold") for label, _, _ in COLUMNS])


def _layout(cells: list[Text]) -> Text:
    line = Text(no_wrap=True)
    for (_, width, justify), cell in zip(COLUMNS, cells, strict=True):
        cell = cell.copy()
        cell.truncate(width, overflow="ellipsis", pad=False)
        pad = width - cell.cell_len
        if justify == "right":
            line.append(" " * pad)
            line.append_text(cell)
        else:
            line.append_text(cell)
            line.append(" " * pad)
        line.append(" " * GAP)
    return line


def time_cell(call: ToolCall, now_ms: float) -> Text:
    """Duration when done; live elapsed (``12.3 s…``) while running."""
    if call.status == STATUS_RUNNING:
        if call.started_ms is None:
            return Text("")
        return Text(format_ms(max(0.0, now_ms - call.started_ms)) + "…", style="cyan")
    return Text(format_ms(call.duration_ms), style="dim")


def row_cells(call: ToolCall, now_ms: float) -> list[Text]:
    """The row's cells as Rich Text (never markup; stream text escaped)."""
    symbol, style = STATUS_STYLE.get(call.status, ("?", ""))
    summary = visible_line(call.summary)
    if call.detail and call.status != "success":
        summary = f"{summary} ({visible_line(call.detail)})" if summary else visible_line(call.detail)
    return [
        Text(str(call.index), style="dim"),
        Text(f"{symbol} {call.status}", style=style),
        Text(visible_line(call.tool), style="bold"),
        Text(summary),
        time_cell(call, now_ms),
    ]


class ToolTableHeader(Static):
    """The column titles above :class:`ToolTable`."""

    DEFAULT_CSS = """
    ToolTableHeader { height: 1; padding: 0 0 0 1; background: $panel; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(header_text(), **kwargs)


class ToolTable(ScrollView, can_focus=True):
    """Rows keyed by ``call_id``, in order of first appearance, with a row cursor.

    ``upsert`` adds or updates a row; ``tick`` refreshes running calls' elapsed
    time. Enter (or a click on the highlighted row) posts :class:`Selected`.
    """

    DEFAULT_CSS = """
    ToolTable { height: 1fr; padding: 0 0 0 1; }
    ToolTable > .tool-table--cursor { background: $primary; color: $text; text-style: bold; }
    ToolTable:focus > .tool-table--cursor { background: $accent; }
    ToolTable > .tool-table--even { background: $surface; }
    """
    COMPONENT_CLASSES = {"tool-table--cursor", "tool-table--even"}
    BINDINGS = [
        Binding("enter", "select", "Detail"),
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "cursor_home", "First", show=False),
        Binding("end", "app.jump_end", "Latest"),
        Binding("tab", "app.focus_next", "Pane"),
    ]

    class Selected(Message):
        """Enter on a row: open the detail of ``call_id``."""

        def __init__(self, call_id: str) -> None:
            super().__init__()
            self.call_id = call_id

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._order: list[str] = []
        self._calls: dict[str, ToolCall] = {}
        self._version: dict[str, int] = {}
        self._strips: dict[str, tuple[tuple, Strip]] = {}
        self._now_ms = 0.0
        self.cursor_row = 0

    # -- data ------------------------------------------------------------------------

    @property
    def row_count(self) -> int:
        """Number of rows."""
        return len(self._order)

    def upsert(self, call: ToolCall, now_ms: float) -> None:
        """Add the call's row, or mark it changed."""
        self._now_ms = now_ms
        cid = call.call_id
        if cid not in self._calls:
            self._calls[cid] = call
            self._order.append(cid)
            self.virtual_size = Size(sum(w + GAP for _, w, _ in COLUMNS), len(self._order))
        self._version[cid] = self._version.get(cid, 0) + 1
        self._refresh_row(self._order_index(cid))

    def tick(self, session: Session, now_ms: float) -> None:
        """Refresh the elapsed time of running calls."""
        self._now_ms = now_ms
        for call in session.running_calls():
            if call.call_id in self._calls:
                self._version[call.call_id] += 1
                self._refresh_row(self._order_index(call.call_id))

    def _order_index(self, call_id: str) -> int | None:
        # rows update mostly near the end (the newest calls): search from there
        order = self._order
        for i in range(len(order) - 1, max(-1, len(order) - 200), -1):
            if order[i] == call_id:
                return i
        return None  # an old row: refresh() covers it if visible

    def _refresh_row(self, index: int | None) -> None:
        top = int(self.scroll_offset.y)
        height = self.scrollable_content_region.height
        if index is None:
            self.refresh()
        elif top <= index < top + max(height, 1):
            self.refresh(Region(0, index - top, self.size.width, 1))

    def selected_call_id(self) -> str | None:
        """``call_id`` of the row under the cursor, or None when empty."""
        if not self._order:
            return None
        return self._order[min(self.cursor_row, len(self._order) - 1)]

    def row_plain(self, index: int) -> list[str]:
        """Plain text of row ``index``'s cells (for tests and exports)."""
        return [cell.plain for cell in row_cells(self._calls[self._order[index]], self._now_ms)]

    # -- rendering ---------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = int(scroll_y) + y
        width = self.scrollable_content_region.width
        if index >= len(self._order):
            return Strip.blank(width, self.rich_style)
        cid = self._order[index]
        selected = index == self.cursor_row
        # focus only changes the cursor row's style: a focus change re-renders one row, not the page
        key = (self._version.get(cid, 0), width, selected, index % 2, selected and self.has_focus)
        cached = self._strips.get(cid)
        if cached is not None and cached[0] == key:
            strip = cached[1]
        else:
            line = _layout(row_cells(self._calls[cid], self._now_ms))
            if selected:
                base = self.get_component_rich_style("tool-table--cursor")
            elif index % 2:
                base = self.get_component_rich_style("tool-table--even")
            else:
                base = self.rich_style
            segments = [Segment(s.text, base + s.style if s.style else base) if not selected else
                        Segment(s.text, (s.style or Style()) + base) for s in line.render(self.app.console)]
            strip = Strip(segments).adjust_cell_length(max(width, line.cell_len), base)
            self._strips[cid] = (key, strip)
            if len(self._strips) > 2000:  # keep the cache about a few screens' worth
                for old in list(self._strips)[:1000]:
                    del self._strips[old]
        return strip.crop(int(scroll_x), int(scroll_x) + width)

    # -- cursor ----------------------------------------------------------------------------

    def move_cursor(self, row: int) -> None:
        """Put the cursor on ``row`` (clamped) and scroll it into view."""
        if not self._order:
            return
        old = self.cursor_row
        self.cursor_row = max(0, min(row, len(self._order) - 1))
        self._refresh_row(old)
        self._refresh_row(self.cursor_row)
        top = int(self.scroll_offset.y)
        height = max(1, self.scrollable_content_region.height)
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False, immediate=True)
        elif self.cursor_row >= top + height:
            self.scroll_to(y=self.cursor_row - height + 1, animate=False, immediate=True)

    def action_cursor(self, delta: int) -> None:
        self.move_cursor(self.cursor_row + delta)

    def action_page(self, direction: int) -> None:
        self.move_cursor(self.cursor_row + direction * max(1, self.scrollable_content_region.height - 1))

    def action_cursor_home(self) -> None:
        self.move_cursor(0)

    def action_select(self) -> None:
        cid = self.selected_call_id()
        if cid is not None:
            self.post_message(self.Selected(cid))

    def on_click(self, event: events.Click) -> None:
        row = int(self.scroll_offset.y) + event.y
        if 0 <= row < len(self._order):
            if row == self.cursor_row:
                self.action_select()
            else:
                self.move_cursor(row)

    def on_focus(self) -> None:
        self._refresh_row(self.cursor_row)

    def on_blur(self) -> None:
        self._refresh_row(self.cursor_row)
