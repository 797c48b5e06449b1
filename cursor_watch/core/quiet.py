"""Explained quiet: why a live run has had no event for a while (pure but for :class:`CpuSampler`).

A run is **quiet** from the arrival of its last event that is progress: any event but a
heartbeat of a running tool call (a :class:`~cursor_watch.core.canonical.ToolUpdate` of a call
already running: Claude Code's ``tool_progress``, every 30 s of a main-thread call). What the
stream said last, and the process, say why, first match wins:

* ``waiting``: an interaction query has no answer (Cursor ``interaction_query``, Codex
  ``request_user_input``): waiting for a person;
* ``compacting``: Claude Code's ``system/status`` ``compacting``, until its ``compact_boundary``
  (or another status, or any progress);
* ``rate_limit``: a rate-limit event whose status is not ``allowed``/``allowed_warning``
  (Claude Code ``rate_limit_event``; until its ``resetsAt``, epoch seconds);
* ``retry``: a retry backoff (Claude Code ``system/api_retry`` with ``retry_delay_ms``, a
  sub-agent's retry; Cursor ``retry``; Cursor ``connection`` ``reconnecting``; Codex
  ``Reconnecting...`` errors);
* ``tool``: a tool call running; explained while its heartbeat is fresh (within
  :data:`HEARTBEAT_FRESH_S`) or the process tree is busy;
* ``busy``: spawn mode, the agent's process tree used at least :data:`BUSY_CPU_PERCENT` of one
  CPU over the quiet period (psutil: user + system time of the child and its descendants);
* ``idle``: spawn mode, it did not (``process idle, 0 % CPU``): unexplained;
* ``none``: nothing explains it (no process to look at): unexplained.

Times are on the watcher's clock (epoch ms, when events *arrived*), like
:mod:`cursor_watch.core.limits`'s. The facts come from the canonical notes (``docs/formats.md``: the
Claude Code rows ``system/status``, ``system/api_retry``, ``rate_limit_event``,
``tool_progress``; Cursor ``retry``/``connection``/``interaction_query``; Codex ``error`` and
``request_user_input``) and their fields, kept by the model for these kinds
(``Session.note_fields``).
"""

from __future__ import annotations

import bisect
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from ..fmt import short_duration

__all__ = ["BUSY_CPU_PERCENT", "CPU_SAMPLE_S", "HEARTBEAT_FRESH_S", "QUIET_SHOW_S", "REASONS", "CpuSampler",
           "Quiet", "QuietTracker", "process_id", "quiet_of"]

QUIET_SHOW_S = 30.0  # a live run quiet this long (or --stall, if shorter) says why (header, runs list, --plain, summary)
HEARTBEAT_FRESH_S = 90.0  # a running call's last heartbeat within this is fresh (Claude Code beats every 30 s)
BUSY_CPU_PERCENT = 5.0  # the agent's process tree used at least this much of one CPU: it is working
CPU_SAMPLE_S = 1.0  # the process tree's CPU time is sampled at most this often
CPU_KEEP = 4 * 3600  # samples kept (one a second: 4 hours of quiet)

# reason -> explained
REASONS = {"waiting": True, "compacting": True, "rate_limit": True, "retry": True, "tool": True, "busy": True,
           "idle": False, "none": False}

_OK_RATE = ("allowed", "allowed_warning")


@dataclass(frozen=True)
class Quiet:
    """A live run's quiet period now.

    Attributes:
        since_ms: when it began (arrival of the last progress event, epoch ms); for_ms: how long.
        reason: one of :data:`REASONS` (see the module doc); explained: what :data:`REASONS` says,
            except a ``tool`` without a fresh heartbeat nor a busy process, which is not.
        why: the reason in words (``compacting``, ``Bash running, heartbeat 3 s ago``,
            ``process idle, 0 % CPU``): stream text, escape it before showing.
        call_id, tool, summary: the running call it names ("" for none).
        cpu_percent: CPU of the process tree over the quiet period (% of one CPU), or None
            (not spawn mode, or not measured yet).
        until_ms: when the wait should end (a rate limit's reset, a retry's backoff), or None.
        evidence: for a ``tool``, what says it is alive or not (``heartbeat 3 s ago``,
            ``no heartbeat, 0 % CPU``), else ``why``.
    """

    since_ms: float
    for_ms: float
    reason: str
    explained: bool
    why: str
    call_id: str = ""
    tool: str = ""
    summary: str = ""
    cpu_percent: float | None = None
    until_ms: float | None = None
    evidence: str = ""

    def label(self) -> str:
        """``quiet 4m: compacting``."""
        return f"quiet {short_duration(self.for_ms)}: {self.why}"

    def to_json(self) -> dict:
        """``{"since_ms", "for_ms", "reason", "explained", "why", "call_id", "tool", "cpu_percent",
        "until_ms"}`` (ms, epoch ms; ``cpu_percent`` of one CPU)."""
        return {"since_ms": int(self.since_ms), "for_ms": int(self.for_ms), "reason": self.reason,
                "explained": self.explained, "why": self.why, "call_id": self.call_id or None,
                "tool": self.tool or None, "cpu_percent": None if self.cpu_percent is None else round(self.cpu_percent, 1),
                "until_ms": None if self.until_ms is None else int(self.until_ms)}


class QuietTracker:
    """The clock side of one run's quiet: fed its batches of changes as they arrive.

    Attributes:
        progress_ms: arrival of its last progress event (epoch ms).
        beats: ``call_id -> arrival`` of each running call's last heartbeat.
        wait: ``(reason, since_ms, until_ms, why)`` of what the stream said it waits on
            (``compacting``, ``rate_limit``, ``retry``), or None.
        periods: quiet periods at least :data:`QUIET_SHOW_S` (or ``--stall``) long, as dicts (the summary's
            ``quiet``): ``{"start_ms", "end_ms", "duration_ms", "reason", "explained", "why"}``
            (``end_ms`` None while it lasts).
    """

    __slots__ = ("progress_ms", "beats", "wait", "periods", "_open")

    def __init__(self, now_ms: float) -> None:
        self.progress_ms = now_ms
        self.beats: dict[str, float] = {}
        self.wait: tuple[str, float, float | None, str] | None = None
        self.periods: list[dict] = []
        self._open: dict | None = None

    def observe(self, session: Any, changes: list[tuple[str, Any]], now_ms: float, calls: dict[str, float]) -> None:
        """Take a batch of the run's changes that arrived at ``now_ms`` (``calls``: the running
        calls' arrivals before this batch, :class:`~cursor_watch.core.limits.RunTimes`'s)."""
        progress = False
        for kind, key in changes:
            if kind == "tool_updated" and key in calls:
                self.beats[key] = now_ms  # a heartbeat of a running call: not progress
                continue
            if kind == "tool_done":
                self.beats.pop(key, None)
            progress = True
            if kind == "note":
                self._note(session, key, now_ms)
            elif kind in ("segment", "thinking", "tool_started", "tool_done", "result", "end", "prompt"):
                self.wait = None
        if progress:
            self.progress_ms = now_ms
            self.close(now_ms)

    def prime(self, session: Any, now_ms: float, tail: int = 64) -> None:
        """Read what the stream said before the run was watched live (a followed file's backlog)
        from the last ``tail`` entries of the run's timeline, so a compaction or a rate limit it
        began with is known; quiet is measured from ``now_ms`` (the watch's clock starts then)."""
        n = len(session.timeline)
        kinds = {"tool": "tool_started", "segment": "segment", "thinking": "thinking", "prompt": "prompt"}
        for i in range(max(0, n - tail), n):
            kind, key = session.timeline[i]
            if kind == "note":
                self._note(session, key, now_ms)
            elif kind in kinds:
                self.wait = None
        self.progress_ms = now_ms

    def _note(self, session: Any, index: int, now_ms: float) -> None:
        try:
            note = session.notes[index]
        except (IndexError, KeyError):
            return
        fields = getattr(session, "note_fields", {}).get(index) or {}
        kind = note.kind
        if kind == "status" and note.subtype == "status":
            self.wait = ("compacting", now_ms, None, "compacting") if fields.get("status") == "compacting" else None
        elif kind == "compaction":
            self.wait = None
        elif kind == "rate_limit":
            status = fields.get("status")
            if isinstance(status, str) and status not in _OK_RATE:
                resets = fields.get("resetsAt")
                until = float(resets) * 1000.0 if isinstance(resets, (int, float)) and not isinstance(resets, bool) \
                    else None
                self.wait = ("rate_limit", now_ms, until, f"rate limit {status}")
            elif self.wait is not None and self.wait[0] == "rate_limit":
                self.wait = None
        elif kind == "retry":
            delay = fields.get("retry_delay_ms")
            until = now_ms + float(delay) if isinstance(delay, (int, float)) and not isinstance(delay, bool) else None
            self.wait = ("retry", now_ms, until, _retry_words(note.text))
        elif kind == "connection":
            if note.subtype == "reconnecting":
                self.wait = ("retry", now_ms, None, "reconnecting")
            elif self.wait is not None and self.wait[0] == "retry":
                self.wait = None

    def track(self, quiet: Quiet | None, now_ms: float, show_s: float = QUIET_SHOW_S) -> None:
        """Record the quiet state at ``now_ms`` (a period is kept once it reaches ``show_s``
        seconds; its reason is the latest seen)."""
        if quiet is None or quiet.for_ms < show_s * 1000.0:
            return
        if self._open is None:
            self._open = {"start_ms": int(quiet.since_ms), "end_ms": None, "duration_ms": None}
            self.periods.append(self._open)
        self._open.update(reason=quiet.reason, explained=quiet.explained, why=quiet.why,
                          cpu_percent=None if quiet.cpu_percent is None else round(quiet.cpu_percent, 1))

    def close(self, now_ms: float) -> None:
        """The quiet period (if one is kept) ended at ``now_ms``."""
        if self._open is not None:
            self._open["end_ms"] = int(now_ms)
            self._open["duration_ms"] = int(now_ms - self._open["start_ms"])
            self._open = None


def process_id(feed: Any) -> int | None:
    """The process id of a :class:`~cursor_watch.stream.watch.Feed`'s spawned command (None: not
    spawn mode, or not started yet)."""
    source = getattr(feed, "source", None)
    proc = getattr(source, "proc", None) if getattr(source, "kind", None) == "process" else None
    pid = getattr(proc, "pid", None)
    return pid if isinstance(pid, int) else None


def _retry_words(text: str) -> str:
    """``retry backoff: API retry attempt 2 of 10, in 2.1 s`` from a retry note's text."""
    return f"retry backoff: {text}" if text else "retry backoff"


def _ago(ms: float) -> str:
    s = int(max(0.0, ms) // 1000)
    return f"{s} s ago" if s < 120 else f"{short_duration(ms)} ago"


def _cpu_words(percent: float | None) -> str:
    return "" if percent is None else f"{percent:.0f} % CPU"


def quiet_of(session: Any, tracker: QuietTracker, now_ms: float, calls: dict[str, float],
             open_queries: int = 0, cpu: CpuSampler | None = None, since_ms: float | None = None) -> Quiet:
    """The run's quiet period at ``now_ms`` and its reason (see the module doc).

    Args:
        tracker: the run's :class:`QuietTracker`; calls: ``call_id -> arrival`` of its running
            calls; open_queries: interaction queries without an answer.
        cpu: the spawned agent's :class:`CpuSampler` (None: not spawn mode).
        since_ms: measure from then instead of the last progress (a long call's own start).
    """
    since = tracker.progress_ms if since_ms is None else since_ms
    for_ms = max(0.0, now_ms - since)
    percent = cpu.percent(since, now_ms) if cpu is not None else None
    if open_queries:
        return Quiet(since, for_ms, "waiting", True, "waiting for a person (an unanswered question)",
                     cpu_percent=percent)
    wait = tracker.wait
    if wait is not None:
        reason, _at, until, why = wait
        if reason == "rate_limit" and until is not None:
            why += f", resets {'in ' + short_duration(until - now_ms) if until > now_ms else _ago(now_ms - until)}"
        elif reason == "retry" and until is not None and until < now_ms:
            why += f" (backoff over {_ago(now_ms - until)})"
        return Quiet(since, for_ms, reason, True, why, cpu_percent=percent, until_ms=until)
    busy = percent is not None and percent >= BUSY_CPU_PERCENT
    if calls:
        call_id = min(calls.items(), key=lambda kv: kv[1])[0]
        fresh = [(tracker.beats[c], c) for c in calls if c in tracker.beats]
        beat = max(fresh) if fresh else None
        if beat is not None:
            call_id = beat[1]
        call = session.tool_calls.get(call_id)
        tool, summary = (call.tool, call.summary) if call is not None else ("", "")
        bits = [f"{tool or 'a tool'} running"]
        if beat is not None:
            bits.append(f"heartbeat {_ago(now_ms - beat[0])}")
        else:
            bits.append("no heartbeat")
        if percent is not None:
            bits.append(_cpu_words(percent))
        explained = (beat is not None and now_ms - beat[0] <= HEARTBEAT_FRESH_S * 1000.0) or busy
        return Quiet(since, for_ms, "tool", explained, ", ".join(bits), call_id, tool, summary, percent,
                     evidence=", ".join(bits[1:]))
    if percent is None:
        return Quiet(since, for_ms, "none", False, "no event")
    if busy:
        return Quiet(since, for_ms, "busy", True, f"process busy, {_cpu_words(percent)}", cpu_percent=percent)
    return Quiet(since, for_ms, "idle", False, f"process idle, {_cpu_words(percent)}", cpu_percent=percent)


class CpuSampler:
    """CPU time of a spawned agent's process tree (the child and its descendants), sampled on
    the watcher's clock (psutil: ``cpu_times()`` user + system, plus the children's times of
    those already reaped, so a test process that ended still counts; never backwards).

    Args:
        pid: the spawned command's process id.
        clock: epoch-ms clock (the alert rules').

    Attributes:
        samples: ``(epoch ms, CPU seconds)`` oldest first; gone: the process is gone or can't be read.
    """

    def __init__(self, pid: int, clock: Any = None) -> None:
        import psutil

        self._psutil = psutil
        self.pid = pid
        self._clock = clock or (lambda: time.time() * 1000.0)
        self.samples: deque[tuple[float, float]] = deque(maxlen=CPU_KEEP)
        self.gone = False
        try:
            self._proc = psutil.Process(pid)
        except (psutil.Error, OSError):
            self._proc = None
            self.gone = True
        self.sample()

    def _total(self) -> float | None:
        ps = self._psutil
        proc = self._proc
        if proc is None:
            return None
        try:
            tree = [proc, *proc.children(recursive=True)]
        except (ps.Error, OSError):
            return None
        now: dict[int, float] = {}
        for p in tree:
            try:
                t = p.cpu_times()
            except (ps.Error, OSError):
                continue
            now[p.pid] = t.user + t.system + getattr(t, "children_user", 0.0) + getattr(t, "children_system", 0.0)
        # a descendant that ended is in its parent's children's times once reaped
        total = sum(now.values())
        if self.samples and total < self.samples[-1][1]:
            total = self.samples[-1][1]  # never backwards
        return total

    def sample(self, now_ms: float | None = None) -> None:
        """Take a sample now (at most one per :data:`CPU_SAMPLE_S`)."""
        if self.gone:
            return
        now = self._clock() if now_ms is None else now_ms
        if self.samples and now - self.samples[-1][0] < CPU_SAMPLE_S * 1000.0:
            return
        total = self._total()
        if total is None:
            self.gone = True
            return
        self.samples.append((now, total))

    def percent(self, since_ms: float, now_ms: float) -> float | None:
        """CPU used from ``since_ms`` to the latest sample, in % of one CPU; None when fewer than
        two samples cover it, at least one second apart."""
        if len(self.samples) < 2:
            return None
        times = [t for t, _ in self.samples]
        i = bisect.bisect_left(times, since_ms)
        if i >= len(times):
            return None
        if i > 0 and times[i] - since_ms > CPU_SAMPLE_S * 1000.0:
            i -= 1  # the sample before the quiet began: the closest one
        t0, c0 = self.samples[i]
        t1, c1 = self.samples[-1]
        if t1 - t0 < 1000.0:
            return None
        return max(0.0, (c1 - c0) / ((t1 - t0) / 1000.0) * 100.0)
