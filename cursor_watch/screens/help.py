"""The help screen (``?``): every key, and what the header's states mean."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

KEYS = (
    ("q", "quit (a spawned command is terminated)"),
    ("Enter", "open the highlighted tool call's detail"),
    ("Escape", "back from a detail or this help"),
    ("f", "toggle follow (stick to the newest output)"),
    ("End", "jump to the latest and follow again"),
    ("t", "show or hide thinking"),
    ("d", "show or hide diagnostics (invalid lines, unknown events, stderr)"),
    ("Tab / Shift+Tab", "move between transcript, tool calls and diagnostics"),
    ("↑ ↓ PgUp PgDn Home", "scroll or move in the focused pane"),
    ("?", "this help"),
)
STATES = (
    ("connecting", "no event yet"),
    ("streaming", "events are arriving"),
    ("idle for N s", "no event for a while; normal while a tool runs (the running tools are named)"),
    ("success / error", "the run ended with a result (is_error false / true)"),
    ("incomplete", "the stream ended without a result"),
)


class HelpScreen(ModalScreen):
    """Keys and states."""

    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 84; height: auto; max-height: 90%; border: thick $accent; background: $surface; padding: 1 2; }
    """

    def compose(self) -> ComposeResult:
        keys = Table.grid(padding=(0, 2))
        keys.add_column(style="bold cyan", no_wrap=True)
        keys.add_column()
        for k, v in KEYS:
            keys.add_row(k, v)
        states = Table.grid(padding=(0, 2))
        states.add_column(style="bold", no_wrap=True)
        states.add_column()
        for k, v in STATES:
            states.add_row(k, v)
        with VerticalScroll():
            yield Static(Text("cursor-watch keys", style="bold"))
            yield Static(keys)
            yield Static(Text("\nheader states", style="bold"))
            yield Static(states)
            yield Static(Text("\nEscape closes this help.", style="dim"))
