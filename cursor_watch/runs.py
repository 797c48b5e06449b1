"""Runs: one stream may hold several agent runs, and many streams may be watched at once.

People run agents in loops (``while ...; do cursor-agent ... >> log.jsonl; done``), resume
sessions (``--resume`` prints a new ``system/init`` into the same log) and keep directories of
logs. A **run** is the events from one ``system/init`` up to the next ``system/init`` or the end
of its source; lines before the first ``init`` belong to the first run (issue 9; every real
capture starts with ``init``, reference section 2.1, but a cut log may not). Each run is its own
:class:`~cursor_watch.model.Session`: the reducer itself never learns about other runs.

:class:`RunSplitter` routes one source's parsed items to the session of the run they belong to;
:class:`Run` is one run with where it came from. Line numbers and byte offsets stay those of the
source (a diagnostic's line is the line in the file; a tool call's span re-reads the source).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from .events import Event, Invalid
from .model import Session

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
        first_offset: stream byte offset where the run begins (its ``init`` line; 0 for the
            first run of a source).
        end_offset: where the next run begins, or None while it is its source's last run.
    """

    __slots__ = ("source", "source_label", "index", "session", "first_line", "last_line", "stderr", "reread",
                 "has_init", "first_offset", "end_offset")

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
    """Routes one source's items to one :class:`~cursor_watch.model.Session` per run.

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

    __slots__ = ("runs", "current", "_source", "_label", "_make_session", "_reread", "switches")

    def __init__(self, source: str, source_label: str, make_session: Callable[[], Session],
                 reread: Callable[[int, int], bytes]) -> None:
        self._source = source
        self._label = source_label
        self._make_session = make_session
        self._reread = reread
        self.runs: list[Run] = []
        self.switches = 0  # runs begun after the first (lets callers skip looking for CHANGE_RUN)
        self.current = self._new_run(1)

    def _new_run(self, first_line: int) -> Run:
        run = Run(self._source, self._label, len(self.runs) + 1, self._make_session(), first_line, self._reread)
        self.runs.append(run)
        return run

    def starts_run(self, item: Event | Invalid) -> bool:
        """True when ``item`` is a ``system/init`` that begins a new run."""
        return (item.__class__ is Event and item.type == "system" and item.subtype == "init"
                and self.current.has_init)

    def begin_run(self, item: Event) -> list[tuple[str, Any]]:
        """End the current run at ``item`` (an ``init``) and start the next one.

        Returns the old run's end changes followed by ``(CHANGE_RUN, new run)``.
        """
        old = self.current
        old.session.lines = item.line - old.first_line
        old.last_line = item.line - 1
        changes = old.session.finish()
        run = self._new_run(item.line)
        run.first_offset = old.end_offset = item.offset
        self.current = run
        self.switches += 1
        changes.append((CHANGE_RUN, run))
        return changes

    def apply(self, item: Event | Invalid) -> list[tuple[str, Any]]:
        """Apply one item to the run it belongs to; returns its changes."""
        changes: list[tuple[str, Any]] = []
        if self.starts_run(item):
            changes = self.begin_run(item)  # type: ignore[arg-type]
        run = self.current
        if item.__class__ is Event and item.type == "system" and item.subtype == "init":
            run.has_init = True
        changes += run.session.apply(item)
        return changes

    def count_lines(self, lines_seen: int) -> None:
        """The source has ``lines_seen`` physical lines so far: the current run ends there."""
        run = self.current
        run.session.lines = lines_seen - run.first_line + 1
        run.last_line = lines_seen


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


class RunActivity:
    """View state of one run that its model doesn't hold (pure; the app keeps one per run).

    Attributes:
        last_event_at: monotonic seconds of its last change, or None.
        seen_at_ms: wall-clock epoch ms when it was first seen (its start when the stream
            carries no ``timestamp_ms``).
        open_queries: ``interaction_query`` requests without a response yet (reference 2.6:
            print mode answers them itself, usually in the same millisecond).
        live: it changed while its source was live (not replaying a file's backlog); only
            live runs raise attention.
        mark: the attention raised last and not yet looked at ("" when none).
    """

    __slots__ = ("last_event_at", "seen_at_ms", "open_queries", "waiting_since", "live", "mark", "_raised",
                 "_waits_raised", "_queries")

    def __init__(self, seen_at_ms: float) -> None:
        self.last_event_at: float | None = None
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

        ``success``, ``error`` or ``incomplete`` when the run has ended, ``waiting`` when an
        ``interaction_query`` request has been waiting ``WAIT_NOTICE_S`` (once per request).
        Only live runs raise attention: replaying saved logs is not news.
        """
        if not self.live:
            return None
        s = run.session
        if s.result is not None or s.ended:
            kind = s.status if s.status in FINAL_STATES else "incomplete"
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


def run_started_ms(run: Run, activity: RunActivity) -> float:
    """When the run started (epoch ms): its first ``timestamp_ms``, else when it was first seen."""
    first = run.session.first_ts_ms
    return float(first) if first is not None else activity.seen_at_ms


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
