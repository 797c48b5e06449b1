"""The tool-call table: one row per ``call_id``, updated in place, virtual.

A ``DataTable`` costs more than 10 ms per frame past ~10k rows (``design.md``), and
long agent runs reach 100k tool calls, so this is a Line-API view: only the rows on
screen are rendered, each row's strip is cached until its call changes, and an
update or a new row costs the same with 10 rows or 100,000. The table keeps nothing
per row: row ``i`` is ``session.tool_calls.at(i + 1)``, so its memory does not grow
with the stream (old calls are read back from the session's spill file). With a filter
(:mod:`cursor_watch.query.filters`), row ``i`` is the ``i``-th call that passes it (an array of
call indices, 8 bytes a row).
"""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from .rows import CursorRows
from textual.strip import Strip
from textual.widgets import Static

from ...query.filters import FilteredCalls
from ...core.model import Session, ToolCall
from ...views.names import PATH_MIN, call_summary, tool_name
from ...fmt import call_duration_text, format_ms
from ...views.labels import STATUS_STYLE
from ...safe import visible_line
from ...core.tools import STATUS_RUNNING

# (title, minimum width, justify). "#", status and tool are as wide as the widest value seen
# (tool names up to MAX_TOOL); the summary takes the width the others leave.
COLUMNS = (("#", 1, "right"), ("status", 6, "left"), ("tool", 4, "left"), ("summary", 0, "left"), ("time", 8, "right"))
GAP = 1  # spaces between columns
MIN_SUMMARY = 20
MAX_TOOL = 14
TOOL_COLUMN = 2  # COLUMNS' index of the tool's name
DEFAULT_WIDTH = 80


class Widths:
    """What the variable columns must hold: the largest index, the longest status and tool name."""

    __slots__ = ("rows", "status", "tool")

    def __init__(self, rows: int = 0, status: int = 9, tool: int = 5) -> None:
        self.rows, self.status, self.tool = rows, status, tool

    def key(self) -> tuple[int, int, int]:
        """Changes when a column's width does."""
        return (len(str(self.rows)), self.status, self.tool)


def column_widths(total: int, seen: Widths | None = None) -> list[int]:
    """Column widths for a table ``total`` cells wide whose values are ``seen``."""
    seen = seen or Widths()
    out = [w for _, w, _ in COLUMNS]
    out[0] = max(out[0], len(str(seen.rows)))
    out[1] = max(out[1], seen.status)
    out[2] = max(out[2], min(seen.tool, MAX_TOOL))
    out[3] = max(MIN_SUMMARY, total - sum(out) - GAP * len(COLUMNS))
    return out


def header_text(total: int = DEFAULT_WIDTH, seen: Widths | None = None) -> Text:
    """The column titles, laid out like the rows of a ``total``-wide table."""
    return _layout([Text(label, style="bold") for label, _, _ in COLUMNS], total, seen)


def _layout(cells: list[Text], total: int = DEFAULT_WIDTH, seen: Widths | None = None) -> Text:
    line = Text(no_wrap=True)
    for column, ((_, _, justify), width, cell) in enumerate(zip(COLUMNS, column_widths(total, seen), cells,
                                                               strict=True)):
        if column == TOOL_COLUMN and cell.cell_len > width:  # an MCP tool's end tells it apart
            cell = Text(tool_name(cell.plain, width), style=cell.style)
        else:
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


def _cell_specs(call: ToolCall, now_ms: float, summary_width: int | None = None,
                cwd: str | None = None) -> tuple[tuple[str, str], ...]:
    """``(text, style name)`` of the row's cells: index, status, tool, summary (with the
    failure detail), time (the duration when done; the live elapsed ``12.3 s…`` while it
    runs). Stream text is escaped.

    With ``summary_width`` (cells of the summary column), a summary that names a path is
    fitted to it (:func:`cursor_watch.views.names.call_summary`: relative to the run's ``cwd`` where
    shorter, cut in the middle so the file name stays), leaving room for the failure detail
    when the path keeps :data:`~cursor_watch.views.names.PATH_MIN` cells; without, it is whole.
    """
    symbol, status_style = STATUS_STYLE.get(call.status, ("?", ""))
    summary = visible_line(call.summary)
    detail = f"({visible_line(call.detail)})" if call.detail and call.status != "success" else ""
    if summary and summary_width is not None:
        room = summary_width - (cell_len(detail) + 1 if detail else 0)
        summary = call_summary(call.kind, summary, room if room >= PATH_MIN else summary_width, cwd)
    if detail:
        summary = f"{summary} {detail}" if summary else detail[1:-1]
    if call.status == STATUS_RUNNING:
        time_text = "" if call.started_ms is None else format_ms(max(0.0, now_ms - call.started_ms)) + "…"
        time_style = "cyan"
    else:
        # a finished call whose times were not recorded: unknown, said so
        time_text, time_style = call_duration_text(call), "dim"
    tool = visible_line(call.tool)
    if call.parent_call_id:  # ran inside a sub-agent: indented under it (its calls follow it)
        tool = "└ " + tool
    return ((str(call.index), "dim"), (f"{symbol} {call.status}", status_style), (tool, "bold"),
            (summary, ""), (time_text, time_style))


def _tool_len(call: ToolCall) -> int:
    """Cells the tool column needs for ``call`` (a sub-agent's call is indented by 2)."""
    return len(call.tool) + (2 if call.parent_call_id else 0)


def row_cells(call: ToolCall, now_ms: float) -> list[Text]:
    """The row's cells as Rich Text (never markup; stream text escaped)."""
    return [Text(text, style=style) for text, style in _cell_specs(call, now_ms)]


_STYLES: dict[str, Style] = {}


def _parsed(name: str) -> Style | None:
    """A style name as a Rich Style, parsed once."""
    if not name:
        return None
    style = _STYLES.get(name)
    if style is None:
        style = _STYLES[name] = Style.parse(name)
    return style


def row_pieces(call: ToolCall, now_ms: float, widths: list[int],
               cwd: str | None = None) -> list[tuple[str, Style | None]]:
    """The row laid out in ``widths`` (cells per column) as ``(text, style)`` pieces: what
    :func:`_layout` of :func:`row_cells` draws, cut and padded the same way, without building
    Rich ``Text`` objects (a page of new rows in a frame: about a third of the cost); a path in
    the summary fitted to its column (relative to the run's ``cwd``, cut in the middle)."""
    out: list[tuple[str, Style | None]] = []
    gap = " " * GAP
    specs = _cell_specs(call, now_ms, widths[3], cwd)
    for column, ((text, style), width, (_title, _min, justify)) in enumerate(zip(specs, widths, COLUMNS,
                                                                                 strict=True)):
        length = cell_len(text)
        if length > width:
            if column == TOOL_COLUMN:  # an MCP tool's end tells it apart
                text = tool_name(text, width)
            else:
                text = set_cell_size(text, width - 1) + "…" if width > 0 else ""
            length = cell_len(text)
        pad = " " * (width - length)
        if justify == "right":
            out += [(pad, None), (text, _parsed(style))]
        else:
            out += [(text, _parsed(style)), (pad, None)]
        out.append((gap, None))
    return out


class ToolTableHeader(Static):
    """The column titles above :class:`ToolTable`."""

    DEFAULT_CSS = """
    ToolTableHeader { height: 1; padding: 0 0 0 1; background: $panel; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(header_text(), **kwargs)

    def set_width(self, total: int, seen: Widths | None = None) -> None:
        """Lay the titles out for a table ``total`` cells wide (values ``seen``)."""
        self.update(header_text(total, seen))


class ToolTable(CursorRows, can_focus=True):
    """One row per tool call, in order of first appearance, with a row cursor.

    :meth:`update` takes the session and the ``call_id`` of each call that
    changed (new rows or updates); :meth:`tick` refreshes running calls' elapsed time. Enter (or a
    click on the highlighted row) posts :class:`Selected`.
    """

    DEFAULT_CSS = """
    ToolTable { height: 1fr; padding: 0 0 0 1; }
    ToolTable > .tool-table--cursor { background: $primary; color: $text; text-style: bold; }
    ToolTable:focus > .tool-table--cursor { background: $accent; }
    ToolTable > .tool-table--even { background: $surface; }
    """
    COMPONENT = "tool-table"
    COMPONENT_CLASSES = {"tool-table--cursor", "tool-table--even"}
    BINDINGS = [
        Binding("enter", "select", "Detail"),
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "cursor_home", "First", show=False),
        Binding("end", "app.jump_end", "Latest", show=False),
        Binding("tab", "app.focus_next", "Pane", show=False),
    ]

    class Selected(Message):
        """Enter on a row: open the detail of ``call_id``."""

        def __init__(self, call_id: str) -> None:
            super().__init__()
            self.call_id = call_id

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._session: Session | None = None
        self._rows = 0
        self._strips: dict[int, tuple[tuple, Strip]] = {}  # row -> (key, strip), a few screens' worth
        self._now_ms = 0.0
        self._seen = Widths()
        self._filtered: FilteredCalls | None = None
        self._page: dict[int, ToolCall] = {}  # calls read for the frame being drawn

    # -- data ------------------------------------------------------------------------

    @property
    def row_count(self) -> int:
        """Number of rows (the calls that pass the filter, when there is one)."""
        return self._rows

    @property
    def filtered(self) -> FilteredCalls | None:
        """The filter's rows, or None when every call is shown."""
        return self._filtered

    def set_filter(self, filtered: FilteredCalls | None) -> None:
        """Show only the calls of ``filtered`` (None: every call); the cursor stays on its call."""
        call = self._call(self.cursor_row) if self._rows else None
        self._filtered = filtered
        self._strips.clear()
        self._resize_rows()
        if call is not None:
            self.move_cursor(self.row_of(call.index) if self.row_of(call.index) is not None
                             else (filtered.nearest_row(call.index) if filtered is not None else call.index - 1))
        self.refresh()

    def row_of(self, index: int) -> int | None:
        """The row of call ``index`` (1-based), or None when the filter hides it."""
        if self._filtered is None:
            return index - 1 if self._session is not None and 1 <= index <= len(self._session.tool_calls) else None
        return self._filtered.row_of(index)

    def _virtual_size(self) -> Size:
        """The rows, and the width below which the table scrolls sideways: its columns at
        their least (a summary of MIN_SUMMARY cells). Not the pane's width: a vertical
        scrollbar appearing after it was set made the rows 2 cells too wide for the pane, and a
        horizontal scrollbar took the last line, where the newest call is (80x24)."""
        return Size(sum(column_widths(0, self._seen)) + GAP * len(COLUMNS), self._rows)

    def watch_show_vertical_scrollbar(self, _old: bool, _new: bool) -> None:
        """The rows narrow or widen with the scrollbar (they are laid out to the pane): the
        column titles too."""
        self._relayout_header()

    def _total_rows(self) -> int:
        if self._session is None:
            return 0
        return len(self._filtered.rows) if self._filtered is not None else len(self._session.tool_calls)

    def _resize_rows(self) -> None:
        self._rows = self._total_rows()
        self._seen.rows = len(self._session.tool_calls) if self._session is not None else 0
        self.virtual_size = self._virtual_size()
        if self._rows and self.cursor_row >= self._rows:
            self.cursor_row = self._rows - 1

    def update(self, session: Session, call_ids: list[str], now_ms: float, follow: bool = True) -> None:
        """New rows up to ``len(session.tool_calls)``; re-render the rows of ``call_ids``.

        With ``follow``, a cursor on the last row moves on to the new last row (the
        newest call stays in view, as the transcript follows); a cursor the user put
        elsewhere stays where it is.
        """
        self._session = session
        self._now_ms = now_ms
        at_end = self.cursor_row >= self._rows - 1
        seen = self._seen
        before = seen.key()
        # the status column fits every status present (the counts say which)
        seen.status = max([seen.status] + [len(st) + 2 for st, n in session.tool_counts.items() if n])
        if not self._rows and len(session.tool_calls):  # opened on a run under way: its recent calls
            seen.tool = max([seen.tool] + [_tool_len(c) for c in session.tool_calls.hot_values()])
        filtered = self._filtered
        rows_before = len(filtered.rows) if filtered is not None else -1
        for cid in call_ids:
            call = session.tool_calls.peek(cid)  # an update is to a recent call, in memory
            if call is not None:
                seen.tool = max(seen.tool, _tool_len(call))
                if filtered is not None:
                    filtered.update(call)
            if call is None:
                self._changed(None)  # an old call changed (read back from disk): every row again
            elif filtered is None:
                self._changed(call.index - 1)
            elif (row := filtered.row_of(call.index)) is not None:
                self._changed(row)
        if filtered is not None and len(filtered.rows) != rows_before:
            self._strips.clear()  # a row came or went in the middle: the rows below moved
        if self._total_rows() != self._rows or seen.key() != before or seen.rows != len(session.tool_calls):
            self._rows = self._total_rows()
            seen.rows = len(session.tool_calls)
            self.virtual_size = self._virtual_size()
            if seen.key() != before:
                self._strips.clear()  # a column widens: every row moves
                self._relayout_header()
                self.refresh()
            if follow and at_end:
                self.move_cursor(self._rows - 1)

    def tick(self, session: Session, now_ms: float) -> None:
        """Refresh the elapsed time of running calls."""
        self._now_ms = now_ms
        for call in session.running_calls():
            row = self.row_of(call.index)
            if row is not None and row < self._rows:
                self._changed(row)

    def _changed(self, row: int | None) -> None:
        if row is None:  # an old call changed (read back from disk): drop every cached row
            self._strips.clear()
        else:
            self._strips.pop(row, None)
        self._refresh_row(row)

    def _refresh_row(self, index: int | None) -> None:
        top = int(self.scroll_offset.y)
        height = self.scrollable_content_region.height
        if index is None:
            self.refresh()
        elif top <= index < top + max(height, 1):
            self.refresh(Region(0, index - top, self.size.width, 1))

    def render_lines(self, crop: Region) -> list[Strip]:
        # the rows to draw that are not cached: their calls read in one query (old calls
        # are on disk; a page of new rows was a query each)
        self._page = {}
        if self._session is not None and self._filtered is None and self._rows:
            top = int(self.scroll_offset.y) + crop.y
            need = [r for r in range(top, min(top + crop.height, self._rows)) if r not in self._strips]
            if len(need) > 4:
                self._page = self._session.tool_calls.at_range(need[0] + 1, need[-1] + 2)
        try:
            return super().render_lines(crop)
        finally:
            self._page = {}

    def _call(self, row: int) -> ToolCall | None:
        if self._session is None or not 0 <= row < self._rows:
            return None
        page = self._page.get(row + 1) if self._filtered is None else None
        if page is not None:
            return page
        if self._filtered is not None:
            rows = self._filtered.rows
            return self._session.tool_calls.at(rows[row]) if row < len(rows) else None
        return self._session.tool_calls.at(row + 1)

    def selected_call_id(self) -> str | None:
        """``call_id`` of the row under the cursor, or None when empty."""
        call = self._call(min(self.cursor_row, self._rows - 1))
        return call.call_id if call is not None else None

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)

    def _theme_changed(self, _theme: Any) -> None:
        self._strips.clear()  # rows drawn in the old theme's colours
        self.refresh()

    def on_resize(self, event: events.Resize) -> None:
        self.virtual_size = self._virtual_size()
        self._strips.clear()
        self._relayout_header()
        if self._rows:  # a smaller pane (stacked on a narrow terminal) keeps the cursor's row in view
            self.call_after_refresh(self._scroll_to_cursor)

    def _relayout_header(self) -> None:
        for header in self.parent.query(ToolTableHeader) if self.parent is not None else []:
            header.set_width(self.scrollable_content_region.width, self._seen)

    def row_plain(self, index: int) -> list[str]:
        """Plain text of row ``index``'s cells (for tests and exports)."""
        call = self._call(index)
        if call is None:
            raise IndexError(index)
        return [cell.plain for cell in row_cells(call, self._now_ms)]

    # -- rendering ---------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = int(scroll_y) + y
        width = self.scrollable_content_region.width
        selected = index == self.cursor_row
        # focus only changes the cursor row's style: a focus change re-renders one row, not the page
        key = (width, selected, selected and self.has_focus)
        cached = self._strips.get(index)
        if cached is not None and cached[0] == key:
            strip = cached[1]
        else:
            call = self._call(index)
            if call is None:
                return Strip.blank(width, self.rich_style)
            widths = column_widths(width, self._seen)
            base = self.row_style(index, selected)
            empty = Style()
            segments = [Segment(text, (style or empty) + base) if selected else
                        Segment(text, base + style if style else base)
                        for text, style in row_pieces(call, self._now_ms, widths, self._session.cwd
                                                      if self._session is not None else None) if text]
            strip = Strip(segments).adjust_cell_length(max(width, sum(widths) + GAP * len(widths)), base)
            self._strips[index] = (key, strip)
            if len(self._strips) > 2000:  # keep the cache about a few screens' worth
                for old in list(self._strips)[:1000]:
                    del self._strips[old]
        return strip.crop(int(scroll_x), int(scroll_x) + width)

    # -- cursor ----------------------------------------------------------------------------

    def refresh_cursor(self, old: int) -> None:
        """Only the rows the cursor left and reached are drawn again (a focus change: one row)."""
        self._refresh_row(old)
        self._refresh_row(self.cursor_row)

    def action_cursor_home(self) -> None:
        self.move_cursor(0)

    def action_select(self) -> None:
        cid = self.selected_call_id()
        if cid is not None:
            self.post_message(self.Selected(cid))
