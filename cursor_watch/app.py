"""The Textual app: a live monitor over the session model.

Data flow: a :class:`~cursor_watch.runner.Watch` pumps the source into the model
on the event loop and only records the changes; a timer applies them to the
widgets 15 times a second inside ``App.batch_update()`` (per-line UI updates are
~100x slower: ``design.md``). Views never parse JSON or decide format rules.
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer

from . import model as m
from .runner import RESULT_EXIT_GRACE_S, Monitor, Watch
from .screens.detail import ToolDetailScreen
from .screens.help import HelpScreen
from .sources import FileSource, Source, SourceError, open_source
from .widgets.diagnostics import DiagnosticsPane
from .widgets.header import LiveState, SessionHeader
from .widgets.tool_table import ToolTable, ToolTableHeader
from .widgets.transcript import ToolMarker, Transcript

TICK_HZ = 15
PREVIEW_MIN_BYTES = 8 << 20  # files this big open on a preview of their tail
PREVIEW_BYTES = (256 << 10, 1 << 20, 4 << 20)  # tail sizes tried, in turn
IDLE_AFTER_S = 5.0  # no event for this long: the header says "idle for N s"


class CursorWatchApp(App):
    """The monitor. Build it with a (not yet started) source; it runs the watch itself.

    Args:
        source: where the stream comes from.
        speed: replay pace for a file (0 = as fast as possible).
        result_grace: seconds a spawned command may run on after its ``result``.
        clock: epoch-ms clock for the model and the tool table (tests freeze it).
        monotonic: seconds clock for idle and elapsed time (tests freeze it).
        install_signals: handle SIGINT/SIGTERM/SIGHUP (terminate the child, restore
            the terminal, exit 128+N); off in tests.
        show_thinking: thinking blocks visible at start.
    """

    TITLE = "cursor-watch"
    CSS_PATH = "app.tcss"
    BINDINGS = [
        Binding("q", "quit", "Quit", id="quit"),
        Binding("f", "toggle_follow", "Follow", id="follow"),
        Binding("t", "toggle_thinking", "Thinking", id="thinking"),
        Binding("d", "toggle_diagnostics", "Diagnostics", id="diagnostics"),
        Binding("question_mark", "help", "Help", id="help"),
    ]
    # actions that only make sense on the main screen (hidden from the footer elsewhere)
    MAIN_ACTIONS = frozenset({"open_detail", "toggle_follow", "jump_end", "toggle_thinking", "toggle_diagnostics"})

    def __init__(
        self,
        source: Source,
        *,
        speed: float = 0.0,
        result_grace: float = RESULT_EXIT_GRACE_S,
        clock: Callable[[], float] | None = None,
        monotonic: Callable[[], float] | None = None,
        install_signals: bool = True,
        show_thinking: bool = True,
    ) -> None:
        super().__init__()
        self._clock = clock or (lambda: time.time() * 1000.0)
        self._monotonic = monotonic or time.monotonic
        self.source = source
        self.watch = Watch(source, speed=speed, result_grace=result_grace, on_signal=self._on_signal,
                           install_signals=install_signals, clock=self._clock, on_stderr=self._on_stderr)
        self.session = self.watch.monitor.session
        self.error: str | None = None
        self.ended = False
        self._pending: list[tuple[str, Any]] = []
        self._stderr: list[str] = []
        self._started_at = self._monotonic()
        self._last_event_at: float | None = None
        self._last_slow_tick = 0.0
        self._watch_done = asyncio.Event()
        self._show_thinking = show_thinking
        self._quitting = False
        self._seen_ts: int | None = None
        self._seen_ts_at = 0.0

    # -- layout ------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield SessionHeader(id="header")
        with Horizontal(id="body"):
            yield Transcript(id="transcript", show_thinking=self._show_thinking)
            with Vertical(id="tools"):
                yield ToolTableHeader()
                yield ToolTable(id="tool-table")
        yield DiagnosticsPane(id="diagnostics")
        yield Footer()

    def on_mount(self) -> None:
        # Python's full (generation 2) collections walk every object the app holds, every
        # 0.5 to 2 s while it draws: 20-70 ms in a live run, 100-270 ms with 100,000 tool
        # calls, each a frozen frame (bench/bench_tui.py). What exists now (modules,
        # Textual, these widgets) stays for the whole run: keep it out of them.
        gc.collect()
        gc.freeze()
        self.show_tail_preview()
        self.query_one(ToolTable).focus()
        self.set_interval(1 / TICK_HZ, self.refresh_view)
        self.run_worker(self._run_watch(), name="watch", exit_on_error=False)
        self.refresh_view()

    async def _run_watch(self) -> None:
        try:
            await self.watch.run(self._on_changes, close=False)
        except SourceError as err:
            self.error = str(err)
            self.exit(return_code=2)
        finally:
            self.ended = True
            self._watch_done.set()
            self.query_one(Transcript).end_preview()
            self.refresh_view()
            if isinstance(self.source, FileSource) and not self.source.follow:
                # a replayed file's model is final: keep it out of every later collection
                # (after the preview's widgets are gone, so they are not frozen with it)
                self.set_timer(1.0, self._freeze_model)

    def _freeze_model(self) -> None:
        gc.collect()
        gc.freeze()

    def on_unmount(self) -> None:
        gc.unfreeze()

    def show_tail_preview(self) -> None:
        """A big file opens on its tail at once (toolong's trick, adapted).

        The model needs every event in order, so the whole file is replayed; until
        it is, the transcript shows a model of the file's last few hundred KB to 4 MB
        (from its first whole line) instead of replay bursts.
        """
        src = self.source
        if not isinstance(src, FileSource) or src.follow:
            return
        try:
            size = os.path.getsize(src.path)
            if size < PREVIEW_MIN_BYTES:
                return
            with open(src.path, "rb") as f:
                for want in PREVIEW_BYTES:  # lines can be MBs long: widen until there is a tail
                    f.seek(max(0, size - want))
                    tail = f.read(want)
                    preview = Monitor(self._clock)
                    preview.feed(tail[tail.find(b"\n") + 1 :])
                    if len(preview.session.timeline) >= 10:
                        break
        except OSError:
            return
        note = (f"… the end of a {size / 1e6:,.0f} MB file, shown while it is read "
                "(the header says how far); the full transcript tail replaces it when done")
        self.query_one(Transcript).show_preview(preview.session, note)

    # -- data in -------------------------------------------------------------------

    def _on_changes(self, run, changes: list[tuple[str, Any]]) -> None:
        self._pending.extend(changes)
        self._last_event_at = self._monotonic()

    def _on_stderr(self, line: str) -> None:
        self._stderr.append(line)

    def _on_signal(self, signum: int) -> None:
        self.call_later(self._exit_when_done)

    async def _exit_when_done(self) -> None:
        """Exit once the watch has stopped (a child terminated), with its exit status."""
        try:
            await asyncio.wait_for(self._watch_done.wait(), self.watch.source_grace + 2)
        except TimeoutError:
            pass
        self._quitting = True
        self.exit(return_code=self.watch.exit_code if self.watch.exit_code is not None else 1)

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

    def live_state(self) -> LiveState:
        """The header's state line, from the model and the clocks."""
        s = self.session
        now = self._monotonic()
        live = LiveState(source=self.source.label if self.source.kind != "file" else os.path.basename(self.source.label))
        if self.source.kind == "process":
            live.exit_status = self.source.exit_status
        if self.ended or s.ended or s.result is not None:
            # a result ends the run even while a followed file or a child goes on
            live.state = s.status if s.status != "running" else "incomplete"
        elif s.events == 0 and s.invalid_lines == 0:
            live.state = "connecting"
        elif self._last_event_at is not None and now - self._last_event_at >= IDLE_AFTER_S:
            live.state = "idle"
            live.idle_s = now - self._last_event_at
        else:
            live.state = "streaming"
        progress = self.source.progress() if isinstance(self.source, FileSource) else None
        if progress is not None and not self.ended and live.state in ("streaming", "idle"):
            live.state, live.progress = "reading", progress
        if s.result is not None and s.result.duration_ms is not None:
            live.elapsed_ms = s.result.duration_ms
        elif isinstance(self.source, FileSource) and not self.source.follow and s.first_ts_ms is not None:
            live.elapsed_ms = (s.last_ts_ms or s.first_ts_ms) - s.first_ts_ms
        else:
            live.elapsed_ms = (now - self._started_at) * 1000.0
        transcript = self.query_one(Transcript)
        live.following = transcript.following
        live.new_entries = transcript.new_while_paused
        return live

    def refresh_view(self) -> None:
        """Apply pending model changes to the widgets (the 15 Hz tick)."""
        if not self.is_running or self._quitting:
            return
        try:
            transcript = self.query_one(Transcript)
            table = self.query_one(ToolTable)
            diagnostics = self.query_one(DiagnosticsPane)
            header = self.query_one(SessionHeader)
        except Exception:  # noqa: BLE001 - a screen is on top and the tick came early
            return
        changes, self._pending = self._pending, []
        stderr, self._stderr = self._stderr, []
        now = self._monotonic()
        s = self.session
        slow = now - self._last_slow_tick >= 1.0
        if not changes and not stderr and not slow:
            transcript.flush_streams(s)
            return
        now_ms = self.stream_now_ms()
        with self.batch_update():
            if changes or transcript.behind(s):
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
                        lines.append(f"line {u.line}: unknown event {u.type}/{u.subtype} ({u.preview})")
                    elif kind == m.CHANGE_NOTE and s.notes[key].kind == "source":
                        lines.append(f"source: {s.notes[key].text}")
                table.update(s, calls, now_ms, follow=transcript.following)
                diagnostics.add(lines)
            diagnostics.add([f"stderr: {line}" for line in stderr])
            transcript.flush_streams(s)
            if slow:
                self._last_slow_tick = now
                table.tick(s, now_ms)
            header.show(s, self.live_state())

    # -- actions -------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in self.MAIN_ACTIONS and self.screen is not self.screen_stack[0]:
            return False
        return True

    def open_detail(self, call_id: str | None) -> None:
        """Push the detail screen of ``call_id``."""
        call = self.session.tool_calls.get(call_id) if call_id is not None else None
        if call is None:
            return
        self.push_screen(ToolDetailScreen(call, self.source.reread))

    def on_tool_table_selected(self, event: ToolTable.Selected) -> None:
        self.open_detail(event.call_id)

    def on_tool_marker_selected(self, event: ToolMarker.Selected) -> None:
        self.open_detail(event.call_id)

    def action_open_detail(self) -> None:
        self.open_detail(self.query_one(ToolTable).selected_call_id())

    def action_toggle_follow(self) -> None:
        transcript = self.query_one(Transcript)
        transcript.follow(not transcript.following)
        self.refresh_view_now()

    def action_jump_end(self) -> None:
        self.query_one(Transcript).follow(True)
        table = self.query_one(ToolTable)
        if table.row_count:
            table.move_cursor(table.row_count - 1)
        self.refresh_view_now()

    def action_toggle_thinking(self) -> None:
        transcript = self.query_one(Transcript)
        transcript.set_thinking(not transcript.show_thinking)

    def action_toggle_diagnostics(self) -> None:
        pane = self.query_one(DiagnosticsPane)
        pane.toggle_class("-shown")
        if not pane.has_class("-shown") and pane.has_focus:
            self.query_one(ToolTable).focus()

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def refresh_view_now(self) -> None:
        """Re-render the header at once (a key press shows its effect now)."""
        self._last_slow_tick = 0.0
        self.refresh_view()

    async def action_quit(self) -> None:
        """Quit: stop watching (a spawned command is terminated), then exit."""
        self.watch.request_stop()
        await self._exit_when_done()


def run_tui(opts) -> int:
    """Run the TUI for parsed command-line options; returns the exit status.

    With piped stdin, the stream is moved off fd 0 to a private descriptor and the
    terminal (``/dev/tty``) is put on fd 0, where Textual reads keys (``design.md``).

    Raises:
        SourceError: the input can't be opened or the command can't be started.
    """
    stdin_fd = None
    if not opts.command and opts.file in (None, "-"):
        stdin_fd = os.dup(0)
        tty = os.open("/dev/tty", os.O_RDWR)
        os.dup2(tty, 0)
        os.close(tty)
    source = open_source(opts.file, opts.command or None, follow=opts.follow, save_path=opts.save, stdin_fd=stdin_fd)
    source.precheck()
    if source.kind in ("stdin", "process"):
        source.enable_spool()
    app = CursorWatchApp(source, speed=opts.speed, result_grace=opts.result_grace)
    try:
        app.run()
    finally:
        source.close()
    from .plain import write_json_out

    write_json_out(opts.json_out, app.watch.runs())
    if app.error:
        sys.stderr.write(f"cursor-watch: {app.error}\n")
        return 2
    if app.return_code is not None:
        return app.return_code
    return app.watch.exit_code if app.watch.exit_code is not None else 1
