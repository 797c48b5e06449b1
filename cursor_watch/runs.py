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
    """

    __slots__ = ("source", "source_label", "index", "session", "first_line", "last_line", "stderr", "reread",
                 "has_init")

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
