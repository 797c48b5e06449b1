"""Canonical events: cursor-watch's own vocabulary of an agent run, the same for every agent.

Every agent CLI writes its own wire format (Cursor's ``stream-json``, Claude Code's
``stream-json``, Codex's ``exec --json``, Gemini CLI's ``stream-json``). An adapter per agent
(:mod:`cursor_watch.formats`) reads its native events and gives the events of this module; the
model (:mod:`cursor_watch.core.model`), the runs, every view and every outlet read only these. The
set is closed: adding an agent means an adapter, never a change here or in the model.

The events:

* :class:`RunStart`: a run begins (agent, version, model, cwd, session, permission mode,
  tools, MCP servers and their status);
* :class:`Prompt`: the user's prompt (a later one is a note);
* :class:`Text`: assistant text: a delta, the message so far, the whole message, or its end;
* :class:`Thinking`: reasoning text, and the end of a thinking block;
* :class:`ToolStart`, :class:`ToolUpdate`, :class:`ToolEnd`: a tool call by its ``call_id``;
* :class:`StatusNote`: a status line (hook, retry, rate limit, compaction, permission,
  warning, error, sub-agent...), with the agent's fields;
* :class:`UsageUpdate`: token usage of the run so far;
* :class:`RunEnd`: the run's end (outcome, result text, reported duration and cost, error);
* :class:`Unknown`: a native event no rule reads (kept, counted, shown);
* :class:`Silent`: native events that say nothing a view shows (counted, nothing else);
* :class:`~cursor_watch.core.decode.Invalid` (re-exported): a line that is not an event.

**Provenance.** Every event keeps where it came from: ``line`` (1-based physical line of its
native event), ``offset`` and ``size`` (bytes of that line in the source, so a view re-reads
what the agent wrote), ``ts`` (epoch ms, or None) with ``ts_source`` saying where the time came
from (:data:`TIME_STREAM`: the native event's own time; :data:`TIME_TOOL`: the tool's own time;
:data:`TIME_RECEIVED`: when cursor-watch read it, live only; :data:`TIME_NONE`), ``natives``
(how many of the agent's own events it stands for: 1, or 0 for the second event made from one
native line, or more when events that show nothing were folded into it) and ``src`` (the last
native event it stands for: its ``type``/``subtype`` name the run's last event).

**Usage** has one meaning for every agent, OpenTelemetry GenAI's (:class:`Usage`):
``input_tokens`` counts every prompt token, cached ones included; ``cache_read_tokens`` and
``cache_write_tokens`` are parts of it. Each adapter converts its agent's figures (the mapping
and its sources are in ``docs/formats.md``).

**Unknown is a value.** A time, a model, a duration or a cost the stream did not give is None
here and stays unknown downstream (``—`` in views, ``null`` in JSON), never 0.
"""

from __future__ import annotations

from typing import Any, ClassVar

from .decode import Invalid

__all__ = [
    "TIME_NONE", "TIME_STREAM", "TIME_TOOL", "TIME_RECEIVED", "TIME_SOURCES",
    "Canonical", "RunStart", "Prompt", "Text", "Thinking", "ToolEvent", "ToolStart", "ToolUpdate", "ToolEnd",
    "StatusNote", "Usage", "UsageUpdate", "RunEnd", "Unknown", "Silent", "Invalid",
    "TEXT_DELTA", "TEXT_PARTIAL", "TEXT_MESSAGE", "TEXT_END",
    "AGENTS", "COMMANDS", "SHORT", "UNREAD_AGENT", "agent_command", "agent_short", "as_int", "short",
]  # fmt: skip

# where an event's time came from (Canonical.ts_source)
TIME_NONE = 0  # no time: the stream gave none, and it was replayed
TIME_STREAM = 1  # the native event's own time (Cursor timestamp_ms, Claude/Gemini ISO timestamp)
TIME_TOOL = 2  # the tool's own time (Cursor's startedAtMs / completedAtMs)
TIME_RECEIVED = 3  # when cursor-watch read the line, in a live watch (the stream gave none)
TIME_SOURCES = ("none", "stream", "tool", "received")

# Text.mode
TEXT_DELTA = 0  # a piece to append to the open message (one is opened if none is)
TEXT_PARTIAL = 1  # the open message's whole text so far: it replaces it, the message stays open
TEXT_MESSAGE = 2  # a whole message: it replaces the open one's text (or is a new one) and ends it
TEXT_END = 3  # the open message is over (its text unchanged; ``text`` is "")

# the agents cursor-watch reads: the --format name -> the run's ``agent`` label
AGENTS = {"cursor": "cursor", "claude": "claude-code", "codex": "codex", "gemini": "gemini-cli"}
COMMANDS = {"cursor": "cursor-agent", "claude-code": "claude", "codex": "codex", "gemini-cli": "gemini"}
SHORT = {"cursor": "cursor", "claude-code": "claude", "codex": "codex", "gemini-cli": "gemini"}
UNREAD_AGENT = "unknown"  # the ``agent`` of a run in a format cursor-watch does not read (formats.UnreadFormat)


def agent_command(agent: str | None) -> str:
    """The CLI a run's ``agent`` label stands for (``claude``, ``codex``...; ``cursor-agent`` when
    unknown: the format read when nothing else is known)."""
    return COMMANDS.get(agent or "cursor", agent or "cursor-agent")


def agent_short(agent: str | None) -> str:
    """A short column label of ``agent`` (``cursor``, ``claude``, ``codex``, ``gemini``; "" if unknown)."""
    return SHORT.get(agent or "", agent or "")


class Canonical:
    """What every canonical event has: its provenance (see the module's notes).

    Attributes:
        line: 1-based physical line of the native event; offset, size: its bytes in the source.
        ts: epoch ms or None; ts_source: :data:`TIME_STREAM`, :data:`TIME_TOOL`,
            :data:`TIME_RECEIVED` or :data:`TIME_NONE`.
        natives: the agent's own events it stands for (the run's ``events`` count adds them).
        src: the last native event it stands for (an item of :mod:`cursor_watch.core.decode`, or an
            adapter's typed event; anything with ``type`` and ``subtype``): the end note names
            the run's last event by it. Nothing else reads it.
    """

    __slots__ = ("line", "offset", "size", "ts", "ts_source", "natives", "src")
    kind_name: ClassVar[str] = "event"

    line: int
    offset: int
    size: int
    ts: int | None
    ts_source: int
    natives: int
    src: Any

    @property
    def native_name(self) -> str:
        """``type/subtype`` of the native event it stands for (``tool_call/started``,
        ``stream_event``, ``item.completed``), as the agent wrote them."""
        src = self.src
        t = getattr(src, "type", "")
        st = getattr(src, "subtype", "")
        t = t if type(t) is str else ""
        return f"{t}/{st}" if type(st) is str and st else t

    def __repr__(self) -> str:
        return f"{type(self).__name__}(line={self.line})"


class Folded:
    """The ``src`` of a canonical event a native event without a time was folded into (an
    adapter's fold of an event that shows nothing: :class:`Silent`'s note): that native's line,
    bytes, ``type`` and ``subtype``, and no time of its own. The end note names it as the run's
    last event without lending it the time of the event it was folded into (its time is then "the
    last time recorded", however the stream was cut into reads)."""

    __slots__ = ("line", "offset", "size", "type", "subtype")

    def __init__(self, native: Any) -> None:
        self.line: int = native.line
        self.offset: int = native.offset
        self.size: int = native.size
        t = getattr(native, "type", "")
        st = getattr(native, "subtype", "")
        self.type: str = t if type(t) is str else ""
        self.subtype: str = st if type(st) is str else ""


def _place(ev: Canonical, native: Any, ts: int | None, ts_source: int, natives: int) -> None:
    ev.line = native.line
    ev.offset = native.offset
    ev.size = native.size
    ev.ts = ts
    ev.ts_source = ts_source if ts is not None else TIME_NONE
    ev.natives = natives
    ev.src = native


class RunStart(Canonical):
    """A run begins (a Cursor or Claude Code ``system/init``, Codex ``thread.started``, Gemini
    ``init``), or, with ``implicit``, what the stream says of its run without beginning one (a
    session id on events of a run whose start was not in the stream).

    Attributes:
        agent: the agent's label (:data:`AGENTS`); agent_version: its CLI's version, or None.
        model, cwd, session_id, permission_mode, api_key_source: as the agent wrote them, or None.
        tools: the tool names the agent offers (Claude Code's ``tools``), or None.
        mcp_servers: ``[(name, status)]`` (``connected``, ``failed``, ``needs-auth``,
            ``pending``...), or None when the stream names none.
        first_line, first_offset: where the run began when that is before this event (hook
            events Claude Code writes before its ``init``), else None.
        implicit: not a run start (see above): the model fills only what it does not know.
        previous_open: the run before it has not ended and its end is still to come (Claude
            Code holds a run's result back while a background task runs, and the task's
            notification begins the next run): the runs keep it open for its
            :class:`RunEnd` (``run_line``).
    """

    __slots__ = ("agent", "agent_version", "model", "cwd", "session_id", "permission_mode", "api_key_source",
                 "tools", "mcp_servers", "first_line", "first_offset", "implicit", "previous_open")
    kind_name: ClassVar[str] = "run start"

    def __init__(self, native: Any, ts: int | None, ts_source: int, agent: str | None, *, agent_version: Any = None,
                 model: Any = None, cwd: Any = None, session_id: Any = None, permission_mode: Any = None,
                 api_key_source: Any = None, tools: list[str] | None = None,
                 mcp_servers: list[tuple[str, str]] | None = None, implicit: bool = False, natives: int = 1) -> None:
        _place(self, native, ts, ts_source, natives)
        self.agent = agent
        self.agent_version = _str(agent_version)
        self.model = _str(model)
        self.cwd = _str(cwd)
        self.session_id = _str(session_id)
        self.permission_mode = _str(permission_mode)
        self.api_key_source = _str(api_key_source)
        self.tools = tools
        self.mcp_servers = mcp_servers
        self.first_line: int | None = None
        self.first_offset: int | None = None
        self.implicit = implicit
        self.previous_open = False


class Prompt(Canonical):
    """A user message: the run's prompt (the first), else a later user message (a note).

    Attributes:
        text: its text.
    """

    __slots__ = ("text",)
    kind_name: ClassVar[str] = "prompt"

    def __init__(self, native: Any, ts: int | None, ts_source: int, text: str, natives: int = 1) -> None:
        _place(self, native, ts, ts_source, natives)
        self.text = text


class Text(Canonical):
    """Assistant text, by :attr:`mode`:

    * :data:`TEXT_DELTA`: ``text`` is appended to the open message (a new one is opened if
      none is);
    * :data:`TEXT_PARTIAL`: ``text`` is the open message's whole text so far (it replaces it,
      or begins a message); the message stays open;
    * :data:`TEXT_MESSAGE`: ``text`` is a whole message: it replaces the open message's text
      (an empty ``text`` leaves it) and ends it; with none open it is a new message, unless
      empty;
    * :data:`TEXT_END`: the open message is over (``text`` is "").

    A tool call, a run's end and a run's start also end the open message.

    Attributes:
        text: the text; mode: see above; ts_end: the time of the last delta folded into this
            one (deltas of a batch are merged by adapters), else ``ts``.
    """

    __slots__ = ("text", "mode", "ts_end")
    kind_name: ClassVar[str] = "text"

    def __init__(self, native: Any, ts: int | None, ts_source: int, text: str, mode: int,
                 natives: int = 1) -> None:
        self.line = native.line  # (Canonical's provenance, set here: the most frequent event)
        self.offset = native.offset
        self.size = native.size
        self.ts = ts
        self.ts_source = ts_source if ts is not None else TIME_NONE
        self.natives = natives
        self.src = native
        self.text = text
        self.mode = mode
        self.ts_end = ts


class Thinking(Canonical):
    """Reasoning text: ``text`` appended to the open thinking block (one is opened if none is);
    ``done`` ends the block (after ``text``, if any).

    Attributes:
        text: the text ("" for none); done: the block is over; ts_end: as :attr:`Text.ts_end`.
    """

    __slots__ = ("text", "done", "ts_end")
    kind_name: ClassVar[str] = "thinking"

    def __init__(self, native: Any, ts: int | None, ts_source: int, text: str, done: bool = False,
                 natives: int = 1) -> None:
        self.line = native.line
        self.offset = native.offset
        self.size = native.size
        self.ts = ts
        self.ts_source = ts_source if ts is not None else TIME_NONE
        self.natives = natives
        self.src = native
        self.text = text
        self.done = done
        self.ts_end = ts


class ToolEvent(Canonical):
    """What a tool call's start, update and end share.

    Attributes:
        call_id: the agent's pairing key (Cursor ``call_id``, Claude ``tool_use_id``, Codex
            ``item.id``, Gemini ``tool_id``); may contain a newline.
        parent_call_id: the sub-agent call it ran in ("" for the main agent).
        name: the agent's own tool name (``Bash``, ``command_execution``, ``run_shell_command``).
        kind: the canonical kind (``shell``, ``read``, ``edit``, ``write``, ``grep``, ``glob``,
            ``ls``, ``webFetch``, ``webSearch``, ``updateTodos``, ``task``, ``mcp``...; any
            other tool is its own kind): decides the summary and the detail view.
        description: the call's own ``description`` argument, or "".
        model_call_id: the model call (message) that asked for it (Cursor's ``model_call_id``,
            Claude Code's ``message.id``), or "".
        started_ms, ended_ms: the tool's own start and end times (epoch ms: Cursor's
            ``startedAtMs``/``completedAtMs``), else None.

    :meth:`args` and :meth:`summary` may be computed only when asked: an adapter's fast path
    gives a ``lazy`` reader (anything with ``args()`` and ``summary(kind, ended)``) that decodes
    the arguments from the line only then. Call them; don't read the slots.
    """

    __slots__ = ("call_id", "parent_call_id", "name", "kind", "description", "model_call_id", "started_ms",
                 "ended_ms", "_args", "_lazy", "_summary")
    kind_name: ClassVar[str] = "tool call"

    def __init__(self, native: Any, ts: int | None, ts_source: int, call_id: str, kind: str, name: str,
                 parent_call_id: str = "", description: str = "", model_call_id: str = "", args: Any = None,
                 summary: str | None = None, lazy: Any = None, started_ms: int | None = None,
                 ended_ms: int | None = None, natives: int = 1) -> None:
        self.line = native.line
        self.offset = native.offset
        self.size = native.size
        self.ts = ts
        self.ts_source = ts_source if ts is not None else TIME_NONE
        self.natives = natives
        self.src = native
        self.call_id = call_id
        self.parent_call_id = parent_call_id
        self.name = name
        self.kind = kind
        self.description = description
        self.model_call_id = model_call_id
        self.started_ms = started_ms
        self.ended_ms = ended_ms
        self._args = args
        self._lazy = lazy
        self._summary = summary

    def args(self) -> Any:
        """The call's arguments as the agent wrote them (a dict: Cursor's ``args``, Claude's
        ``input``, Gemini's ``parameters``, Codex's item), or None when this event has none."""
        lazy = self._lazy
        return lazy.args() if lazy is not None else self._args

    def summary(self) -> str:
        """What the call does, in one line (the command, the path, ``PATTERN in PATH``...:
        :func:`cursor_watch.core.tools.summarize`'s wording), "" when this event can't tell."""
        text = self._summary
        if text is None:
            lazy = self._lazy
            text = self._summary = lazy.summary(self.kind, type(self) is ToolEnd) if lazy is not None else ""
        return text


class ToolStart(ToolEvent):
    """A tool call begins (or is seen again with its arguments: Claude Code's ``assistant`` line
    after the ``content_block_start`` that began it)."""

    __slots__ = ()


class ToolUpdate(ToolEvent):
    """A running call's progress (an unknown Cursor subtype, Codex ``item.updated``, Claude
    Code's ``tool_progress`` heartbeat).

    Attributes:
        elapsed_s: how long the call has run by the agent's own count (seconds: Claude Code's
            ``elapsed_time_seconds``), else None.
    """

    __slots__ = ("elapsed_s",)

    def __init__(self, native: Any, ts: int | None, ts_source: int, call_id: str, kind: str, name: str,
                 parent_call_id: str = "", description: str = "", model_call_id: str = "", args: Any = None,
                 summary: str | None = None, lazy: Any = None, started_ms: int | None = None,
                 ended_ms: int | None = None, natives: int = 1) -> None:
        # (ToolEvent's parameters, passed on by name: a compiled class takes no *args through super())
        super().__init__(native, ts, ts_source, call_id, kind, name, parent_call_id=parent_call_id,
                         description=description, model_call_id=model_call_id, args=args, summary=summary,
                         lazy=lazy, started_ms=started_ms, ended_ms=ended_ms, natives=natives)
        self.elapsed_s: float | None = None


class ToolEnd(ToolEvent):
    """A tool call ended.

    Attributes:
        status: ``success``, ``failure`` or ``rejected``.
        outcome: the agent's own word for it (Cursor's outcome key ``success``, ``failure``,
            ``rejected``, ``error``...; ``declined``; "" when it gave none).
        reason: the failure's error, the rejection's reason (the whole text), or "".
        exit_code: a command's exit code, or None.
    """

    __slots__ = ("status", "outcome", "reason", "exit_code")

    # ToolEvent.__init__'s stores written out again: calling it from here cost about 8,000
    # instructions per call (callgrind, the dense generated stream), one per tool call
    def __init__(self, native: Any, ts: int | None, ts_source: int, call_id: str, kind: str, name: str,
                 status: str, outcome: str = "", reason: str = "", exit_code: int | None = None,
                 parent_call_id: str = "", description: str = "", model_call_id: str = "", args: Any = None,
                 summary: str | None = None, lazy: Any = None, started_ms: int | None = None,
                 ended_ms: int | None = None, natives: int = 1) -> None:
        self.line = native.line
        self.offset = native.offset
        self.size = native.size
        self.ts = ts
        self.ts_source = ts_source if ts is not None else TIME_NONE
        self.natives = natives
        self.src = native
        self.call_id = call_id
        self.parent_call_id = parent_call_id
        self.name = name
        self.kind = kind
        self.description = description
        self.model_call_id = model_call_id
        self.started_ms = started_ms
        self.ended_ms = ended_ms
        self._args = args
        self._lazy = lazy
        self._summary = summary
        self.status = status
        self.outcome = outcome
        self.reason = reason
        self.exit_code = exit_code


class StatusNote(Canonical):
    """A status line.

    Attributes:
        kind: what it is about (``hook``, ``retry``, ``rate_limit``, ``status`` (a compaction,
            a thinking estimate...), ``permission``, ``warning``, ``error``, ``subagent``,
            ``interaction_query``, ``connection``, ``system``...).
        subtype: the agent's own subtype ("" for none).
        text: one line of words.
        call_id: the tool call it concerns, or "".
        about_call: it says what happened to that call (an approval's answer): the call's
            detail shows it.
        fields: the agent's own fields (a dict), or None.
        detail: what one line can't say, as the agent wrote it (a hook's output), or "".
    """

    __slots__ = ("kind", "subtype", "text", "call_id", "about_call", "fields", "detail")
    kind_name: ClassVar[str] = "note"

    def __init__(self, native: Any, ts: int | None, ts_source: int, kind: str, subtype: str, text: str,
                 call_id: str = "", *, about_call: bool = False, fields: dict | None = None,
                 natives: int = 1, detail: str = "") -> None:
        _place(self, native, ts, ts_source, natives)
        self.kind = kind
        self.subtype = subtype
        self.text = text
        self.call_id = call_id
        self.about_call = about_call
        self.fields = fields
        self.detail = detail


_USAGE_FIELDS = ("input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens", "reasoning_tokens",
                 "reasoning_in_output")


class Usage:
    """Token counts with one meaning for every agent (OpenTelemetry GenAI's).

    Attributes:
        input_tokens: every prompt token, cached ones included (None: unknown).
        cache_read_tokens, cache_write_tokens: the parts of ``input_tokens`` read from and
            written to the prompt cache (None: the agent reports none).
        output_tokens: generated tokens (None: unknown).
        reasoning_tokens: reasoning (thinking) tokens where the agent reports them, else None.
        reasoning_in_output: True when ``reasoning_tokens`` are counted in ``output_tokens``
            (Claude Code, Codex), False when they are not (Gemini CLI), None when unreported.
    """

    __slots__ = _USAGE_FIELDS

    def __init__(self, input_tokens: int | None = None, output_tokens: int | None = None,
                 cache_read_tokens: int | None = None, cache_write_tokens: int | None = None,
                 reasoning_tokens: int | None = None, reasoning_in_output: bool | None = None) -> None:
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        self.cache_read_tokens = cache_read_tokens
        self.cache_write_tokens = cache_write_tokens
        self.reasoning_tokens = reasoning_tokens
        self.reasoning_in_output = reasoning_in_output

    @property
    def uncached_input_tokens(self) -> int | None:
        """The prompt tokens neither read from nor written to the cache (None when
        ``input_tokens`` is unknown; an unreported cache part counts as 0)."""
        if self.input_tokens is None:
            return None
        return max(0, self.input_tokens - (self.cache_read_tokens or 0) - (self.cache_write_tokens or 0))

    @property
    def total_tokens(self) -> int | None:
        """Input + output, plus reasoning where the agent counts it apart from output (Gemini
        CLI's thinking): every token once (what ``--max-tokens`` counts); None when nothing is
        known."""
        known = [v for v in (self.input_tokens, self.output_tokens) if v is not None]
        if self.reasoning_tokens is not None and self.reasoning_in_output is False:
            known.append(self.reasoning_tokens)
        return sum(known) if known else None

    def to_json(self) -> dict:
        """``{"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
        "uncached_input_tokens"}`` plus ``reasoning_tokens`` and ``reasoning_in_output`` where
        reported (the summary's ``usage``)."""
        out: dict[str, Any] = {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "uncached_input_tokens": self.uncached_input_tokens,
        }
        if self.reasoning_tokens is not None:
            out["reasoning_tokens"] = self.reasoning_tokens
            out["reasoning_in_output"] = self.reasoning_in_output
        return out

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Usage) and all(getattr(self, k) == getattr(other, k) for k in _USAGE_FIELDS)

    def __repr__(self) -> str:
        return "Usage(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in _USAGE_FIELDS) + ")"


class UsageUpdate(Canonical):
    """The run's token usage so far (it replaces the last one), where an agent reports usage as
    it goes (Claude Code's messages, Codex's turns).

    Attributes:
        usage: :class:`Usage`, the run's total so far; model: the model it is for, or None.
        call: the usage of the one model call this update reports (Claude Code: an assistant
            message's ``usage``; the main agent's only, a sub-agent's context is its own), or None
            where the agent reports no per-call figure; call_key: that call's id (a message id:
            several lines of one message give the same call, the last figure wins), "" for none.
    """

    __slots__ = ("usage", "model", "call", "call_key")
    kind_name: ClassVar[str] = "usage"

    def __init__(self, native: Any, ts: int | None, ts_source: int, usage: Usage, model: str | None = None,
                 natives: int = 1, call: Usage | None = None, call_key: str = "") -> None:
        _place(self, native, ts, ts_source, natives)
        self.usage = usage
        self.model = model
        self.call = call
        self.call_key = call_key


class RunEnd(Canonical):
    """The run's end as the agent reports it (Cursor and Claude Code ``result``, Codex
    ``turn.completed``/``turn.failed``, Gemini ``result``).

    Attributes:
        subtype: the agent's word for the outcome (``success``, ``error_max_turns``...).
        is_error: the run failed.
        text: the final text the agent reports ("" if none).
        duration_ms, duration_api_ms: as reported (ms), None when not (or not measured: a
            Gemini CLI fatal error writes 0 there).
        request_id: Cursor's ``request_id``, or None.
        usage: :class:`Usage` of the run, or None.
        cost_usd: the cost the agent reported for this run (USD), or None (never an estimate).
        model_usage: ``{model: (Usage, cost_usd or None)}`` where the agent reports usage per
            model, else None.
        error: the error message where the agent gives one apart from ``text``, else "".
        session_id: the session the result names, or None.
        run_line: the line of the :class:`RunStart` of the run it ends when that is not the
            newest run (a run kept open: :attr:`RunStart.previous_open`), else None.
    """

    __slots__ = ("subtype", "is_error", "text", "duration_ms", "duration_api_ms", "request_id", "usage", "cost_usd",
                 "model_usage", "error", "session_id", "run_line")
    kind_name: ClassVar[str] = "run end"

    def __init__(self, native: Any, ts: int | None, ts_source: int, *, subtype: str = "", is_error: bool = False,
                 text: str = "", duration_ms: int | None = None, duration_api_ms: int | None = None,
                 request_id: str | None = None, usage: Usage | None = None, cost_usd: float | None = None,
                 model_usage: dict | None = None, error: str = "", session_id: str | None = None,
                 natives: int = 1) -> None:
        _place(self, native, ts, ts_source, natives)
        self.subtype = subtype
        self.is_error = is_error
        self.text = text
        self.duration_ms = duration_ms
        self.duration_api_ms = duration_api_ms
        self.request_id = request_id
        self.usage = usage
        self.cost_usd = cost_usd
        self.model_usage = model_usage
        self.error = error
        self.session_id = session_id
        self.run_line: int | None = None


class Unknown(Canonical):
    """A native event that no rule of its adapter reads (kept, counted and listed).

    Attributes:
        type, subtype: as the agent wrote them ("" when absent); keys: its first keys, joined.
    """

    __slots__ = ("type", "subtype", "keys")
    kind_name: ClassVar[str] = "unknown event"

    def __init__(self, native: Any, ts: int | None, ts_source: int, type_: str, subtype: str, keys: str,
                 natives: int = 1) -> None:
        _place(self, native, ts, ts_source, natives)
        self.type = type_
        self.subtype = subtype
        self.keys = keys


class Silent(Canonical):
    """Native events that show nothing (Claude Code's ``message_stop``, an ``input_json_delta``,
    Cursor's empty assistant text...): counted in the run (``natives``), and their time where
    the stream gave one (the run's first and last times), nothing else. An adapter folds such
    events without a time into the event before them in a batch; this carries those at the start
    of a batch, and one with a time of its own."""

    __slots__ = ()
    kind_name: ClassVar[str] = "silent"

    def __init__(self, native: Any, natives: int, ts: int | None = None, ts_source: int = TIME_NONE) -> None:
        _place(self, native, ts, ts_source, natives)


PREVIEW_CHARS = 2_000  # the default cut of :func:`short`


def as_int(value: Any) -> int | None:
    """An integer field as the stream gives it: int64 fields are strings in real Cursor
    streams (``startedAtMs``: ``"1786676149877"``), and a float is read as its integer part;
    None for anything else (a bool, a word, a string past 4,300 digits). A number past 64 bits
    is kept (a view names it: ``timestamp_ms 100000000000000000000 (not a date)``);
    ``--summary --json`` writes null for it (:func:`cursor_watch.views.summary.dumps_json`)."""
    cls = type(value)
    if cls is int:
        return value
    if cls is str and len(value) < 19 and value.isascii() and value.isdigit():
        return int(value)  # the common case: "1786676149877" (ASCII digits: int() can't fail)
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        try:
            return int(value)
        except (OverflowError, ValueError):  # inf, nan
            return None
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        try:  # "²".isdigit() is True but int("²") fails; so do strings past 4300 digits
            return int(value)
        except ValueError:
            return None
    return None


def short(text: str, limit: int = PREVIEW_CHARS) -> str:
    """``text``, or its first ``limit`` characters and ``… (N more chars)``."""
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more chars)"


def _str(value: Any) -> str | None:
    """A field the stream gives as a string (a number, say, as its text); None when absent."""
    if value is None or type(value) is str:
        return value
    return str(value)
