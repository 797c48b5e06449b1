"""Stalls and budgets: facts about a run computed from its model and a clock (pure; no UI, no I/O).

A run is **stalled** when it is live, not finished, not waiting for an answer
(``interaction_query``: its own state), and either one tool call has been running for the stall
duration or nothing has arrived for that long, and nothing explains it
(:mod:`cursor_watch.core.quiet`: a heartbeat, a compaction, a rate limit, a retry backoff, a busy
process tree); an explained quiet is stalled only past the second, longer limit
(``--stall-explained``, default :data:`EXPLAINED_FACTOR` times the stall duration). A replayed file is never stalled: it ended, with
or without a result. Times are measured on the watcher's clock, when the events *arrived*: a
stream's own ``startedAtMs`` may come from another machine, or from a capture made long ago.

A **budget** is exceeded when a run goes past a limit: its duration, its number of tool calls,
of failed tool calls, of tokens (input + output + cache read + cache write) or its cost in USD
(reported, else estimated: :mod:`cursor_watch.core.costs`). Where a stream reports usage only at the
end (Cursor's ``result.usage``), tokens and cost are known, and checked, only then. Tokens are
counted once each (:attr:`cursor_watch.core.canonical.Usage.total_tokens`: input, cached ones included,
plus output).

The TUI's header and runs list, ``--plain``, the summary and the alert outlet all read these
facts; :class:`RunTimes` is the clock side kept beside each run's model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .costs import live_usage_of, run_cost, total_tokens
from ..fmt import plural, short_duration, usd
from .quiet import CpuSampler, Quiet, QuietTracker, quiet_of
from .tools import STATUS_FAILURE

DISPLAY_STALL_S = 300.0  # the TUI and --plain show a stall after 5 minutes unless --stall says otherwise
EXPLAINED_FACTOR = 4.0  # an explained quiet is a stall past this many stall durations (unless --stall-explained)


@dataclass(frozen=True)
class Limits:
    """The per-run limits of a watch (None: no limit).

    Attributes:
        stall_s: seconds without progress that make a run stalled (``--stall``).
        stall_explained_s: seconds of an explained quiet that make it stalled (``--stall-explained``;
            None: :data:`EXPLAINED_FACTOR` times ``stall_s``).
        max_duration_s: seconds (``--max-duration``); max_tool_calls, max_failures, max_tokens: counts;
        max_cost_usd: USD (``--max-cost``).
        max_repeats: repeats of one tool call that make a run looping (``--max-repeats``: a ``loop``
            alert; ``--enforce`` stops on it like on a budget; :mod:`cursor_watch.core.loops`).
    """

    stall_s: float | None = None
    stall_explained_s: float | None = None
    max_duration_s: float | None = None
    max_tool_calls: int | None = None
    max_failures: int | None = None
    max_tokens: int | None = None
    max_cost_usd: float | None = None
    max_repeats: int | None = None

    @property
    def budgets(self) -> bool:
        """True when any budget is set (``--max-repeats`` is one: ``--enforce`` acts on it)."""
        return any(v is not None for v in (self.max_duration_s, self.max_tool_calls, self.max_failures,
                                           self.max_tokens, self.max_cost_usd, self.max_repeats))


@dataclass(frozen=True)
class Stall:
    """A run's stall now.

    Attributes:
        since_ms: when it began (the clock's epoch ms: the call's arrival, or the last event's).
        for_ms: how long it has lasted.
        call_id, tool, summary: the tool call it waits on ("" when nothing runs).
        quiet: the quiet's reason (:class:`~cursor_watch.core.quiet.Quiet`), or None.
        limit_ms: the limit it went past (the stall duration, or the explained one).
    """

    since_ms: float
    for_ms: float
    call_id: str = ""
    tool: str = ""
    summary: str = ""
    quiet: Quiet | None = None
    limit_ms: float = 0.0

    @property
    def explained(self) -> bool:
        """Something explains the quiet (it went past the explained limit)."""
        return self.quiet is not None and self.quiet.explained

    @property
    def what(self) -> str:
        """``shell npm test``, or ``no event`` when no call runs."""
        return f"{self.tool} {self.summary}".strip() if self.call_id else "no event"

    @property
    def why(self) -> str:
        """``unexplained: process idle, 0 % CPU``, ``explained (compacting) but past 20m``, or ""."""
        q = self.quiet
        if q is None:
            return ""
        why = q.evidence or q.why
        if q.explained:
            return f"explained ({why}) but past {short_duration(self.limit_ms)}"
        return "unexplained" if q.reason == "none" else f"unexplained: {why}"

    def label(self) -> str:
        """``stalled 6m: shell npm test (unexplained: no heartbeat, 0 % CPU)`` (stream text:
        escape it before showing)."""
        why = self.why
        return f"stalled {short_duration(self.for_ms)}: {self.what}" + (f" ({why})" if why else "")

    def to_json(self) -> dict:
        """The alert's ``stall`` details: ``since_ms``, ``for_ms``, ``call_id``, ``tool``, ``summary``,
        ``explained``, ``quiet`` (:meth:`~cursor_watch.core.quiet.Quiet.to_json`, or null)."""
        return {"since_ms": int(self.since_ms), "for_ms": int(self.for_ms), "call_id": self.call_id,
                "tool": self.tool, "summary": self.summary, "explained": self.explained,
                "quiet": self.quiet.to_json() if self.quiet is not None else None}


@dataclass(frozen=True)
class Breach:
    """A budget a run went past.

    Attributes:
        budget: ``duration``, ``tool_calls``, ``failures``, ``tokens`` or ``cost``.
        limit, value: the limit and the run's value (seconds, counts, USD).
    """

    budget: str
    limit: float
    value: float

    def label(self) -> str:
        """``budget: 3 tool calls > 1``."""
        if self.budget == "duration":
            text = f"ran {short_duration(self.value * 1000)} > {short_duration(self.limit * 1000)}"
        elif self.budget == "cost":
            text = f"cost {usd(self.value)} > {usd(self.limit)}"
        elif self.budget == "tool_calls":
            text = f"{plural(int(self.value), 'tool call')} > {int(self.limit)}"
        elif self.budget == "failures":
            text = f"{plural(int(self.value), 'failed tool call')} > {int(self.limit)}"
        else:
            text = f"{plural(int(self.value), 'token')} > {int(self.limit):,}"
        return f"budget: {text}"

    def to_json(self) -> dict:
        return {"budget": self.budget, "limit": self.limit, "value": self.value}


class RunTimes:
    """When one run's events arrived, on the watcher's clock (epoch ms), and its stall periods.

    Args:
        seen_ms: when the run was first seen.

    Attributes:
        last_ms: arrival of its last change; calls: ``call_id -> arrival`` of its running calls;
        open_queries: ``interaction_query`` requests without a response (``queries``: all requests,
        ``waiting_since_ms``: arrival of the oldest open one); live: seen from a live
        source (pipe, spawn, a followed file after its backlog); stalls: closed and open stall
        periods as dicts (see :meth:`periods`).
    """

    __slots__ = ("seen_ms", "last_ms", "calls", "open_queries", "queries", "waiting_since_ms", "live", "_stall", "stalls",
                 "quiet", "cpu", "__weakref__")

    def __init__(self, seen_ms: float) -> None:
        self.seen_ms = seen_ms
        self.last_ms = seen_ms
        self.calls: dict[str, float] = {}
        self.open_queries = 0
        self.queries = 0  # requests seen
        self.waiting_since_ms: float | None = None  # when the oldest open request arrived
        self.live = False
        self._stall: dict | None = None
        self.stalls: list[dict] = []
        self.quiet = QuietTracker(seen_ms)  # why it is quiet (cursor_watch.core.quiet)
        self.cpu: CpuSampler | None = None  # spawn mode: the agent's process tree

    def observe(self, session: Any, changes: list[tuple[str, Any]], now_ms: float, live: bool) -> None:
        """Take a batch of the run's changes that arrived at ``now_ms``."""
        if live:
            self.live = True
        if not changes:
            return
        self.last_ms = now_ms
        self.quiet.observe(session, changes, now_ms, self.calls)
        for kind, key in changes:
            if kind == "tool_started":
                self.calls[key] = now_ms
            elif kind == "tool_done":
                self.calls.pop(key, None)
            elif kind == "note":
                try:
                    note = session.notes[key]
                except (IndexError, KeyError):
                    continue
                if note.kind == "interaction_query":
                    if note.subtype == "request":
                        self.open_queries += 1
                        self.queries += 1
                        if self.waiting_since_ms is None:
                            self.waiting_since_ms = now_ms
                    elif self.open_queries:
                        self.open_queries -= 1
                        if not self.open_queries:
                            self.waiting_since_ms = None
            elif kind == "end":
                self.calls.clear()
                self.open_queries = 0
                self.waiting_since_ms = None

    def track(self, stall: Stall | None, now_ms: float) -> bool:
        """Record the stall state at ``now_ms``; True when a new stall period began."""
        if stall is None:
            if self._stall is not None:
                self._stall["end_ms"] = int(now_ms)
                self._stall["duration_ms"] = int(now_ms - self._stall["start_ms"])
                self._stall = None
            return False
        if self._stall is not None and self._stall["call_id"] == stall.call_id:
            return False
        if self._stall is not None:
            self.track(None, now_ms)
        self._stall = {"start_ms": int(stall.since_ms), "end_ms": None, "duration_ms": None,
                       "call_id": stall.call_id, "tool": stall.tool, "summary": stall.summary, "observed": "live",
                       "explained": stall.explained, "why": stall.why}
        self.stalls.append(self._stall)
        return True


def quiet_now(session: Any, times: RunTimes | None, now_ms: float, since_ms: float | None = None) -> Quiet | None:
    """The live run's quiet period and its reason at ``now_ms`` (:mod:`cursor_watch.core.quiet`), or
    None (not watched live, or finished); ``since_ms``: from then (a call's start), not from
    its last progress."""
    if times is None or not times.live or session.ended or session.result is not None:
        return None
    return quiet_of(session, times.quiet, now_ms, times.calls, times.open_queries, times.cpu, since_ms)


def stall_of(session: Any, times: RunTimes | None, now_ms: float, stall_s: float | None,
             explained_s: float | None = None) -> Stall | None:
    """The run's stall at ``now_ms`` (None: not stalled; see the module doc).

    Args:
        times: the run's arrival times (None: not watched live, never stalled).
        stall_s: the stall duration in seconds (None: stalls are off).
        explained_s: the explained quiet's limit in seconds (None: :data:`EXPLAINED_FACTOR`
            times ``stall_s``).
    """
    if times is None or not times.live or not stall_s or session.ended or session.result is not None:
        return None
    if times.open_queries:
        return None  # waiting for an answer: its own state
    unexplained = stall_s * 1000.0
    longer = (explained_s if explained_s is not None else stall_s * EXPLAINED_FACTOR) * 1000.0
    if times.calls:
        call_id, started = min(times.calls.items(), key=lambda kv: kv[1])
        if now_ms - started >= unexplained:  # the call's own heartbeat, the CPU since it began
            quiet = quiet_now(session, times, now_ms, started)
            limit = longer if quiet is not None and quiet.explained else unexplained
            if now_ms - started >= limit:
                call = session.tool_calls.get(call_id)
                tool, summary = (call.tool, call.summary) if call is not None else ("", "")
                return Stall(started, now_ms - started, call_id, tool, summary, quiet, limit)
    quiet = quiet_now(session, times, now_ms)
    limit = longer if quiet is not None and quiet.explained else unexplained
    idle = now_ms - times.last_ms
    if quiet is not None:
        idle = max(idle, quiet.for_ms)  # heartbeats are not progress
    if idle >= limit:
        since = now_ms - idle
        running = session.running_calls()
        call = running[0] if running else None
        if call is not None:
            return Stall(since, idle, call.call_id, call.tool, call.summary, quiet, limit)
        return Stall(since, idle, quiet=quiet, limit_ms=limit)
    return None


def run_duration_s(session: Any, times: RunTimes | None, now_ms: float) -> float | None:
    """Seconds the run has taken: live, since it was first seen; else its recorded duration
    (``result.duration_ms``, else the span of its ``timestamp_ms``)."""
    if times is not None and times.live and not session.ended and session.result is None:
        return max(0.0, now_ms - times.seen_ms) / 1000.0
    recorded = session.duration_ms()
    if recorded is not None:
        return recorded / 1000.0
    if times is not None:
        return max(0.0, times.last_ms - times.seen_ms) / 1000.0
    return None


def breaches(session: Any, limits: Limits, times: RunTimes | None = None, now_ms: float = 0.0) -> list[Breach]:
    """Every budget of ``limits`` the run has gone past, in the order of the options."""
    out: list[Breach] = []
    if limits.max_duration_s is not None:
        duration = run_duration_s(session, times, now_ms)
        if duration is not None and duration > limits.max_duration_s:
            out.append(Breach("duration", limits.max_duration_s, duration))
    if limits.max_tool_calls is not None and len(session.tool_calls) > limits.max_tool_calls:
        out.append(Breach("tool_calls", limits.max_tool_calls, len(session.tool_calls)))
    if limits.max_failures is not None and session.tool_counts[STATUS_FAILURE] > limits.max_failures:
        out.append(Breach("failures", limits.max_failures, session.tool_counts[STATUS_FAILURE]))
    if limits.max_tokens is not None:
        tokens = total_tokens(live_usage_of(session))
        if tokens is not None and tokens > limits.max_tokens:
            out.append(Breach("tokens", limits.max_tokens, tokens))
    if limits.max_cost_usd is not None:
        cost = run_cost(session).usd  # (reported, else estimated from the usage so far)
        if cost is not None and cost > limits.max_cost_usd:
            out.append(Breach("cost", limits.max_cost_usd, cost))
    return out


# -- what the summary lists ----------------------------------------------------------------

SUMMARY_LIMITS = Limits(stall_s=DISPLAY_STALL_S)  # a summary's without options: stalls of 5 minutes, no budget


def summary_limits(session: Any) -> Limits:
    """The limits the run's summary reports against: its rules' (``--stall``, else 5 minutes,
    and ``--max-*``: :class:`~cursor_watch.core.rules.RunRules`), else :data:`SUMMARY_LIMITS`."""
    return session.rules.summary_limits or SUMMARY_LIMITS


def remember(session: Any, times: RunTimes) -> None:
    """Keep the live arrival times of ``session`` for its summary (on the session: they go with it;
    a compiled session has no weak references)."""
    session.live_times = times


def stall_periods(session: Any, stall_s: float | None = None) -> list[dict]:
    """The run's stall periods, for the summary, oldest first.

    From the stream's own times: each tool call that ran for the stall duration or longer
    (``observed: "recorded"``); and from a live watch: every stall seen on the clock that no
    recorded call covers (a silence; ``observed: "live"``, ``end_ms`` None if it never ended).
    Each is ``{"start_ms", "end_ms", "duration_ms", "call_id", "tool", "summary", "observed"}``.
    """
    stall_s = summary_limits(session).stall_s if stall_s is None else stall_s
    if not stall_s:
        return []
    limit = stall_s * 1000.0
    out = []
    covered = set()
    # no call has been as long as the limit (Session.longest_call_ms): none to look for (a
    # long replay's calls are read back from disk otherwise, to find none)
    longest = getattr(session, "longest_call_ms", limit)
    for call in session.tool_calls.values() if longest is not None and longest >= limit else ():
        d = call.duration_ms
        if d is not None and d >= limit:
            covered.add(call.call_id)
            out.append({"start_ms": call.started_ms, "end_ms": call.completed_ms, "duration_ms": d,
                        "call_id": call.call_id, "tool": call.tool, "summary": call.summary, "observed": "recorded"})
    times = getattr(session, "live_times", None)
    if times is not None:
        out.extend(dict(p) for p in times.stalls if p["call_id"] not in covered)
    return out


def quiet_periods(session: Any) -> list[dict] | None:
    """The run's quiet periods seen live (at least :data:`~cursor_watch.core.quiet.QUIET_SHOW_S` long), for
    the summary's ``quiet``: ``{"start_ms", "end_ms", "duration_ms", "reason", "explained", "why",
    "cpu_percent"}`` (``end_ms`` None while it lasts); None when the run was not watched live (a
    replay has no clock to be quiet on)."""
    times = getattr(session, "live_times", None)
    if times is None or not times.live:
        return None
    return [dict(p) for p in times.quiet.periods]
