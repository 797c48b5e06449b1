"""The session model: a pure reducer over canonical events (no UI imports, no agent's format).

``Session.apply(event)`` takes one canonical event (:mod:`cursor_watch.core.canonical`: what every
agent's adapter gives) or an :class:`~cursor_watch.core.decode.Invalid` line and returns the
changes it caused as ``(kind, key)`` tuples (see ``CHANGE_*``). The rules here are the
vocabulary's, the same for every agent:

* assistant text: messages (segments) built from deltas, whole texts and ends
  (:class:`~cursor_watch.core.canonical.Text`); a tool call or the run's end closes the open one;
* thinking blocks; tool calls keyed by ``call_id``, their status, times (one clock per call)
  and one-line summary; status notes; the prompt;
* the run's end (:class:`~cursor_watch.core.canonical.RunEnd`) and its usage.

Everything an agent's wire format says is its adapter's (:mod:`cursor_watch.formats`); the
model never sees a native shape and never branches on an agent's name.

The model keeps summaries, not payloads: for each tool call it keeps the byte offsets and
sizes of its first and last events' lines so a view can re-read the full arguments and result
from the source. Memory stays flat on long streams: the newest records of each kind are kept
in memory and older, final ones are moved to a temporary file (:mod:`cursor_watch.core.spill`); the
lists and the call table read them back on demand.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from itertools import islice
from typing import Any, ClassVar, cast

from . import spill
from ..buildinfo import raise_if_compiled_type_error
from .canonical import (TEXT_DELTA, TEXT_END, TEXT_PARTIAL, TIME_RECEIVED, TIME_STREAM, TIME_TOOL,
                        RunEnd, RunStart, Prompt, Silent, StatusNote, Text, Thinking, ToolEnd, ToolEvent, ToolStart,
                        UNREAD_AGENT, ToolUpdate, Unknown, Usage, UsageUpdate, short)
from .decode import Invalid
from .loops import LoopTracker
from .rules import DEFAULT_RULES, RunRules
from .context import ContextTrack
from .spill import SpillDict, SpillFile, SpillList
from .tools import (
    STATUS_FAILURE,
    STATUS_INCOMPLETE,
    STATUS_REJECTED,
    STATUS_RUNNING,
    STATUS_SUCCESS,
)

# Change kinds reported by Session.apply / Session.finish: (kind, key)
CHANGE_HEADER = "header"  # key None
CHANGE_PROMPT = "prompt"  # key None
CHANGE_SEGMENT = "segment"  # key: segment index; text grew or was replaced
CHANGE_SEGMENT_CLOSED = "segment_closed"  # key: segment index; its text is final
CHANGE_THINKING = "thinking"  # key: thinking block index
CHANGE_THINKING_CLOSED = "thinking_closed"  # key: thinking block index
CHANGE_TOOL_STARTED = "tool_started"  # key: call_id; a new row
CHANGE_TOOL_UPDATED = "tool_updated"  # key: call_id; status/times changed
CHANGE_TOOL_DONE = "tool_done"  # key: call_id; it stopped running (once per call)
CHANGE_NOTE = "note"  # key: note index
CHANGE_DIAGNOSTIC = "diagnostic"  # key: diagnostic index
CHANGE_UNKNOWN = "unknown"  # key: unknown event index
CHANGE_RESULT = "result"  # key None
CHANGE_END = "end"  # key None

ARGS_KEEP_CHARS = 300  # per argument: the model keeps a small scalar copy of args, not payloads
LIST_CAP = 100_000  # diagnostics / unknown events listed (all are counted)

# the clock a call's start time came from (ToolCall.start_clock): its end must come from the same
CLOCK_NONE = 0
CLOCK_STREAM = 1  # the stream's (an event's own time, or the tool's)
CLOCK_RECEIVED = 2  # ours: when the event was read (a live stream without times)


def _clock(ts_source: int) -> int:
    return CLOCK_STREAM if ts_source == TIME_STREAM or ts_source == TIME_TOOL else (
        CLOCK_RECEIVED if ts_source == TIME_RECEIVED else CLOCK_NONE)


class Segment:
    """Assistant text between tool calls: one message in a transcript.

    Attributes:
        index: position among segments (0-based).
        line: line number of the event that opened it.
        closed: True once a flush or a tool call ended it.
        ts_ms: ``timestamp_ms`` of its first event, if any.
    """

    __slots__ = ("index", "line", "closed", "ts_ms", "_parts", "_text", "length")

    def __init__(self, index: int, line: int, ts_ms: int | None) -> None:
        self.index = index
        self.line = line
        self.closed = False
        self.ts_ms = ts_ms
        self._parts: list[str] = []
        self._text: str | None = ""
        self.length = 0  # len(text), kept without joining the parts

    @property
    def text(self) -> str:
        """The segment's text so far."""
        if self._text is None:
            self._text = "".join(self._parts)
            self._parts = [self._text]
        return self._text

    def append(self, text: str) -> None:
        self._parts.append(text)
        self._text = None
        self.length += len(text)

    def replace(self, text: str) -> None:
        self._parts = [text]
        self._text = text
        self.length = len(text)

    TEXT_STATE: ClassVar[int] = 4  # where :meth:`state` puts the text (read from spilled states: summary.py)

    def state(self) -> tuple:
        """Everything as a plain tuple (see :mod:`cursor_watch.core.spill`)."""
        return (self.index, self.line, self.closed, self.ts_ms, self.text)

    @classmethod
    def from_state(cls, state: tuple) -> Segment:
        """The inverse of :meth:`state`."""
        seg = cls(state[0], state[1], state[3])
        seg.closed = state[2]
        seg.replace(state[4])
        return seg


class ThinkingBlock:
    """One ``thinking`` delta...completed block (one per model call).

    Attributes:
        index: position among blocks; line: line of its first event;
        completed: True after ``thinking/completed``; ts_ms, end_ms: first/last timestamp.
    """

    __slots__ = ("index", "line", "completed", "ts_ms", "end_ms", "_parts")

    def __init__(self, index: int, line: int, ts_ms: int | None) -> None:
        self.index = index
        self.line = line
        self.completed = False
        self.ts_ms = ts_ms
        self.end_ms = ts_ms
        self._parts: list[str] = []

    @property
    def text(self) -> str:
        """Thinking text so far."""
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    TEXT_STATE: ClassVar[int] = 5  # where :meth:`state` puts the text (read from spilled states: summary.py)

    def state(self) -> tuple:
        """Everything as a plain tuple (see :mod:`cursor_watch.core.spill`)."""
        return (self.index, self.line, self.completed, self.ts_ms, self.end_ms, self.text)

    @classmethod
    def from_state(cls, state: tuple) -> ThinkingBlock:
        """The inverse of :meth:`state`."""
        block = cls(state[0], state[1], state[3])
        block.completed, block.end_ms = state[2], state[4]
        if state[5]:
            block._parts = [state[5]]
        return block


# ToolCall's fields, in the order of its state tuple (:mod:`cursor_watch.core.spill`)
_CALL_FIELDS = (
    "index", "call_id", "tool", "summary", "status", "outcome", "started_ms", "completed_ms",
    "exit_code", "detail", "args", "started_line", "completed_line", "start_span", "end_span",
    "description", "interaction", "model_call_id", "kind", "parent_call_id", "start_clock",
)  # fmt: skip


class ToolCall:
    """One tool call, keyed by ``call_id``.

    Attributes:
        index: 1-based order of first appearance.
        call_id: the id (may contain a newline: real 2026 captures).
        tool: tool name as the agent calls it (Cursor ``shell``, ``read``, ...; Claude Code ``Bash``;
            ``unknown``): the event's ``tool_name`` (an adapter's, :mod:`cursor_watch.formats`), else the kind.
        kind: the canonical kind (``shell``, ``read``, ``edit``, ``mcp``, ``task``, ...: the ``*ToolCall``
            key), which decides the summary line and the detail view.
        parent_call_id: the ``call_id`` of the sub-agent call it ran in (the event's ``parent_call_id``), or "".
        summary: one-line description (see :func:`cursor_watch.core.tools.summarize`).
        status: ``running``, ``success``, ``failure``, ``rejected`` or ``incomplete``.
        outcome: the result's outcome key (``success``, ``failure``, ``rejected``,
            ``error``, ...), "" until completed.
        started_ms, completed_ms: epoch ms: the tool's own times (Cursor's ``startedAtMs``/
            ``completedAtMs``), else its events' times, else (live) when they were read; None if
            unknown (a call seen only as ended, without a start time of its own, has no start).
            Both come from one clock: the stream's, or (live, a stream without times) ours.
        duration_ms: ``completed_ms - started_ms`` when both are known.
        exit_code: shell exit code when reported.
        detail: a failure's or rejection's outcome, reason (whole, on one line) and exit code.
        args: a small scalar copy of the arguments (strings cut), or None; the
            full arguments are re-read by offset.
        started_line, completed_line: line numbers of the events (0 if absent).
        start_span, end_span: ``(offset, size)`` in bytes of the events' lines.
        description: the ``description`` sibling of ``args`` when present.
        interaction: a note about its ``interaction_query`` (approval/question), "" if none.
    """

    __slots__ = _CALL_FIELDS

    index: int
    call_id: str
    tool: str
    summary: str
    status: str
    outcome: str
    started_ms: int | None
    completed_ms: int | None
    exit_code: int | None
    detail: str
    args: dict | None
    started_line: int
    completed_line: int
    start_span: tuple[int, int] | None
    end_span: tuple[int, int] | None
    description: str
    interaction: str
    model_call_id: str
    kind: str
    parent_call_id: str
    start_clock: int

    def __init__(self, index: int, call_id: str) -> None:
        # one unpacking in __slots__ order (as from_state): index, call_id, tool, summary,
        # status, outcome, started_ms, completed_ms, exit_code, detail, args, started_line,
        # completed_line, start_span, end_span, description, interaction, model_call_id,
        # kind (the canonical kind, formats/: decides the detail view; tool is the agent's name),
        # parent_call_id (the sub-agent call, Task/Agent or taskToolCall, it ran in; "" if none),
        # start_clock (the clock of started_ms: CLOCK_NONE, CLOCK_STREAM or CLOCK_RECEIVED)
        (self.index, self.call_id, self.tool, self.summary, self.status, self.outcome, self.started_ms,
         self.completed_ms, self.exit_code, self.detail, self.args, self.started_line, self.completed_line,
         self.start_span, self.end_span, self.description, self.interaction, self.model_call_id, self.kind,
         self.parent_call_id, self.start_clock) = (
            index, call_id, "unknown", "", STATUS_RUNNING, "", None, None, None, "", None, 0, 0, None, None, "", "", "",
            "unknown", "", CLOCK_NONE)

    def state(self) -> tuple:
        """Every slot as a plain tuple (see :mod:`cursor_watch.core.spill`)."""
        return _CALL_STATE(self)

    @classmethod
    def from_state(cls, state: tuple) -> ToolCall:
        """The inverse of :meth:`state` (a ``ValueError`` if its length is not that of the slots)."""
        call = cls(0, "")
        # one unpacking, in __slots__ order (a test checks the order): 18 setattr calls cost
        # more than the summary's whole write of a spilled call
        (call.index, call.call_id, call.tool, call.summary, call.status, call.outcome, call.started_ms,
         call.completed_ms, call.exit_code, call.detail, call.args, call.started_line, call.completed_line,
         call.start_span, call.end_span, call.description, call.interaction, call.model_call_id, call.kind,
         call.parent_call_id, call.start_clock) = state
        return call

    @property
    def duration_ms(self) -> int | None:
        """Milliseconds from start to completion, or None."""
        if self.started_ms is None or self.completed_ms is None:
            return None
        return max(0, self.completed_ms - self.started_ms)

    @property
    def done(self) -> bool:
        """True once the call is no longer running."""
        return self.status != STATUS_RUNNING

    def to_json(self) -> dict:
        """The ``tool_calls[]`` entry of ``--summary --json``."""
        return {
            "call_id": self.call_id,
            "tool": self.tool,
            "status": self.status,
            "summary": self.summary,
            "started_ms": self.started_ms,
            "completed_ms": self.completed_ms,
            "duration_ms": self.duration_ms,
            "outcome": self.outcome,
            "exit_code": self.exit_code,
            "detail": self.detail,
            "line": self.started_line or self.completed_line,
            "kind": self.kind,
            "parent_call_id": self.parent_call_id or None,
        }


def _call_state(c: ToolCall) -> tuple:
    """A call's state tuple, field by field (:data:`_CALL_FIELDS` order): compiled, these are
    native reads, a tenth of what the attrgetter's generic ones cost."""
    return (c.index, c.call_id, c.tool, c.summary, c.status, c.outcome, c.started_ms, c.completed_ms, c.exit_code,
            c.detail, c.args, c.started_line, c.completed_line, c.start_span, c.end_span, c.description,
            c.interaction, c.model_call_id, c.kind, c.parent_call_id, c.start_clock)


# (interpreted, the attrgetter is the cheaper one: a compiled module's file is its extension)
_CALL_STATE: Callable[[ToolCall], tuple] = (
    operator.attrgetter(*_CALL_FIELDS) if __file__.endswith(".py") else _call_state)


_NOTE_FIELDS = ("kind", "subtype", "text", "line", "ts_ms", "call_id", "detail")


class Note:
    """A session event a view shows as a status line.

    Attributes:
        kind: event type (``interaction_query``, ``retry``, ``connection``, ``system``,
            ``session``); subtype: its subtype; text: one-line description;
        line: line number; ts_ms: epoch ms, the stream's time, else when it was read in a live
            watch, else None (a replay of an event without a time); call_id: related tool call ("");
        detail: more than one line can say, as the agent wrote it ("" for none: a hook's output).
    """

    __slots__ = _NOTE_FIELDS

    def __init__(self, kind: str, subtype: str, text: str, line: int, ts_ms: int | None, call_id: str = "",
                 detail: str = "") -> None:
        self.kind = kind
        self.subtype = subtype
        self.text = text
        self.line = line
        self.ts_ms = ts_ms
        self.call_id = call_id
        self.detail = detail

    def state(self) -> tuple:
        """Every field as a plain tuple (see :mod:`cursor_watch.core.spill`)."""
        return _NOTE_STATE(self)


_NOTE_STATE = operator.attrgetter(*_NOTE_FIELDS)  # (kind, subtype, text, line, ts_ms, call_id, detail)


_DIAGNOSTIC_FIELDS = ("line", "offset", "size", "message")


class Diagnostic:
    """A line that was not an event. ``line`` 1-based; ``offset``/``size`` bytes."""

    __slots__ = _DIAGNOSTIC_FIELDS

    def __init__(self, line: int, offset: int, size: int, message: str) -> None:
        self.line = line
        self.offset = offset
        self.size = size
        self.message = message

    def state(self) -> tuple:
        """Every field as a plain tuple (see :mod:`cursor_watch.core.spill`)."""
        return _DIAGNOSTIC_STATE(self)


_DIAGNOSTIC_STATE = operator.attrgetter(*_DIAGNOSTIC_FIELDS)  # (line, offset, size, message)


_UNKNOWN_FIELDS = ("line", "offset", "size", "type", "subtype", "preview")


class UnknownEvent:
    """A valid JSON object of a type we don't model (kept, counted, shown)."""

    __slots__ = _UNKNOWN_FIELDS

    def __init__(self, line: int, offset: int, size: int, type_: str, subtype: str, preview: str) -> None:
        self.line = line
        self.offset = offset
        self.size = size
        self.type = type_
        self.subtype = subtype
        self.preview = preview

    @property
    def label(self) -> str:
        """``type/subtype``, ``type`` (no subtype), or ``(no type)`` (an object without one: the
        views once said ``unknown event /``)."""
        if not self.type:
            return "(no type)" + (f"/{self.subtype}" if self.subtype else "")
        return self.type + (f"/{self.subtype}" if self.subtype else "")

    def state(self) -> tuple:
        """Every field as a plain tuple (see :mod:`cursor_watch.core.spill`)."""
        return _UNKNOWN_STATE(self)


_UNKNOWN_STATE = operator.attrgetter(*_UNKNOWN_FIELDS)  # (line, offset, size, type, subtype, preview)


class ResultInfo:
    """The run's end (:class:`~cursor_watch.core.canonical.RunEnd`) as the model keeps it.

    Attributes:
        subtype, is_error, text, duration_ms, duration_api_ms, request_id: as the agent reported
            them (durations in ms, None when not reported).
        usage: :class:`~cursor_watch.core.canonical.Usage` of the run, or None.
        cost_usd: the cost the agent reported (USD), or None: never computed here.
        model_usage: ``{model: (Usage, cost_usd or None)}``, or None.
        line: the line of the event that ended the run.
    """

    __slots__ = ("subtype", "is_error", "duration_ms", "duration_api_ms", "request_id", "text", "usage", "line",
                 "cost_usd", "model_usage")

    def __init__(self, ev: RunEnd) -> None:
        self.subtype = ev.subtype
        self.is_error = ev.is_error
        self.duration_ms = ev.duration_ms
        self.duration_api_ms = ev.duration_api_ms
        self.request_id = ev.request_id
        self.text = ev.text
        self.line = ev.line
        self.usage = ev.usage
        self.cost_usd = ev.cost_usd
        self.model_usage = ev.model_usage or None

    def to_json(self) -> dict:
        """The ``result`` object of ``--summary --json``."""
        model_usage = None
        if self.model_usage:
            model_usage = {model: {**(u.to_json() if u is not None else {}), "cost_usd": cost}
                           for model, (u, cost) in self.model_usage.items()}
        return {
            "subtype": self.subtype,
            "is_error": self.is_error,
            "duration_ms": self.duration_ms,
            "duration_api_ms": self.duration_api_ms,
            "request_id": self.request_id,
            "text": self.text,
            "usage": self.usage.to_json() if self.usage is not None else None,
            "cost_usd": self.cost_usd,
            "model_usage": model_usage,
        }


class Session:
    """Everything known about one agent run, built event by event.

    Args:
        clock: kept for callers that read "now" from the session (epoch ms); the model itself
            takes every time from the events (an adapter gives an event without a time of its
            own the time it was read, live, or none: :mod:`cursor_watch.core.canonical`).
        hot, batch: records of each kind kept in memory, and moved to the spill file
            at a time; default :data:`cursor_watch.core.spill.HOT_RECORDS` and
            :data:`~cursor_watch.core.spill.SPILL_BATCH`, read when the session is made
            (tests make them tiny to exercise spilling).
        rules: what the views judge the run by (its prices, the summary's stall duration and
            budgets, the repeats that make it looping: :class:`~cursor_watch.core.rules.RunRules`);
            kept as ``rules``.

    Attributes (header, from :class:`~cursor_watch.core.canonical.RunStart` and
    :class:`~cursor_watch.core.canonical.Prompt`): ``session_id``, ``model``, ``cwd``,
    ``api_key_source``, ``permission_mode``, ``prompt`` (str or None); ``agent`` (``cursor``,
    ``claude-code``, ``codex``, ``gemini-cli``) and ``agent_version``, None when unknown;
    ``tools`` (names) and ``mcp_servers`` (``[(name, status)]``) as the run start gave them.
    ``segments``, ``thinking``: lists; ``tool_calls``: ``call_id -> ToolCall`` in
    order of first appearance (a :class:`~cursor_watch.core.spill.SpillDict`: a dict, plus
    ``at(index)``); ``notes``, ``diagnostics``, ``unknown``: lists;
    ``timeline``: ``(kind, key)`` in stream order, kinds ``prompt``, ``segment``,
    ``thinking``, ``tool``, ``note``; ``result``: :class:`ResultInfo` or None;
    ``usage``: the run's usage so far (:class:`~cursor_watch.core.canonical.Usage`, where the agent
    reports it as it goes), else None; ``context``: the context size at each model call and the
    compactions (:class:`~cursor_watch.core.context.ContextTrack`, fed by two hooks: a usage update with
    a call, a ``compaction`` note); ``ended``: input has ended; ``exit_status``: the spawned
    child's status or None. ``first_ts_ms``/``last_ts_ms``: the first and last times the stream
    gave (epoch ms; not the tools' own, not the times events were read); ``first_received_ms``/
    ``last_received_ms``: when its events without times of their own were read, live (epoch ms).
    The lists are :class:`~cursor_watch.core.spill.SpillList`: read-only lists for
    views (``len``, index, slice, iterate); an old record read back is a copy.
    """

    def __init__(self, clock: Callable[[], float] | None = None, hot: int | None = None,
                 batch: int | None = None, rules: RunRules | None = None) -> None:
        self._clock = clock
        self.rules: RunRules = DEFAULT_RULES if rules is None else rules
        self.replayed = False  # a file read after the fact (set by the runner; views read it)
        self.usage: Usage | None = None
        self.context: ContextTrack = ContextTrack()  # context size per model call, compactions (context.py)
        self.spill = SpillFile()
        hot = spill.HOT_RECORDS if hot is None else hot
        batch = spill.SPILL_BATCH if batch is None else batch
        self.session_id: str | None = None
        self.model: str | None = None
        self.cwd: str | None = None
        self.api_key_source: str | None = None
        self.permission_mode: str | None = None
        self.prompt: str | None = None
        self.agent: str | None = None
        self.agent_version: str | None = None
        self.tools: list[str] | None = None
        self.mcp_servers: list[tuple[str, str]] | None = None
        self.subagent_calls = 0  # tool calls that ran inside a sub-agent (a parent_call_id)
        # the longest duration a call has had (None until one has both times): no call's is
        # longer, so a summary looks for recorded stalls only when it reaches the stall limit
        self.longest_call_ms: int | None = None
        sp = self.spill
        self.segments: SpillList[Segment] = SpillList(sp, "segments", _state, Segment.from_state, hot, batch)
        self.thinking: SpillList[ThinkingBlock] = SpillList(sp, "thinking", _state, ThinkingBlock.from_state, hot, batch)
        self.tool_calls: SpillDict[ToolCall] = SpillDict(
            sp, _CALL_STATE, ToolCall.from_state, _call_id_of, _index_of, _done, hot, batch)
        # (their states read by attrgetters: a state() call per record cost more than its pickle)
        self.notes: SpillList[Note] = SpillList(sp, "notes", _NOTE_STATE, _from_args(Note), hot, batch)
        # the agent's fields of the notes that explain a quiet (note index -> fields; cursor_watch.core.quiet)
        self.note_fields: dict[int, dict[str, Any]] = {}
        self.diagnostics: SpillList[Diagnostic] = SpillList(
            sp, "diagnostics", _DIAGNOSTIC_STATE, _from_args(Diagnostic), hot, batch)
        self.unknown: SpillList[UnknownEvent] = SpillList(sp, "unknown", _UNKNOWN_STATE, _from_args(UnknownEvent), hot, batch)
        self.timeline: SpillList[tuple[str, Any]] = SpillList(sp, "timeline", tuple, tuple, hot, batch)
        self.result: ResultInfo | None = None
        # (first timestamp_ms, prompt, first call_id) as they stood when the run's first tool call
        # ended, its first result came or it ended, whichever was first (None until then): what
        # the stream said at its opening, the same live and replayed (--otlp's ids derive from it)
        self.opening: tuple[int | None, str | None, str | None] | None = None
        self.ended = False
        self.exit_status: int | None = None
        self.lines = 0
        self.events = 0
        self.invalid_lines = 0
        self.unknown_events = 0
        self.first_ts_ms: int | None = None
        self.last_ts_ms: int | None = None
        # when the run's events without times of their own were read (live only), epoch ms
        self.first_received_ms: int | None = None
        self.last_received_ms: int | None = None
        self.loops = LoopTracker(self.rules.repeats)  # repeated tool calls, counted as they end (core.loops)
        self.tool_counts = {STATUS_RUNNING: 0, STATUS_SUCCESS: 0, STATUS_FAILURE: 0, STATUS_REJECTED: 0, STATUS_INCOMPLETE: 0}
        self.live_times: Any = None  # when a live watch saw its events (guard.RunTimes; guard.remember)
        self._open: Segment | None = None  # segment receiving text
        self._thinking_open: ThinkingBlock | None = None

    # -- derived ---------------------------------------------------------------

    @property
    def assistant_text(self) -> str:
        """All assistant segments joined with no separator (as Cursor's ``result.result``)."""
        return "".join(s.text for s in self.segments)

    @property
    def thinking_text(self) -> str:
        """All thinking blocks joined with no separator."""
        return "".join(b.text for b in self.thinking)

    @property
    def status(self) -> str:
        """``success``, ``error``, ``incomplete`` (ended without result) or ``running``."""
        if self.result is not None:
            return "error" if self.result.is_error else "success"
        return "incomplete" if self.ended else "running"

    @property
    def unread(self) -> bool:
        """The stream is in a format cursor-watch does not read (every object an unknown event,
        said once by a ``format`` note: :class:`cursor_watch.formats.UnreadFormat`)."""
        return self.agent == UNREAD_AGENT

    def unread_words(self) -> str:
        """What the views say once of an unread stream's unknown events, in place of a line each:
        ``17 JSON objects (lines 1-17) in a format cursor-watch does not read (the first: no type,
        keys id, name, score)``; "" when it has none."""
        n = self.unknown_events
        if not n or not self.unknown:
            return ""
        first, last = self.unknown[0], self.unknown[-1]
        where = f"line {first.line}" if first.line == last.line else f"lines {first.line}-{last.line}"
        what = f"type {first.type}" if first.type else "no type"
        return (f"{n:,} JSON object{'s' if n != 1 else ''} ({where}) in a format cursor-watch does not read "
                f"(the first: {what}" + (f", keys {first.preview})" if first.preview else ")"))

    def counts(self) -> dict:
        """``{"lines", "events", "invalid_lines", "unknown_events", "tool_calls"}``."""
        return {
            "lines": self.lines,
            "events": self.events,
            "invalid_lines": self.invalid_lines,
            "unknown_events": self.unknown_events,
            "tool_calls": len(self.tool_calls),
        }

    def duration_ms(self) -> int | None:
        """The run's recorded duration in ms: the duration its end reports, else the span of the
        times its stream gave (first to last), else None (the stream recorded no times; never a
        time taken from a clock)."""
        result = self.result
        if result is not None and result.duration_ms is not None:
            return result.duration_ms
        if self.first_ts_ms is not None and self.last_ts_ms is not None:
            return max(0, self.last_ts_ms - self.first_ts_ms)
        return None

    def running_calls(self) -> list[ToolCall]:
        """Tool calls still running, in order of appearance (never read from disk:
        a running call is always in memory)."""
        if not self.tool_counts[STATUS_RUNNING]:
            return []
        running = [c for c in self.tool_calls.hot_values() if c.status == STATUS_RUNNING]
        running.sort(key=_index_of)
        return running

    def add_note(self, kind: str, subtype: str, text: str) -> list[tuple[str, Any]]:
        """Record a note that is not a stream event (a source notice, child stderr...)."""
        self.notes.append(Note(kind, subtype, text, self.lines, None))
        index = len(self.notes) - 1
        self.timeline.append(("note", index))
        return [(CHANGE_NOTE, index)]

    # -- reducer ---------------------------------------------------------------

    def apply(self, ev: Any) -> list[tuple[str, Any]]:
        """Apply one canonical event (or an :class:`~cursor_watch.core.decode.Invalid` line); returns
        the changes as ``(kind, key)`` tuples. A malformed event (any exception while applying
        it) becomes a diagnostic, never a crash."""
        if ev.__class__ is Invalid:
            self.invalid_lines += 1
            if len(self.diagnostics) < LIST_CAP:
                self.diagnostics.append(Diagnostic(ev.line, ev.offset, ev.size, ev.message))
                return [(CHANGE_DIAGNOSTIC, len(self.diagnostics) - 1)]
            return []
        self.events += ev.natives
        source = ev.ts_source
        if source == TIME_STREAM:
            ts = ev.ts
            if self.first_ts_ms is None:
                self.first_ts_ms = ts
            end = getattr(ev, "ts_end", None)
            self.last_ts_ms = ts if end is None else end
        elif source == TIME_RECEIVED:
            if self.first_received_ms is None:
                self.first_received_ms = ev.ts
            self.last_received_ms = ev.ts
        if self.spill.error and not self.spill.reported:
            self.spill.reported = True
            self.add_note("session", "memory", self.spill.error)
        handler = _HANDLERS.get(ev.__class__)
        if handler is None:
            return []
        try:
            return handler(self, ev)
        except Exception as err:  # noqa: BLE001 - a malformed event must not stop the watch
            return self._not_applied(ev, err)

    def _not_applied(self, ev: Any, err: Exception) -> list[tuple[str, Any]]:
        """A handler raised on ``ev``: it becomes a diagnostic (the event stays counted)."""
        raise_if_compiled_type_error(err)  # a defect of ours: it must not pass as the stream's
        self.invalid_lines += 1
        msg = f"event could not be applied ({type(err).__name__}: {err})"
        self.diagnostics.append(Diagnostic(ev.line, ev.offset, ev.size, msg))
        return [(CHANGE_DIAGNOSTIC, len(self.diagnostics) - 1)]

    def apply_all(self, items: list, start: int, changes: list[tuple[str, Any]]) -> int:
        """Apply ``items[start:]`` in order, adding their changes to ``changes``.

        Stops before the first :class:`~cursor_watch.core.canonical.RunStart` that is not
        ``implicit`` (it may begin a new run) or :class:`~cursor_watch.core.canonical.RunEnd` of an
        earlier run (``run_line``): the caller routes it (:class:`cursor_watch.core.runs.RunSplitter`)
        and returns its index; else returns ``len(items)``. The model's state is exactly that of
        :meth:`apply` on each item; in ``changes``, consecutive changes of the same segment or
        thinking block made by deltas are folded into one (views read a batch as a set of keys).

        Text deltas and thinking text are most events of a stream with partial output (81 %
        of ``bench/gen_stream.py OUT 20000``'s); with their message or block open and a time
        from the stream they are applied here without :meth:`apply`'s calls and lists.
        """
        n = len(items)
        i = start
        append = changes.append
        events = self.events
        last_ts = self.last_ts_ms
        ready = self.first_ts_ms is not None and not self.spill.error
        fold: tuple[str, Any] = ("", None)  # set before its first use (fold_on is None until then)
        fold_on: Any = None
        while i < n:
            item = items[i]
            cls = item.__class__
            if ready:
                if cls is Text:
                    seg = self._open
                    if seg is not None and item.mode == TEXT_DELTA and item.ts_source == TIME_STREAM:
                        text = item.text
                        events += item.natives
                        last_ts = item.ts_end
                        if text:
                            seg._parts.append(text)
                            seg._text = None
                            seg.length += len(text)
                            if fold_on is not seg:
                                fold_on = seg
                                fold = (CHANGE_SEGMENT, seg.index)
                            if not changes or changes[-1] is not fold:
                                append(fold)
                        i += 1
                        continue
                elif cls is Thinking:
                    block = self._thinking_open
                    if block is not None and not item.done and item.ts_source == TIME_STREAM:
                        events += item.natives
                        last_ts = block.end_ms = item.ts_end
                        text = item.text
                        if text:
                            block._parts.append(text)
                            if fold_on is not block:
                                fold_on = block
                                fold = (CHANGE_THINKING, block.index)
                            if not changes or changes[-1] is not fold:
                                append(fold)
                        i += 1
                        continue
                elif (cls is ToolStart or cls is ToolEnd) and item.ts_source == TIME_STREAM:
                    # a tool call timed by the stream (every Cursor call): the prelude below, inline
                    events += item.natives
                    last_ts = item.ts
                    try:
                        changes += self._tool(item)
                    except Exception as err:  # noqa: BLE001 - a malformed event must not stop the watch
                        changes += self._not_applied(item, err)
                    ready = not self.spill.error
                    i += 1
                    continue
            if (cls is RunStart and not item.implicit) or (cls is RunEnd and item.run_line is not None):
                self.events = events
                self.last_ts_ms = last_ts
                return i
            if ready and cls is not Invalid and item.ts_source == TIME_STREAM:
                # apply()'s prelude, inline: the count and the stream's last time (its first is
                # known: ready), then the event's handler
                events += item.natives
                end = item.ts_end if cls is Text or cls is Thinking else None
                last_ts = item.ts if end is None else end
                try:
                    c = _HANDLERS[cls](self, item)
                except Exception as err:  # noqa: BLE001 - a malformed event must not stop the watch
                    c = self._not_applied(item, err)
                if c:
                    changes += c
                ready = not self.spill.error
                i += 1
                continue
            self.events = events
            self.last_ts_ms = last_ts
            c = self.apply(item)
            if c:
                changes += c
            events, last_ts = self.events, self.last_ts_ms
            ready = self.first_ts_ms is not None and not self.spill.error
            i += 1
        self.events = events
        self.last_ts_ms = last_ts
        return n

    def finish(self, exit_status: int | None = None) -> list[tuple[str, Any]]:
        """End of input: close the open message and thinking block, mark running calls
        ``incomplete``."""
        changes = self._close_segment()
        if self._thinking_open is not None:
            self._thinking_open = None
        if self.opening is None:
            self._set_opening()
        for call in self.running_calls():
            self._set_status(call, STATUS_INCOMPLETE)
            changes.append((CHANGE_TOOL_DONE, call.call_id))
        self.ended = True
        if exit_status is not None:
            self.exit_status = exit_status
        changes.append((CHANGE_END, None))
        return changes

    # -- handlers --------------------------------------------------------------

    def _unknown(self, ev: Unknown) -> list[tuple[str, Any]]:
        self.unknown_events += 1
        if len(self.unknown) >= LIST_CAP:
            return []
        self.unknown.append(UnknownEvent(ev.line, ev.offset, ev.size, ev.type, ev.subtype, ev.keys))
        return [(CHANGE_UNKNOWN, len(self.unknown) - 1)]

    def _silent(self, ev: Silent) -> list[tuple[str, Any]]:
        return []

    def _run_start(self, ev: RunStart) -> list[tuple[str, Any]]:
        if ev.implicit:  # what the stream says of its run outside a run start: only what is unknown
            changed = False
            for attr in _RUN_FIELDS:
                value = getattr(ev, attr)
                if value is not None and getattr(self, attr) is None:
                    setattr(self, attr, value)
                    changed = changed or attr != "session_id"  # (a session id alone: shown with the next change)
            return [(CHANGE_HEADER, None)] if changed else []
        sid = ev.session_id
        if self.session_id is not None and sid != self.session_id:
            # a second session in the same stream (concatenated logs)
            return self._note("session", "init", f"new session {sid} ({ev.model or '?'})", ev)
        for attr in _RUN_FIELDS:
            value = getattr(ev, attr)
            if value is not None:
                setattr(self, attr, value)
        return [(CHANGE_HEADER, None)]

    def _prompt(self, ev: Prompt) -> list[tuple[str, Any]]:
        text = ev.text
        if self.prompt is None:
            self.prompt = text
            self.timeline.append(("prompt", None))
            return [(CHANGE_PROMPT, None)]
        return self._note("user", "", "user: " + short(" ".join(text.split()), 200), ev)

    def _text(self, ev: Text) -> list[tuple[str, Any]]:
        mode = ev.mode
        text = ev.text
        seg = self._open
        if mode == TEXT_DELTA:
            if not text:
                return []
            if seg is None:
                seg = self._new_segment(ev)
            seg.append(text)
            return [(CHANGE_SEGMENT, seg.index)]
        if mode == TEXT_END:
            return self._close_segment()
        changes: list[tuple[str, Any]] = []
        if seg is None:
            if not text:
                return []
            seg = self._new_segment(ev)
            seg.replace(text)
            changes.append((CHANGE_SEGMENT, seg.index))
        elif text and seg.text != text:
            seg.replace(text)
            changes.append((CHANGE_SEGMENT, seg.index))
        if mode == TEXT_PARTIAL:
            return changes
        return changes + self._close_segment()

    def _new_segment(self, ev: Any) -> Segment:
        seg = Segment(len(self.segments), ev.line, ev.ts if ev.ts_source == TIME_STREAM else None)
        self.segments.append(seg)
        self.timeline.append(("segment", seg.index))
        self._open = seg
        return seg

    def _close_segment(self) -> list[tuple[str, Any]]:
        seg = self._open
        if seg is None:
            return []
        self._open = None
        seg.closed = True
        return [(CHANGE_SEGMENT_CLOSED, seg.index)]

    def _thinking(self, ev: Thinking) -> list[tuple[str, Any]]:
        changes: list[tuple[str, Any]] = []
        block = self._thinking_open
        stream = ev.ts_source == TIME_STREAM
        if block is None:
            block = ThinkingBlock(len(self.thinking), ev.line, ev.ts if stream else None)
            self.thinking.append(block)
            self.timeline.append(("thinking", block.index))
            self._thinking_open = block
        if stream:
            block.end_ms = ev.ts_end
        text = ev.text
        if text:
            block._parts.append(text)
            changes.append((CHANGE_THINKING, block.index))
        if ev.done:
            block.completed = True
            block.text  # join the deltas now: one string per block, not one per token
            self._thinking_open = None
            changes.append((CHANGE_THINKING_CLOSED, block.index))
        return changes

    def _new_call(self, call_id: str) -> ToolCall:
        """A new running call, numbered next, in the table and the timeline (once per call)."""
        call = ToolCall(len(self.tool_calls) + 1, call_id)
        self.tool_calls.add(call)  # running: stays in memory while its fields are set
        self.tool_counts[STATUS_RUNNING] += 1
        self.timeline.append(("tool", call_id))
        return call

    def _set_status(self, call: ToolCall, status: str) -> None:
        self.tool_counts[call.status] -= 1
        call.status = status
        self.tool_counts[status] += 1

    def _tool(self, ev: ToolEvent) -> list[tuple[str, Any]]:
        """A tool call's start, update or end (:class:`~cursor_watch.core.canonical.ToolEvent`).

        The open message ends at it. The call keeps the kind and name of its first event that
        names one; a small copy of the arguments while it runs; the summary of its start (else
        of a later event); its times from one clock: the tool's own or the stream's, else (live)
        when its events were read, never both (a start read live and an end the stream timed
        leaves the start unknown, unless a later event gives it the stream's)."""
        changes = self._close_segment() if self._open is not None else []
        call_id = ev.call_id
        kind = ev.kind
        revived = self.tool_calls.revive(call_id)
        new = revived is None
        call = self._new_call(call_id) if revived is None else revived
        if kind != "unknown" or call.kind == "unknown":
            call.kind = kind
            call.tool = ev.name or kind
        parent = ev.parent_call_id
        if parent:
            if not call.parent_call_id:
                self.subagent_calls += 1
            call.parent_call_id = parent
        if ev.model_call_id:
            call.model_call_id = ev.model_call_id
        cls = ev.__class__
        started = cls is ToolStart
        desc = ev.description
        if desc:
            call.description = desc if len(desc) <= 300 else short(desc, 300)
        span = (ev.offset, ev.size)
        done = False
        end: int | None
        if cls is ToolEnd:
            ev = cast(ToolEnd, ev)
            call.completed_line = ev.line
            call.end_span = span
            kept_args = call.args
            call.args = None  # done: a view re-reads the full args by offset (start_span/end_span)
            status = ev.status
            call.outcome = ev.outcome
            call.exit_code = ev.exit_code
            call.detail = "" if status == STATUS_SUCCESS else _detail(status, ev.outcome, ev.reason, ev.exit_code)
            if not call.summary:
                call.summary = ev.summary()
            if call.started_ms is None and ev.started_ms is not None:
                call.started_ms, call.start_clock = ev.started_ms, CLOCK_STREAM
            if ev.ended_ms is not None:
                end, clock = ev.ended_ms, CLOCK_STREAM
            else:
                end, clock = ev.ts, _clock(ev.ts_source)
            if end is not None and call.started_ms is not None and clock != call.start_clock:
                if clock == CLOCK_STREAM:  # the start was read live, the end timed by the stream
                    call.started_ms, call.start_clock = None, CLOCK_NONE
                else:  # the start timed by the stream, the end read live: the end is unknown
                    end = None
            call.completed_ms = end
            if call.started_ms is not None and end is not None:
                self._timed(call)
            if call.status != status:
                done = call.status == STATUS_RUNNING
                self._set_status(call, status)
            if done:
                self.loops.ended(call_id, call.kind, call.tool, call.summary, kept_args, status, ev.line)
        else:
            call.started_line = call.started_line or ev.line
            if started:
                call.start_span = span
            if started or call.args is None or not call.summary:
                args = ev.args()
                if isinstance(args, dict):
                    if call.args is None or started:
                        call.args = _small_args(args)
                    if not call.summary or started:
                        call.summary = ev.summary()
            value: int | None
            if ev.started_ms is not None:
                value, clock = ev.started_ms, CLOCK_STREAM
            else:
                value, clock = ev.ts, _clock(ev.ts_source)
            if value is not None and (call.started_ms is None or (
                    call.start_clock == CLOCK_RECEIVED and clock == CLOCK_STREAM)):
                call.started_ms, call.start_clock = value, clock
                if call.completed_ms is not None:
                    self._timed(call)
        changes.append((CHANGE_TOOL_STARTED if new else CHANGE_TOOL_UPDATED, call_id))
        if done:
            if self.opening is None:
                self._set_opening()
            changes.append((CHANGE_TOOL_DONE, call_id))
        return changes

    def _timed(self, call: ToolCall) -> None:
        """``call`` has both times (set just now): keep :attr:`longest_call_ms` up to date."""
        d = call.duration_ms
        if d is not None and (self.longest_call_ms is None or d > self.longest_call_ms):
            self.longest_call_ms = d

    def _set_opening(self) -> None:
        """Fix :attr:`opening` (the first tool call to end, the first result or the end)."""
        self.opening = self.opening_now()

    def opening_now(self) -> tuple[int | None, str | None, str | None]:
        """``(first timestamp_ms, prompt, first call_id)`` as they stand now: what
        :attr:`opening` is fixed to (``otlp.key_of`` reads it before then)."""
        first = self.tool_calls.at(1) if len(self.tool_calls) else None
        return (self.first_ts_ms, self.prompt, first.call_id if first is not None else None)

    def _status_note(self, ev: StatusNote) -> list[tuple[str, Any]]:
        changes: list[tuple[str, Any]] = []
        call_id = ev.call_id
        if ev.about_call and call_id:
            call = self.tool_calls.revive(call_id)
            if call is not None:
                call.interaction = ev.text
                changes.append((CHANGE_TOOL_UPDATED, call_id))
        if ev.kind == "compaction":
            self.context.add_compaction(ev.fields, ev.line, ev.ts)
        if ev.fields is not None and ev.kind in _QUIET_NOTE_KINDS:
            self.note_fields[len(self.notes)] = ev.fields
        return changes + self._note(ev.kind, ev.subtype, ev.text, ev, call_id, ev.detail)

    def _usage(self, ev: UsageUpdate) -> list[tuple[str, Any]]:
        self.usage = ev.usage
        if ev.call is not None:
            self.context.add_call(ev.call_key, ev.call, ev.line, ev.ts)
        return []

    def _run_end(self, ev: RunEnd) -> list[tuple[str, Any]]:
        changes = self._close_segment()
        if self.opening is None:
            self._set_opening()
        self.result = ResultInfo(ev)
        if self.session_id is None and ev.session_id is not None:
            self.session_id = ev.session_id
        changes.append((CHANGE_RESULT, None))
        return changes

    def _note(self, kind: str, subtype: str, text: str, ev: Any, call_id: str = "", detail: str = ""
              ) -> list[tuple[str, Any]]:
        ts = ev.ts if ev.ts_source == TIME_STREAM or ev.ts_source == TIME_RECEIVED else None
        self.notes.append(Note(kind, subtype, text, ev.line, ts, call_id, detail))
        index = len(self.notes) - 1
        self.timeline.append(("note", index))
        return [(CHANGE_NOTE, index)]


def _state(record: Any) -> tuple:
    return record.state()


def _from_args(cls: type) -> Callable[[tuple], Any]:
    return lambda state: cls(*state)


_call_id_of = operator.attrgetter("call_id")
_index_of = operator.attrgetter("index")


def _done(call: ToolCall) -> bool:
    return call.status != STATUS_RUNNING


_SCALARS = frozenset({str, int, float, bool, type(None)})
_SCALAR_TYPES = (str, int, float, bool)


def _small_args(args: dict) -> dict:
    """A bounded copy of ``args``: scalars only, strings cut to ``ARGS_KEEP_CHARS``.

    The full arguments (an edit's ``streamContent``, a shell call's ``parsingResult``)
    stay in the stream; a view re-reads them by offset.
    """
    # orjson's exact classes are checked first; isinstance only for the rest (subclasses)
    out = {}
    for key, value in islice(args.items(), 24):
        cls = value.__class__
        if cls is str:
            out[key] = value if len(value) <= ARGS_KEEP_CHARS else value[:ARGS_KEEP_CHARS] + "…"
        elif cls in _SCALARS or (cls is not dict and cls is not list and isinstance(value, _SCALAR_TYPES)):
            if isinstance(value, str) and len(value) > ARGS_KEEP_CHARS:
                value = value[:ARGS_KEEP_CHARS] + "…"
            out[key] = value
    return out


def _detail(status: str, outcome: str, reason: str, exit_code: int | None) -> str:
    """A call's one-line detail: ``outcome; reason; exit N`` for a call that did not succeed
    (the outcome where it says more than the status, the whole reason with its whitespace
    folded, a non-zero exit code); "" for a success. Text views cut it
    (:func:`cursor_watch.fmt.shown_detail`); the JSON outputs give it whole."""
    if status == STATUS_SUCCESS:
        return ""
    bits = []
    if outcome and outcome not in ("failure", "rejected", "failed"):
        bits.append(outcome)
    if reason:
        bits.append(" ".join(reason.split()))  # whole: the instruction that matters may be last
    if exit_code is not None and exit_code != 0:
        bits.append(f"exit {exit_code}")
    return "; ".join(bits)


_RUN_FIELDS = ("session_id", "model", "cwd", "api_key_source", "permission_mode", "agent", "agent_version", "tools",
               "mcp_servers")

# notes whose fields cursor_watch.core.quiet reads (a compaction status, a rate limit's reset, a retry's delay)
_QUIET_NOTE_KINDS = frozenset({"status", "rate_limit", "retry", "connection"})

_HANDLERS: dict[type, Callable[..., list]] = {
    RunStart: Session._run_start,
    Prompt: Session._prompt,
    Text: Session._text,
    Thinking: Session._thinking,
    ToolStart: Session._tool,
    ToolUpdate: Session._tool,
    ToolEnd: Session._tool,
    StatusNote: Session._status_note,
    UsageUpdate: Session._usage,
    RunEnd: Session._run_end,
    Unknown: Session._unknown,
    Silent: Session._silent,
}
