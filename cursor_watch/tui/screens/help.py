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
    ("q, Ctrl+C", "quit (a spawned command is terminated); Ctrl+C exits with status 130, as SIGINT does"),
    ("Enter", "open the highlighted tool call's detail"),
    ("Escape", "back from a detail or this help; in a run, clear the search, then back to the runs list "
               "(with several runs)"),
    ("[ / ]", "the previous / next run"),
    ("f", "toggle follow (stick to the newest output)"),
    ("End", "jump to the latest and follow again"),
    ("Home", "in the transcript: the start of the run"),
    ("t", "show or hide thinking"),
    ("d", "show or hide diagnostics (invalid lines, unknown events, stderr)"),
    ("z", "maximise the focused pane (again to restore)"),
    ("s", "under 100 columns the panes stack: swap which one is large"),
    ("e", "export the run as one HTML file (cursor-watch-<session id>.html in this directory; never replaces "
          "a file: -2, -3...)"),
    ("w", "the context window: its size at each model call (a sparkline), compactions, the window's source "
          "(Claude Code; other agents report no per-call usage, and it says so)"),
    ("r", "in a tool call's detail: open or fold its raw arguments and result (the JSON as streamed)"),
    ("Tab / Shift+Tab", "move between transcript, tool calls and diagnostics"),
    ("↑ ↓ PgUp PgDn", "scroll or move in the focused pane"),
    ("Ctrl+P", "the command palette (every action by name)"),
    ("?", "this help"),
)
FIND_KEYS = (
    ("/", "search the run as you type: prompt, text, thinking, notes, tool summaries and payloads "
          "(arguments, shell output, file contents, diffs, fetched pages)"),
    ("Enter", "in the search bar: keep the search; on a match inside a tool call, open it at the match"),
    ("Escape", "in the search bar: clear the search"),
    ("Ctrl+R", "in the search bar: regular expression on/off"),
    ("n / N", "the next / previous match, in stream order, wrapping (i/N in the bar)"),
    ("x", "tool calls: problems only (failed, rejected, incomplete); again for all"),
    ("c", "fold the calls that ran inside the sub-agent under the cursor (indented └); again to unfold"),
    ("F", "filter tool calls: status:NAME tool:NAME and words (Escape clears)"),
    ("p / P", "the next / previous problem: a failed, rejected or incomplete call, or an error note"),
    ("/ (runs list)", "filter the runs by prompt, model, source or state"),
    ("Space (runs list)", "pick a run to compare (A, then B; again to unpick)"),
    ("c (runs list)", "compare the two picked runs (one picked: with the run under the cursor), as --compare A B"),
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
        find = Table.grid(padding=(0, 2))
        find.add_column(style="bold cyan", no_wrap=True)
        find.add_column()
        for k, v in FIND_KEYS:
            find.add_row(k, v)
        states = Table.grid(padding=(0, 2))
        states.add_column(style="bold", no_wrap=True)
        states.add_column()
        for k, v in STATES:
            states.add_row(k, v)
        with VerticalScroll():
            yield Static(Text("cursor-watch keys", style="bold"))
            yield Static(keys)
            yield Static(Text("\nfind things (smart case: case-insensitive unless you type a capital)", style="bold"))
            yield Static(find)
            yield Static(Text("\nheader states", style="bold"))
            yield Static(states)
            yield Static(Text("\nEscape closes this help.", style="dim"))
