"""The run view: one run's header, transcript, tool calls and diagnostics.

It shows one :class:`~cursor_watch.core.runs.Run`. The app feeds it the run's changes at most
15 times a second (``refresh_view``, inside ``App.batch_update()``: per-line UI updates are
~100x slower, ``design.md``); opened on a run that has been going for a while, it builds
itself from the model (the transcript's tail, every tool-call row, the diagnostics so far).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Footer, Static

from ...core import model as m
from ...core.runs import Run, RunActivity, run_elapsed_ms
from ...stream.sources import FileSource
from ..messages import RunsListRequested, host_of
from ..widgets.diagnostics import DiagnosticsPane
from ..widgets.header import LiveState, SessionHeader
from ..widgets.query_bar import QueryBar
from ..widgets.tool_table import ToolTable, ToolTableHeader
from ..widgets.transcript import Transcript
from ...query.search import Search
from .finder import Finder

IDLE_AFTER_S = 5.0  # no event for this long: the header says "idle for N s"
STACK_BELOW = 100  # columns: narrower, the transcript and the tool calls stack (run.tcss)


def _unread_line(first: m.UnknownEvent) -> str:
    """The diagnostics pane's one line for a stream in a format cursor-watch does not read (in
    place of a line per object): where it starts and the first object's keys."""
    return f"line {first.line} on: not an agent's events ({first.preview}), counted; --summary --json lists them"


class ToolsPane(Vertical):
    """The tool-call table and its column titles (maximised together with ``z``)."""

    ALLOW_MAXIMIZE = True


class FilterLine(Static):
    """Above the tool table's titles while a filter is on: the filter and ``N of M calls``."""

    DEFAULT_CSS = """
    FilterLine { height: 1; background: $warning 20%; display: none; }
    """


class RunScreen(Screen):
    """One run, live: header, transcript | tool calls, diagnostics (toggled), search and
    filter bars, footer. Search, filters and problem jumps: its :class:`~.finder.Finder` (``finder``).

    Args:
        run: the run shown.
        feed: its source's :class:`~cursor_watch.stream.watch.Feed` (source kind, progress, state).
        activity: the app's view state of the run (last event time).
        clock: epoch-ms clock; monotonic: seconds clock (tests freeze both).
        show_thinking: thinking blocks visible at start.
        several: the watch holds several runs (the header names the run).
    """

    CSS_PATH = "run.tcss"

    # the view's toggles, each a class of the screen that run.tcss styles
    stacked = var(False, toggle_class="-stacked")  # narrower than STACK_BELOW: the panes stack
    swapped = var(False, toggle_class="-swapped")  # s: stacked, the tool calls get the larger share
    diagnostics = var(False, toggle_class="-diagnostics")  # d: the diagnostics pane is shown

    BINDINGS = [
        Binding("escape", "back", "Runs", id="runs"),  # shown when there are runs to go back to
        Binding("escape", "clear_search_only", "Clear search", id="clear", show=False),  # else this
        Binding("left_square_bracket", "app.step_run(-1)", "Prev run", id="prev_run", show=False),
        Binding("right_square_bracket", "app.step_run(1)", "Next run", id="next_run", show=False),
        # the app's q and ? again, early, then s (shown only when the panes are stacked) and /: the
        # footer lists a screen's keys first and cuts the rest at 80 columns, where a new user
        # must still see how to quit, get help and swap the panes
        Binding("question_mark", "app.help", "All keys", id="help_here"),  # first: the footer may be cut
        Binding("q", "app.quit", "Quit", id="quit_here"),
        Binding("s", "swap_panes", "Swap", id="swap"),
        Binding("slash", "search", "Search", id="search"),
        Binding("f", "toggle_follow", "Follow", id="follow"),
        Binding("t", "toggle_thinking", "Thinking", id="thinking"),
        Binding("d", "toggle_diagnostics", "Diag", id="diagnostics"),
        Binding("z", "maximize_pane", "Zoom", id="zoom"),
        Binding("n", "next_match(1)", "Next match", id="next_match", show=False),
        Binding("N", "next_match(-1)", "Prev match", id="prev_match", show=False),
        Binding("x", "toggle_problems", "Problems", id="problems"),
        Binding("c", "toggle_subagent", "Fold sub-agent", id="fold", show=False),
        Binding("F", "filter", "Filter", id="filter"),
        Binding("p", "next_problem(1)", "Problem", id="next_problem"),
        Binding("P", "next_problem(-1)", "Prev problem", id="prev_problem", show=False),
        Binding("e", "export", "Export", id="export"),
        Binding("w", "context", "Context", id="context", show=False),
    ]

    def __init__(self, run: Run, feed: Any, activity: RunActivity, *, clock: Callable[[], float],
                 monotonic: Callable[[], float], show_thinking: bool = True, several: bool = False,
                 started_at: float | None = None) -> None:
        super().__init__()
        self.run = run
        self.feed = feed
        self.activity = activity
        self._clock = clock
        self._monotonic = monotonic
        self._show_thinking = show_thinking
        self.several = several
        self._started_at = started_at if started_at is not None else monotonic()
        self._last_slow_tick = 0.0
        self._seen_ts: int | None = None
        self._seen_ts_at = 0.0
        self._built = False
        self.preview: tuple[Any, str] | None = None  # (preview session, note) for a big file's tail
        self.finder = Finder(self)

    @property
    def session(self) -> m.Session:
        """The run's model."""
        return self.run.session

    # -- layout ------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield SessionHeader(id="header")
        with Horizontal(id="body"):
            yield Transcript(id="transcript", show_thinking=self._show_thinking)
            with ToolsPane(id="tools"):
                yield FilterLine(id="filter-line")
                yield ToolTableHeader()
                yield ToolTable(id="tool-table")
        yield DiagnosticsPane(id="diagnostics")
        yield QueryBar("/", "search the run: text, thinking, tool calls and their output (Ctrl+R: regex)",
                       regex_toggle=True, id="search-bar")
        yield QueryBar("filter", "status:failure tool:shell words… (x: problems only)", id="filter-bar")
        yield Footer()

    def on_resize(self, event: events.Resize) -> None:
        """Under :data:`STACK_BELOW` columns the panes stack (side by side, the transcript
        would get a third of 80 columns); ``s`` then swaps which one is large."""
        stacked = event.size.width < STACK_BELOW
        if stacked != self.stacked:
            self.stacked = stacked
            self.refresh_bindings()

    # -- search, filters, problems: the finder's ------------------------------------

    @property
    def search(self) -> Search | None:
        """The search on (its query and matches), or None."""
        return self.finder.search

    def current_payload_match(self, call_id: str) -> int:
        """See :meth:`.finder.Finder.current_payload_match`."""
        return self.finder.current_payload_match(call_id)

    def action_search(self) -> None:
        self.finder.open_search()

    def action_next_match(self, delta: int) -> None:
        self.finder.next_match(delta)

    def action_filter(self) -> None:
        self.finder.open_filter()

    def action_toggle_problems(self) -> None:
        self.finder.toggle_problems()

    def action_toggle_subagent(self) -> None:
        self.finder.toggle_subagent()

    def action_next_problem(self, delta: int) -> None:
        self.finder.next_problem(delta)

    def on_query_bar_changed(self, event: QueryBar.Changed) -> None:
        self.finder.bar_changed(event)

    def on_query_bar_regex_toggled(self, event: QueryBar.RegexToggled) -> None:
        self.finder.regex_toggled(event)

    def on_query_bar_submitted(self, event: QueryBar.Submitted) -> None:
        self.finder.bar_submitted(event)

    def on_query_bar_cleared(self, event: QueryBar.Cleared) -> None:
        self.finder.bar_cleared(event)

    def action_swap_panes(self) -> None:
        """``s`` (stacked panes): the tool calls get the larger share, or the transcript again."""
        if self.stacked:
            self.swapped = not self.swapped

    def on_mount(self) -> None:
        if self.preview is not None:
            self.query_one(Transcript).show_preview(*self.preview)
        self.query_one(ToolTable).focus()
        self.build()

    def build(self) -> None:
        """Show what the model holds already (a run opened after it started).

        Changes the app queued for this run before now are in the model already: they are
        dropped (a diagnostic would otherwise be listed twice).
        """
        host_of(self).discard_pending(self.run)
        s = self.session
        diagnostics = [f"line {d.line}: {d.message}" for d in s.diagnostics]
        if s.unread:  # a file no agent wrote: said once, not a line per object
            diagnostics += [_unread_line(s.unknown[0])] if s.unknown else []
        else:
            diagnostics += [f"line {u.line}: unknown event {u.label} ({u.preview})" for u in s.unknown]
        diagnostics += [f"source: {n.text}" for n in s.notes if n.kind == "source"]
        diagnostics += [f"stderr: {line}" for line in self.run.stderr]
        problem = host_of(self).export_problem  # --otlp: spans not sent (watch-wide)
        if problem:
            diagnostics.append(problem)
        self.query_one(DiagnosticsPane).add(diagnostics)
        self._built = True
        self.refresh_view([], [], force=True)

    def add_diagnostics(self, lines: list[str]) -> None:
        """Append lines to the diagnostics pane (the app's watch-wide problems: ``--otlp``)."""
        if self._built:
            self.query_one(DiagnosticsPane).add(lines)

    def on_unmount(self) -> None:
        self.finder._stop_search()  # a search's scan process ends with the view

    def end_preview(self) -> None:
        """The big file has been read: the transcript's real tail replaces the preview."""
        self.query_one(Transcript).end_preview()

    # -- view ------------------------------------------------------------------------

    def stream_now_ms(self) -> float:
        """"Now" on the stream's clock: the last ``timestamp_ms`` plus the wall time since.

        Running times are measured on it, so a replayed run shows its own durations
        (the stream's clock is the agent's), and a live one the real elapsed time.
        """
        s = self.session
        if s.last_ts_ms is None:
            return self._clock()
        now = self._monotonic()
        if s.last_ts_ms != self._seen_ts:
            self._seen_ts, self._seen_ts_at = s.last_ts_ms, now
        return s.last_ts_ms + (now - self._seen_ts_at) * 1000.0

    def live_state(self, watch_ended: bool = False) -> LiveState:
        """The header's state line, from the model, the source and the clocks."""
        s = self.session
        source = self.feed.source
        now = self._monotonic()
        label = source.label if source.kind not in ("file", "follow") else os.path.basename(source.label)
        if self.several and len(self.feed.runs) > 1:
            label += f" · run {self.run.index}"
        live = LiveState(source=label)
        last = self.feed.runs[-1] is self.run
        if source.kind == "process" and last:
            live.exit_status = source.exit_status
        if watch_ended or s.ended or s.result is not None:
            # a result ends the run even while a followed file or a child goes on
            live.state = s.status if s.status != "running" else "incomplete"
        elif s.events == 0 and s.invalid_lines == 0:
            live.state = "connecting"
        elif self.activity.last_event_at is not None and now - self.activity.last_event_at >= IDLE_AFTER_S:
            live.state = "idle"
            live.idle_s = now - self.activity.last_event_at
        else:
            live.state = "streaming"
        host = host_of(self)
        stall = host.stall_of(self.run) if live.state in ("streaming", "idle") else None
        if stall is not None:
            live.state, live.stall = "stalled", stall.label()
        quiet = host.quiet_of(self.run) if live.state in ("streaming", "idle") else None
        if quiet is not None:
            live.quiet, live.quiet_explained = quiet.label(), quiet.explained
        progress = source.progress() if isinstance(source, FileSource) else None
        if progress is not None and not watch_ended and live.state in ("streaming", "idle"):
            live.state, live.progress = "reading", progress
        live.elapsed_ms = run_elapsed_ms(self.run, self.activity, now)
        transcript = self.query_one(Transcript)
        live.following = transcript.following
        live.new_entries = transcript.new_while_paused
        return live

    def refresh_view(self, changes: list[tuple[str, Any]], stderr: list[str], force: bool = False,
                     watch_ended: bool = False) -> None:
        """Apply a batch of the run's changes to the widgets (the app's 15 Hz tick)."""
        if not self._built:
            return
        transcript = self.query_one(Transcript)
        table = self.query_one(ToolTable)
        diagnostics = self.query_one(DiagnosticsPane)
        header = self.query_one(SessionHeader)
        now = self._monotonic()
        s = self.session
        slow = force or now - self._last_slow_tick >= 1.0
        if not changes and not stderr and not slow and not transcript.behind(s):
            transcript.flush_streams(s)
            return
        now_ms = self.stream_now_ms()
        if changes or transcript.behind(s) or force:
            changes = list(dict.fromkeys(changes))
            transcript.sync(s, changes)
            lines = []
            calls = []
            for kind, key in changes:
                if kind in (m.CHANGE_TOOL_STARTED, m.CHANGE_TOOL_UPDATED, m.CHANGE_TOOL_DONE):
                    calls.append(key)
                elif kind == m.CHANGE_DIAGNOSTIC:
                    d = s.diagnostics[key]
                    lines.append(f"line {d.line}: {d.message}")
                elif kind == m.CHANGE_UNKNOWN:
                    u = s.unknown[key]
                    if not s.unread:
                        lines.append(f"line {u.line}: unknown event {u.label} ({u.preview})")
                    elif key == 0:  # a file no agent wrote: said once
                        lines.append(_unread_line(u))
                elif kind == m.CHANGE_NOTE and s.notes[key].kind == "source":
                    lines.append(f"source: {s.notes[key].text}")
            table.update(s, calls, now_ms, follow=transcript.following)
            diagnostics.add(lines)
            self.finder.changed(changes)
        diagnostics.add([f"stderr: {line}" for line in stderr])
        transcript.flush_streams(s)
        if slow:
            self._last_slow_tick = now
            table.tick(s, now_ms)
            self.finder.tick()
        header.show(s, self.live_state(watch_ended), force=slow)

    def refresh_now(self, watch_ended: bool = False) -> None:
        """Re-render the header at once (a key press shows its effect now)."""
        self._last_slow_tick = 0.0
        self.refresh_view([], [], watch_ended=watch_ended)

    # -- actions -------------------------------------------------------------------

    def action_toggle_follow(self) -> None:
        transcript = self.query_one(Transcript)
        transcript.follow(not transcript.following)
        self.refresh_now()

    def action_jump_end(self) -> None:
        self.query_one(Transcript).follow(True)
        table = self.query_one(ToolTable)
        if table.row_count:
            table.move_cursor(table.row_count - 1)
        self.refresh_now()

    def action_toggle_thinking(self) -> None:
        transcript = self.query_one(Transcript)
        transcript.set_thinking(not transcript.show_thinking)

    def action_toggle_diagnostics(self) -> None:
        self.diagnostics = not self.diagnostics
        pane = self.query_one(DiagnosticsPane)
        if not self.diagnostics and pane.has_focus:
            self.query_one(ToolTable).focus()

    def has_runs_list(self) -> bool:
        """True when Escape has a runs list to go back to: several runs (or sources, or a
        followed directory where more appear); with one run the footer doesn't offer it."""
        return host_of(self).several

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "back":
            return self.has_runs_list()
        if action == "swap_panes":
            return self.stacked  # only stacked panes swap (and only then is the key listed)
        return True

    def action_clear_search_only(self) -> None:
        """Escape with one run: clear a search (there is no runs list to go back to)."""
        finder = self.finder
        if finder.search is not None or finder.search_error or finder._search_bar().shown:
            finder.clear_search()

    def action_back(self) -> None:
        """Escape: clear a search (its bar still shown) first, then back to the runs list."""
        finder = self.finder
        if finder.search is not None or finder.search_error or finder._search_bar().shown:
            finder.clear_search()
            return
        self.post_message(RunsListRequested())

    def action_context(self) -> None:
        """``w``: the run's context window: size at each model call, sparkline, compactions."""
        from .context import ContextScreen

        self.app.push_screen(ContextScreen(self.session))

    def action_export(self) -> None:
        """``e``: write the run as one HTML file, ``cursor-watch-<session id>.html`` here.

        It re-reads every payload (about a second per 10,000 tool calls), so the notice
        that it started is drawn first.
        """
        self.notify("Exporting the run as HTML…", title="Export", timeout=2)
        self.call_after_refresh(self._export_now)

    def _export_now(self) -> None:
        from ...views.export import export_run_to

        try:
            path = export_run_to(self.run, redact=host_of(self).redact)
        except OSError as err:
            self.notify(f"Export failed: {err.strerror or err}", title="Export", severity="error")
            return
        self.notify(f"Exported to {os.path.abspath(path)}", title="Export", timeout=8)

    def action_maximize_pane(self) -> None:
        """``z``: the focused pane fills the screen; again restores the layout."""
        if self.maximized is not None:
            self.minimize()
            return
        focused = self.focused or self.query_one(ToolTable)
        self.maximize(focused)
