"""The transcript: prompt, assistant segments (Markdown), thinking, tool markers, notes.

A Line-API view (like the tool table), not a widget per entry: the model's timeline is
shown through a **window** of consecutive entries, each rendered once into lines (Rich
``Markdown`` for a segment) and re-rendered only when its record changes; a frame draws
the lines on screen and nothing else. A widget per entry cost a layout and a compositor
pass per block and, live, ~200 widgets mounted and pruned a second, whose garbage made
Python's full collections freeze frames (``bench/bench_tui.py``).

The window holds at most :data:`MAX_ENTRIES` entries. While it follows the stream it is
the newest entries (a burst of more than :data:`MAX_RENDER_PER_TICK` new entries in a tick
restarts it on the newest, so the screen always holds a contiguous tail); scrolling up past
its top adds earlier entries above it, Home goes to the start of the run, and
:meth:`Transcript.show_entry` (search, next problem) rebuilds it around any entry. An entry
is rendered only when it comes into view (until then its height is estimated from its
text), so a jump anywhere costs the entries on screen, not the window. The model keeps
everything; the window keeps what a person can scroll through.

Sticky follow uses ``Widget.anchor()``: scrolling up releases it (the view holds still
while the user reads, counting new entries), End or ``f`` restores it.

Search matches are highlighted on the rendered lines (:class:`~cursor_watch.query.search.Query`
over each line's text), so a highlight costs nothing until an entry is drawn.
"""

from __future__ import annotations

import bisect
import time
from typing import Any

from rich.cells import cell_len
from rich.markdown import Markdown as RichMarkdown
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from rich.theme import Theme
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...core import model as m
from ...fmt import plural, shown_detail
from ...core.model import Session, ToolCall
from ...views.names import PATH_MIN, call_summary
from ...fmt import format_ms
from ...views.labels import STATUS_STYLE, note_detail_text
from ...safe import view_redaction, visible, visible_line
from ...core.tools import MARKER_DETAIL, one_line, said_in
from ...query.match import Query
from ...views.mdtext import shared_parser

MAX_ENTRIES = 150  # timeline entries in the window while following
MAX_WINDOW = 400  # entries in the window at most (scrolling up adds, the far end is dropped)
MAX_RENDER_PER_TICK = 40  # a burst of more new entries than this in a tick shows the newest
EXTEND = 50  # entries added above the window when scrolling up past its top
SLOW_RENDER_S = 0.02  # an open entry slower than this to render is re-rendered less often
PAD = 1  # columns left and right of the text
NOTE_DETAIL_LINES_SHOWN = 3  # lines of a note's detail (a hook's output) under it
PREFETCH_AFTER_S = 0.05  # a still view renders the entries around it after this long
PREFETCH_SLICE_S = 0.01  # at most this long at a time


class TextMarkdown(RichMarkdown):
    """Rich's ``Markdown`` on :func:`cursor_watch.views.mdtext.text_parser` (same arguments as Rich's):
    text that looks like HTML stays text, each line of the source stays a line. Every
    non-space character of the source that is not Markdown syntax (emphasis marks, code-span
    backticks, fences and their info strings, heading marks, link brackets) is drawn.
    """

    def __init__(self, markup: str, **kwargs: Any) -> None:
        super().__init__("", **kwargs)  # Rich's own parser (raw HTML on, then dropped) sees nothing
        self.markup = markup
        self.parsed = shared_parser().parse(markup)


def markdown(text: str, code_theme: str = "monokai") -> TextMarkdown:
    """Escaped Markdown; text that looks like HTML stays text, each line of the source stays a
    line (:mod:`cursor_watch.views.mdtext`); links print their URL instead of becoming terminal
    hyperlinks. ``code_theme``: Pygments style of fenced code (a light one on a light theme)."""
    return TextMarkdown(visible(text), hyperlinks=False, code_theme=code_theme)


# Rich's own Markdown styles put inline code "on black": a dark band on a light theme
LIGHT_MARKDOWN = Theme({"markdown.code": "bold dark_blue", "markdown.code_block": "dark_blue",
                        "markdown.block_quote": "dark_magenta", "markdown.link_url": "blue"})


def code_theme(dark: bool) -> str:
    """The Pygments style for code on the app's theme: a light one on a light theme."""
    return "monokai" if dark else "default"


SUMMARY_MIN = 8  # cells a marker's summary keeps when the outcome after it needs the room


def marker_text(call: ToolCall, dimmed: bool = False, payload_matches: int = 0, width: int | None = None,
                cwd: str | None = None, loop: int = 0) -> Text:
    """``▶ [3] shell  pytest -q`` ... ``✖ [3] shell  pytest -q · failure (exit 1) · 2.1 s``.

    ``dimmed``: the call is hidden by the tool-table filter. ``payload_matches``: search
    matches inside its arguments and result (not visible in the line itself), shown as ``⌕N``.
    ``width``: the line's cells; a summary that names a path is then fitted to what the rest
    of the line leaves (:func:`cursor_watch.views.names.call_summary`: relative to the run's ``cwd``
    where shorter, cut in the middle so the file name stays; any other summary cut at its end),
    so the outcome and duration after it stay on the line; at least
    :data:`~cursor_watch.views.names.PATH_MIN` cells, the line's end giving way below that). ``loop``: the
    repeats this call brought its loop to (``✖ [7] ↻ looping ×3 shell  npm test``:
    :mod:`cursor_watch.core.loops`), 0 if none.
    """
    symbol, style = STATUS_STYLE.get(call.status, ("?", ""))
    t = Text(no_wrap=True, overflow="ellipsis")
    if call.parent_call_id:  # ran inside a sub-agent: indented under its call
        t.append("  └ ", style="dim")
    t.append(f"{symbol} [{call.index}] ", style=f"bold {style}")
    if payload_matches:  # first, so a long line can't cut it off
        t.append(f"⌕{payload_matches}", style="bold reverse")
        t.append(" ")
    if loop:  # early too: a failure's detail can fill the line
        t.append(f"↻ looping ×{loop}", style="bold yellow")
        t.append(" ")
    t.append(visible_line(call.tool), style="bold")
    tail = Text()
    if call.done:
        tail.append(f" · {call.status}", style=style)
        if call.detail and not said_in(call.detail, call.interaction):  # its note said it already
            tail.append(f" ({shown_detail(one_line(visible_line(call.detail), 0), '⏎ on the call', MARKER_DETAIL)})",
                            style=style)
        elif call.exit_code:
            tail.append(f" (exit {call.exit_code})", style=style)
        if call.duration_ms is not None:
            tail.append(f" · {format_ms(call.duration_ms)}", style="dim")
    if call.summary:
        summary = visible_line(call.summary)
        if width is not None:
            left = width - t.cell_len - 2 - tail.cell_len
            room = max(left, PATH_MIN)
            summary = call_summary(call.kind, summary, room, cwd)
            if cell_len(summary) > room or cell_len(summary) > left:
                # not a path (or a path at its least): its end gives way, down to a few cells,
                # so the outcome and time stay
                cut = Text(summary)
                cut.truncate(max(left, SUMMARY_MIN), overflow="ellipsis")
                summary = cut.plain
        t.append("  " + summary)
    t.append_text(tail)
    if dimmed:
        t.stylize("dim")
    return t


def settled(text: str) -> str:
    """A text still streaming, as a view that redacts (``--serve``) shows it: up to its last
    whitespace. The word being written waits for its end: half a token is no token any rule
    knows, so it would be shown as it is until its last delta came."""
    cut = max(text.rfind(" "), text.rfind("\n"), text.rfind("\t"))
    return text[: cut + 1]


def thinking_text(text: str) -> Text:
    """A thinking block's text, escaped and marked."""
    return Text("✻ " + visible(text.strip()), style="italic")


class Entry:
    """One timeline entry in the window.

    Attributes:
        pos: its position in the session's timeline.
        kind, key: the timeline entry (``segment`` and its index, ``tool`` and its call_id...).
        lines: the rendered lines (trailing blank line included), without search highlights;
            None until the entry first comes into view.
        est: the estimated height (lines) while it is not rendered.
        shown: the text last rendered (segments and thinking: to skip unchanged re-renders).
        closed: its record is final (a closed segment, a completed thinking block).
        hits: ``(line, start cell, end cell)`` of each search match, in order.
        render_s: seconds its last render took; rendered_at: when (monotonic).
    """

    __slots__ = ("pos", "kind", "key", "lines", "est", "shown", "closed", "hits", "render_s", "rendered_at", "_lit")

    def __init__(self, pos: int, kind: str, key: Any, est: int = 1) -> None:
        self.pos = pos
        self.kind = kind
        self.key = key
        self.lines: list[Strip] | None = None
        self.est = est
        self.shown: str | None = None
        self.closed = False
        self.hits: list[tuple[int, int, int]] = []
        self.render_s = 0.0
        self.rendered_at = 0.0
        self._lit: tuple | None = None  # ((query, current), highlighted lines)

    @property
    def height(self) -> int:
        return len(self.lines) if self.lines is not None else self.est


def estimate(text: str, width: int) -> int:
    """Lines a text of paragraphs will take at ``width`` (plus the blank line after it)."""
    width = max(1, width)
    return sum(len(par) // width + 1 for par in text.split("\n")) + 1


def _on_top(strip: Strip, style: Style) -> Strip:
    """``strip`` with ``style`` over its own styles (a highlight shows on coloured text too)."""
    return Strip([Segment(text, (seg_style + style) if seg_style else style, control)
                  for text, seg_style, control in strip], strip.cell_length)


def highlight(lines: list[Strip], query: Query, style: Style, current: int = -1,
              current_style: Style | None = None) -> tuple[list[Strip], list[tuple[int, int, int]]]:
    """Mark every match of ``query`` in rendered ``lines``.

    Returns the new lines and the matches as ``(line, start cell, end cell)`` of where each
    begins; the ``current``-th match (0-based) gets ``current_style``. The lines are read
    as a person reads them (Markdown syntax gone, wrapping applied), joined with a space
    where they wrap, so a match that wraps onto the next line is marked on both.
    """
    from rich.cells import cell_len

    texts = [strip.text for strip in lines]
    parts = []  # (line, offset of the stripped text in the line, stripped text)
    for y, text in enumerate(texts):
        stripped = text.strip()
        if stripped:
            parts.append((y, len(text) - len(text.lstrip()), stripped))
    if not parts:
        return lines, []
    joined = " ".join(p[2] for p in parts)
    spans = query.spans(joined)
    if not spans:
        return lines, []
    starts = []  # where each part begins in the joined text
    pos = 0
    for _y, _lead, text in parts:
        starts.append(pos)
        pos += len(text) + 1
    marks: dict[int, list[tuple[int, int, Style]]] = {}  # line -> (start char, end char, style)
    hits: list[tuple[int, int, int]] = []
    for n, (a, b) in enumerate(spans):
        mark = current_style if (n == current and current_style is not None) else style
        first = True
        i = bisect.bisect_right(starts, a) - 1
        while i < len(parts) and starts[i] < b:
            y, lead, text = parts[i]
            lo, hi = max(a, starts[i]) - starts[i], min(b, starts[i] + len(text)) - starts[i]
            if hi > lo:
                marks.setdefault(y, []).append((lead + lo, lead + hi, mark))
                if first:
                    line = texts[y]
                    hits.append((y, cell_len(line[: lead + lo]), cell_len(line[: lead + hi])))
                    first = False
            i += 1
    out = list(lines)
    for y, ranges in marks.items():
        strip, text = lines[y], texts[y]
        cells = [(cell_len(text[:a]), cell_len(text[:b]), st) for a, b, st in ranges]
        length = strip.cell_length
        cuts = sorted({c for a, b, _ in cells for c in (a, b) if 0 < c < length} | {length})
        pieces = strip.divide(cuts)
        styled: list[Strip] = []
        start = 0
        for piece, stop in zip(pieces, cuts, strict=False):
            st = next((st for a, b, st in cells if a <= start < b), None)
            styled.append(_on_top(piece, st) if st is not None else piece)
            start = stop
        out[y] = Strip.join(styled)
    return out, hits


class Transcript(ScrollView, can_focus=True):
    """The transcript pane; call :meth:`sync` with each batch of model changes."""

    DEFAULT_CSS = """
    Transcript { height: 1fr; }
    Transcript > .transcript--prompt { background: $boost; color: $text; }
    Transcript > .transcript--prompt-bar { color: $accent; }
    Transcript > .transcript--thinking { color: $text-muted; }
    Transcript > .transcript--note { color: $warning; }
    Transcript > .transcript--note-connection { color: $text-muted; }
    Transcript > .transcript--note-source { color: $error; }
    Transcript > .transcript--note-compaction { color: $accent; text-style: bold; }
    Transcript > .transcript--earlier { color: $text-muted; text-style: italic; }
    Transcript > .transcript--match { background: $warning 60%; color: $text; }
    Transcript > .transcript--match-current { background: $accent; color: $text; text-style: bold; }
    Transcript > .transcript--marked { background: $accent 30%; }
    """
    COMPONENT_CLASSES = {
        "transcript--prompt", "transcript--prompt-bar", "transcript--thinking", "transcript--note",
        "transcript--note-connection", "transcript--note-source", "transcript--earlier", "transcript--note-compaction",
        "transcript--match", "transcript--match-current", "transcript--marked",
    }
    BINDINGS = [
        Binding("enter", "app.open_detail", "Detail"),
        Binding("end", "app.jump_end", "Latest", show=False),
        Binding("home", "start", "Start", show=False),
        Binding("tab", "app.focus_next", "Pane", show=False),
    ]

    class CallSelected(Message):
        """A tool marker was clicked: open the detail of ``call_id``."""

        def __init__(self, call_id: str) -> None:
            super().__init__()
            self.call_id = call_id

    def __init__(self, show_thinking: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.show_thinking = show_thinking
        self.new_while_paused = 0
        self._session: Session | None = None  # the session the window shows
        self._entries: list[Entry] = []  # the window: timeline positions [_start, _end)
        self._start = 0
        self._end = 0
        self._seen = 0  # timeline length when the view last followed (the "N new" count)
        self._by_key: dict[tuple[str, Any], Entry] = {}
        self._offsets: list[int] = []  # y of each entry (after the note above the window)
        self._top: list[Strip] = []  # the note above the window (earlier entries, a preview)
        self._height = 0
        self._width = 0
        self._dirty: set[Entry] = set()
        self._follow = True
        self._preview: str | None = None
        self._query: Query | None = None
        self._current: tuple[int, int] | None = None  # (timeline pos, match within the entry)
        self._marked: int | None = None  # timeline pos of the entry a jump went to (shown marked)
        self._payload_hits: dict[str, int] = {}  # call_id -> matches inside its payload
        self._dimmed: Any = None  # call -> bool: hidden by the table filter
        self._base = Style()  # the widget's style, read once a frame (not once a line)
        self._prefetch_timer: Any = None

    # -- follow ------------------------------------------------------------------------

    @property
    def following(self) -> bool:
        """True while the view sticks to the newest output (not paused by ``f`` or scrolling up)."""
        return self._follow and not (self.is_anchored and self._anchor_released)

    def follow(self, on: bool = True) -> None:
        """Start following (jump to the end) or stop."""
        self._follow = on
        if on:
            self.new_while_paused = 0
            self.anchor()
            self.scroll_end(animate=False, immediate=True)
        else:
            self.anchor(False)
        self._update_anchor()

    def _update_anchor(self) -> None:
        # anchor only once the content overflows (a short anchored view has nowhere to go)
        if not self._follow:
            return
        overflow = self._height > self.scrollable_content_region.height
        if overflow and not self.is_anchored:
            self.anchor()
        elif not overflow and self.is_anchored:
            self.anchor(False)

    def pause(self) -> None:
        """Hold the view still (as scrolling up does): new entries are counted, not shown."""
        if self.is_anchored:
            self.release_anchor()
        else:
            self._follow = False

    # -- data ---------------------------------------------------------------------------

    def behind(self, session: Session) -> bool:
        """True when timeline entries are waiting to be shown (e.g. after a pause)."""
        return self._end != len(session.timeline) or self._session is not session

    def show_preview(self, preview: Session, note: str) -> None:
        """Show the tail of a big file (a separate model of its last bytes) while the
        whole file is replayed; :meth:`end_preview` replaces it with the real tail."""
        self._preview = note
        self._reset(preview)
        total = len(preview.timeline)
        self._set_window(preview, max(0, total - MAX_RENDER_PER_TICK), total)
        self._render_tail()

    def end_preview(self) -> None:
        """The replay is done: drop the preview; the next sync shows the real tail."""
        if self._preview is not None:
            self._preview = None
            self._reset(None)
            self._layout()

    def _reset(self, session: Session | None) -> None:
        self._session = session
        self._entries = []
        self._offsets = []
        self._by_key = {}
        self._dirty = set()
        self._start = self._end = 0

    def sync(self, session: Session, changes: list[tuple[str, Any]]) -> int:
        """Show new timeline entries and re-render changed ones; returns entries added."""
        if self._preview is not None:
            return 0  # a big file is being replayed: its tail is shown from the preview
        if self._session is not session:
            self._reset(session)
        added = 0
        total = len(session.timeline)
        if not self.following and self._end:
            # paused: the screen holds still while the user reads
            self.new_while_paused = max(0, total - max(self._end, self._seen))
        else:
            added = self._append(session, total)
        by_key = self._by_key
        for kind, key in changes:
            if kind in (m.CHANGE_SEGMENT, m.CHANGE_SEGMENT_CLOSED):
                entry = by_key.get(("segment", key))
                if entry is not None and not entry.closed:
                    if kind == m.CHANGE_SEGMENT_CLOSED:
                        entry.closed = True
                        entry.rendered_at = 0.0  # render its final text now
                    self._dirty.add(entry)
            elif kind in (m.CHANGE_THINKING, m.CHANGE_THINKING_CLOSED):
                entry = by_key.get(("thinking", key))
                if entry is not None:
                    if kind == m.CHANGE_THINKING_CLOSED:
                        entry.closed = True
                        entry.rendered_at = 0.0
                    self._dirty.add(entry)
            elif kind in (m.CHANGE_TOOL_UPDATED, m.CHANGE_TOOL_STARTED, m.CHANGE_TOOL_DONE):
                entry = by_key.get(("tool", key))
                if entry is not None:
                    entry.rendered_at = 0.0
                    self._dirty.add(entry)
        self.flush_streams(session)
        return added

    def flush_streams(self, session: Session) -> None:
        """Re-render entries whose records changed (an open segment at most once a tick;
        one that is slow to render, less often; one not yet in view, when it comes)."""
        if self._dirty and self._session is session:
            now = time.monotonic()
            changed = False
            for entry in list(self._dirty):
                if entry.lines is None:
                    self._dirty.discard(entry)
                    entry.est = self._estimate(entry, session)
                    changed = True
                    continue
                if entry.render_s > SLOW_RENDER_S and now - entry.rendered_at < entry.render_s * 10:
                    continue  # a huge open segment: keep the UI responsive
                self._dirty.discard(entry)
                height = entry.height
                if self._render(entry, session):
                    changed = changed or entry.height != height
                    self.refresh()
            if changed:
                self._layout()
        self._update_anchor()

    def _append(self, session: Session, total: int) -> int:
        if total == self._end and self._entries:
            self._seen = total
            return 0
        start = self._end
        limit = MAX_ENTRIES if not self._entries else MAX_RENDER_PER_TICK
        if total - start > limit or start < self._start:
            # a burst (or a window elsewhere): show the newest entries, contiguous
            self._set_window(session, max(0, total - min(limit, MAX_ENTRIES)), total)
            self._seen = total
            self._render_tail()
            return total - self._start
        new = self._make(session, start, total)
        self._entries.extend(new)
        self._end = total
        self._seen = total
        extra = len(self._entries) - MAX_ENTRIES
        if extra > 0:
            for entry in self._entries[:extra]:
                self._forget(entry)
            del self._entries[:extra]
            self._start += extra
        self._layout()
        self._render_tail()
        return len(new)

    def _make(self, session: Session, start: int, stop: int) -> list[Entry]:
        entries = []
        for pos, (kind, key) in enumerate(session.timeline[start:stop], start):
            entry = Entry(pos, kind, key)
            entry.est = self._estimate(entry, session)
            entries.append(entry)
            self._by_key[(kind, key)] = entry
        return entries

    def _forget(self, entry: Entry) -> None:
        self._by_key.pop((entry.kind, entry.key), None)
        self._dirty.discard(entry)

    def _set_window(self, session: Session, start: int, stop: int) -> None:
        """Replace the window with timeline positions ``[start, stop)`` (not rendered yet)."""
        for entry in self._entries:
            self._forget(entry)
        self._session = session
        self._start, self._end = start, stop
        self._entries = self._make(session, start, stop)
        self._layout()

    def _render_tail(self) -> None:
        """Render the newest entries that fill the screen (a followed view shows them now)."""
        session = self._session
        if session is None:
            return
        need = max(1, self.scrollable_content_region.height or 50)
        got = 0
        changed = False
        for entry in reversed(self._entries):
            if got >= need:
                break
            if entry.lines is None:
                self._render(entry, session)
                changed = True
            if entry.kind != "thinking" or self.show_thinking:
                got += entry.height
        if changed:
            self._layout()

    # -- rendering ------------------------------------------------------------------------

    def _render_width(self) -> int:
        return max(10, (self.scrollable_content_region.width or 80) - 2 * PAD)

    def _estimate(self, entry: Entry, session: Session) -> int:
        kind, key = entry.kind, entry.key
        try:
            if kind == "segment":
                return estimate(session.segments[key].text, self._render_width())
            if kind == "thinking":
                return estimate(session.thinking[key].text, self._render_width() - 2)
            if kind == "prompt":
                return estimate(session.prompt or "", self._render_width() - 2)
        except (IndexError, KeyError):
            pass
        return 1

    def _render(self, entry: Entry, session: Session) -> bool:
        """Render ``entry`` from the model; False when nothing changed."""
        kind, key = entry.kind, entry.key
        t0 = time.monotonic()
        try:
            if kind == "segment":
                seg = session.segments[key]
                entry.closed = entry.closed or seg.closed
                if entry.shown == seg.text and entry.lines is not None:
                    return False
                entry.shown = seg.text
                text = seg.text if seg.closed or view_redaction() is None else settled(seg.text)
                dark = self._dark()
                lines = self._lines(markdown(text, code_theme(dark)), blank_after=True,
                                    theme=None if dark else LIGHT_MARKDOWN)
            elif kind == "thinking":
                block = session.thinking[key]
                entry.closed = entry.closed or block.completed
                if entry.shown == block.text and entry.lines is not None:
                    return False
                entry.shown = block.text
                text = block.text if block.completed or view_redaction() is None else settled(block.text)
                lines = self._lines(thinking_text(text), indent=2, blank_after=True,
                                    style=self.get_component_rich_style("transcript--thinking"))
            elif kind == "tool":
                call = session.tool_calls.get(key)
                if call is None:
                    return False
                dimmed = bool(self._dimmed(call)) if self._dimmed is not None else False
                reached = session.loops.reached_at(call.completed_line) if call.done else None
                lines = self._lines(marker_text(call, dimmed, self._payload_hits.get(key, 0),
                                                self._render_width(), session.cwd, reached.count if reached else 0))
            elif kind == "note":
                note = session.notes[key]
                name = {"connection": "transcript--note-connection", "source": "transcript--note-source"}.get(
                    note.kind, "transcript--note")
                text = Text("· " + visible_line(note.text))
                if note.kind == "compaction":  # a marker across the transcript: the context before it is gone
                    name = "transcript--note-compaction"
                    text = Text("━━ " + visible_line(note.text) + " ━━")
                if note.detail:  # a hook's output: its first lines under it (--summary --json has all)
                    detail = note_detail_text(note.detail, NOTE_DETAIL_LINES_SHOWN)
                    text.append("".join("\n  " + part for part in detail.split("\n")), style="dim")
                lines = self._lines(text, style=self.get_component_rich_style(name))
            elif kind == "prompt":
                lines = self._prompt_lines(session.prompt or "")
            else:
                lines = []
        except (IndexError, KeyError):
            lines = []
        entry.lines = lines
        entry._lit = None
        entry.rendered_at = time.monotonic()
        entry.render_s = entry.rendered_at - t0
        return True

    def _dark(self) -> bool:
        return self.app.current_theme.dark

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)

    def _theme_changed(self, _theme: Any) -> None:
        """Another theme: every rendered line holds the old theme's colours; render again."""
        for entry in self._entries:
            if entry.lines is not None:
                entry.est = entry.height
            entry.lines = None
            entry.shown = None
            entry._lit = None
        self.call_after_refresh(self._layout)  # the widget's styles are the new theme's by then

    def _lines(self, renderable: Any, indent: int = 0, blank_after: bool = False,
               style: Style | None = None, theme: Theme | None = None) -> list[Strip]:
        width = self._render_width()
        console = self.app.console
        options = console.options.update_width(max(1, width - indent))
        if theme is not None:
            with console.use_theme(theme):
                rendered = console.render_lines(renderable, options, style=style, pad=False)
        else:
            rendered = console.render_lines(renderable, options, style=style, pad=False)
        pad = [Segment(" " * (PAD + indent))]
        lines = [Strip(pad + line) for line in rendered]
        if blank_after:
            lines.append(Strip.blank(0))
        return lines

    def _prompt_lines(self, prompt: str) -> list[Strip]:
        width = self._render_width()
        body = self.get_component_rich_style("transcript--prompt")
        bar = self.get_component_rich_style("transcript--prompt-bar") + Style(bgcolor=body.bgcolor)
        t = Text()
        t.append("❯ ", style="bold")
        t.append(visible(prompt))
        console = self.app.console
        rendered = console.render_lines(t, console.options.update_width(max(1, width - 2)), style=body, pad=True)
        lines = [Strip([Segment("▌ ", bar)] + line).extend_cell_length(width + PAD, body) for line in rendered]
        lines.append(Strip.blank(0))
        return lines

    def _layout(self, refresh: bool = True) -> None:
        """Recompute entry offsets, the total height and the note above the window."""
        if self._preview is not None:
            top = Text("… " + self._preview)
        elif self._start > 0:
            top = Text(f"… {plural(self._start, 'earlier entry', 'earlier entries')}: scroll up for more, Home for the start")
        else:
            top = None
        if top is not None:
            self._top = self._lines(top, style=self.get_component_rich_style("transcript--earlier"))
        else:
            self._top = []
        y = len(self._top)
        offsets = []
        show_thinking = self.show_thinking
        for entry in self._entries:
            offsets.append(y)
            if entry.kind != "thinking" or show_thinking:
                y += entry.height
        self._offsets = offsets
        self._height = y
        # no width: lines are wrapped to the pane, never scrolled sideways (the pane's width
        # here went stale when a vertical scrollbar came, and a horizontal one took a line)
        self.virtual_size = Size(0, y)
        if refresh:
            self.refresh()

    def on_resize(self, event: events.Resize) -> None:
        width = self._render_width()
        if width != self._width:
            self._width = width
            session = self._session
            if session is not None:
                for entry in self._entries:  # rendered again when seen
                    if entry.lines is not None:
                        entry.est = max(1, entry.height * len(entry.lines[0].text or " ") // max(1, width))
                    entry.lines = None
                    entry.shown = None
                    entry._lit = None
            self._layout()
            if self.following:
                self._render_tail()

    def set_thinking(self, shown: bool) -> None:
        """Show or hide thinking blocks (their lines are kept; only the layout changes)."""
        self.show_thinking = shown
        self._layout()

    def _index_at(self, y: int) -> int:
        """Index in the window of the entry drawn on (or nearest above) virtual line ``y``."""
        return bisect.bisect_right(self._offsets, y) - 1

    def _entry_at(self, y: int) -> tuple[Entry | None, int]:
        """The entry drawn on virtual line ``y`` and the line within it."""
        i = self._index_at(y)
        while i >= 0:
            entry = self._entries[i]
            if entry.kind != "thinking" or self.show_thinking:
                if y - self._offsets[i] < entry.height:
                    return entry, y - self._offsets[i]
                return None, 0
            i -= 1
        return None, 0

    def _ensure_visible(self) -> None:
        """Render the entries that come into view (their heights were estimates).

        An entry that starts above the top of the view keeps the view where it is: the
        scroll offset moves by the difference between its estimated and real height.
        """
        session = self._session
        if session is None or not self._entries:
            return
        height = max(1, self.scrollable_content_region.height)
        for _ in range(8):
            top = int(self.scroll_y)
            i = max(0, self._index_at(top))
            shift = 0
            todo = []
            while i < len(self._entries) and self._offsets[i] < top + height:
                entry = self._entries[i]
                if entry.lines is None and (entry.kind != "thinking" or self.show_thinking):
                    todo.append(entry)
                    if self._offsets[i] < top:
                        shift -= entry.height
                i += 1
            if not todo:
                return
            for entry in todo:
                self._render(entry, session)
                if self._offsets[entry.pos - self._start] < top:
                    shift += entry.height
            self._layout(refresh=False)
            if shift and not self.following:
                self.scroll_to(y=max(0, top + shift), animate=False, immediate=True, force=True)
            elif self.following and self.is_anchored:
                self.scroll_end(animate=False, immediate=True)

    def render_lines(self, crop: Any) -> list[Strip]:
        self._base = self.rich_style
        self._ensure_visible()
        if self._prefetch_timer is None and self._session is not None and not self.following:
            self._prefetch_timer = self.set_timer(PREFETCH_AFTER_S, self._prefetch)
        return super().render_lines(crop)

    def _prefetch(self) -> None:
        """Between frames, render the entries a screen above and below the view, a few at a
        time, so paging rarely meets an entry still to render (a Markdown render in a frame)."""
        self._prefetch_timer = None
        session = self._session
        if session is None or not self._entries:
            return
        height = max(1, self.scrollable_content_region.height)
        top = int(self.scroll_y)
        lo = max(0, self._index_at(max(0, top - height)))
        hi = self._index_at(top + 2 * height) + 1
        done = 0
        deadline = time.monotonic() + PREFETCH_SLICE_S
        for entry in self._entries[lo:hi]:
            if entry.lines is None and (entry.kind != "thinking" or self.show_thinking):
                above = self._offsets[entry.pos - self._start] < top
                height_before = entry.height
                self._render(entry, session)
                done += 1
                if above and entry.height != height_before:
                    # an entry above the view: keep what is on screen where it is
                    self._layout(refresh=False)
                    self.scroll_to(y=self.scroll_y + entry.height - height_before, animate=False,
                                   immediate=True, force=True)
                if time.monotonic() > deadline:
                    break
        if done:
            self._layout()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        vy = scroll_y + y
        width = self.scrollable_content_region.width
        base = self._base
        if vy < len(self._top):
            strip = self._top[vy]
        else:
            entry, line = self._entry_at(vy)
            if entry is None or entry.lines is None:
                return Strip.blank(width, base)
            strip = self._lit_lines(entry)[line]
        return strip.apply_style(base).crop_extend(scroll_x, scroll_x + width, base)

    def _lit_lines(self, entry: Entry) -> list[Strip]:
        """The entry's lines with search highlights and the jump mark (cached)."""
        query = self._query
        lines = entry.lines or []
        marked = entry.pos == self._marked
        if query is None and not marked:
            return lines
        current = self._current[1] if self._current is not None and self._current[0] == entry.pos else -1
        key = (query, current, marked)
        if entry._lit is not None and entry._lit[0] == key:
            return entry._lit[1]
        lit = lines
        if query is not None:
            lit, entry.hits = highlight(lines, query, self.get_component_rich_style("transcript--match"),
                                        current, self.get_component_rich_style("transcript--match-current"))
        if marked:
            style = Style(bgcolor=self.get_component_rich_style("transcript--marked").bgcolor)  # keep colours
            lit = [_on_top(strip.extend_cell_length(self._render_width() + 2 * PAD), style) for strip in lit]
        entry._lit = (key, lit)
        return lit

    # -- search, filter, jumps ------------------------------------------------------------

    def set_search(self, query: Query | None, payload_hits: dict[str, int] | None = None) -> None:
        """Highlight ``query`` (None clears); ``payload_hits``: call_id -> matches in its payload."""
        old_hits = self._payload_hits
        self._query = query
        self._payload_hits = dict(payload_hits or {})
        if query is None:
            self._current = None
        for cid in set(old_hits) | set(self._payload_hits):
            if old_hits.get(cid) != self._payload_hits.get(cid):
                entry = self._by_key.get(("tool", cid))
                if entry is not None:
                    entry.lines = None  # rendered again with its badge when seen
        for entry in self._entries:
            entry._lit = None
        self._layout()

    def set_dimmed(self, dimmed: Any) -> None:
        """``dimmed(call) -> bool``: tool markers of calls the table's filter hides are dim."""
        self._dimmed = dimmed
        for entry in self._entries:
            if entry.kind == "tool":
                entry.lines = None  # rendered again when seen
        self._layout()

    def show_entry(self, session: Session, pos: int, match: int = -1, mark: bool = False) -> None:
        """Scroll timeline entry ``pos`` into view (rebuilding the window around it if
        needed) and pause following; ``match``: the entry's match to mark as current;
        ``mark``: show the whole entry marked (a jump to a problem, to a tool call)."""
        if self._preview is not None:
            return
        total = len(session.timeline)
        if not 0 <= pos < total:
            return
        self.pause()
        if self._session is not session or not self._start <= pos < self._end:
            half = MAX_ENTRIES // 2
            start = max(0, min(pos - half, total - MAX_ENTRIES))
            self._set_window(session, start, min(total, start + MAX_ENTRIES))
        self._current = (pos, match) if match >= 0 else None
        self._marked = pos if mark else None
        for entry in self._entries:
            entry._lit = None
        i = pos - self._start
        entry = self._entries[i]
        if entry.kind == "thinking" and not self.show_thinking:
            self.show_thinking = True
        height = max(1, self.scrollable_content_region.height)
        # render the entry and what sits above it on screen, so the place is exact
        if entry.lines is None:
            self._render(entry, session)
        above = 0
        j = i - 1
        while j >= 0 and above < height:
            e = self._entries[j]
            if e.lines is None:
                self._render(e, session)
            if e.kind != "thinking" or self.show_thinking:
                above += e.height
            j -= 1
        self._layout()
        line = 0
        if match >= 0:
            self._lit_lines(entry)
            if 0 <= match < len(entry.hits):
                line = entry.hits[match][0]
        y = self._offsets[i] + line
        self.scroll_to(y=max(0, y - height // 3), animate=False, immediate=True, force=True)
        self._ensure_visible()
        self.refresh()

    def window(self) -> tuple[int, int]:
        """Timeline positions ``[start, end)`` in the window."""
        return self._start, self._end

    def entry_count(self, kind: str) -> int:
        """Entries of ``kind`` (``segment``, ``tool``, ``thinking``, ``note``, ``prompt``) in the window."""
        return sum(1 for e in self._entries if e.kind == kind)

    def rendered_text(self) -> str:
        """Every line of the window, as plain text, rendering what was not yet (tests)."""
        lines = [s.text for s in self._top]
        for entry in self._entries:
            if entry.kind != "thinking" or self.show_thinking:
                if entry.lines is None and self._session is not None:
                    self._render(entry, self._session)
                lines += [s.text for s in entry.lines or []]
        return "\n".join(lines)

    def top_note(self) -> str:
        """The note above the window ("… N earlier entries", a preview's note) or ""."""
        return "\n".join(s.text for s in self._top).strip()

    # -- keys and mouse --------------------------------------------------------------------

    def _extend_up(self) -> bool:
        """Add up to ``EXTEND`` entries above the window, keeping the view where it is."""
        session = self._session
        if session is None or self._start == 0 or self._preview is not None:
            return False
        self.pause()
        n = min(EXTEND, self._start)
        before = self._height
        new = self._make(session, self._start - n, self._start)
        self._entries[:0] = new
        self._start -= n
        extra = len(self._entries) - MAX_WINDOW
        if extra > 0:  # keep the window bounded: drop from the far end
            for entry in self._entries[-extra:]:
                self._forget(entry)
            del self._entries[-extra:]
            self._end -= extra
        self._layout()
        self.scroll_to(y=self.scroll_y + (self._height - before), animate=False, immediate=True, force=True)
        return True

    # Scrolling keys render what comes into view at once, in the key's handler, so the
    # frame that shows it only composes lines (a Markdown render inside a frame made it slow).

    def action_scroll_up(self) -> None:
        if self.scroll_y <= 0:
            self._extend_up()
        super().action_scroll_up()
        self._ensure_visible()

    def action_scroll_down(self) -> None:
        super().action_scroll_down()
        self._ensure_visible()

    def action_page_up(self) -> None:
        if self.scroll_y <= 0:
            self._extend_up()
        super().action_page_up()
        self._ensure_visible()

    def action_page_down(self) -> None:
        super().action_page_down()
        self._ensure_visible()

    def _on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        if self.scroll_y <= 0:
            self._extend_up()
        super()._on_mouse_scroll_up(event)

    def action_start(self) -> None:
        """Home: the start of the run."""
        session = self._session
        if session is None or self._preview is not None:
            self.scroll_home(animate=False)
            return
        self.pause()
        if self._start > 0:
            self._set_window(session, 0, min(len(session.timeline), MAX_ENTRIES))
        self.scroll_to(y=0, animate=False, immediate=True, force=True)
        self._ensure_visible()

    def on_click(self, event: events.Click) -> None:
        entry, _line = self._entry_at(int(self.scroll_offset.y) + event.y)
        if entry is not None and entry.kind == "tool":
            self.post_message(self.CallSelected(entry.key))
