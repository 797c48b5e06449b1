"""Runs: one stream may hold several agent runs, and many streams may be watched at once.

People run agents in loops (``while ...; do cursor-agent ... >> log.jsonl; done``), resume
sessions (``--resume`` prints a new ``system/init`` into the same log) and keep directories of
logs. A **run** is the events from one ``system/init`` up to the next ``system/init`` or the end
of its source; lines before the first ``init`` belong to the first run (every real
capture starts with ``init``, reference section 2.1, but a cut log may not). Each run is its own
:class:`~cursor_watch.core.model.Session`: the reducer itself never learns about other runs.

:class:`RunSplitter` routes one source's parsed items to the session of the run they belong to;
:class:`Run` is one run with where it came from. Line numbers and byte offsets stay those of the
source (a diagnostic's line is the line in the file; a tool call's span re-reads the source).
"""

from __future__ import annotations

import datetime as dt
import os
import re
import signal
from collections.abc import Callable
from typing import Any

from .canonical import RunEnd, RunStart
from ..fmt import format_ms, plural
from .model import Session
from ..safe import visible_line

CHANGE_RUN = "run"  # key: the Run that the following changes belong to (a new run began)
STDERR_TAIL = 200  # stderr lines of a spawned command kept per run


class Run:
    """One agent run inside a source.

    Attributes:
        source: what the run was read from: a path, ``-`` for stdin, or the spawned command.
        source_label: the short name views show (a file's base name, ``stdin``, the command).
        index: 1-based position of the run within its source.
        session: the run's model.
        first_line: 1-based physical line of the source where the run begins.
        last_line: last physical line of the source read into this run so far.
        stderr: stderr lines of a spawned command that arrived during this run (the newest
            :data:`STDERR_TAIL`).
        reread: ``(offset, size) -> bytes`` re-reading the source (payloads, by byte offset).
        exit_status: the spawned command's exit status when this is its last run, else None.
        first_offset: stream byte offset where the run begins (its ``init`` line, or an adapter's
            ``run_first_offset``; 0 for the first run of a source).
        end_offset: where the next run begins, or None while it is its source's last run.
        last_event: ``(type, subtype, line, timestamp_ms or None)`` of the newest event read
            into the run (set by :class:`~cursor_watch.stream.watch.Monitor`), or None.
        end_reason: why the run ended without a ``result`` when that is known (``the file
            was truncated``, ``the child was killed by signal 15 (SIGTERM)``...), else None.
        observed_until_stop: True when cursor-watch stopped watching while the run was still
            going (a followed file, a pipe or a replay cut short by a signal or a quit; set by
            :class:`~cursor_watch.stream.watch.Watch`): it has no ``result`` because we stopped
            reading, not because it failed. Alerts and ``--otlp`` don't call it failed. A
            spawned command that cursor-watch stops is not one of these: its run really ended.
    """

    __slots__ = ("source", "source_label", "index", "session", "first_line", "last_line", "stderr", "reread",
                 "has_init", "first_offset", "end_offset", "last_event", "end_reason", "observed_until_stop",
                 "start_line")

    def __init__(self, source: str, source_label: str, index: int, session: Session, first_line: int,
                 reread: Callable[[int, int], bytes]) -> None:
        self.source = source
        self.source_label = source_label
        self.index = index
        self.session = session
        self.first_line = first_line
        self.last_line = first_line - 1
        self.stderr: list[str] = []
        self.reread = reread
        self.has_init = False
        self.first_offset = 0
        self.end_offset: int | None = None
        self.last_event: tuple[str, str, int, int | None] | None = None
        self.end_reason: str | None = None
        self.observed_until_stop = False
        self.start_line: int | None = None  # the line of the event that began it (its run start)

    @property
    def cut_short(self) -> bool:
        """cursor-watch stopped watching while the run went on (:attr:`observed_until_stop`) and
        it has no ``result`` (one read at the very end, after the stop, does end it): not an
        outcome, so no ``failed`` alert, no run span, no incomplete tool span."""
        return self.observed_until_stop and self.session.result is None

    @property
    def key(self) -> tuple[str, int]:
        """``(source, run index)``: the order of ``--summary`` output (by source path, then run)."""
        return (self.source, self.index)

    def label(self, several: bool = True) -> str:
        """``a.jsonl`` or ``a.jsonl · run 2`` (the run number when its source holds several)."""
        return f"{self.source_label} · run {self.index}" if several else self.source_label

    def add_stderr(self, line: str) -> None:
        """Keep a stderr line of the spawned command (bounded)."""
        self.stderr.append(line)
        if len(self.stderr) > STDERR_TAIL:
            del self.stderr[: len(self.stderr) - STDERR_TAIL]

    def __repr__(self) -> str:
        return f"Run({self.source!r}, {self.index}, {self.session.status})"


def source_name(label: str, kind: str) -> str:
    """The short source name shown in lists: a file's base name, else the label."""
    if kind in ("file", "follow"):
        return os.path.basename(label.rstrip("/")) or label
    return label


class RunSplitter:
    """Routes one source's items to one :class:`~cursor_watch.core.model.Session` per run.

    :meth:`apply` returns the changes an item caused (see ``model.CHANGE_*``). When an
    ``init`` begins a new run, the previous run is finished first (its running tool calls
    become ``incomplete``, its end is reported) and ``(CHANGE_RUN, run)`` is put before
    the new run's changes, so one flat list of changes can carry several runs.

    Args:
        source: the source's path, ``-`` or command (see :attr:`Run.source`).
        source_label: its short name.
        make_session: builds a new Session (the clock and spill settings are the caller's).
        reread: re-reads the source by byte offset.
    """

    __slots__ = ("runs", "current", "_source", "_label", "_make_session", "_reread", "switches", "open_runs")

    def __init__(self, source: str, source_label: str, make_session: Callable[[], Session],
                 reread: Callable[[int, int], bytes]) -> None:
        self._source = source
        self._label = source_label
        self._make_session = make_session
        self._reread = reread
        self.runs: list[Run] = []
        self.switches = 0  # CHANGE_RUN markers given so far (lets callers skip looking for them)
        # runs kept open for an end still to come (RunStart.previous_open), by their start line
        self.open_runs: dict[int, Run] = {}
        self.current = self._new_run(1)

    def _new_run(self, first_line: int) -> Run:
        run = Run(self._source, self._label, len(self.runs) + 1, self._make_session(), first_line, self._reread)
        self.runs.append(run)
        return run

    def starts_run(self, item: Any) -> bool:
        """True when ``item`` is a :class:`~cursor_watch.core.canonical.RunStart` (not ``implicit``)
        that begins a new run: the current run has had its own."""
        return item.__class__ is RunStart and not item.implicit and self.current.has_init

    def begin_run(self, item: RunStart) -> list[tuple[str, Any]]:
        """End the current run at ``item`` (a run start) and start the next one.

        Returns the old run's end changes followed by ``(CHANGE_RUN, new run)``.
        """
        old = self.current
        # a run start may say its run began on an earlier line (Claude Code's SessionStart hook
        # events, which its adapter gives after the init: RunStart.first_line / first_offset)
        first, offset = item.first_line, item.first_offset
        if not (first is not None and offset is not None and old.first_line < first <= item.line
                and old.first_offset <= offset <= item.offset):
            first, offset = item.line, item.offset
        old.session.lines = first - old.first_line
        old.last_line = first - 1
        if item.previous_open and old.start_line is not None:
            # its end comes later (a background task held it back): the run stays open for it
            self.open_runs[old.start_line] = old
            changes: list[tuple[str, Any]] = []
        else:
            changes = finish_run(old, reason=f"a new run began on line {first} (a new system/init)")
        run = self._new_run(first)
        run.first_offset = old.end_offset = offset
        self.current = run
        self.switches += 1
        changes.append((CHANGE_RUN, run))
        return changes

    def restart(self, line: int, offset: int, reason: str) -> list[tuple[str, Any]]:
        """The source started over (a followed file was truncated or replaced): the current
        run ends here, cut, and what follows is a new run (from ``line``, byte ``offset``).

        Returns the old run's end changes followed by ``(CHANGE_RUN, new run)``.
        """
        old = self.current
        old.last_line = line - 1
        changes = finish_run(old, reason=reason)
        run = self._new_run(line)
        run.first_offset = old.end_offset = offset
        self.current = run
        self.switches += 1
        changes.append((CHANGE_RUN, run))
        return changes

    def apply(self, item: Any) -> list[tuple[str, Any]]:
        """Apply one canonical event (or invalid line) to the run it belongs to; returns its changes.

        The end of a run kept open (:attr:`open_runs`) goes to that run, and ends it: its
        changes come between ``(CHANGE_RUN, that run)`` and ``(CHANGE_RUN, current run)``."""
        changes: list[tuple[str, Any]] = []
        if item.__class__ is RunEnd and item.run_line is not None:
            old = self.open_runs.pop(item.run_line, None)
            if old is not None:
                self.switches += 2
                changes = [(CHANGE_RUN, old), *old.session.apply(item), *finish_run(old), (CHANGE_RUN, self.current)]
                return changes
        if self.starts_run(item):
            changes = self.begin_run(item)
        run = self.current
        if item.__class__ is RunStart and not item.implicit:
            run.has_init = True
            if run.start_line is None:
                run.start_line = item.line
        changes += run.session.apply(item)
        return changes

    def count_lines(self, lines_seen: int) -> None:
        """The source has ``lines_seen`` physical lines so far: the current run ends there."""
        run = self.current
        run.session.lines = lines_seen - run.first_line + 1
        run.last_line = lines_seen


# -- how a run ended ------------------------------------------------------------------------

NO_RESULT_WORDS = "stream ended without a result"  # people and scripts grep for these words
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[PX^_][^\x1b]*\x1b\\|[@-Z\\-_])|\x9b[0-?]*[ -/]*[@-~]")
QUOTE_CHARS = 120  # characters of the first rejected line quoted in the end note


def strip_escapes(text: str) -> str:
    """``text`` without terminal escape sequences (CSI colours, OSC titles and links,
    DCS...), its other control characters shown escaped (:func:`~cursor_watch.safe.visible_line`).

    ``"\\x1b[31mError\\x1b[0m: boom"`` -> ``"Error: boom"``.
    """
    return visible_line(_ANSI.sub("", text))


def signal_words(status: int | None) -> str | None:
    """``the child was killed by signal 15 (SIGTERM)`` for an exit status 128+N, else None."""
    if status is None or not 128 < status < 128 + 65:
        return None
    num = status - 128
    try:
        name = signal.Signals(num).name
    except ValueError:
        return f"the child was killed by signal {num}"
    return f"the child was killed by signal {num} ({name})"


def _clock_time(ms: int) -> str:
    """``2026-09-28 01:46:41 UTC`` (UTC: plain output is the same on every machine);
    ``timestamp_ms 99999999999999999999 (not a date)`` for a value no date has."""
    try:
        return dt.datetime.fromtimestamp(ms / 1000.0, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):  # a hostile stream's timestamp_ms
        return f"timestamp_ms {ms} (not a date)"


def first_rejected_line(run: Run) -> str | None:
    """The run's first rejected line, re-read from the source by its byte span (its
    diagnostic's preview when the source can't be re-read), escapes removed, at most
    :data:`QUOTE_CHARS` characters; None when no line was rejected."""
    s = run.session
    return _quote(run, s.diagnostics[0]) if s.diagnostics else None


def _quote(run: Run, d: Any) -> str:
    """A rejected line's text (:func:`first_rejected_line`'s rules) from its diagnostic ``d``."""
    raw = b""
    try:
        raw = run.reread(d.offset, min(d.size, QUOTE_CHARS * 4))
    except Exception:  # noqa: BLE001 - a source that can't be re-read: the preview is quoted
        raw = b""
    text = raw.decode("utf-8", "replace").rstrip("\r\n") if raw else d.message.split(": ", 1)[-1]
    # a byte order mark is the stream's encoding, not the line's text (the preview has none)
    text = strip_escapes(text.lstrip("\ufeff")).strip()
    if len(text) > QUOTE_CHARS:
        text = text[:QUOTE_CHARS] + "…"
    return text


def last_words(run: Run) -> str | None:
    """The line that is not stream-json when it is the last thing the run's stream said (after
    its last event): a CLI's own error (``RetriableError: [invalid_argument] unknown option
    '--system-prompt'``) is why such a run ended. ``line N is not stream-json: "…"``, or None."""
    s = run.session
    n = len(s.diagnostics)
    if not n or not s.invalid_lines or len(s.diagnostics) < s.invalid_lines:  # (the list is capped)
        return None
    d = s.diagnostics[n - 1]
    last = run.last_event
    if last is not None and d.line < last[2] or d.message.startswith("event could not be applied"):
        return None
    return f'line {d.line} is not stream-json: "{_quote(run, d)}"'


def end_note(run: Run, reason: str | None = None) -> str:
    """Why a run that has no ``result`` ended, in words:

    - ``no events: the input was empty`` (nothing at all, or blank lines only: ``N blank lines``),
    - ``no events: N lines, none of them stream-json; the first: "…"`` (escapes removed),
    - ``no agent events: 17 JSON objects (lines 1-17) in a format cursor-watch does not read``
      (:attr:`~cursor_watch.core.model.Session.unread`: what the file looks like is its first note),
    - ``stream ended without a result after N events; last event tool_call/completed on line 14
      at 2026-10-03 14:03:07 UTC (+21.5 s)`` (``no times recorded`` when no event carried
      ``timestamp_ms``),

    each followed by ``; reason`` when one is known (a signal, a truncated file, a new run).
    Times are the event's own ``timestamp_ms`` (else the newest one seen) in UTC.
    """
    s = run.session
    if s.events == 0:
        if s.invalid_lines:
            n = s.invalid_lines
            text = f"no events: {plural(n, 'line')}, none of them stream-json"
            first = first_rejected_line(run)
            if first is not None:
                text += f"; the first: \"{first}\""
        elif s.lines > 0:
            text = f"no events: {plural(s.lines, 'blank line')}"
        else:
            text = "no events: the input was empty"
    elif s.unread and s.unknown_events == s.events:  # said once, not as its last "event"
        text = f"no agent events: {s.unread_words()}"
        if s.invalid_lines:
            text += f", and {plural(s.invalid_lines, 'line')} not JSON"
    else:
        text = f"{NO_RESULT_WORDS} after {plural(s.events, 'event')}"
        last = run.last_event
        if last is not None:
            kind = (last[0] or "(no type)") + (f"/{last[1]}" if last[1] else "")
            text += f"; last event {visible_line(kind)} on line {last[2]}"
            ts = last[3] if last[3] is not None else s.last_ts_ms
            if ts is not None:
                text += f" at {_clock_time(ts)}"
                if s.first_ts_ms is not None and ts >= s.first_ts_ms:
                    text += f" (+{format_ms(ts - s.first_ts_ms)})"
                if last[3] is None:
                    text += " (the last time recorded)"
            else:
                text += ", no times recorded"
        elif s.last_ts_ms is None:
            text += "; no times recorded"
        said = last_words(run)
        if said:
            text += f"; then {said}"
    if reason:
        text += f"; {reason}"
    return text


def finish_open_runs(splitter: RunSplitter, reason: str | None = None) -> list[tuple[str, Any]]:
    """End every run kept open for an end that never came (the input ended first): each with
    its end note, its changes between ``(CHANGE_RUN, run)`` markers, the current run's last."""
    changes: list[tuple[str, Any]] = []
    for old in list(splitter.open_runs.values()):
        splitter.switches += 2
        changes += [(CHANGE_RUN, old), *finish_run(old, reason=reason or "its result never came (the input ended)"),
                    (CHANGE_RUN, splitter.current)]
    splitter.open_runs.clear()
    return changes


def finish_run(run: Run, exit_status: int | None = None, reason: str | None = None) -> list[tuple[str, Any]]:
    """End ``run`` (:meth:`Session.finish`); one without a ``result`` gets a note saying
    so (:func:`end_note`, note kind ``end``), placed before the end change so every view
    shows it before the outcome line."""
    s = run.session
    if reason is None and exit_status is not None:
        reason = signal_words(exit_status)
    was_ended = s.ended
    changes = s.finish(exit_status)
    if s.result is None and not was_ended:
        run.end_reason = reason
        changes[-1:-1] = s.add_note("end", "no_result", end_note(run, reason))
    return changes


def split_changes(run: Run, changes: list[tuple[str, Any]]) -> list[tuple[Run, list[tuple[str, Any]]]]:
    """Cut a flat list of changes at its ``CHANGE_RUN`` markers.

    ``run`` is the run the first changes belong to. Returns ``[(run, changes), ...]`` with the
    markers dropped; the last run always gets a batch (a new run is reported even before it
    has a change).
    """
    out: list[tuple[Run, list[tuple[str, Any]]]] = []
    batch: list[tuple[str, Any]] = []
    for change in changes:
        if change[0] == CHANGE_RUN:
            if batch:
                out.append((run, batch))
            run, batch = change[1], []
        else:
            batch.append(change)
    out.append((run, batch))
    return out


def all_succeeded(runs: list[Run]) -> bool:
    """True when every run ended with a successful ``result`` (the multi-run exit status)."""
    return bool(runs) and all(run.session.status == "success" for run in runs)


# -- what a list of runs shows beyond the model ----------------------------------------------

IDLE_AFTER_S = 5.0  # no event for this long: a live run is "idle N s"
WAIT_NOTICE_S = 0.5  # an interaction_query request unanswered this long is worth a notification
FINAL_STATES = frozenset({"success", "error", "incomplete"})
RESTART_REASONS = frozenset({"the file was truncated", "the file was replaced"})  # Monitor.notice


class RunActivity:
    """View state of one run that its model doesn't hold (pure; the app keeps one per run).

    Attributes:
        last_event_at: monotonic seconds of its last change, or None.
        first_event_at: monotonic seconds of its first change, or None.
        seen_at_ms: wall-clock epoch ms when it was first seen (its start when the stream
            carries no ``timestamp_ms``).
        open_queries: ``interaction_query`` requests without a response yet (reference 2.6:
            print mode answers them itself, usually in the same millisecond).
        live: it changed while its source was live (not replaying a file's backlog); only
            live runs raise attention.
        mark: the attention raised last and not yet looked at ("" when none).
    """

    __slots__ = ("last_event_at", "first_event_at", "seen_at_ms", "open_queries", "waiting_since", "live", "mark",
                 "_raised", "_waits_raised", "_queries")

    def __init__(self, seen_at_ms: float) -> None:
        self.last_event_at: float | None = None
        self.first_event_at: float | None = None  # monotonic seconds of its first change
        self.seen_at_ms = seen_at_ms
        self.open_queries = 0
        self.waiting_since: float | None = None
        self.live = False
        self.mark = ""
        self._raised: set[str] = set()
        self._queries = 0
        self._waits_raised = 0

    def observe(self, run: Run, changes: list[tuple[str, Any]], now: float, live: bool) -> None:
        """Take a batch of the run's changes that arrived at monotonic ``now``."""
        if changes:
            self.last_event_at = now
            if self.first_event_at is None:
                self.first_event_at = now
        if live:
            self.live = True
        for kind, key in changes:
            if kind == "note":
                try:
                    note = run.session.notes[key]
                except IndexError:
                    continue
                if note.kind != "interaction_query":
                    continue
                if note.subtype == "request":
                    self._queries += 1
                    self.open_queries += 1
                    self.waiting_since = now
                elif self.open_queries:
                    self.open_queries -= 1
                    if not self.open_queries:
                        self.waiting_since = None

    def attention(self, run: Run, now: float) -> str | None:
        """The attention event to raise now, or None; each is raised once per run.

        ``success``, ``error`` or ``incomplete`` when the run has ended (``restart`` when its
        followed file was truncated or replaced under it), ``waiting`` when an
        ``interaction_query`` request has been waiting ``WAIT_NOTICE_S`` (once per request).
        Only live runs raise attention: replaying saved logs is not news.
        """
        if not self.live:
            return None
        s = run.session
        if s.result is not None or s.ended:
            kind = s.status if s.status in FINAL_STATES else "incomplete"
            if s.result is None and run.end_reason in RESTART_REASONS:
                kind = "restart"  # cut by its file starting over: announced as a restart
            if kind in self._raised:
                return None
            self._raised.add(kind)
            self.mark = kind
            return kind
        if (self.open_queries and self.waiting_since is not None and now - self.waiting_since >= WAIT_NOTICE_S
                and self._waits_raised < self._queries):
            self._waits_raised = self._queries
            self.mark = "waiting"
            return "waiting"
        return None


def run_state(run: Run, activity: RunActivity, now: float, *, source_state: str = "reading",
              source_error: str | None = None, progress: float | None = None) -> str:
    """The state a runs list shows for ``run``.

    One of ``unreadable``, ``success``, ``error``, ``incomplete`` (ended without a result),
    ``queued`` (its file not opened yet), ``waiting`` (an interaction_query request has no
    response), ``reading N%`` (a file's backlog being read), ``connecting`` (nothing yet),
    ``idle N s`` (no event for ``IDLE_AFTER_S``) or ``streaming``.

    Args:
        now: monotonic seconds (compared with ``activity.last_event_at``).
        source_state: the source's state (``queued``, ``reading``, ``done``, ``error``).
        source_error: why the source can't be read, if so.
        progress: share of a replayed file read so far, None when not replaying.
    """
    s = run.session
    if source_error:
        return "unreadable"
    if s.result is not None:
        return "error" if s.result.is_error else "success"
    if s.ended:
        return "incomplete"
    if source_state == "queued":
        return "queued"
    if activity.open_queries:
        return "waiting"
    if progress is not None and progress < 1.0:
        return f"reading {progress:.0%}"
    if s.events == 0 and s.invalid_lines == 0:
        return "connecting"
    if activity.last_event_at is not None and now - activity.last_event_at >= IDLE_AFTER_S:
        return f"idle {int(now - activity.last_event_at)} s"
    return "streaming"


def is_live_state(state: str) -> bool:
    """True for the states of a run that may still change (listed first)."""
    return state not in FINAL_STATES and state != "unreadable"


def run_started_ms(run: Run, activity: RunActivity, path: str | None = None) -> tuple[float | None, bool]:
    """When the run started (epoch ms), and whether that is only its file's time.

    Its first ``timestamp_ms`` when the stream recorded one; else, for a run read from a
    file (``path``), the file's modification time, marked (``True``): never the time
    cursor-watch opened it; else (a pipe, a spawned command) when it was first
    seen, which is when it ran. ``(None, False)`` when a file's time can't be read.
    """
    first = run.session.first_ts_ms
    if first is not None:
        return float(first), False
    if path is not None:
        try:
            return os.path.getmtime(path) * 1000.0, True
        except OSError:
            return None, False
    return activity.seen_at_ms, False


def run_elapsed_ms(run: Run, activity: RunActivity, now: float) -> float | None:
    """How long the run has taken (ms), from what is known, never invented.

    - its ``result``'s ``duration_ms`` when it has one;
    - with ``timestamp_ms`` in its events: the recorded span (first to last), and while it is
      live (changing while its source is live, not ended) the stream's clock: the span
      plus the wall time since its last event arrived;
    - without times: while live, the wall time since its first event arrived (and, once
      ended, until its last); a replayed file's (or a followed file's backlog's) run
      without times has no known duration: None.

    ``now`` is monotonic seconds (as :attr:`RunActivity.last_event_at`). A replayed run
    never ticks: its elapsed time is a function of its events alone.
    """
    s = run.session
    r = s.result
    if r is not None and r.duration_ms is not None:
        return float(r.duration_ms)
    live = activity.live and not s.ended and r is None
    first = s.first_ts_ms
    if first is not None:
        span = float((s.last_ts_ms if s.last_ts_ms is not None else first) - first)
        if live and activity.last_event_at is not None:
            span += max(0.0, now - activity.last_event_at) * 1000.0
        return span
    if not activity.live or activity.first_event_at is None:
        return None
    end = now if live else (activity.last_event_at if activity.last_event_at is not None else now)
    return max(0.0, end - activity.first_event_at) * 1000.0


def last_activity(run: Run) -> str:
    """One line on what the run did last: its newest transcript entry, in short."""
    s = run.session
    n = len(s.timeline)
    if not n:
        return ""
    kind, key = s.timeline[n - 1]
    try:
        if kind == "tool":
            call = s.tool_calls.get(key)
            if call is not None:
                return f"{call.tool} {call.summary}".strip() + ("" if call.status == "running" else f" · {call.status}")
        elif kind == "segment":
            return "said: " + " ".join(s.segments[key].text.split())
        elif kind == "thinking":
            return "thinking"
        elif kind == "note":
            return s.notes[key].text
        elif kind == "prompt":
            return "prompt"
    except (IndexError, KeyError):
        return ""
    return ""
