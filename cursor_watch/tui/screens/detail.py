"""The tool-call detail screen: a call in full, read back from the source by offset.

Opened from a search, it highlights the query's matches in the arguments and result, lists
them with their context at the top, and opens scrolled to the current one.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from rich.console import Group
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Collapsible, Markdown, Static

from ...core.model import ToolCall
from ...fmt import call_duration_text, format_ms
from ...views.labels import STATUS_STYLE
from ...views.summary import dumps_json
from ...safe import view_redaction, visible, visible_line
from ...query.match import Query, payload_strings
from ...views.mdtext import text_parser
from ...stream.payloads import counted_payloads, load_payloads
from ..widgets.transcript import code_theme
from ...core.tools import RAW, Section, one_line, cut_payload, detail_sections, lexer_for, without_reason

CHECK = {"completed": ("☑", "green"), "in progress": ("◐", "cyan"), "pending": ("☐", ""), "cancelled": ("☒", "dim")}


def _when(ms: int | None) -> str:
    if ms is None:
        return "—"
    t = dt.datetime.fromtimestamp(ms / 1000.0, tz=dt.UTC)
    return t.strftime("%Y-%m-%d %H:%M:%S.") + f"{ms % 1000:03d} UTC"


def call_header(call: ToolCall) -> Table:
    """Tool, status, times, full ``call_id`` and lines, as a grid (a value too long for the
    width wraps, a word longer than it is folded: a call_id is never cut)."""
    symbol, style = STATUS_STYLE.get(call.status, ("?", ""))
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    grid.add_row("tool", Text(visible_line(call.tool), style="bold"))
    status = Text(f"{symbol} {call.status}", style=style)
    if call.outcome and call.outcome != call.status:
        status.append(f"  (outcome {visible_line(call.outcome)})", style="dim")
    if call.detail:
        status.append(f"  {visible_line(call.detail)}", style=style)
    grid.add_row("status", status)
    grid.add_row("started", _when(call.started_ms))
    grid.add_row("completed", _when(call.completed_ms))
    grid.add_row("duration", call_duration_text(call))
    grid.add_row("call_id", Text(visible_line(call.call_id)))
    lines = ", ".join(f"{k} line {v}" for k, v in (("started", call.started_line), ("completed", call.completed_line)) if v)
    if lines:
        grid.add_row("stream", lines)
    if call.description:
        grid.add_row("description", Text(visible_line(call.description)))
    if call.interaction:
        grid.add_row("approval", Text(visible_line(without_reason(call.interaction, call.detail))))
    return grid


MATCH_STYLE = "black on yellow"
CURRENT_STYLE = "bold white on red3"  # the match a search went to: unlike the others
MAX_EXCERPTS = 100


def _mark_text(t: Text, query: Query | None) -> Text:
    if query is not None:
        for a, b in query.spans(t.plain):
            t.stylize(MATCH_STYLE, a, b)
    return t


def _mark_syntax(syntax: Syntax, code: str, query: Query | None, current: int = -1) -> Syntax:
    """Highlight matches in a Syntax block (positions are (line, column), lines from 1)."""
    if query is None:
        return syntax
    for n, (a, b) in enumerate(query.spans(code)):
        la, ca = code.count("\n", 0, a) + 1, a - (code.rfind("\n", 0, a) + 1)
        lb, cb = code.count("\n", 0, b) + 1, b - (code.rfind("\n", 0, b) + 1)
        syntax.stylize_range(CURRENT_STYLE if n == current else MATCH_STYLE, (la, ca), (lb, cb))
    return syntax


def render_section(section: Section, query: Query | None = None, current: int = -1, dark: bool = True) -> Any:
    """A renderable (or a Markdown widget) for one section; ``query``'s matches highlighted
    (the ``current``-th of this section's text in a stronger colour); code in a light style
    unless ``dark`` (the app's theme)."""
    theme = code_theme(dark)
    body = section.body
    if section.kind == "fields":
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold", no_wrap=True)
        grid.add_column(overflow="fold")  # a long path or command wraps, never cut
        for label, value in body:
            grid.add_row(label, _mark_text(Text(visible(str(value))), query))
        return grid
    if section.kind == "code":
        code = visible(body)
        lexer = lexer_for(section.language, code) if section.language else "text"
        return _mark_syntax(Syntax(code, lexer, line_numbers=True, word_wrap=True, theme=theme), code, query,
                            current)
    if section.kind == "diff":
        code = visible(body)
        return _mark_syntax(Syntax(code, "diff", word_wrap=True, theme=theme), code, query, current)
    if section.kind == "json":
        code = visible(dumps_json(body).decode())  # (JSON has no control character left: redaction, if on)
        return _mark_syntax(Syntax(code, "json", word_wrap=True, theme=theme), code, query)
    if section.kind == "checklist":
        t = Text()
        for state, text in body:
            mark, style = CHECK.get(state, ("☐", ""))
            t.append(f"{mark} ", style=style)
            t.append(visible_line(text) + "\n", style="strike dim" if state == "cancelled" else style)
        return _mark_text(t, query)
    if section.kind == "matches":
        parts = []
        for file, lines in body:
            t = Text(visible_line(file), style="bold magenta")
            for number, text in lines:
                t.append("\n")
                t.append(f"{number if number is not None else '':>6}: ", style="green")
                t.append(visible_line(text))
            parts.append(_mark_text(t, query))
        return Group(*parts)
    if section.kind == "markdown":
        return Markdown(visible(body), open_links=False, parser_factory=text_parser)
    t = _mark_text(Text(visible(str(body))), query)
    if query is not None and current >= 0:
        spans = query.spans(t.plain)
        if current < len(spans):
            t.stylize(CURRENT_STYLE, *spans[current])
    return t


def payload_matches(query: Query, args: Any, result: Any) -> list[tuple[str, int, int]]:
    """Every match in a call's payload, in the search's order: ``(string, start, end)``.

    The order is the one :func:`cursor_watch.query.search.payload_count` counts in (the strings
    of the arguments, then of the result), so match ``k`` of a search is entry ``k`` here.
    """
    out = []
    for part in (args, result):
        if part is not None:
            for string in payload_strings(part):
                out += [(string, a, b) for a, b in query.spans(string)]
    return out


def excerpt(string: str, a: int, b: int, current: bool, width: int = 160) -> Text:
    """The line around a match, cut to about ``width`` characters, the match highlighted."""
    start = string.rfind("\n", 0, a) + 1
    end = string.find("\n", b)
    end = len(string) if end < 0 else end
    lo = max(start, a - width // 2)
    hi = min(end, max(b, lo + width))
    line = Text("▶ " if current else "  ", style="bold")
    number = string.count("\n", 0, a) + 1
    line.append(f"line {number:>5}: ", style="dim")
    if lo > start:
        line.append("…", style="dim")
    line.append(visible_line(string[lo:a]))
    line.append(visible_line(string[a:b]), style=CURRENT_STYLE if current else MATCH_STYLE)
    line.append(visible_line(string[b:hi]))
    if hi < end:
        line.append("…", style="dim")
    return line


def subagent_lines(session: Any, call_id: str, limit: int = 2_000) -> list[tuple[str, str]]:
    """What ran inside the sub-agent call ``call_id``, in stream order, as ``(kind, text)``:
    ``note`` for its status lines (prompt, progress, its text) and ``call`` for its tool calls
    (``✔ Bash  echo hi  46 ms``). At most ``limit`` entries (a note says how many more).

    Reads the session's notes and calls (old ones from the spill file): for a detail view.
    """
    entries: list[tuple[int, int, str, str]] = []
    for n, note_ in enumerate(session.notes):
        if note_.call_id == call_id:
            entries.append((note_.line, n, "note", visible_line(note_.text)))
    for call in session.tool_calls.values():
        if call.parent_call_id == call_id:
            symbol = STATUS_STYLE.get(call.status, ("?", ""))[0]
            text = f"{symbol} [{call.index}] {visible_line(call.tool)}  {visible_line(call.summary)}"
            if call.duration_ms is not None:
                text += f"  {format_ms(call.duration_ms)}"
            entries.append((call.started_line or call.completed_line, -1, "call", text))
    entries.sort(key=lambda e: (e[0], e[1]))
    out = [(kind, text) for _line, _n, kind, text in entries[:limit]]
    if len(entries) > limit:
        out.append(("note", f"… {len(entries) - limit:,} more"))
    return out


class ToolDetailScreen(Screen):
    """One tool call in full. Escape goes back."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back"), Binding("q", "app.pop_screen", "Back", show=False),
                Binding("r", "toggle_raw", "Raw JSON")]
    DEFAULT_CSS = """
    ToolDetailScreen VerticalScroll { padding: 0 1; }
    ToolDetailScreen .title { background: $panel; padding: 0 1; text-style: bold; }
    ToolDetailScreen .section-title { color: $accent; text-style: bold; margin: 1 0 0 0; }
    ToolDetailScreen .note { color: $warning; }
    """

    def __init__(self, call: ToolCall, reread, query: Query | None = None, match: int = -1,
                 session: Any = None) -> None:
        super().__init__()
        self.call = call
        self.session = session  # the run's model: a sub-agent call lists what ran inside it
        self._reread = reread
        self.search_query = query  # (not `query`: that is Textual's DOM query)
        self.match = match  # the search's current match within this call's payload (-1: none)
        self._target: Any = None  # (widget, line): the current match in the section that shows it
        self._excerpt: Any = None  # (widget, line): else its line in the list of matches

    def compose(self) -> ComposeResult:
        call = self.call
        symbol, style = STATUS_STYLE.get(call.status, ("?", ""))
        title = Text()
        title.append(f"{symbol} [{call.index}] {visible_line(call.tool)}  ", style=style)
        title.append(one_line(visible_line(call.summary), 120), style="bold")  # cut: …
        title.append("   Esc back · r raw JSON", style="dim")
        yield Static(title, classes="title")
        with VerticalScroll(id="detail-body"):
            yield Static(call_header(call))
            # in a browser tab (--serve) the payloads are redacted whole, before any cut or search
            payloads, note = load_payloads(call, self._reread, getattr(self.session, "agent", None), view_redaction())
            args, result = payloads.args, payloads.result
            if note:
                yield Static(Text(note), classes="note")
            query = self.search_query
            counted = counted_payloads(getattr(self.session, "agent", None), args, result)
            found = payload_matches(query, *counted) if query is not None else []  # as the search counts
            current = found[self.match] if 0 <= self.match < len(found) else None
            if query is not None:
                yield from self._search_section(query, found, current)
            sections = detail_sections(call.kind, payloads, shown=call.detail)
            specific = any(s.language != RAW for s in sections)
            for section in sections:
                mark = -1
                if current is not None and self._target is None and section.kind in ("text", "code", "diff"):
                    string, a, _b = current
                    if section.body == cut_payload(string) and a < len(section.body):
                        # the section shows the current match's string: open there, on its line
                        mark = sum(1 for x, _ in query.spans(string) if x < a)
                rendered = render_section(section, query, mark, dark=self.app.current_theme.dark)
                if section.language == RAW and specific:
                    with Collapsible(title=f"raw {section.title} (JSON)", collapsed=True):
                        yield Static(rendered)
                    continue
                yield Static(Text(section.title), classes="section-title")
                widget = rendered if isinstance(rendered, Markdown) else Static(rendered)
                if mark >= 0:
                    self._target = (widget, current[0].count("\n", 0, current[1]))
                yield widget
            yield from self._subagent_section()

    def _subagent_section(self) -> Any:
        """A sub-agent call (Claude Code's Task/Agent, Cursor's task): what ran inside it."""
        s = self.session
        if s is None or not (s.subagent_calls or self.call.kind == "task"):
            return
        lines = subagent_lines(s, self.call.call_id)
        if not lines:
            return
        yield Static(Text("sub-agent transcript"), classes="section-title")
        body = Text()
        for n, (kind, text) in enumerate(lines):
            if n:
                body.append("\n")
            body.append(text, style="" if kind == "call" else "dim")
        yield Static(body, id="subagent-transcript")

    def _search_section(self, query: Query, found: list, current: Any) -> Any:
        """The matches of the search in this call, each with its line of context."""
        title = Text(f"search: {len(found):,} match{'es' if len(found) != 1 else ''} for ", style="")
        title.append(visible_line(query.text), style=MATCH_STYLE)
        title.append(" in this call's arguments and result" + (" (regular expression)" if query.regex else ""))
        yield Static(title, classes="section-title")
        lines = Text()
        shown = found[:MAX_EXCERPTS]
        if current is not None and current not in shown:
            shown.append(current)
        for n, (string, a, b) in enumerate(shown):
            if n:
                lines.append("\n")
            lines.append_text(excerpt(string, a, b, (string, a, b) == current))
        if len(found) > MAX_EXCERPTS:
            lines.append(f"\n  … {len(found) - MAX_EXCERPTS:,} more", style="dim")
        widget = Static(lines, id="search-matches")
        if current is not None:
            self._excerpt = (widget, shown.index(current))
        yield widget

    def action_toggle_raw(self) -> None:
        """``r``: open the raw arguments and result (the JSON as the stream has it, strings
        with their escapes) under the tool's own view; again folds them."""
        folds = list(self.query(Collapsible))
        if not folds:
            self.notify("no raw JSON here: this call is shown as its JSON", timeout=2)
            return
        opening = all(c.collapsed for c in folds)
        for c in folds:
            c.collapsed = not opening
        if opening:
            body = self.query_one("#detail-body", VerticalScroll)
            self.call_after_refresh(lambda: body.scroll_to_widget(folds[0], animate=False, top=True))

    def on_mount(self) -> None:
        if self._target is not None or self._excerpt is not None:
            self.call_after_refresh(self._scroll_to_target)

    def _scroll_to_target(self) -> None:
        widget, line = self._target or self._excerpt
        body = self.query_one("#detail-body", VerticalScroll)
        y = widget.virtual_region.y + line
        body.scroll_to(y=max(0, y - body.size.height // 3), animate=False, immediate=True)
