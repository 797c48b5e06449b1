"""The session model: a pure reducer over stream events (no UI imports).

``Session.apply(item)`` takes one :class:`~cursor_watch.events.Event` or
:class:`~cursor_watch.events.Invalid` and returns the list of changes it caused,
as ``(kind, key)`` tuples (see ``CHANGE_*``). Every format rule lives here:

* assistant text: deltas, re-sends and flushes (``stream-json-reference.md``
  section 2.3) reconstructed so the text equals ``result.result`` exactly;
* tool calls keyed by ``call_id`` (which may contain a newline), their status,
  times and one-line summary (section 2.5);
* ``interaction_query``, ``retry``, ``connection`` and other ``system`` events as
  session notes (sections 2.6-2.8);
* the ``result`` and the stream's outcome (section 2.9).

The model keeps summaries, not payloads: for each tool call it keeps the byte
offsets and sizes of its ``started``/``completed`` lines so a view can re-read the
full arguments and result from the source. Memory stays flat on long streams: the
newest records of each kind are kept in memory and older, final ones are moved to
a temporary file (:mod:`cursor_watch.spill`); the lists and the call table read
them back on demand.
"""

from __future__ import annotations

import operator
import time
from collections.abc import Callable
from itertools import islice
from typing import Any

import orjson
from msgspec import UNSET

from .events import Event, Invalid, invalid_item
from .formats.common import CallEvent
from . import spill
from .formats.cursor_typed import (
    INT64_MIN,
    UINT64_END,
    AssistantEvent,
    Irregular,
    Message,
    ThinkingEvent,
    ToolCallEvent,
    ToolFields,
    tool_fields,
)
from .spill import SpillDict, SpillFile, SpillList
from .tools import (
    STATUS_FAILURE,
    STATUS_INCOMPLETE,
    STATUS_REJECTED,
    STATUS_RUNNING,
    STATUS_SUCCESS,
    classify_result,
    find_variant,
    folded,
    summarize,
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
PREVIEW_CHARS = 2_000  # bounded previews of outputs/errors kept per call
LIST_CAP = 100_000  # diagnostics / unknown events listed (all are counted)


def _int(value: Any) -> int | None:
    """int64 fields are strings in real streams (``startedAtMs``); accept both."""
    cls = value.__class__
    if cls is int:
        return value
    if cls is str and len(value) < 19 and value.isascii() and value.isdigit():
        return int(value)  # the common case: "1786676149877" (ASCII digits: int() can't fail)
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        try:  # "²".isdigit() is True but int("²") fails; so do strings past 4300 digits
            return int(value)
        except ValueError:
            return None
    return None


def _typed_text(message: Message | None) -> str:
    """:func:`_text_of` for a typed ``message`` (cursor_typed.Message)."""
    if message is None:
        return ""
    content = message.content
    if content.__class__ is list:
        return "".join(p.text for p in content if p.type == "text" and isinstance(p.text, str))
    return content if isinstance(content, str) else ""


def _text_of(message: Any) -> str:
    """Concatenate the ``text`` items of a ``message.content`` list."""
    try:  # the shape of every real capture: one {"type": "text", "text": str} item
        content = message["content"]
        if content.__class__ is list and len(content) == 1:
            item = content[0]
            if item["type"] == "text":
                text = item["text"]
                if text.__class__ is str:
                    return text
    except (TypeError, KeyError, IndexError):
        pass
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for item in content:
        if isinstance(item, dict) and item.get("type") == "text" and isinstance(item.get("text"), str):
            parts.append(item["text"])
    return "".join(parts)


def _short(text: str, limit: int = PREVIEW_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more chars)"


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

    TEXT_STATE = 4  # where :meth:`state` puts the text (read from spilled states: summary.py)

    def state(self) -> tuple:
        """Everything as a plain tuple (see :mod:`cursor_watch.spill`)."""
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

    TEXT_STATE = 5  # where :meth:`state` puts the text (read from spilled states: summary.py)

    def state(self) -> tuple:
        """Everything as a plain tuple (see :mod:`cursor_watch.spill`)."""
        return (self.index, self.line, self.completed, self.ts_ms, self.end_ms, self.text)

    @classmethod
    def from_state(cls, state: tuple) -> ThinkingBlock:
        """The inverse of :meth:`state`."""
        block = cls(state[0], state[1], state[3])
        block.completed, block.end_ms = state[2], state[4]
        if state[5]:
            block._parts = [state[5]]
        return block


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
        summary: one-line description (see :func:`cursor_watch.tools.summarize`).
        status: ``running``, ``success``, ``failure``, ``rejected`` or ``incomplete``.
        outcome: the result's outcome key (``success``, ``failure``, ``rejected``,
            ``error``, ...), "" until completed.
        started_ms, completed_ms: epoch ms (``startedAtMs``/``completedAtMs``, else the
            events' ``timestamp_ms``, else arrival time); None if unknown (a call seen only
            as ``completed`` without ``startedAtMs`` has no start).
        duration_ms: ``completed_ms - started_ms`` when both are known.
        exit_code: shell exit code when reported.
        detail: a short reason for failures and rejections (bounded).
        args: a small scalar copy of the arguments (strings cut), or None; the
            full arguments are re-read by offset.
        started_line, completed_line: line numbers of the events (0 if absent).
        start_span, end_span: ``(offset, size)`` in bytes of the events' lines.
        description: the ``description`` sibling of ``args`` when present.
        interaction: a note about its ``interaction_query`` (approval/question), "" if none.
    """

    __slots__ = (
        "index", "call_id", "tool", "summary", "status", "outcome", "started_ms", "completed_ms",
        "exit_code", "detail", "args", "started_line", "completed_line", "start_span", "end_span",
        "description", "interaction", "model_call_id", "kind", "parent_call_id",
    )  # fmt: skip

    def __init__(self, index: int, call_id: str) -> None:
        # one unpacking in __slots__ order (as from_state): index, call_id, tool, summary,
        # status, outcome, started_ms, completed_ms, exit_code, detail, args, started_line,
        # completed_line, start_span, end_span, description, interaction, model_call_id,
        # kind (the canonical kind, formats/: decides the detail view; tool is the agent's name),
        # parent_call_id (the sub-agent call, Task/Agent or taskToolCall, it ran in; "" if none)
        (self.index, self.call_id, self.tool, self.summary, self.status, self.outcome, self.started_ms,
         self.completed_ms, self.exit_code, self.detail, self.args, self.started_line, self.completed_line,
         self.start_span, self.end_span, self.description, self.interaction, self.model_call_id, self.kind,
         self.parent_call_id) = (
            index, call_id, "unknown", "", STATUS_RUNNING, "", None, None, None, "", None, 0, 0, None, None, "", "", "",
            "unknown", "")

    def state(self) -> tuple:
        """Every slot as a plain tuple (see :mod:`cursor_watch.spill`)."""
        return _CALL_STATE(self)

    @classmethod
    def from_state(cls, state: tuple) -> ToolCall:
        """The inverse of :meth:`state` (a ``ValueError`` if its length is not that of the slots)."""
        call = cls.__new__(cls)
        # one unpacking, in __slots__ order (a test checks the order): 18 setattr calls cost
        # more than the summary's whole write of a spilled call
        (call.index, call.call_id, call.tool, call.summary, call.status, call.outcome, call.started_ms,
         call.completed_ms, call.exit_code, call.detail, call.args, call.started_line, call.completed_line,
         call.start_span, call.end_span, call.description, call.interaction, call.model_call_id, call.kind,
         call.parent_call_id) = state
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


_CALL_STATE = operator.attrgetter(*ToolCall.__slots__)


class Note:
    """A session event a view shows as a status line.

    Attributes:
        kind: event type (``interaction_query``, ``retry``, ``connection``, ``system``,
            ``session``); subtype: its subtype; text: one-line description;
        line: line number; ts_ms: ``timestamp_ms`` if any; call_id: related tool call ("").
    """

    __slots__ = ("kind", "subtype", "text", "line", "ts_ms", "call_id")

    def __init__(self, kind: str, subtype: str, text: str, line: int, ts_ms: int | None, call_id: str = "") -> None:
        self.kind = kind
        self.subtype = subtype
        self.text = text
        self.line = line
        self.ts_ms = ts_ms
        self.call_id = call_id

    def state(self) -> tuple:
        """Every field as a plain tuple (see :mod:`cursor_watch.spill`)."""
        return _NOTE_STATE(self)


_NOTE_STATE = operator.attrgetter(*Note.__slots__)  # (kind, subtype, text, line, ts_ms, call_id)


class Diagnostic:
    """A line that was not an event. ``line`` 1-based; ``offset``/``size`` bytes."""

    __slots__ = ("line", "offset", "size", "message")

    def __init__(self, line: int, offset: int, size: int, message: str) -> None:
        self.line = line
        self.offset = offset
        self.size = size
        self.message = message

    def state(self) -> tuple:
        """Every field as a plain tuple (see :mod:`cursor_watch.spill`)."""
        return _DIAGNOSTIC_STATE(self)


_DIAGNOSTIC_STATE = operator.attrgetter(*Diagnostic.__slots__)  # (line, offset, size, message)


class UnknownEvent:
    """A valid JSON object of a type we don't model (kept, counted, shown)."""

    __slots__ = ("line", "offset", "size", "type", "subtype", "preview")

    def __init__(self, line: int, offset: int, size: int, type_: str, subtype: str, preview: str) -> None:
        self.line = line
        self.offset = offset
        self.size = size
        self.type = type_
        self.subtype = subtype
        self.preview = preview

    def state(self) -> tuple:
        """Every field as a plain tuple (see :mod:`cursor_watch.spill`)."""
        return _UNKNOWN_STATE(self)


_UNKNOWN_STATE = operator.attrgetter(*UnknownEvent.__slots__)  # (line, offset, size, type, subtype, preview)


class ResultInfo:
    """The ``result`` event (Cursor's docs; ``usage`` from 2026.08 captures).

    ``usage`` is ``None`` or a dict with ``input_tokens``, ``output_tokens``,
    ``cache_read_tokens``, ``cache_write_tokens`` (ints or None), plus ``reasoning_tokens``
    when the event gives it; the stream's camelCase names (``inputTokens``...) and snake_case
    ones are both read. ``cost_usd`` (float or None) and ``model_usage`` (``{model: {the usage
    keys, "cost_usd"}}`` or None) are the canonical keys an adapter sets where the agent reports
    a cost (Claude Code's ``total_cost_usd`` and ``modelUsage``); never computed here.
    """

    __slots__ = ("subtype", "is_error", "duration_ms", "duration_api_ms", "request_id", "text", "usage", "line",
                 "cost_usd", "model_usage")

    def __init__(self, data: dict, line: int) -> None:
        self.subtype = data.get("subtype") if isinstance(data.get("subtype"), str) else ""
        self.is_error = data.get("is_error") is True
        self.duration_ms = _int(data.get("duration_ms"))
        self.duration_api_ms = _int(data.get("duration_api_ms"))
        rid = data.get("request_id")
        self.request_id = rid if isinstance(rid, str) else None
        text = data.get("result")
        self.text = text if isinstance(text, str) else ("" if text is None else str(text))
        self.line = line
        self.usage = None
        usage = data.get("usage")
        if isinstance(usage, dict):
            def tok(*names: str) -> int | None:
                for n in names:
                    if n in usage:
                        return _int(usage[n])
                return None

            self.usage = {
                "input_tokens": tok("inputTokens", "input_tokens"),
                "output_tokens": tok("outputTokens", "output_tokens"),
                "cache_read_tokens": tok("cacheReadTokens", "cache_read_tokens", "cache_read_input_tokens"),
                "cache_write_tokens": tok("cacheWriteTokens", "cache_write_tokens", "cache_creation_input_tokens"),
            }
            if "reasoning_tokens" in usage:
                self.usage["reasoning_tokens"] = _int(usage["reasoning_tokens"])
        cost = data.get("cost_usd")
        self.cost_usd = float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None
        mu = data.get("model_usage")
        self.model_usage = mu if isinstance(mu, dict) and mu else None

    def to_json(self) -> dict:
        """The ``result`` object of ``--summary --json``."""
        return {
            "subtype": self.subtype,
            "is_error": self.is_error,
            "duration_ms": self.duration_ms,
            "duration_api_ms": self.duration_api_ms,
            "request_id": self.request_id,
            "text": self.text,
            "usage": self.usage,
            "cost_usd": self.cost_usd,
            "model_usage": self.model_usage,
        }


class Session:
    """Everything known about one cursor-agent run, built event by event.

    Args:
        clock: returns "now" in epoch ms; used only when an event carries no time and the
            session is not ``replayed`` (an attribute: True for a file replayed after the fact,
            whose events without times then get none; set by :class:`cursor_watch.runner.Monitor`).
        hot, batch: records of each kind kept in memory, and moved to the spill file
            at a time; default :data:`cursor_watch.spill.HOT_RECORDS` and
            :data:`~cursor_watch.spill.SPILL_BATCH`, read when the session is made
            (tests make them tiny to exercise spilling).

    Attributes (header, from ``system/init`` and ``user``): ``session_id``, ``model``,
    ``cwd``, ``api_key_source``, ``permission_mode``, ``prompt`` (str or None); ``agent`` (the
    reader's label: ``cursor``, ``claude-code``, ``codex``, ``gemini-cli``) and ``agent_version``
    (an init's ``agent_version``), None when unknown.
    ``segments``, ``thinking``: lists; ``tool_calls``: ``call_id -> ToolCall`` in
    order of first appearance (a :class:`~cursor_watch.spill.SpillDict`: a dict, plus
    ``at(index)``); ``notes``, ``diagnostics``, ``unknown``: lists;
    ``timeline``: ``(kind, key)`` in stream order, kinds ``prompt``, ``segment``,
    ``thinking``, ``tool``, ``note``; ``result``: :class:`ResultInfo` or None;
    ``ended``: input has ended; ``exit_status``: the spawned child's status or None.
    The lists are :class:`~cursor_watch.spill.SpillList`: read-only lists for
    views (``len``, index, slice, iterate); an old record read back is a copy.
    """

    def __init__(self, clock: Callable[[], float] | None = None, hot: int | None = None,
                 batch: int | None = None) -> None:
        self._clock = clock or (lambda: time.time() * 1000.0)
        self.replayed = False  # a file read after the fact: an event without a time gets none
        # token usage so far where an agent reports it as it goes (an adapter's ``running_usage``
        # key, e.g. Claude Code's per-message usage); the result's usage is the run's figure
        self.running_usage: dict | None = None
        self.spill = SpillFile()
        hot = spill.HOT_RECORDS if hot is None else hot
        batch = spill.SPILL_BATCH if batch is None else batch
        self.session_id: str | None = None
        self.model: str | None = None
        self.cwd: str | None = None
        self.api_key_source: str | None = None
        self.permission_mode: str | None = None
        self.prompt: str | None = None
        self.agent: str | None = None  # cursor, claude-code, codex, gemini-cli (set by the reader: formats/)
        self.agent_version: str | None = None  # the CLI's version, where the stream gives it
        self.subagent_calls = 0  # tool calls that ran inside a sub-agent (a parent_call_id)
        # the longest duration a call has had (None until one has both times): no call's is
        # longer, so a summary looks for recorded stalls only when it reaches the stall limit
        self.longest_call_ms: int | None = None
        sp = self.spill

        def spill_list(name: str, decode: Callable[[tuple], Any], encode: Callable[[Any], tuple] = _state) -> SpillList:
            return SpillList(sp, name, encode, decode, hot, batch)

        self.segments: SpillList[Segment] = spill_list("segments", Segment.from_state)
        self.thinking: SpillList[ThinkingBlock] = spill_list("thinking", ThinkingBlock.from_state)
        self.tool_calls: SpillDict[ToolCall] = SpillDict(
            sp, _CALL_STATE, ToolCall.from_state, _call_id_of, _index_of, _done, hot, batch)
        # (their states read by attrgetters: a state() call per record cost more than its pickle)
        self.notes: SpillList[Note] = spill_list("notes", _from_args(Note), _NOTE_STATE)
        self.diagnostics: SpillList[Diagnostic] = spill_list("diagnostics", _from_args(Diagnostic), _DIAGNOSTIC_STATE)
        self.unknown: SpillList[UnknownEvent] = spill_list("unknown", _from_args(UnknownEvent), _UNKNOWN_STATE)
        self.timeline: SpillList[tuple[str, Any]] = spill_list("timeline", tuple, tuple)
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
        self.tool_counts = {STATUS_RUNNING: 0, STATUS_SUCCESS: 0, STATUS_FAILURE: 0, STATUS_REJECTED: 0, STATUS_INCOMPLETE: 0}
        self._open: Segment | None = None  # segment receiving deltas
        self._tentative: str | None = None  # a delta equal to the open segment: delta or re-send?
        self._resent: Segment | None = None  # closed by a re-send; a later flush of it is a duplicate
        self._thinking_open: ThinkingBlock | None = None
        self._requests: dict[str, str] = {}  # interaction_query kind -> call_id of its last request

    # -- derived ---------------------------------------------------------------

    @property
    def assistant_text(self) -> str:
        """All assistant segments joined with no separator (as ``result.result``)."""
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
        """The run's recorded duration in ms: its ``result``'s ``duration_ms``, else the span of
        its events' ``timestamp_ms`` (first to last), else None (the stream recorded no times;
        never a time taken from the clock)."""
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

    def apply(self, item: Event | Invalid) -> list[tuple[str, Any]]:
        """Apply one parsed item; returns the changes as ``(kind, key)`` tuples. Never raises."""
        if isinstance(item, Invalid):
            self.invalid_lines += 1
            changes = self._settle_tentative(resend=False)
            if len(self.diagnostics) < LIST_CAP:
                self.diagnostics.append(Diagnostic(item.line, item.offset, item.size, item.message))
                changes.append((CHANGE_DIAGNOSTIC, len(self.diagnostics) - 1))
            return changes
        if item.__class__ is CallEvent:
            return self._call_event(item)
        if item.__class__ in _TYPED:
            # a typed event off its fast path: the generic rules on the generic event
            item = _generic(item)
            if item.__class__ is Invalid:
                return self.apply(item)
        self.events += 1
        data = item.data
        ts = data.get("timestamp_ms")
        if ts is not None and ts.__class__ is not int:
            ts = _int(ts)
        if ts is not None:
            if self.first_ts_ms is None:
                self.first_ts_ms = ts
            self.last_ts_ms = ts
        if self.session_id is None and item.type != "system":
            # no init seen (yet): every 2026 event carries session_id (reference 2)
            sid = data.get("session_id")
            if isinstance(sid, str):
                self.session_id = sid
        running = data.get("running_usage")
        if running.__class__ is dict:
            self.running_usage = running
        if self.spill.error and not self.spill.reported:
            self.spill.reported = True
            self.add_note("session", "memory", self.spill.error)
        try:
            handler = _HANDLERS.get(item.type) if item.known else None
            if handler is None:
                return self._unknown(item)
            return handler(self, item, data, ts)
        except Exception as err:  # noqa: BLE001 - a malformed event must not stop the watch
            return self._not_applied(item, err)

    def _not_applied(self, item: Any, err: Exception) -> list[tuple[str, Any]]:
        """A handler raised on ``item``: it becomes a diagnostic (the event stays counted)."""
        self.invalid_lines += 1
        msg = f"event could not be applied ({type(err).__name__}: {err})"
        self.diagnostics.append(Diagnostic(item.line, item.offset, item.size, msg))
        return [(CHANGE_DIAGNOSTIC, len(self.diagnostics) - 1)]

    def apply_all(self, items: list[Event | Invalid], start: int, changes: list[tuple[str, Any]]) -> int:
        """Apply ``items[start:]`` in order, adding their changes to ``changes``.

        Stops before the first ``system/init`` event, which may begin a new run (the caller
        routes it: :class:`cursor_watch.runs.RunSplitter`), and returns its index; else
        returns ``len(items)``. (Any other ``system`` event is applied here: what the
        splitter does with one is :meth:`apply`.) The model's state is exactly that of :meth:`apply` on each
        item; in ``changes``, consecutive changes of the same segment or thinking block made by
        deltas are folded into one (views read a batch as a set of keys).

        Thinking deltas and assistant deltas (shape A) are most events of a stream with
        partial output (reference sections 2.3, 2.4; 81 % of the events of
        ``bench/gen_stream.py OUT 20000``); they are applied here without the general
        path's calls and lists when nothing else is pending: no delta held as a possible
        re-send, their thinking block or segment already open, the session known, an
        integer ``timestamp_ms`` (as in every real capture), and for text a
        ``message.content`` of one text item not as long as the open segment (an equal
        one may be a re-send). Those fast paths take the typed events of
        :mod:`cursor_watch.formats.cursor_typed` and read their attributes; so do typed
        ``tool_call`` events (:meth:`_typed_tool_call`, arguments and outcome read from the
        raw JSON only where needed). Anything else goes through :meth:`apply`, a typed event
        as the generic :class:`Event` of its line.
        """
        n = len(items)
        i = start
        append = changes.append
        lo, hi = INT64_MIN, UINT64_END
        # the deltas inlined below count events and the last time in locals, written back
        # (sync) before anything else runs; they never change what ``ready`` depends on
        events = self.events
        last_ts = self.last_ts_ms
        ready = self._typed_ready()
        # consecutive changes of one segment or block are folded into one (every consumer
        # reads a batch as a set of keys: the TUI dedups it, the printers ignore these kinds)
        fold: tuple[str, Any] | None = None
        fold_on: Any = None
        while i < n:
            item = items[i]
            cls = item.__class__
            if ready:
                # typed events (cursor_typed): the hot shapes read struct attributes, the rest
                # of their kind goes through the same rules as the generic path
                # (_thinking_text, _assistant_text) without decoding the line again; an event
                # without an integer timestamp_ms (none in real captures) goes the generic way
                if cls is ThinkingEvent:
                    ts = item.timestamp_ms
                    if ts.__class__ is int and lo <= ts < hi:
                        block = self._thinking_open
                        if block is not None and item.subtype == "delta":
                            events += 1
                            last_ts = ts
                            block.end_ms = ts
                            text = item.text
                            if text.__class__ is str and text:
                                block._parts.append(text)
                                if fold_on is not block:
                                    fold_on = block
                                    fold = (CHANGE_THINKING, block.index)
                                if not changes or changes[-1] is not fold:
                                    append(fold)
                            i += 1
                            continue
                        self.events = events + 1
                        self.last_ts_ms = ts
                        try:
                            changes += self._thinking_text(item, item.text, ts)
                        except Exception as err:  # noqa: BLE001 - as apply()
                            changes += self._not_applied(item, err)
                        events, ready = self.events, self._typed_ready()
                        last_ts = ts
                        i += 1
                        continue
                elif cls is AssistantEvent:
                    ts = item.timestamp_ms
                    if ts.__class__ is int and lo <= ts < hi:
                        seg = self._open
                        msg = item.message
                        # shape A (a delta): with timestamp_ms and without model_call_id
                        if seg is not None and msg is not None and item.model_call_id is UNSET:
                            content = msg.content
                            if content.__class__ is list and len(content) == 1:
                                part = content[0]
                                text = part.text
                                if part.type == "text" and text.__class__ is str and text:
                                    size = len(text)
                                    if size != seg.length:
                                        events += 1
                                        last_ts = ts
                                        self._resent = None
                                        seg._parts.append(text)
                                        seg._text = None
                                        seg.length += size
                                        if fold_on is not seg:
                                            fold_on = seg
                                            fold = (CHANGE_SEGMENT, seg.index)
                                        if not changes or changes[-1] is not fold:
                                            append(fold)
                                        i += 1
                                        continue
                        self.events = events + 1
                        self.last_ts_ms = ts
                        try:
                            changes += self._assistant_text(item, _typed_text(msg), item.model_call_id is not UNSET, ts)
                        except Exception as err:  # noqa: BLE001 - as apply()
                            changes += self._not_applied(item, err)
                        events, ready = self.events, self._typed_ready()
                        last_ts = ts
                        i += 1
                        continue
                elif cls is ToolCallEvent:
                    self.events = events
                    self.last_ts_ms = last_ts
                    c = self._typed_tool_call(item)
                    events, last_ts = self.events, self.last_ts_ms
                    if c is not None:
                        changes += c
                        ready = self._typed_ready()
                        i += 1
                        continue
            self.events = events
            self.last_ts_ms = last_ts
            if cls is Event:
                t = item.type
                if t == "system" and item.subtype == "init":
                    return i
                if (t == "thinking" or t == "assistant") and self.session_id is not None and not self.spill.error:
                    # an adapter's text events (no time of their own, no usage so far): apply()'s
                    # prelude is only the count for them, so their handler is called here
                    data = item.data
                    if "timestamp_ms" not in data and "running_usage" not in data:
                        self.events = events + 1
                        try:
                            c = (self._thinking_text(item, data.get("text"), None) if t == "thinking"
                                 else self._assistant(item, data, None))
                        except Exception as err:  # noqa: BLE001 - as apply()
                            c = self._not_applied(item, err)
                        if c:
                            changes += c
                        events, ready = self.events, self._typed_ready()
                        i += 1
                        continue
            c = self.apply(item)
            if c:
                changes += c
            events, last_ts, ready = self.events, self.last_ts_ms, self._typed_ready()
            i += 1
        self.events = events
        self.last_ts_ms = last_ts
        return n

    def _typed_ready(self) -> bool:
        """Typed events may take apply_all's paths: nothing held as a possible re-send, the
        session and a time known (so apply's prelude is only the counts), spilling working."""
        return (self._tentative is None and self.first_ts_ms is not None and self.session_id is not None
                and not self.spill.error)

    def finish(self, exit_status: int | None = None) -> list[tuple[str, Any]]:
        """End of input: settle pending text, mark running calls ``incomplete``."""
        changes = self._settle_tentative(resend=False)
        changes += self._close_segment()
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

    def _unknown(self, item: Event) -> list[tuple[str, Any]]:
        self.unknown_events += 1
        if len(self.unknown) >= LIST_CAP:
            return []
        keys = ", ".join(list(item.data.keys())[:8])
        self.unknown.append(UnknownEvent(item.line, item.offset, item.size, item.type, item.subtype, keys))
        return [(CHANGE_UNKNOWN, len(self.unknown) - 1)]

    def _system(self, item: Event, data: dict, ts: int | None) -> list[tuple[str, Any]]:
        changes = self._settle_tentative(resend=False)
        if item.subtype == "init":
            sid = data.get("session_id")
            if self.session_id is not None and sid != self.session_id:
                # a second session in the same stream (concatenated logs)
                return changes + self._note("session", "init", f"new session {sid} ({data.get('model') or '?'})", item, ts)
            for attr, key in (
                ("session_id", "session_id"),
                ("model", "model"),
                ("cwd", "cwd"),
                ("api_key_source", "apiKeySource"),
                ("permission_mode", "permissionMode"),
                ("agent", "agent"),
                ("agent_version", "agent_version"),
            ):
                value = data.get(key)
                if value is not None and not isinstance(value, str):
                    value = str(value)
                if value is not None:
                    setattr(self, attr, value)
            return changes + [(CHANGE_HEADER, None)]
        note = data.get("note")  # an adapter's status line, already worded
        if note.__class__ is str:
            cid = data.get("note_call_id")
            return changes + self._note(data.get("note_kind") or "system", item.subtype, note, item, ts,
                                        cid if cid.__class__ is str else "")
        fields = {k: v for k, v in data.items() if k not in ("type", "subtype", "session_id", "timestamp_ms")}
        text = item.subtype or "system"
        if fields:
            text += " " + ", ".join(f"{k}={_short(str(v), 80)}" for k, v in list(fields.items())[:6])
        return changes + self._note("system", item.subtype, text, item, ts)

    def _user(self, item: Event, data: dict, ts: int | None) -> list[tuple[str, Any]]:
        changes = self._settle_tentative(resend=False)
        text = _text_of(data.get("message"))
        if self.prompt is None:
            self.prompt = text
            self.timeline.append(("prompt", None))
            changes.append((CHANGE_PROMPT, None))
            return changes
        return changes + self._note("user", "", "user: " + _short(" ".join(text.split()), 200), item, ts)

    def _assistant(self, item: Event, data: dict, ts: int | None) -> list[tuple[str, Any]]:
        # an adapter's deltas carry "delta" (Claude Code's text_delta has no time of its own)
        return self._assistant_text(item, _text_of(data.get("message")),
                                    "model_call_id" in data or ("timestamp_ms" not in data and "delta" not in data), ts,
                                    "message_open" in data)

    def _assistant_text(self, item: Any, text: str, is_flush: bool, ts: int | None,
                        keep_open: bool = False) -> list[tuple[str, Any]]:
        """The ``assistant`` rules on its text; ``is_flush``: it has ``model_call_id`` or no
        ``timestamp_ms`` and no ``delta`` (the CLI's consolidation of the deltas, reference 2.3;
        an adapter marks its untimed deltas with ``delta``). ``keep_open``: an adapter's flush
        with ``message_open`` (the message's text so far, more may follow): it sets the open
        segment's text, or begins one, and leaves it open."""
        changes: list[tuple[str, Any]] = []
        if self._tentative is not None:
            tent = self._tentative
            self._tentative = None
            if not is_flush:
                changes += self._append_text(tent, item, ts)  # a delta followed by a delta: it was real
            else:
                open_text = self._open.text if self._open is not None else ""
                if text == open_text + tent:
                    changes += self._append_text(tent, item, ts)
                # else: it was a re-send of the open text; drop it
        if is_flush:
            resent, self._resent = self._resent, None
            seg = self._open
            if seg is None:
                if not text or (resent is not None and text == resent.text):
                    return changes  # empty, or a flush of a segment already re-sent
                seg = self._new_segment(item, ts)
                seg.replace(text)
                changes.append((CHANGE_SEGMENT, seg.index))
            elif seg.text != text and text:
                # partial output: the flush is the CLI's own consolidation of the deltas
                seg.replace(text)
                changes.append((CHANGE_SEGMENT, seg.index))
            return changes if keep_open else changes + self._close_segment()
        # shape A: a delta, or a re-send of the whole pending text
        self._resent = None
        if not text:
            return changes
        if self._open is not None and len(text) == self._open.length and text == self._open.text:
            self._tentative = text
            return changes
        return changes + self._append_text(text, item, ts)

    def _append_text(self, text: str, item: Event, ts: int | None) -> list[tuple[str, Any]]:
        seg = self._open
        if seg is None:
            seg = self._new_segment(item, ts)
        seg.append(text)
        return [(CHANGE_SEGMENT, seg.index)]

    def _new_segment(self, item: Event, ts: int | None) -> Segment:
        seg = Segment(len(self.segments), item.line, ts)
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

    def _settle_tentative(self, resend: bool) -> list[tuple[str, Any]]:
        """A non-assistant event arrived while a delta equal to the open text was held.

        The CLI re-sends the buffered text (shape A) right before an
        ``interaction_query`` or a ``retry`` (maestro-06; maestro's reading of the
        bundle names those two flush sites for shape A), so there (``resend``) the
        held text was a re-send: drop it and close the segment (its later flush is a
        duplicate). Before any other event it was a real delta that happened to
        repeat the text so far ("ha", "ha"): keep it.
        """
        tent = self._tentative
        if tent is None:
            return []
        self._tentative = None
        seg = self._open
        if not resend and seg is not None:
            seg.append(tent)
            return [(CHANGE_SEGMENT, seg.index)]
        changes = self._close_segment()
        self._resent = seg
        return changes

    def _boundary(self, resend: bool = False) -> list[tuple[str, Any]]:
        """A tool call or query ends the open segment (text between tool calls)."""
        changes = self._settle_tentative(resend)
        seg = self._open
        changes += self._close_segment()
        if seg is not None:
            self._resent = seg
        return changes

    def _thinking(self, item: Event, data: dict, ts: int | None) -> list[tuple[str, Any]]:
        return self._thinking_text(item, data.get("text"), ts)

    def _thinking_text(self, item: Any, text: Any, ts: int | None) -> list[tuple[str, Any]]:
        """The ``thinking`` rules; ``text`` is the event's raw ``text`` value."""
        changes = self._settle_tentative(resend=False)
        block = self._thinking_open
        if block is None:
            block = ThinkingBlock(len(self.thinking), item.line, ts)
            self.thinking.append(block)
            self.timeline.append(("thinking", block.index))
            self._thinking_open = block
        if ts is not None:
            block.end_ms = ts
        if item.subtype == "completed":
            block.completed = True
            block.text  # join the deltas now: one string per block, not one per token
            self._thinking_open = None
            changes.append((CHANGE_THINKING_CLOSED, block.index))
            return changes
        if isinstance(text, str) and text:
            block._parts.append(text)
            changes.append((CHANGE_THINKING, block.index))
        return changes

    def _new_call(self, call_id: str) -> ToolCall:
        """A new running call, numbered next, in the table and the timeline (once per call)."""
        call = ToolCall(len(self.tool_calls) + 1, call_id)
        self.tool_calls.add(call)  # running: stays in memory while its fields are set
        self.tool_counts[STATUS_RUNNING] += 1
        self.timeline.append(("tool", call_id))
        return call

    def _call_done(self, call_id: str, changes: list[tuple[str, Any]]) -> None:
        """A call stopped running (once per call): the run's opening is fixed by the first."""
        if self.opening is None:
            self._set_opening()
        changes.append((CHANGE_TOOL_DONE, call_id))

    def _set_status(self, call: ToolCall, status: str) -> None:
        self.tool_counts[call.status] -= 1
        call.status = status
        self.tool_counts[status] += 1

    def _tool_call(self, item: Event, data: dict, ts: int | None) -> list[tuple[str, Any]]:
        return self._apply_tool_call(item, data.get("call_id"), _fields_of(data.get("tool_call")),
                                     data.get("model_call_id"), ts, data.get("tool_name"), data.get("parent_call_id"),
                                     "untimed" in data)

    def _call_event(self, item: CallEvent) -> list[tuple[str, Any]]:
        """An adapter's canonical tool call (:class:`cursor_watch.formats.common.CallEvent`):
        :meth:`apply`'s rules on its attributes (the same as on its :attr:`~CallEvent.data`)."""
        self.events += 1
        ts = item.timestamp_ms
        if ts is not None:
            if self.first_ts_ms is None:
                self.first_ts_ms = ts
            self.last_ts_ms = ts
        running = item.running_usage
        if running.__class__ is dict:
            self.running_usage = running
        if self.spill.error and not self.spill.reported:
            self.spill.reported = True
            self.add_note("session", "memory", self.spill.error)
        try:
            return self._apply_call_event(item, ts)
        except Exception as err:  # noqa: BLE001 - as apply(): a malformed event must not stop the watch
            return self._not_applied(item, err)

    def _apply_call_event(self, item: CallEvent, ts: int | None) -> list[tuple[str, Any]]:
        """:meth:`_apply_tool_call`'s rules for an adapter's :class:`CallEvent`, whose
        ``tool_call`` object is one ``<kind>ToolCall`` variant without siblings (no
        ``toolCallId``, ``startedAtMs``, ``completedAtMs``) and which has no ``model_call_id``:
        what those rules read of it, read from its attributes (``tests/test_typed.py`` checks
        that both give the same model). A body of its own, not :meth:`_apply_tool_call` on
        a :class:`ToolFields` made from the event: making one per event cost 2-3 % of a Claude
        Code or Codex ``--summary`` (``bench_agents.py``, paired, 2026-11-26); what happens once
        per call is shared (:meth:`_new_call`, :meth:`_call_done`)."""
        changes = self._boundary() if self._open is not None or self._tentative is not None else []
        call_id = item.call_id
        if call_id.__class__ is not str or not call_id:
            call_id = call_id if isinstance(call_id, str) and call_id else f"(no call_id, line {item.line})"
        kind = item.kind
        # the body as the model reads it (CallEvent.head: a successful result's output text may
        # be left undecoded there, which nothing here reads); "ToolCall" alone is no variant
        # (tools.find_variant)
        body = item.head if kind else {}
        tool = kind or "unknown"
        call = self.tool_calls.revive(call_id)
        new = call is None
        if new:
            call = self._new_call(call_id)
        if tool != "unknown" or call.kind == "unknown":
            call.kind = tool
            name = item.tool_name
            call.tool = name if name.__class__ is str and name else tool
        untimed = self.replayed or item.untimed
        parent = item.parent_call_id
        if parent.__class__ is str and parent:
            if not call.parent_call_id:
                self.subagent_calls += 1
            call.parent_call_id = parent
        subtype = item.subtype
        started_event = subtype == "started"
        args = body.get("args") if started_event or call.args is None or not call.summary else None
        if isinstance(args, dict):
            if call.args is None or started_event:
                call.args = _small_args(args)
            if not call.summary or started_event:
                call.summary = summarize(tool, args)
        desc = body.get("description")
        if isinstance(desc, str) and desc:
            call.description = _short(desc, 300)
        span = (item.offset, item.size)
        done = False
        if subtype == "completed":
            call.completed_line = item.line
            call.end_span = span
            call.args = None  # done: a view re-reads the full args by offset (start_span/end_span)
            status, outcome, payload = classify_result(body.get("result"))
            call.outcome = outcome
            call.exit_code = _int(payload.get("exitCode"))
            call.detail = _detail(status, outcome, payload)
            if not call.summary:
                call.summary = summarize(tool, body.get("args"), payload)
            call.completed_ms = ts if ts is not None else (None if untimed else int(self._clock()))
            if call.started_ms is not None and call.completed_ms is not None:
                self._timed(call)
            if call.status != status:
                done = call.status == STATUS_RUNNING
                self._set_status(call, status)
        else:
            call.started_line = call.started_line or item.line
            if started_event:
                call.start_span = span
            if call.started_ms is None:
                call.started_ms = ts if ts is not None else (None if untimed else int(self._clock()))
                if call.completed_ms is not None and call.started_ms is not None:
                    self._timed(call)
        changes.append((CHANGE_TOOL_STARTED if new else CHANGE_TOOL_UPDATED, call_id))
        if done:
            self._call_done(call_id, changes)
        return changes

    def _typed_tool_call(self, item: ToolCallEvent) -> list[tuple[str, Any]] | None:
        """A typed ``tool_call`` event (:mod:`cursor_watch.formats.cursor_typed`), or None
        when its shape is left to the generic path (nothing has been changed then).

        Called with the session known, a time seen and no spill error, so :meth:`apply`'s
        prelude is only the counts and the last time.
        """
        ts = item.timestamp_ms
        if ts is UNSET:
            ts = None
        elif ts.__class__ is int:
            if not INT64_MIN <= ts < UINT64_END:
                return None
        else:
            ts = _int(ts)
        try:
            fields = tool_fields(item, classify_result)
        except Irregular:
            return None
        self.events += 1
        if ts is not None:
            self.last_ts_ms = ts
        try:
            # Cursor events have no adapter keys (tool_name, parent_call_id, untimed)
            return self._apply_tool_call(item, item.call_id, fields, item.model_call_id, ts)
        except Exception as err:  # noqa: BLE001 - as apply(): a malformed event must not stop the watch
            return self._not_applied(item, err)

    def _apply_tool_call(self, item: Any, call_id: Any, f: ToolFields, mcid: Any, ts: int | None,
                         name: Any = None, parent: Any = None, untimed: bool = False) -> list[tuple[str, Any]]:
        """The ``tool_call`` rules on what either path read (``f``); ``call_id`` and ``mcid``
        are the event's raw ``call_id`` and ``model_call_id`` values; ``name``, ``parent`` and
        ``untimed`` an adapter's canonical keys (``tool_name``, ``parent_call_id`` values, and
        whether ``untimed`` is present: :mod:`cursor_watch.formats`), absent on Cursor's events."""
        # parallel calls: nothing is open between them (_boundary would change nothing)
        changes = self._boundary() if self._open is not None or self._tentative is not None else []
        if not isinstance(call_id, str) or not call_id:
            cid = f.tool_call_id
            call_id = cid if isinstance(cid, str) and cid else f"(no call_id, line {item.line})"
        tool = f.tool
        call = self.tool_calls.revive(call_id)
        new = call is None
        if new:
            call = self._new_call(call_id)
        if tool != "unknown" or call.kind == "unknown":
            call.kind = tool
            call.tool = name if name.__class__ is str and name else tool
        # "untimed": an adapter's replayed event of an agent that writes no times (Codex), or any
        # event of a replayed file (``replayed``): its times stay unknown rather than taken from
        # the clock, which would time the replay (issue 18: nothing invented)
        untimed = self.replayed or untimed
        if parent.__class__ is str and parent:
            if not call.parent_call_id:
                self.subagent_calls += 1
            call.parent_call_id = parent
        if isinstance(mcid, str):
            call.model_call_id = mcid
        subtype = item.subtype
        started_event = subtype == "started"
        # the args are read (decoded, on the typed path) only where they can change something
        args = f.args() if started_event or call.args is None or not call.summary else None
        if isinstance(args, dict):
            if call.args is None or started_event:
                call.args = _small_args(args)
            if not call.summary or started_event:
                call.summary = summarize(tool, args)
        desc = f.description
        if isinstance(desc, str) and desc:
            call.description = _short(desc, 300)
        span = (item.offset, item.size)
        done = False
        if subtype == "completed":
            call.completed_line = item.line
            call.end_span = span
            call.args = None  # done: a view re-reads the full args by offset (start_span/end_span)
            status, outcome, payload = f.result
            call.outcome = outcome
            code = payload.get("exitCode")
            call.exit_code = _int(code)
            call.detail = _detail(status, outcome, payload)
            if not call.summary:
                call.summary = summarize(tool, f.args(), f.full_payload())
            started = _int(f.started_at)
            if call.started_ms is None and started is not None:
                call.started_ms = started
            completed = _int(f.completed_at)
            call.completed_ms = completed if completed is not None else (
                ts if ts is not None else (None if untimed else int(self._clock())))
            if call.started_ms is not None and call.completed_ms is not None:
                self._timed(call)
            # a call seen only as completed, without startedAtMs, has no known start: its
            # duration is unknown (issue 18: nothing invented), not zero
            if call.status != status:
                done = call.status == STATUS_RUNNING
                self._set_status(call, status)
        else:
            # "started" (or an unknown subtype such as a 3P "progress"): the call runs
            call.started_line = call.started_line or item.line
            if started_event:
                call.start_span = span
            started = _int(f.started_at)
            if call.started_ms is None:
                call.started_ms = started if started is not None else (
                    ts if ts is not None else (None if untimed else int(self._clock())))
                if call.completed_ms is not None and call.started_ms is not None:
                    self._timed(call)
        changes.append((CHANGE_TOOL_STARTED if new else CHANGE_TOOL_UPDATED, call_id))
        if done:
            self._call_done(call_id, changes)
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

    def _interaction_query(self, item: Event, data: dict, ts: int | None) -> list[tuple[str, Any]]:
        changes = self._boundary(resend=True)
        qtype = data.get("query_type") if isinstance(data.get("query_type"), str) else "query"
        kind = qtype.replace("RequestQuery", "").replace("InteractionQuery", "").replace("Query", "") or qtype
        call_id = ""
        if item.subtype == "request":
            query = data.get("query") if isinstance(data.get("query"), dict) else {}
            inner = next((v for k, v in query.items() if k != "id" and isinstance(v, dict)), {})
            args = inner.get("args") if isinstance(inner.get("args"), dict) else inner
            call_id = args.get("toolCallId") if isinstance(args.get("toolCallId"), str) else ""
            self._requests[kind] = call_id
            what = summarize(kind, args) if args else ""
            text = f"{kind} request" + (f": {what}" if what and what != kind else "")
        else:
            resp = data.get("response") if isinstance(data.get("response"), dict) else {}
            inner = next((v for k, v in resp.items() if k != "id" and isinstance(v, dict)), {})
            if "result" in inner and isinstance(inner["result"], dict):
                inner = inner["result"]
            answer = next(iter(inner), "answered") if inner else "answered"
            reason = ""
            if isinstance(inner.get(answer), dict):
                reason = str(inner[answer].get("reason") or "")
            text = f"{kind} {item.subtype or 'response'}: {answer}" + (f" ({_short(reason, 120)})" if reason else "")
            # link to the call named by the last request of the same kind
            call_id = self._requests.get(kind, "")
        call = self.tool_calls.revive(call_id) if call_id and item.subtype != "request" else None
        if call is not None:
            call.interaction = text
            changes.append((CHANGE_TOOL_UPDATED, call_id))
        return changes + self._note("interaction_query", item.subtype, text, item, ts, call_id)

    def _retry(self, item: Event, data: dict, ts: int | None) -> list[tuple[str, Any]]:
        changes = self._settle_tentative(resend=True)
        bits = [f"retry {item.subtype}".strip()]
        if "attempt" in data:
            bits.append(f"attempt {data.get('attempt')}")
        if data.get("is_resume"):
            bits.append("resume")
        if "checkpoint_turn_count" in data:
            bits.append(f"checkpoint turn {data.get('checkpoint_turn_count')}")
        return changes + self._note("retry", item.subtype, ", ".join(bits), item, ts)

    def _connection(self, item: Event, data: dict, ts: int | None) -> list[tuple[str, Any]]:
        bits = [f"connection {item.subtype}".strip()]
        if "attempt" in data:
            bits.append(f"attempt {data.get('attempt')}")
        if isinstance(data.get("endpoint_url"), str):
            bits.append(data["endpoint_url"])
        return self._note("connection", item.subtype, ", ".join(bits), item, ts)

    def _result(self, item: Event, data: dict, ts: int | None) -> list[tuple[str, Any]]:
        # a held delta right before the result: the result's text tells which it was
        text = data.get("result")
        resend = not (self._tentative is not None and isinstance(text, str)
                      and text == self.assistant_text + self._tentative)
        changes = self._settle_tentative(resend)
        changes += self._close_segment()
        if self.opening is None:
            self._set_opening()
        self.result = ResultInfo(data, item.line)
        changes.append((CHANGE_RESULT, None))
        return changes

    def _note(self, kind: str, subtype: str, text: str, item: Event, ts: int | None, call_id: str = "") -> list:
        self.notes.append(Note(kind, subtype, text, item.line, ts, call_id))
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


def _detail(status: str, outcome: str, payload: dict) -> str:
    if status == STATUS_SUCCESS:
        return ""
    bits = []
    if outcome and outcome not in ("failure", "rejected"):
        bits.append(outcome)
    for key in ("reason", "error", "message", "stderr"):
        value = payload.get(key)
        if isinstance(value, str) and value.strip():
            bits.append(folded(value, 200))
            break
    code = payload.get("exitCode")
    if isinstance(code, int) and code != 0:
        bits.append(f"exit {code}")
    return "; ".join(bits)


_TYPED = frozenset({AssistantEvent, ThinkingEvent, ToolCallEvent})


def _generic(item: Any) -> Event | Invalid:
    """The generic path's item for a typed event: the same line decoded by orjson."""
    try:
        data = orjson.loads(item.raw)
    except orjson.JSONDecodeError:  # msgspec read a line orjson rejects (cursor_typed's notes)
        return invalid_item(item.raw, item.line, item.offset, item.size)
    return Event(data, item.line, item.offset, item.size)


def _fields_of(tool_call: Any) -> ToolFields:
    """:class:`ToolFields` from a decoded ``tool_call`` value (the generic path)."""
    f = ToolFields()
    tool, body = find_variant(tool_call)
    siblings = tool_call if isinstance(tool_call, dict) else {}
    f.tool = tool
    f.tool_call_id = siblings.get("toolCallId")
    f.started_at = siblings.get("startedAtMs")
    f.completed_at = siblings.get("completedAtMs")
    f._args = body.get("args")
    f._args_raw = None
    f.description = body.get("description")
    f.result = classify_result(body.get("result"))
    f._full_payload = f.result[2]
    f._payload_raw = None
    return f


_HANDLERS: dict[str, Callable[..., list]] = {
    "system": Session._system,
    "user": Session._user,
    "assistant": Session._assistant,
    "thinking": Session._thinking,
    "tool_call": Session._tool_call,
    "result": Session._result,
    "interaction_query": Session._interaction_query,
    "retry": Session._retry,
    "connection": Session._connection,
}
