"""The runs list: one row per run of every watched source, updated in place.

A Line-API view like the tool table: only the rows on screen are rendered, each row's
strip is cached until the row changes. The rows (:class:`RunRow`) are made by the app from
the runs and their :class:`~cursor_watch.core.runs.RunActivity`; the table sorts them (live runs
first, then newest first) and keeps its cursor on the same run when the order changes.
"""

from __future__ import annotations

import datetime as dt
import itertools
from dataclasses import dataclass, field
from typing import Any

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from .rows import CursorRows
from textual.strip import Strip
from textual.widgets import Static

from ...views.names import RUN_SUFFIX, shared_ends, short_name
from ...fmt import format_ms
from ...safe import view_redaction, visible_line

# (title, width, justify); a width of 0 is flexible: it gets at least FLEX_MIN and a share
# (FLEX_SHARES) of what the fixed columns leave
COLUMNS = (("", 1, "left"), ("source", 0, "left"), ("agent", 6, "left"), ("state", 11, "left"),
           ("model", 14, "left"), ("prompt", 0, "left"), ("started", 17, "left"), ("time", 7, "right"),
           ("tools", 15, "left"), ("tokens · cost", 25, "right"), ("last activity", 0, "left"))
FLEX_SHARES = {1: 5, 5: 2, 10: 3}
FLEX_MIN = {1: 18, 5: 16, 10: 12}  # a flexible column that can't get this much is left out
# the columns kept when the table is narrow, most wanted first (at 80 columns a row
# still shows name, state, tool counts and elapsed time; then whose run it is)
PRIORITY = (0, 1, 3, 7, 8, 2, 10, 5, 4, 6, 9)
ESSENTIAL = 6  # the first columns of PRIORITY; the others are kept only while the source keeps
SOURCE_ROOM = 24  # cells (log names share long prefixes: a name needs room to be told apart)
MIDDLE = frozenset({1})  # cut in the middle (the distinctive end of a log name, its #N kept)
GAP = 1
STATE_STYLE = {"success": "bold green", "error": "bold red", "incomplete": "bold magenta", "waiting": "bold yellow",
               "streaming": "bold cyan", "reading": "cyan", "idle": "yellow", "queued": "dim", "connecting": "dim",
               "unreadable": "bold red", "stalled": "bold dark_orange3", "quiet": "yellow"}
MARK_STYLE = {"success": "green", "error": "red", "incomplete": "magenta", "waiting": "bold yellow",
              "stalled": "bold dark_orange3", "budget": "bold red", "restart": "yellow", "loop": "bold yellow"}
UNKNOWN = "—"  # a time the stream did not record


MODEL_MAX = 26  # cells the model column may grow to, to show a model's whole name
CONTENT_FIT = frozenset({4, 8, 9})  # fixed columns sized to what their rows hold (model, tools, tokens · cost)


def widths(total: int, need: dict[int, int] | None = None) -> list[int]:
    """Column widths for a table ``total`` cells wide; 0 for a column left out.

    ``need``: the cells each column's widest row needs (:meth:`RunsTable.set_rows`), or None
    for the nominal widths. With it, the model, tools and tokens columns are as wide as their
    rows need (the model up to :data:`MODEL_MAX`, never narrower than its title), and a
    flexible column no row fills (a prompt the streams never gave) is left out, so the room
    goes to the columns that have something to show.

    Columns are taken in :data:`PRIORITY` order until one does not fit (a flexible one at
    its :data:`FLEX_MIN`; one after the first :data:`ESSENTIAL` only while the source column
    keeps :data:`SOURCE_ROOM` cells); the flexible ones kept share what is left by
    :data:`FLEX_SHARES`.
    """
    nominal = [w for _, w, _ in COLUMNS]
    empty: set[int] = set()
    if need is not None:
        for i in CONTENT_FIT:
            title = len(COLUMNS[i][0])
            cap = MODEL_MAX if i == 4 else nominal[i]
            nominal[i] = max(title, min(cap, need.get(i, nominal[i])))
        empty = {i for i in FLEX_SHARES if i != 1 and need.get(i, 1) == 0}
    kept: set[int] = set()
    used = 0
    source_min = FLEX_MIN[1]
    for n, i in enumerate(PRIORITY):
        if i in empty:
            continue
        need_i = (nominal[i] or FLEX_MIN[i]) + (GAP if kept else 0)
        room = max(0, SOURCE_ROOM - source_min) if n >= ESSENTIAL and 1 in kept else 0
        if used + need_i + room > total:
            break  # the rest is less wanted: the room goes to the flexible columns kept
        kept.add(i)
        used += need_i + room
        if room:
            source_min = SOURCE_ROOM
    mins = {**FLEX_MIN, 1: source_min}
    flex = [i for i in FLEX_SHARES if i in kept]
    extra = max(0, total - used)
    shares = sum(FLEX_SHARES[i] for i in flex) or 1
    out = []
    given = 0
    for i, w in enumerate(nominal):
        if i not in kept:
            out.append(0)
        elif w:
            out.append(w)
        elif i == flex[-1]:
            out.append(mins[i] + extra - given)
        else:
            n = extra * FLEX_SHARES[i] // shares
            given += n
            out.append(mins[i] + n)
    return out


def layout(cells: list[Text], total: int, shared: tuple[int, int] = (0, 0),
           need: dict[int, int] | None = None) -> Text:
    """The cells laid out in columns for a ``total``-wide table (left-out columns skipped;
    ``need``: see :func:`widths`).

    ``shared``: characters of its start and end the row's source name shares with another
    listed name (:func:`cursor_watch.views.names.shared_ends`): its cut keeps what tells it apart.
    """
    line = Text(no_wrap=True)
    for i, ((_, _, justify), width, cell) in enumerate(zip(COLUMNS, widths(total, need), cells, strict=True)):
        if not width:
            continue
        if i in MIDDLE and cell.cell_len > width:
            cell = Text(short_name(cell.plain, width, shared), style=cell.style)
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
    line.rstrip_end(total)
    return line


def header_text(total: int, need: dict[int, int] | None = None) -> Text:
    """The column titles (``need``: see :func:`widths`)."""
    return layout([Text(title, style="bold") for title, _, _ in COLUMNS], total, need=need)


def local_time(ms: float | None, now_ms: float | None = None) -> str:
    """``14:03:07`` today, ``Nov 21 14:03`` earlier this year, ``2025-11-21`` in another year (local time)."""
    if ms is None:
        return ""
    t = dt.datetime.fromtimestamp(ms / 1000.0)
    now = dt.datetime.fromtimestamp((now_ms if now_ms is not None else ms) / 1000.0)
    if t.date() == now.date():
        return t.strftime("%H:%M:%S")
    if t.year == now.year:
        return t.strftime("%b %d %H:%M")
    return t.strftime("%Y-%m-%d")


def short_count(n: int | None) -> str:
    """``21994`` -> ``22.0k``; ``1_200_000`` -> ``1.2M``."""
    if n is None:
        return "?"
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.1f}M"


@dataclass
class RunRow:
    """What one row shows (all stream text already escaped for the terminal).

    ``key`` identifies the run (``(source, index, id)``); ``live`` and ``started_ms`` order the rows.
    """

    key: tuple[str, int, int]
    source: str
    state: str
    model: str
    prompt: str
    started_ms: float | None
    time_ms: float | None
    counts: dict[str, int]
    tokens: tuple[int | None, int | None] | None
    activity: str
    live: bool
    mark: str = ""
    now_ms: float | None = None
    error: str = ""
    agent: str = ""  # the short agent label (formats.agent_short)
    started_is_file_time: bool = False  # started_ms is the file's modification time (no time recorded)
    has_events: bool = True  # with events and no time: the time column says it is unknown
    cost: str = ""  # "$0.42" reported, "≈ $0.0117 est." estimated, "" unknown
    serial: int = field(default_factory=itertools.count().__next__)  # a new row is a new serial: redrawn

    def cells(self) -> list[Text]:
        """The row's cells as Rich Text."""
        state_key = self.state.split(" ")[0]
        mark = Text("●", style=MARK_STYLE.get(self.mark, "")) if self.mark else Text(" ")
        c = self.counts
        tools = Text()
        tools.append(f"▶{c.get('running', 0)} ", style="cyan" if c.get("running") else "dim")
        tools.append(f"✔{c.get('success', 0)} ", style="green" if c.get("success") else "dim")
        tools.append(f"✖{c.get('failure', 0)} ", style="red" if c.get("failure") else "dim")
        tools.append(f"⊘{c.get('rejected', 0)}", style="yellow" if c.get("rejected") else "dim")
        if c.get("incomplete"):
            tools.append(f" …{c['incomplete']}", style="magenta")
        tokens = Text("")
        if self.tokens is not None:
            tokens = Text(f"{short_count(self.tokens[0])}/{short_count(self.tokens[1])}", style="dim")
        if self.cost:
            tokens.append((" " if tokens else "") + self.cost, style="dim")
        activity = Text(self.error or self.activity,
                        style="red" if self.error else ("yellow" if self.activity.startswith("↻ looping") else ""))
        return [
            mark,
            Text(self.source, style="bold"),
            Text(self.agent, style="dim"),
            Text(self.state, style=STATE_STYLE.get(state_key, "")),
            Text(self.model, style="cyan"),
            Text(self.prompt),
            Text(("file " if self.started_is_file_time and self.started_ms is not None else "")
                 + local_time(self.started_ms, self.now_ms), style="dim"),
            Text(format_ms(self.time_ms) if self.time_ms is not None else (UNKNOWN if self.has_events else ""),
                 style="dim"),
            tools,
            tokens,
            activity,
        ]

    def plain(self) -> list[str]:
        """The cells' plain text (tests)."""
        return [c.plain for c in self.cells()]

    def sort_key(self) -> tuple:
        """Live runs first, then newest first; ties by source and run."""
        return (0 if self.live else 1, -(self.started_ms or 0.0), self.key)


def make_text(text: str | None, limit: int = 300) -> str:
    """One escaped line of at most ``limit`` characters (prompts, models, sources). In a view
    that redacts (``--serve``) the whole text is redacted before it is cut: a token cut at the
    limit would be half a token, which no rule knows."""
    if not text:
        return ""
    redact = view_redaction()
    if redact is not None:
        text = redact(text)
    line = " ".join(text[: limit * 2].split())
    return visible_line(line[:limit])


def row_widths(rows: list[RunRow]) -> dict[int, int]:
    """The cells the widest row needs in the model (4), prompt (5), tools (8) and
    tokens · cost (9) columns (:func:`widths`)."""
    need = {4: 0, 5: 0, 8: 0, 9: 0}
    for row in rows:
        cells = row.cells()
        for i in need:
            n = cells[i].cell_len
            if n > need[i]:
                need[i] = n
    return need


def _name(row: RunRow) -> str:
    """The row's source name without its run number (what :func:`shared_ends` compares)."""
    return RUN_SUFFIX.sub("", row.source)


class RunsTableHeader(Static):
    """The column titles above :class:`RunsTable` (laid out for the table's width)."""

    DEFAULT_CSS = """
    RunsTableHeader { height: 1; padding: 0 0 0 1; background: $panel; }
    """

    need: dict[int, int] | None = None  # the table's (RunsTable.need)
    table_width: int | None = None  # the table's rows' width (a scrollbar may take some)

    def on_resize(self, event: events.Resize) -> None:
        self.update(header_text(self.table_width or max(1, event.size.width - 1), self.need))

    def fit(self, need: dict[int, int] | None, width: int) -> None:
        """The table's rows are laid out ``width`` cells wide for ``need`` (:func:`widths`):
        the titles follow, column for column."""
        if (need, width) != (self.need, self.table_width):
            self.need, self.table_width = need, width
            self.update(header_text(width, need))


class RunsTable(CursorRows, can_focus=True):
    """One row per run with a row cursor; Enter (or a click on the cursor row) opens it.

    :meth:`set_rows` replaces the rows (sorted here); the cursor stays on the run it was on.
    """

    DEFAULT_CSS = """
    RunsTable { height: 1fr; padding: 0 0 0 1; }
    RunsTable > .runs-table--cursor { background: $primary; color: $text; text-style: bold; }
    RunsTable:focus > .runs-table--cursor { background: $accent; }
    RunsTable > .runs-table--even { background: $surface; }
    """
    COMPONENT = "runs-table"
    COMPONENT_CLASSES = {"runs-table--cursor", "runs-table--even"}
    BINDINGS = [
        Binding("enter", "select", "Open run"),
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "cursor_to(0)", "First", show=False),
        Binding("end", "cursor_to(-1)", "Last", show=False),
        Binding("space", "pick", "Pick to compare", show=False),  # (c without two picked says how)
    ]

    class Selected(Message):
        """Enter on a row: open the run ``key``."""

        def __init__(self, key: tuple[str, int, int]) -> None:
            super().__init__()
            self.key = key

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.picked: list[tuple[str, int, int]] = []  # runs picked to compare (space), A first; at most 2
        self.rows: list[RunRow] = []
        self._shared: dict[str, tuple[int, int]] = {}  # source name (no run number) -> shared_ends
        self._strips: dict[int, tuple[Any, Strip]] = {}
        self.need: dict[int, int] | None = None  # what the rows need of the content-sized columns (widths)
        self._header_width = 0  # the rows' width the titles were last laid out for

    @property
    def row_count(self) -> int:
        """Number of rows."""
        return len(self.rows)

    def selected_key(self) -> tuple[str, int, int] | None:
        """The run under the cursor, or None."""
        if not self.rows:
            return None
        return self.rows[min(self.cursor_row, len(self.rows) - 1)].key

    def set_rows(self, rows: list[RunRow]) -> None:
        """Show ``rows`` (sorted: live first, then newest first), keeping the cursor's run."""
        keep = self.selected_key()
        rows = sorted(rows, key=RunRow.sort_key)
        changed = len(rows) != len(self.rows)
        if changed or any(a.source != b.source for a, b in zip(rows, self.rows)):
            self._shared = shared_ends(_name(row) for row in rows)
        self.rows = rows
        need = row_widths(rows)
        if need != self.need:
            self.need = need
            self._strips.clear()
            self._fit_header()
        if keep is not None:
            for i, row in enumerate(rows):
                if row.key == keep:
                    self.cursor_row = i
                    break
        self.cursor_row = max(0, min(self.cursor_row, len(rows) - 1))
        if changed:
            self.virtual_size = Size(0, len(rows))  # rows are laid out to the pane: never sideways
        self.refresh()

    def _fit_header(self) -> None:
        """The titles above follow the rows' layout (their width: a scrollbar may take two cells)."""
        width = self.scrollable_content_region.width
        if width and self.is_attached:
            self._header_width = width
            for header in self.screen.query(RunsTableHeader):
                header.fit(self.need, width)

    def move_to_key(self, key: tuple[str, int, int]) -> None:
        """Put the cursor on the run ``key`` (if listed)."""
        for i, row in enumerate(self.rows):
            if row.key == key:
                self.move_cursor(i)
                return

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = int(scroll_y) + y
        width = self.scrollable_content_region.width
        if width != self._header_width:  # (a scrollbar came or went: no resize event says so)
            self._header_width = width
            self.call_later(self._fit_header)
        if not 0 <= index < len(self.rows):
            return Strip.blank(width, self.rich_style)
        row = self.rows[index]
        selected = index == self.cursor_row
        shared = self._shared.get(_name(row), (0, 0))
        pick = "AB"[self.picked.index(row.key)] if row.key in self.picked else ""
        key = (width, selected, selected and self.has_focus, row.serial, shared, pick)
        cached = self._strips.get(index)
        if cached is not None and cached[0] == key:
            return cached[1]
        cells = row.cells()
        if pick:  # picked to compare: A or B in the mark column
            cells[0] = Text(pick, style="bold reverse")
        line = layout(cells, width, shared, self.need)
        base = self.row_style(index, selected)
        segments = [Segment(s.text, (s.style or Style()) + base if selected else (base + s.style if s.style else base))
                    for s in line.render(self.app.console)]
        strip = Strip(segments).adjust_cell_length(width, base).crop(int(scroll_x), int(scroll_x) + width)
        self._strips[index] = (key, strip)
        if len(self._strips) > 500:
            self._strips.clear()
        return strip

    def on_resize(self, event: events.Resize) -> None:
        self.virtual_size = Size(0, len(self.rows))
        self._strips.clear()
        self._fit_header()

    def action_cursor_to(self, row: int) -> None:
        self.move_cursor(row if row >= 0 else len(self.rows) - 1)

    def action_pick(self) -> None:
        """Space: pick the run under the cursor to compare (A, then B; a third replaces B), or
        unpick it."""
        key = self.selected_key()
        if key is None:
            return
        if key in self.picked:
            self.picked.remove(key)
        else:
            self.picked = self.picked[:1] + [key]
        self._strips.clear()
        self.refresh()

    def action_select(self) -> None:
        key = self.selected_key()
        if key is not None:
            self.post_message(self.Selected(key))
