"""The Textual app: a live monitor over every watched run.

Data flow: a :class:`~cursor_watch.stream.watch.Watch` pumps the sources into the models on the
event loop and only records the changes; a timer applies them to the screen 15 times a
second inside ``App.batch_update()`` (per-line UI updates are ~100x slower: ``design.md``).
Views never parse JSON or decide format rules.

Screens: the runs list (:class:`~cursor_watch.tui.screens.runs.RunsScreen`, the base) and the
run view (:class:`~cursor_watch.tui.screens.run.RunScreen`) pushed on it. With one source the
app opens straight on its run; when a source turns out to hold several runs, or several
sources are watched, the list is where it starts.
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import sys
import time
from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from ..options import Options, Services
from ..outlets.alerts import Alert
from ..outlets.wiring import Outlets, start_outlets
from ..core.costs import run_cost, usage_of
from ..fmt import cost_label, short_duration
from ..core.canonical import agent_short
from ..core.limits import Stall
from ..core.quiet import Quiet
from ..core.model import Session
from ..stream.watch import Feed, Monitor, Watch
from ..core.runs import RunActivity, Run, is_live_state, last_activity, run_elapsed_ms, run_started_ms, run_state
from ..safe import redacting_views, visible_line
from ..output import served_in_browser
from .screens.help import HelpScreen
from .screens.run import RunScreen
from .messages import CompareRequested, DetailRequested, RunsListRequested
from .screens.runs import RunsScreen
from ..stream.sources import STREAM_SUFFIXES, FileSource, Source, SourceError, open_sources, scan_directory
from .widgets.runs_table import RunRow, RunsTable, make_text
from .widgets.tool_table import ToolTable
from .widgets.transcript import Transcript

TICK_HZ = 15
GC_THRESHOLDS = (5000, 20, 20)  # gc.set_threshold while the app runs (see on_mount)
PREVIEW_MIN_BYTES = 8 << 20  # files this big open on a preview of their tail
PREVIEW_BYTES = (256 << 10, 1 << 20, 4 << 20)  # tail sizes tried, in turn
OPEN_ON_LIST_S = 2.0  # a second run found this soon after start (or while replaying): open on the list
ALERT_SEVERITY = {"ended": "information", "failed": "error", "waiting": "warning", "stalled": "warning",
                  "budget": "error", "loop": "warning"}


def row_key(run: Run) -> tuple[str, int, int]:
    """A run's key in the runs list: source and index, and its identity (two pipes are both ``-``)."""
    return (run.source, run.index, id(run))


class CursorWatchApp(App):
    """The monitor over one :class:`~cursor_watch.stream.watch.Watch` (not yet run): the app runs it.

    Build it with :func:`make_app`, which also wires the watch's outlets (the alert stream, spans,
    metrics: :func:`cursor_watch.outlets.wiring.start_outlets`) to it.

    Args:
        watch: the sources to watch (its clock, epoch ms, is the model's and the tables').
        options: the command line (:class:`~cursor_watch.options.Options`): ``notify`` rings the
            bell and sends OSC 9 / OSC 777 desktop notifications for attention events; ``limits``
            (with a stall duration: ``--stall``) makes stalls alerts; ``redact`` (False with
            ``--no-redact``) redacts the ``e`` key's HTML export.
        monotonic: seconds clock for idle and elapsed time (tests freeze it).
        show_thinking: thinking blocks visible at start.
    """

    TITLE = "cursor-watch"
    BINDINGS = [
        Binding("question_mark", "help", "All keys", id="help"),  # first: the footer may be cut
        Binding("q", "quit", "Quit", id="quit"),
        # Ctrl+C ends the app as SIGINT ends cursor-watch everywhere else (exit status 130),
        # before any widget sees it (Textual's default only says "press ctrl+q to quit")
        Binding("ctrl+c", "interrupt", "Quit", id="interrupt", show=False, priority=True),
    ]

    def __init__(self, watch: Watch, options: Options | None = None, *,
                 monotonic: Callable[[], float] | None = None, show_thinking: bool = True) -> None:
        super().__init__()
        options = options or Options()
        self.options = options
        self.redact = options.redact  # the e key's export is redacted (--no-redact: not)
        self._clock = watch.clock
        self._monotonic = monotonic or time.monotonic
        start_ms, start_mono = self._clock(), self._monotonic()
        # alerts measure time on the monotonic clock, stamped from the wall clock at start
        self.alert_clock = lambda: start_ms + (self._monotonic() - start_mono) * 1000.0  # noqa: E731
        # stalls are shown (after 5 minutes without --stall) but sent and notified only with
        # --stall: the README's "alerts only with it" holds for the notifications, the bell and
        # the list's mark too
        limits = options.limits
        self.notify_stalls = limits is not None and limits.stall_s is not None
        self.watch = watch
        watch.listen(on_signal=self._on_signal, on_stderr=self._on_stderr)
        self.outlets = Outlets(watch)  # (make_app starts the options' outlets)
        self.several = len(watch.feeds) != 1 or bool(watch.directories)
        self.notify_terminal = options.notify
        self.export_problem: str | None = None  # --otlp: the latest "spans not sent" line (every run's pane)
        self._otlp_said: tuple[int, str] = (0, "")  # (unsent, reason) of the last line in a pane
        self.terminal_notifications: list[str] = []  # escape sequences sent (tests read them)
        self.attention_log: list[str] = []  # attention notifications shown, in order
        self.error: str | None = None
        self.ended = False
        self._shown: Run | None = None
        self._pending: list[tuple[str, Any]] = []
        self._stderr: list[str] = []
        self._activity: dict[int, RunActivity] = {}
        self._feed_by_source: dict[str, Feed] = {}
        self._rows: dict[int, RunRow] = {}
        self._dirty: set[int] = set()
        self._started_at = self._monotonic()
        self._last_slow_tick = 0.0
        self._watch_done = asyncio.Event()
        self._show_thinking = show_thinking
        self._quitting = False
        self._went_multi = False
        self._sizes: dict[str, int] = {}
        self._skipped: tuple[float, int] | None = None  # (when counted, files the directories skip)

    # -- runs and feeds ------------------------------------------------------------------

    @property
    def session(self) -> Session:
        """The shown run's model (the first run's before one is shown)."""
        return self._shown.session if self._shown is not None else self.watch.feeds[0].monitor.session

    @property
    def source(self) -> Source:
        """The first source (the only one when one is watched)."""
        return self.watch.source

    @property
    def shown_run(self) -> Run | None:
        """The run in the run view, if one is open."""
        return self._shown

    def feed_of(self, run: Run) -> Feed:
        """The source feed ``run`` came from."""
        feed = self._feed_by_source.get(run.source)
        if feed is None or run not in feed.runs:
            feed = self.watch.feed_of(run)
            if feed is None:  # every run shown comes from one of the watch's feeds
                raise LookupError(f"no feed holds run {run.index} of {run.source}")
            self._feed_by_source[run.source] = feed
        return feed

    def activity_of(self, run: Run) -> RunActivity:
        """The view state of ``run`` (made on first use)."""
        act = self._activity.get(id(run))
        if act is None:
            act = self._activity[id(run)] = RunActivity(self._clock())
        return act

    def all_runs(self) -> list[Run]:
        """Every run of every source, unreadable ones included (their empty first run)."""
        return [run for feed in self.watch.feeds for run in feed.runs]

    # -- start and end -----------------------------------------------------------------------

    def get_default_screen(self) -> Screen:
        return RunsScreen()

    def on_mount(self) -> None:
        # Python's full (generation 2) collections walk every object the app holds, every
        # 0.5 to 2 s while it draws: 20-70 ms in a live run, 100-270 ms with 100,000 tool
        # calls, each a frozen frame (bench/bench_tui.py). What exists now (modules,
        # Textual, these widgets) stays for the whole run: keep it out of them.
        gc.collect()
        gc.freeze()
        # Drawing allocates (strips, segments, their caches) thousands of short-lived objects
        # a frame; at Python's default thresholds (700, 10, 10) that made a full collection
        # every second or so while scrolling, 10-20 ms each, inside a frame. Collect the young
        # less often, and the old far less often (measured: none in 70 key presses).
        self._gc_thresholds = gc.get_threshold()
        gc.set_threshold(*GC_THRESHOLDS)
        if not self.several:
            self.open_run(self.watch.feeds[0].monitor.run, preview=True)
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
            screen = self._run_screen()
            if screen is not None:
                screen.end_preview()
            self.refresh_view()
            if all(isinstance(f.source, FileSource) and not f.source.follow for f in self.watch.feeds):
                # replayed files' models are final: keep them out of every later collection
                # (after the preview's widgets are gone, so they are not frozen with it)
                self.set_timer(1.0, self._freeze_model)

    def _freeze_model(self) -> None:
        gc.collect()
        gc.freeze()

    def on_unmount(self) -> None:
        gc.unfreeze()
        gc.set_threshold(*getattr(self, "_gc_thresholds", (700, 10, 10)))

    def tail_preview(self, feed: Feed) -> tuple[Session, str] | None:
        """A big file opens on its tail at once (toolong's trick, adapted).

        The model needs every event in order, so the whole file is replayed; until
        it is, the transcript shows a model of the file's last few hundred KB to 4 MB
        (from its first whole line) instead of replay bursts.
        """
        src = feed.source
        if not isinstance(src, FileSource) or src.follow:
            return None
        try:
            size = os.path.getsize(src.path)
            if size < PREVIEW_MIN_BYTES:
                return None
            with open(src.path, "rb") as f:
                for want in PREVIEW_BYTES:  # lines can be MBs long: widen until there is a tail
                    f.seek(max(0, size - want))
                    tail = f.read(want)
                    adapter = feed.monitor.reader.adapter  # the file's format, when known already
                    preview = Monitor(self._clock, fmt=adapter.name if adapter is not None else "auto", live=False,
                                      rules=feed.monitor.rules)
                    preview.feed(tail[tail.find(b"\n") + 1 :])
                    if len(preview.session.timeline) >= 10:
                        break
        except OSError:
            return None
        note = (f"… the end of a {size / 1e6:,.0f} MB file, shown while it is read "
                "(the header says how far); the full transcript tail replaces it when done")
        return preview.session, note

    # -- data in -------------------------------------------------------------------

    def _on_changes(self, run: Run, changes: list[tuple[str, Any]]) -> None:
        live = self.feed_of(run).live
        self.activity_of(run).observe(run, changes, self._monotonic(), live)
        if run is self._shown:
            self._pending.extend(changes)
        self._dirty.add(id(run))

    def discard_pending(self, run: Run) -> None:
        """Drop the changes and stderr lines queued for ``run``: its view was just built from
        the model, which holds them already."""
        if run is self._shown:
            self._pending = []
            self._stderr = []

    def _on_stderr(self, line: str) -> None:
        shown = self._shown
        if shown is not None and self.feed_of(shown).runs[-1] is shown:
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
        code = self.watch.signal_status  # a signal (or Ctrl+C) after the watch ended still counts
        if code is None:
            code = self.watch.exit_code if self.watch.exit_code is not None else 1
        self.exit(return_code=code)

    # -- view ------------------------------------------------------------------------

    def _run_screen(self) -> RunScreen | None:
        for screen in reversed(self.screen_stack):
            if isinstance(screen, RunScreen):
                return screen
        return None

    def run_view(self) -> RunScreen | None:
        """The run view in the screen stack (under a detail or help screen too), or None."""
        return self._run_screen()

    def refresh_view(self) -> None:
        """Apply pending model changes to the screen (the 15 Hz tick)."""
        if not self.is_running or self._quitting:
            return
        now = self._monotonic()
        slow = now - self._last_slow_tick >= 1.0
        if slow:
            self._last_slow_tick = now
        self._check_new_runs(now)
        self._raise_attention(now)
        if slow:
            self._check_export()
        screen = self.screen
        with self.batch_update():
            if isinstance(screen, RunScreen) and screen.run is self._shown:
                changes, self._pending = self._pending, []
                stderr, self._stderr = self._stderr, []
                screen.refresh_view(changes, stderr, watch_ended=self.ended)
            elif isinstance(screen, RunsScreen) and (self._dirty or slow or not self._rows):
                self.update_runs_list(screen, now)

    def _check_new_runs(self, now: float) -> None:
        """One source found to hold a second run: open on the list if it just started."""
        if self.several or self._went_multi or len(self.watch.feeds[0].runs) < 2:
            return
        self._went_multi = True
        self.several = True
        screen = self._run_screen()
        if screen is not None:
            screen.refresh_bindings()  # the footer offers Escape (the runs list) now
        feed = self.watch.feeds[0]
        replaying = isinstance(feed.source, FileSource) and not feed.source.follow and not feed.caught_up
        if screen is not None and (replaying or now - self._started_at < OPEN_ON_LIST_S):
            self.show_runs()
        else:
            self.notify("This stream holds several runs: Escape lists them, [ and ] move between them.",
                        title="New run")

    def _raise_attention(self, now: float) -> None:
        self.outlets.tick()  # the alert rules; the metrics' live, waiting, stalled (on the model's thread)

    def _check_export(self) -> None:
        """``--otlp``: spans that could not be sent, in the diagnostics pane: one line with the
        count so far and the reason, added to the pane of the run shown when the reason changes
        or the count has doubled since the last line (a dead backend adds a few lines an hour,
        not one a second); a run opened later shows the latest line only."""
        otlp = self.outlets.otlp
        if otlp is None:
            return
        from ..outlets.otlp import describe_endpoint, protocol, status_line

        status = otlp.status()
        unsent = status["unsent"] + status["errors"]
        said, reason = self._otlp_said
        if unsent <= said or (unsent < 2 * said and status["error"] == reason):
            return
        line = status_line(status, describe_endpoint(otlp.endpoint, protocol()))
        if line is None:
            return
        self._otlp_said = (unsent, status["error"])
        self.export_problem = line
        screen = self._run_screen()
        if screen is not None:
            screen.add_diagnostics([line])

    def _show_alert(self, alert: Alert) -> None:
        """An alert of the watch's alert stream: marked in the list, notified, rung (``--notify``).
        A stall is notified only with ``--stall`` (its state is shown either way)."""
        run = alert.source_run
        act = self.activity_of(run)
        self._dirty.add(id(run))
        if alert.kind == "stalled" and not self.notify_stalls:
            return
        act.mark = alert.details.get("status", alert.kind)
        if run is self._shown and alert.kind != "waiting":
            act.mark = ""  # it's on screen: nothing to point at in the list
        label = run.label(len(self.feed_of(run).runs) > 1)
        message = visible_line(f"{label}: {alert.text}")
        self.attention_log.append(message)
        self.notify(message, title="cursor-watch", severity=ALERT_SEVERITY[alert.kind])
        if self.notify_terminal:
            self.ring(visible_line(label), alert.text)

    def _enforced(self, alert: Alert) -> None:
        """``--enforce`` is stopping the command (a run went past a budget, or stalled with
        ``--stall``; exit status 3): said, and the app exits once it has ended."""
        self.notify(f"{alert.text}: stopping the command (--enforce)", title="cursor-watch", severity="error")
        self.call_later(self._exit_when_done)

    def stall_of(self, run: Run) -> Stall | None:
        """The run's stall now (shown in the header and the runs list), or None."""
        alerts = self.outlets.alerts
        return alerts.stall(run) if alerts is not None else None

    def quiet_of(self, run: Run) -> Quiet | None:
        """The live run's quiet and its reason, once it has lasted ``quiet.QUIET_SHOW_S`` (the
        header and the runs list say it), or None."""
        alerts = self.outlets.alerts
        return alerts.quiet(run) if alerts is not None else None

    def ring(self, title: str, body: str) -> None:
        """``--notify``: the terminal bell, then OSC 9 and OSC 777 desktop notifications.

        Terminals that don't know these sequences ignore them. Text from the stream is
        escaped first, and ``;`` (OSC 777's separator) replaced.
        """
        def clean(text: str) -> str:
            return visible_line(text).replace(";", ",")[:200]

        sequences = ["\a", f"\x1b]9;{clean(title)}: {clean(body)}\x07",
                     f"\x1b]777;notify;{clean(title)};{clean(body)}\x07"]
        self.terminal_notifications.extend(sequences)
        if not self.is_headless and self._driver is not None:
            for seq in sequences:
                self._driver.write(seq)

    def run_row(self, run: Run, now: float, now_ms: float) -> RunRow:
        """The runs-list row of ``run``."""
        feed = self.feed_of(run)
        act = self.activity_of(run)
        s = run.session
        src = feed.source
        reading = isinstance(src, FileSource) and feed.state == "reading" and not feed.caught_up
        progress = src.progress() if reading and not src.follow else None
        state = run_state(run, act, now, source_state=feed.state, source_error=feed.error, progress=progress)
        stall = self.stall_of(run) if is_live_state(state) and state != "waiting" else None
        activity = last_activity(run)
        if stall is not None:
            state = f"stalled {short_duration(stall.for_ms)}"
            activity = stall.label()
        elif is_live_state(state) and state != "waiting" and (quiet := self.quiet_of(run)) is not None:
            state = f"quiet {short_duration(quiet.for_ms)}"
            activity = quiet.why  # (the state says how long)
        elif s.loops.peak >= s.loops.limit:  # a loop says more than the last activity
            worst = s.loops.worst()
            if worst is not None:
                activity = "↻ " + worst.short()
        several = len(feed.runs) > 1
        path = src.path if isinstance(src, FileSource) else None
        started, file_time = run_started_ms(run, act, path) if (s.events or s.invalid_lines) else (None, False)
        elapsed = run_elapsed_ms(run, act, now)
        usage = usage_of(s)
        tokens = (usage.input_tokens, usage.output_tokens) if usage is not None else None
        cost = run_cost(s)
        cost_cell = cost_label(cost.reported, cost.estimate)  # an estimate says so: "≈ $0.42 est."
        first_line = (s.prompt or "").strip().split("\n", 1)[0]
        return RunRow(
            key=row_key(run), source=make_text(run.source_label + (f" #{run.index}" if several else ""), 1000),
            state=state, model=make_text(s.model or ("—" if s.events else ""), 60), prompt=make_text(first_line),
            started_ms=started, started_is_file_time=file_time, time_ms=elapsed, has_events=bool(s.events),
            counts=dict(s.tool_counts), tokens=tokens, cost=cost_cell,
            activity=make_text(activity), live=is_live_state(state), mark=act.mark, now_ms=now_ms,
            error=make_text(feed.error or "", 200), agent=agent_short(s.agent))

    def update_runs_list(self, screen: RunsScreen | None = None, now: float | None = None) -> None:
        """Rebuild the rows that changed (every live row once a second) and show them."""
        screen = screen if screen is not None else next(
            (s for s in self.screen_stack if isinstance(s, RunsScreen)), None)
        if screen is None:
            return
        now = self._monotonic() if now is None else now
        now_ms = self._clock()
        dirty = self._dirty
        rows = []
        for run in self.all_runs():
            row = self._rows.get(id(run))
            if row is None or id(run) in dirty or row.live:
                row = self._rows[id(run)] = self.run_row(run, now, now_ms)
            rows.append(row)
        if screen.show(rows, self.runs_summary(rows)):
            self._dirty = set()

    def runs_summary(self, rows: list[RunRow]) -> Text:
        """The line above the runs list."""
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(" cursor-watch ", style="bold reverse")
        feeds = self.watch.feeds
        t.append(f"  {len(rows):,} run{'s' if len(rows) != 1 else ''}", style="bold")
        t.append(f" in {len(feeds):,} source{'s' if len(feeds) != 1 else ''}", style="dim")
        live = sum(1 for r in rows if r.live)
        if live:
            t.append(f" · {live} live", style="cyan")
        files = [f for f in feeds if isinstance(f.source, FileSource)]
        pending = [f for f in files if not f.caught_up and f.error is None]
        if pending and not self.ended:
            total = done = 0
            for f in files:
                size = self._sizes.get(f.source.path)
                if size is None:
                    try:
                        size = self._sizes[f.source.path] = os.path.getsize(f.source.path)
                    except OSError:
                        size = self._sizes[f.source.path] = 0
                total += size
                done += size if f.caught_up else min(size, f.source.bytes_read)
            t.append(f" · reading {len(files) - len(pending)} of {len(files)} files "
                     f"({done / 1e6:,.0f} of {total / 1e6:,.0f} MB)", style="bold cyan")
        marked = sum(1 for r in rows if r.mark)
        if marked:
            t.append(f" · ● {marked} to look at", style="bold yellow")
        bad = sum(1 for f in feeds if f.error)
        if bad:
            t.append(f" · ⚠ {bad} unreadable", style="bold red")
        skipped = self.skipped_files()
        if skipped:
            kinds = "/".join(STREAM_SUFFIXES)
            t.append(f" · {skipped:,} skipped: not {kinds}", style="dim")
        if self.watch.directories and self.watch.follow:
            t.append("  watching " + ", ".join(visible_line(d) for d in self.watch.directories), style="dim")
        return t

    def skipped_files(self) -> int:
        """Files of the watched directories that are not read (their names don't end in
        :data:`~cursor_watch.stream.sources.STREAM_SUFFIXES`): counted at most every 5 s."""
        if not self.watch.directories:
            return 0
        now = self._monotonic()
        if self._skipped is None or (self.watch.follow and now - self._skipped[0] >= 5.0):
            self._skipped = (now, sum(len(scan_directory(d)[1]) for d in self.watch.directories))
        return self._skipped[1]

    def sorted_runs(self) -> list[Run]:
        """The runs in the list's order (live first, then newest first), as the list shows
        them: only those its filter (``/``) keeps."""
        now, now_ms = self._monotonic(), self._clock()
        by_key = {row_key(run): run for run in self.all_runs()}
        rows = [self._rows.get(id(run)) or self.run_row(run, now, now_ms) for run in by_key.values()]
        rows.sort(key=RunRow.sort_key)
        listing = next((s for s in self.screen_stack if isinstance(s, RunsScreen)), None)
        if listing is not None:
            rows = listing.filtered(rows)
        return [by_key[r.key] for r in rows]

    # -- navigation ------------------------------------------------------------------

    def open_run(self, run: Run, replace: bool = False, preview: bool = False) -> None:
        """Show ``run`` in the run view (pushed on the list, or replacing the run view)."""
        act = self.activity_of(run)
        if act.mark != "waiting" or not act.open_queries:
            act.mark = ""  # looked at
        self._dirty.add(id(run))
        screen = RunScreen(run, self.feed_of(run), act, clock=self._clock, monotonic=self._monotonic,
                           show_thinking=self._show_thinking, several=self.several, started_at=self._started_at)
        if preview:
            screen.preview = self.tail_preview(self.feed_of(run))
        self._shown = run
        self._pending = []
        self._stderr = []
        if replace:
            self.switch_screen(screen)
        else:
            self.push_screen(screen)

    def on_runs_table_selected(self, event: RunsTable.Selected) -> None:
        run = next((r for r in self.all_runs() if row_key(r) == event.key), None)
        if run is not None:
            self.open_run(run)

    def on_compare_requested(self, event: CompareRequested) -> None:
        """``c`` on the runs list: the comparison of the two picked runs."""
        runs = {row_key(r): r for r in self.all_runs()}
        a, b = runs.get(event.a), runs.get(event.b)
        if a is None or b is None:
            return
        from .screens.compare import CompareScreen  # (the comparison's module only when asked)

        self.push_screen(CompareScreen(a, b))

    def action_show_runs(self) -> None:
        """Back to the list, on the row of the run that was shown."""
        self.show_runs()

    def show_runs(self) -> None:
        """Pop the run view (and anything on it) back to the runs list."""
        shown = self._shown
        while len(self.screen_stack) > 1 and not isinstance(self.screen, RunsScreen):
            self.pop_screen()
        self._shown = None
        self._pending = []
        self._stderr = []
        self.update_runs_list()
        if shown is not None:
            try:
                self.screen.query_one(RunsTable).move_to_key(row_key(shown))
            except Exception:  # noqa: BLE001 - the list is not mounted yet
                pass

    def action_step_run(self, delta: int) -> None:
        """``[`` / ``]``: the previous / next run in the list's order, in the run view."""
        if self._shown is None:
            return
        order = self.sorted_runs()
        try:
            i = order.index(self._shown)
        except ValueError:
            return
        j = i + delta
        if 0 <= j < len(order):
            self.open_run(order[j], replace=True)
        else:
            self.notify("no more runs that way", timeout=1.5)

    # -- actions -------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("open_detail", "jump_end") and not isinstance(self.screen, RunScreen):
            return False
        return True

    def open_detail(self, call_id: str | None) -> None:
        """Push the detail screen of ``call_id`` (a call of the shown run); with a search on,
        its matches are highlighted and it opens at the current one."""
        run = self._shown
        if run is None or call_id is None:
            return
        call = run.session.tool_calls.get(call_id)
        if call is None:
            return
        # imported here: Pygments and the detail's widgets cost the first screen ~70 ms
        from .screens.detail import ToolDetailScreen

        screen = self._run_screen()
        search = screen.search if screen is not None else None
        if search is not None:
            self.push_screen(ToolDetailScreen(call, run.reread, search.query, screen.current_payload_match(call_id),
                                              session=run.session))
        else:
            self.push_screen(ToolDetailScreen(call, run.reread, session=run.session))

    def on_detail_requested(self, event: DetailRequested) -> None:
        self.open_detail(event.call_id)

    def on_runs_list_requested(self, event: RunsListRequested) -> None:
        self.show_runs()

    def on_tool_table_selected(self, event: ToolTable.Selected) -> None:
        self.open_detail(event.call_id)

    def on_transcript_call_selected(self, event: Transcript.CallSelected) -> None:
        self.open_detail(event.call_id)

    def action_open_detail(self) -> None:
        if isinstance(self.screen, RunScreen):
            self.open_detail(self.screen.query_one(ToolTable).selected_call_id())

    def action_jump_end(self) -> None:
        if isinstance(self.screen, RunScreen):
            self.screen.action_jump_end()

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def get_system_commands(self, screen: Screen):
        """The command palette (Ctrl+P): Textual's commands, then every action of the screen."""
        yield from super().get_system_commands(screen)
        if isinstance(screen, RunScreen):
            yield SystemCommand("Search the run", "/ : text, thinking, tool calls and their output", screen.action_search)
            yield SystemCommand("Next match", "n : the next search match", lambda: screen.action_next_match(1))
            yield SystemCommand("Previous match", "N : the previous search match", lambda: screen.action_next_match(-1))
            yield SystemCommand("Clear the search", "Escape in the search bar", screen.finder.clear_search)
            yield SystemCommand("Regular expression search on/off", "Ctrl+R in the search bar",
                                lambda: screen.query_one("#search-bar").action_toggle_regex())
            yield SystemCommand("Problems only", "x : only failed, rejected and incomplete tool calls (again: all)",
                                screen.action_toggle_problems)
            yield SystemCommand("Filter tool calls", "F : status:NAME tool:NAME and words", screen.action_filter)
            yield SystemCommand("Clear the tool-call filter", "every call again", screen.finder.clear_filter)
            yield SystemCommand("Next problem", "p : a failed, rejected or incomplete call, or an error note",
                                lambda: screen.action_next_problem(1))
            yield SystemCommand("Previous problem", "P", lambda: screen.action_next_problem(-1))
            yield SystemCommand("All runs", "Escape : back to the runs list", self.show_runs)
            yield SystemCommand("Previous run", "[", lambda: self.action_step_run(-1))
            yield SystemCommand("Next run", "]", lambda: self.action_step_run(1))
            yield SystemCommand("Follow on/off", "f", screen.action_toggle_follow)
            yield SystemCommand("Thinking on/off", "t", screen.action_toggle_thinking)
            yield SystemCommand("Diagnostics on/off", "d", screen.action_toggle_diagnostics)
            yield SystemCommand("Maximise the pane", "z", screen.action_maximize_pane)
            yield SystemCommand("Export this run as HTML", "e : cursor-watch-<session id>.html in this directory",
                                screen.action_export)
        elif isinstance(screen, RunsScreen):
            yield SystemCommand("Filter runs", "/ : by prompt, model, source or state", screen.action_filter_runs)

    def refresh_view_now(self) -> None:
        """Re-render the shown run's header at once."""
        if isinstance(self.screen, RunScreen):
            self.screen.refresh_now(self.ended)

    def action_interrupt(self) -> None:
        """Ctrl+C: what SIGINT does (the terminal sends a key, not the signal, to a full-screen
        app): a spawned command is terminated, then the app exits with status 130."""
        self.watch.interrupt(signal.SIGINT)

    async def action_quit(self) -> None:
        """Quit: stop watching (a spawned command is terminated), then exit."""
        self.watch.request_stop()
        await self._exit_when_done()


def make_app(watch: Watch, options: Options | None = None, services: Services | None = None, *,
             monotonic: Callable[[], float] | None = None) -> CursorWatchApp:
    """The app over ``watch`` (not yet run), its outlets started from ``options`` and ``services``
    (the alert stream always: stalls are shown; spans and metrics when asked for). The one way
    the app is built: the terminal (:func:`run_tui`), each browser tab of ``serve``, the tests and
    the screenshots. ``monotonic``: the seconds clock (tests freeze it)."""
    options = options or Options()
    services = services or Services()
    app = CursorWatchApp(watch, options, monotonic=monotonic)
    app.outlets = start_outlets(watch, options.outlets, deliverer=services.deliverer, metrics=services.metrics,
                                linger=False, clock=app.alert_clock, on_alert=app._show_alert,
                                on_note=app._on_changes, on_enforced=app._enforced)
    return app


def run_tui(opts: Options, services: Services) -> int:
    """Run the TUI for parsed command-line options; returns the exit status.

    With piped stdin, the stream is moved off fd 0 to a private descriptor and the
    terminal (``/dev/tty``) is put on fd 0, where Textual reads keys (``design.md``).

    Raises:
        SourceError: no input can be opened, or the command can't be started.
    """
    view_redactor = None
    if opts.redact and served_in_browser():
        # a browser tab (serve): what anyone with the page sees is redacted, as an export is
        from ..outlets.redact import default_redactor

        view_redactor = default_redactor()
    stdin_fd = None
    if not opts.command and (not opts.files or opts.files == ("-",)):
        stdin_fd = os.dup(0)
        tty = os.open("/dev/tty", os.O_RDWR)
        os.dup2(tty, 0)
        os.close(tty)
    sources, directories = open_sources(list(opts.files), list(opts.command) or None, follow=opts.follow,
                                        save_path=opts.save, stdin_fd=stdin_fd)
    if len(sources) == 1 and not directories:
        sources[0].precheck()  # one source that can't be opened: one line and exit 2, before the screen
    else:
        errors = []
        for source in sources:
            try:
                source.precheck()
            except SourceError as err:
                errors.append(str(err))
        if errors and len(errors) == len(sources) and not (directories and opts.follow):
            raise SourceError(errors[0] if len(errors) == 1 else f"no stream could be read: {errors[0]}")
    for source in sources:
        if source.kind in ("stdin", "process"):
            source.enable_spool()
    watch = Watch(sources, speed=opts.speed, result_grace=opts.result_grace, directories=directories,
                  follow=opts.follow, fmt=opts.format, rules=services.rules)
    app = make_app(watch, opts, services)
    try:
        with redacting_views(view_redactor):
            app.run()
        from ..views.export import write_export_file  # before the sources close: a pipe's payloads are in its spool

        write_export_file(opts.export, watch.runs(), opts.export_max_chars, opts.redact)
    finally:
        # the spans still queued sent (bounded), the deliveries waited for (bounded); what could
        # not be sent, and what failed, is said on stderr, after the screen
        app.outlets.finish()
        for feed in watch.feeds:
            feed.source.close()
        if watch.budget_stop:
            sys.stderr.write(f"cursor-watch: {visible_line(watch.budget_stop)}: stopped the command (--enforce)\n")
    from ..views.summary import write_json_out

    write_json_out(opts.json_out, watch.runs())
    if app.error:
        sys.stderr.write(f"cursor-watch: {app.error}\n")
        return 2
    if app.return_code is not None:
        return app.return_code
    return watch.exit_code if watch.exit_code is not None else 1
