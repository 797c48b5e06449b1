"""The tool-call detail screen: a call in full, read back from the source by offset."""

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

from ..model import ToolCall
from ..plain import STATUS_STYLE, dumps_json, format_ms
from ..safe import visible, visible_line
from ..payloads import load_call_events
from ..tools import Section, detail_sections, lexer_for

CHECK = {"completed": ("☑", "green"), "in progress": ("◐", "cyan"), "pending": ("☐", ""), "cancelled": ("☒", "dim")}


def _when(ms: int | None) -> str:
    if ms is None:
        return "—"
    t = dt.datetime.fromtimestamp(ms / 1000.0, tz=dt.UTC)
    return t.strftime("%Y-%m-%d %H:%M:%S.") + f"{ms % 1000:03d} UTC"


def call_header(call: ToolCall) -> Table:
    """Tool, status, times, full ``call_id`` and lines, as a grid."""
    symbol, style = STATUS_STYLE.get(call.status, ("?", ""))
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    grid.add_row("tool", Text(visible_line(call.tool), style="bold"))
    status = Text(f"{symbol} {call.status}", style=style)
    if call.outcome and call.outcome != call.status:
        status.append(f"  (outcome {visible_line(call.outcome)})", style="dim")
    if call.detail:
        status.append(f"  {visible_line(call.detail)}", style=style)
    grid.add_row("status", status)
    grid.add_row("started", _when(call.started_ms))
    grid.add_row("completed", _when(call.completed_ms))
    grid.add_row("duration", format_ms(call.duration_ms) or "—")
    grid.add_row("call_id", Text(visible_line(call.call_id)))
    lines = ", ".join(f"{k} line {v}" for k, v in (("started", call.started_line), ("completed", call.completed_line)) if v)
    if lines:
        grid.add_row("stream", lines)
    if call.description:
        grid.add_row("description", Text(visible_line(call.description)))
    if call.interaction:
        grid.add_row("approval", Text(visible_line(call.interaction)))
    return grid


def render_section(section: Section) -> Any:
    """A renderable (or a Markdown widget) for one section."""
    body = section.body
    if section.kind == "fields":
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold", no_wrap=True)
        grid.add_column()
        for label, value in body:
            grid.add_row(label, Text(visible(str(value))))
        return grid
    if section.kind == "code":
        code = visible(body)
        lexer = lexer_for(section.language, code) if section.language else "text"
        return Syntax(code, lexer, line_numbers=True, word_wrap=True, theme="monokai")
    if section.kind == "diff":
        return Syntax(visible(body), "diff", word_wrap=True, theme="monokai")
    if section.kind == "json":
        return Syntax(dumps_json(body).decode(), "json", word_wrap=True, theme="monokai")
    if section.kind == "checklist":
        t = Text()
        for state, text in body:
            mark, style = CHECK.get(state, ("☐", ""))
            t.append(f"{mark} ", style=style)
            t.append(visible_line(text) + "\n", style="strike dim" if state == "cancelled" else style)
        return t
    if section.kind == "matches":
        parts = []
        for file, lines in body:
            t = Text(visible_line(file), style="bold magenta")
            for number, text in lines:
                t.append("\n")
                t.append(f"{number if number is not None else '':>6}: ", style="green")
                t.append(visible_line(text))
            parts.append(t)
        return Group(*parts)
    if section.kind == "markdown":
        return Markdown(visible(body), open_links=False)
    return Text(visible(str(body)))


class ToolDetailScreen(Screen):
    """One tool call in full. Escape goes back."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back"), Binding("q", "app.pop_screen", "Back", show=False)]
    DEFAULT_CSS = """
    ToolDetailScreen VerticalScroll { padding: 0 1; }
    ToolDetailScreen .title { background: $panel; padding: 0 1; text-style: bold; }
    ToolDetailScreen .section-title { color: $accent; text-style: bold; margin: 1 0 0 0; }
    ToolDetailScreen .note { color: $warning; }
    """

    def __init__(self, call: ToolCall, reread) -> None:
        super().__init__()
        self.call = call
        self._reread = reread

    def compose(self) -> ComposeResult:
        call = self.call
        symbol, style = STATUS_STYLE.get(call.status, ("?", ""))
        title = Text()
        title.append(f"{symbol} [{call.index}] {visible_line(call.tool)}  ", style=style)
        title.append(visible_line(call.summary)[:120], style="bold")
        title.append("   Esc back", style="dim")
        yield Static(title, classes="title")
        with VerticalScroll(id="detail-body"):
            yield Static(call_header(call))
            args, result, note = load_call_events(call, self._reread)
            if note:
                yield Static(Text(note), classes="note")
            sections = detail_sections(call.tool, args, result)
            specific = any(s.kind != "json" for s in sections)
            for section in sections:
                rendered = render_section(section)
                if section.kind == "json" and specific:
                    with Collapsible(title=f"raw {section.title} (JSON)", collapsed=True):
                        yield Static(rendered)
                    continue
                yield Static(Text(section.title), classes="section-title")
                yield rendered if isinstance(rendered, Markdown) else Static(rendered)
