"""Claude Code: ``claude -p PROMPT --output-format stream-json --verbose [--include-partial-messages]``.

Facts (Claude Code's headless and Agent SDK docs; ``@anthropic-ai/claude-agent-sdk`` 0.3.332's
``sdk.d.ts``, the ``SDKMessage`` union, paired with CLI 2.1.332; the real captures in
``shared/streams/agents/claude/``, CLI 2.1.141-2.1.295):

* ``system/init`` (``session_id``, ``model``, ``cwd``, ``permissionMode``, ``apiKeySource``,
  ``claude_code_version``, ``tools``, ``mcp_servers`` with ``status`` ``connected``/``failed``/
  ``needs-auth``/``pending``/``disabled``) begins a run ("at the start of each turn"): a file can
  hold several. Hook events (``system/hook_started``/``hook_response``; SessionStart's come before
  its ``init``), ``system/status`` (``compacting``...), ``compact_boundary`` (``compact_metadata``:
  ``trigger``, ``pre_tokens``, ``post_tokens``), ``api_retry`` (``attempt``, ``max_retries``,
  ``retry_delay_ms``, ``error_status``, ``error``), ``permission_denied``, ``thinking_tokens``,
  ``task_*`` (sub-agents and background tasks), ``rate_limit_event`` (``resetsAt`` in epoch
  seconds, ``utilization`` 0-1), ``tool_progress`` (a running call's heartbeat every 30 s: its
  ``tool_use_id`` is synthetic, the call's id is ``parent_tool_use_id``; ``elapsed_time_seconds``)
  and ``tool_use_summary`` are status lines or call updates.
* ``assistant`` lines carry one message, one content block per line, several lines sharing
  ``message.id``: ``text``, ``thinking``, ``tool_use`` (``id``, ``name``, ``input``); ``usage`` on
  them is the message's so far. Lines of a sub-agent carry ``parent_tool_use_id`` = the
  ``Task``/``Agent`` call's id.
* ``user`` lines carry ``tool_result`` blocks (``tool_use_id``, ``content``, ``is_error``) and a
  top-level ``tool_use_result`` (the tool's structured output); one with ``isSynthetic`` is
  Claude Code's own (a compaction's summary), not the user's.
* with partial messages, ``stream_event`` wraps the API's stream (``message_start``,
  ``content_block_start`` (a ``tool_use`` id only here), ``content_block_delta`` (``text_delta``,
  ``thinking_delta``, ``input_json_delta``), ``content_block_stop``, ``message_delta``,
  ``message_stop``); the whole ``assistant`` line follows each block.
* ``result`` (keys in any order): ``subtype``, ``is_error`` (true with ``subtype: "success"``: the
  run ended on an API error, "Not logged in · Please run /login"), ``result``, ``duration_ms``,
  ``duration_api_ms``, ``usage`` (``input_tokens`` excludes cache reads and writes; output
  includes thinking), ``modelUsage``, ``total_cost_usd`` (cumulative per process),
  ``permission_denials``, ``terminal_reason``, ``origin`` (``task-notification`` for a run a
  background task's notification began). A run a background task holds open gets its result
  later, after the next run's ``init``: results come in the order their runs began.
* ISO ``timestamp`` on ``assistant`` and ``user`` lines only.
"""

from __future__ import annotations

import datetime as dt
import difflib
from collections import deque
from typing import Any

import orjson
from msgspec import UNSET

from ..core.canonical import (TEXT_DELTA, TEXT_END, TEXT_PARTIAL, Folded, Prompt, RunEnd, RunStart, Silent, StatusNote, Text,
                         Thinking, ToolEnd, ToolStart, ToolUpdate, Usage, UsageUpdate, as_int)
from ..core.decode import Event, Invalid, invalid_item
from ..core.tools import STATUS_FAILURE, STATUS_REJECTED, STATUS_SUCCESS, summarize, todo_status
from .claude_typed import DECODER as TYPED_DECODER
from .claude_typed import TYPED_SUBTYPES, AssistantEvent, StreamEvent, SystemEvent, UserEvent
from .claude_typed import loads as raw_loads
from .common import HELD, Adapter, Batch, CallPayloads, iso_ms, one_line, s, when

# Claude Code's tool names -> canonical kinds (tools.py); mcp__SERVER__TOOL is "mcp"; others are
# their own kind (generic detail). Task and Agent both name the sub-agent tool (init lists Task,
# 2.1.2xx calls it Agent).
KINDS = {"Bash": "shell", "Read": "read", "Edit": "edit", "MultiEdit": "edit", "NotebookEdit": "edit",
         "Write": "write", "Grep": "grep", "Glob": "glob", "LS": "ls", "WebFetch": "webFetch",
         "WebSearch": "webSearch", "TodoWrite": "updateTodos", "Task": "task", "Agent": "task"}
SUBAGENT_KIND = "task"


def kind_of(name: str) -> str:
    """The canonical kind of a Claude Code tool name."""
    kind = KINDS.get(name)
    if kind:
        return kind
    if name.startswith("mcp__"):
        return "mcp"
    return name if name and name.isidentifier() else "unknown"


def usage_of(u: Any) -> Usage | None:
    """The canonical :class:`~cursor_watch.core.canonical.Usage` of a Claude Code usage object (a
    message's or the result's ``usage``, snake_case, or a ``modelUsage`` entry, camelCase);
    None when it isn't one.

    Claude Code's ``input_tokens`` leave the cache out (Anthropic's API; Claude Code itself
    sums ``input_tokens + cache_creation_input_tokens + cache_read_input_tokens`` for the
    context it uses), so canonical input is that sum. Reasoning: the result's
    ``usage.output_tokens_details.thinking_tokens`` or a ``modelUsage`` entry's
    ``thinkingTokens``, counted in the output (sdk.d.ts: "already counted inside
    outputTokens"). A value that is not an integer is unknown."""
    if not isinstance(u, dict):
        return None
    uncached = as_int(u.get("input_tokens", u.get("inputTokens")))
    read = as_int(u.get("cache_read_input_tokens", u.get("cacheReadInputTokens")))
    write = as_int(u.get("cache_creation_input_tokens", u.get("cacheCreationInputTokens")))
    out = Usage(None if uncached is None else uncached + (read or 0) + (write or 0),
                as_int(u.get("output_tokens", u.get("outputTokens"))), read, write)
    details = u.get("output_tokens_details")
    if isinstance(details, dict) and "thinking_tokens" in details:
        out.reasoning_tokens = as_int(details["thinking_tokens"])
    elif "thinkingTokens" in u:
        out.reasoning_tokens = as_int(u["thinkingTokens"])
    if out.reasoning_tokens is not None:
        out.reasoning_in_output = True
    return out


def _summary_args(kind: str, name: str, inp: Any) -> dict:
    """The input under the names :func:`cursor_watch.core.tools.summarize` reads for ``kind`` (for
    the one-line summary only: the arguments shown are the agent's own)."""
    a = dict(inp) if isinstance(inp, dict) else {}
    if kind in ("read", "edit", "write"):
        path = a.get("file_path") or a.get("notebook_path")
        if path is not None and "path" not in a:
            a["path"] = path
    elif kind == "glob":
        a.setdefault("globPattern", a.get("pattern"))
        if a.get("path"):
            a.setdefault("targetDirectory", a["path"])
    elif kind == "mcp":
        parts = name.split("__", 2)
        if len(parts) == 3:
            a.setdefault("toolName", parts[2])
    return a


def summary_of(kind: str, name: str, inp: Any) -> str:
    """The one-line summary of a call of tool ``name`` with input ``inp``."""
    return summarize(kind, _summary_args(kind, name, inp))


def result_text(content: Any) -> str:
    """A ``tool_result``'s content as text (a string, or text blocks joined by newlines)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else s(content)
    parts = []
    for block in content:
        if not isinstance(block, dict):
            parts.append(s(block))
        elif block.get("type") == "text":
            parts.append(s(block.get("text")))
        elif block.get("type") == "tool_reference":
            parts.append(f"tool_reference: {s(block.get('tool_name'))}")
        else:
            parts.append(f"[{s(block.get('type')) or 'block'}]")
    return "\n".join(parts)


def _patch_text(patch: Any, path: str) -> str:
    """A unified diff from a ``structuredPatch`` (hunks with ``oldStart``..., ``lines``)."""
    out = [f"--- {path}", f"+++ {path}"]
    for hunk in patch:
        if not isinstance(hunk, dict):
            continue
        out.append(f"@@ -{hunk.get('oldStart')},{hunk.get('oldLines')} +{hunk.get('newStart')},"
                   f"{hunk.get('newLines')} @@")
        lines: Any = hunk.get("lines")  # (any JSON value)
        out.extend(s(line) for line in lines or [] if line is not None)
    return "\n".join(out) + "\n"


def _diff(args: dict, tur: Any) -> str:
    """The edit's diff: Claude Code's ``structuredPatch``, else computed from the input's
    ``old_string``/``new_string`` (``edits`` of a MultiEdit); "" when neither is there."""
    path = s(args.get("file_path") or args.get("path") or (tur.get("filePath") if isinstance(tur, dict) else ""))
    if isinstance(tur, dict) and isinstance(tur.get("structuredPatch"), list) and tur["structuredPatch"]:
        return _patch_text(tur["structuredPatch"], path)
    edits = args.get("edits")
    if not isinstance(edits, list):
        edits = [args]
    out: list[str] = []
    for e in edits:
        if isinstance(e, dict) and isinstance(e.get("old_string"), str) and isinstance(e.get("new_string"), str):
            out.extend(difflib.unified_diff(e["old_string"].splitlines(True), e["new_string"].splitlines(True),
                                            path, path, n=2))
    return "".join(out)


def view_of(kind: str, name: str, inp: Any, block: dict | None, tur: Any) -> dict:
    """The canonical view fields of a call (:func:`cursor_watch.core.tools.detail_sections`): from
    its input ``inp``, its ``tool_result`` ``block`` (None while it runs) and the line's
    ``tool_use_result`` ``tur``."""
    a = inp if isinstance(inp, dict) else {}
    text = result_text(block.get("content")) if block is not None else None
    v: dict[str, Any] = {}
    path = s(a.get("file_path") or a.get("notebook_path") or a.get("path"))
    if kind == "shell":
        v["command"] = s(a.get("command"))
        if a.get("timeout"):
            v["timeout_ms"] = a.get("timeout")
        if text is not None:
            v["stdout"] = text
            if isinstance(tur, dict):
                if isinstance(tur.get("stdout"), str):
                    v["stdout"] = tur["stdout"]
                if tur.get("stderr"):
                    v["stderr"] = s(tur["stderr"])
                if tur.get("interrupted"):
                    v["signal"] = "interrupted"
    elif kind == "read":
        v["path"] = path
        v["stats"] = [(k, s(a[k])) for k in ("offset", "limit") if a.get(k) is not None]
        if text is not None:
            v["content"] = text
    elif kind == "edit":
        v["path"] = path
        v["stats"] = [("message", one_line(text, 300))] if text else []
        diff = _diff(a, tur)
        if diff:
            v["diff"] = diff
    elif kind == "write":
        v["path"] = path
        v["stats"] = [("message", one_line(text, 300))] if text else []
        if isinstance(a.get("content"), str):
            v["text"] = a["content"]
    elif kind in ("grep", "glob"):
        v["pattern"] = s(a.get("pattern"))
        v["path" if kind == "grep" else "directory"] = s(a.get("path"))
        if text is not None:
            v["output"] = text
    elif kind == "webFetch":
        v["url"] = s(a.get("url"))
        if text:
            v["markdown"] = text
    elif kind == "webSearch":
        v["query"] = s(a.get("query"))
        if text is not None:
            v["output"] = text
    elif kind == "updateTodos":
        todos = tur.get("newTodos") if isinstance(tur, dict) and isinstance(tur.get("newTodos"), list) else a.get("todos")
        v["todos"] = [(todo_status(t.get("status")), s(t.get("content"))) for t in todos or [] if isinstance(t, dict)]
    elif kind == "task":
        v["description"] = s(a.get("description"))
        v["model"] = s(a.get("subagent_type") or a.get("model"))
        if a.get("prompt"):
            v["prompt"] = a["prompt"]
        if block is not None:
            content = block.get("content")
            v["said"] = [t for b in (content if isinstance(content, list) else [content])
                         for t in [b.get("text") if isinstance(b, dict) else b] if isinstance(t, str) and t]
    elif kind == "mcp":
        parts = name.split("__", 2)
        v["tool"] = parts[2] if len(parts) == 3 else name
        v["server"] = parts[1] if len(parts) == 3 else ""
        if a:
            v["arguments"] = a
        if text is not None:
            v["content"] = text
    elif text is not None:
        v["output"] = text
    return v


class ClaudeAdapter(Adapter):
    """Claude Code ``stream-json`` -> canonical events (see the module's notes)."""

    name = "claude"
    agent = "claude-code"
    typed_decoder = TYPED_DECODER  # stream_event, user, assistant and system lines

    def __init__(self) -> None:
        super().__init__()
        self._streamed: set[str] = set()  # message ids whose blocks came as stream_event deltas
        self._blocks: dict[tuple[str, int | None], list] = {}  # (parent, index) -> [type, id, name, json parts, item]
        self._calls: dict[str, tuple[str, str, str, Any]] = {}  # running: id -> (kind, name, parent, input)
        self._kinds: dict[str, str] = {}  # every call id seen -> kind (for permission denials)
        self._errors: dict[str, str] = {}  # failed call id -> its tool_result's message (a denial's reason)
        # message id -> its usage (the last assistant line of a message has the final figures; a
        # message's blocks come as several lines with the same id): the run's usage so far
        self._usage: dict[str, Usage] = {}
        self._usage_sum = [0, 0, 0, 0, 0]  # input, output, cache read, cache write, reasoning: summed
        self._usage_known = [0] * 5  # how many messages give each kind (0: unknown)
        # hook events held back after a result (see convert)
        self._held: list = []
        self._after_result = False
        # the message whose text segment is open (its id, its text blocks so far): see _message
        self._text_mid: str | None = None
        self._text = ""
        self._closed: tuple[str, str] | None = None  # (message id, text) of the segment a tool call closed
        # session id -> the last run's total_cost_usd and modelUsage as reported (running totals
        # of the session: each later run's own share is the difference, see _run_cost)
        self._totals: dict[str, tuple[Any, dict]] = {}
        # runs begun whose result has not come, as (their init's line, began by a task's
        # notification): results come in that order
        self._open_runs: deque[tuple[int, bool]] = deque()
        self._background = False  # the newest run started a background task, or was notified of one
        self._last_ts: int | None = None  # the run's newest stream time (epoch ms): a rate limit's "in 12 min"
        self._hooks: dict[str, tuple[str, Any]] = {}  # hook_id -> (its name, its start's line) until it answers

    # -- events ------------------------------------------------------------------------------

    def adapt(self, items: list, now: int | None) -> list:
        """As :meth:`Adapter.adapt`, with consecutive text (or thinking) deltas of a batch
        merged into one canonical event (the model builds the same text from fewer events;
        deltas are most of a stream with partial messages). A merged delta keeps its first
        line's number and span."""
        batch = Batch()
        out = batch.out
        append = out.append
        merge: Any = None  # the Text or Thinking event deltas are merged into
        mtype = ""  # "text_delta" or "thinking_delta" while merging
        texts: list[str] = []
        for item in items:
            cls = type(item)
            if cls is StreamEvent and not self._held:  # this adapter's typed decoding: attributes
                ev = item.event
                et = ev.type
                if et == "content_block_delta":
                    parent = item.parent_tool_use_id or ""
                    delta = ev.delta
                    dt = delta.type if delta else None  # (UNSET and None are false)
                    self._after_result = False
                    if not parent and (dt == "text_delta" or dt == "thinking_delta"):
                        text = delta.text if dt == "text_delta" else delta.thinking
                        if text:  # a str (the struct's type) and not empty
                            if dt == mtype:
                                texts.append(text)
                                merge.natives += 1
                                merge.src = item
                                continue
                            if merge is not None:
                                merge.text = "".join(texts)
                            if dt == "text_delta":
                                ts, src = when(None, now)
                                merge = Text(item, ts, src, "", TEXT_DELTA)
                            else:
                                block = self._blocks.get(("", ev.index))
                                if block is not None:
                                    block[3].append("")  # the block has text: its stop completes a thinking block
                                ts, src = when(None, now)
                                merge = Thinking(item, ts, src, "")
                            mtype, texts = dt, [text]
                            append(merge)
                            batch.last = merge
                            continue
                    elif dt == "input_json_delta":
                        block = self._blocks.get((parent, ev.index))
                        if block is not None and type(delta.partial_json) is str:
                            block[3].append(delta.partial_json)
                    # (a sub-agent's delta, an empty one, another type: nothing to show)
                    batch.silent(item)
                    continue
            if merge is not None:
                merge.text = "".join(texts)
                merge, mtype = None, ""
            if cls is Invalid:
                if self._held:  # hook events, then not the next init: they stay in the run they follow
                    held = self._release()
                    out.extend(held)
                    batch.last = held[-1]
                append(item)
                continue
            try:
                got = self.convert(item, now)
            except Exception as err:  # noqa: BLE001 - any shape an agent could write: a diagnostic
                got = [self.unreadable(item, err)]
            if got is not HELD:
                batch.add(item, got)
        if merge is not None:
            merge.text = "".join(texts)
        return batch.events()

    def _release(self) -> list:
        """The hook events held back (see :meth:`convert`), in their order; none held after."""
        held, self._held = self._held, []
        return held

    def convert(self, item: Any, now: int | None) -> Any:
        """The canonical events of one native event (the first counts it).

        Hook events (``system/hook_started``/``hook_response``) after a run's result are the next
        run's start (its SessionStart hooks fire before its ``init``): they are held back
        (:data:`HELD`) and given after that ``init``, whose run begins at the first of them
        (:attr:`~cursor_watch.core.canonical.RunStart.first_line`). Anything else after them (or the
        end of input) gives them first, in the run they follow.
        """
        cls = type(item)
        if self._after_result and item.type == "system" and item.subtype in ("hook_started", "hook_response"):
            data = item.data
            self._held.append(self._system(Event(data, item.line, item.offset, item.size), data, now))
            return HELD
        out: list
        if cls is StreamEvent:
            out = self._stream_typed(item, now)
        elif cls is AssistantEvent:
            out = self._assistant_typed(item, now)
        elif cls is UserEvent:
            out = self._user_typed(item, now)
        elif cls is SystemEvent and item.subtype in TYPED_SUBTYPES:
            out = [self._system_typed(item, now)]
        else:
            if cls is not Event:  # a typed event of a kind read from its dict
                try:
                    data = item.data
                except ValueError:  # orjson refuses what msgspec read (an overflowing number)
                    return [invalid_item(item.raw, item.line, item.offset, item.size)]
                item = Event(data, item.line, item.offset, item.size)
            out = self._convert(item, now)
        self._after_result = item.type == "result"
        for ev in out[1:]:
            if type(ev) is not Invalid:
                ev.natives = 0
        if self._held:
            held = self._release()
            if not out:  # this event gives nothing: it counts with the last of them
                held[-1].natives += 1
                held[-1].src = Folded(item)
            if out and type(out[0]) is RunStart:
                out[0].first_line = held[0].line
                out[0].first_offset = held[0].offset
                out = [out[0], *held, *out[1:]]
            else:
                out = held + out
        if self._text_mid is not None:
            # the model closes the open segment at a tool call and a run's end: the next text
            # block (of the same message after a tool_use) then begins a new segment
            for k in range(len(out) - 1, -1, -1):  # (newest first)
                c = type(out[k])
                if c is Text and out[k].mode == TEXT_PARTIAL:
                    break
                if c is ToolStart or c is ToolEnd or c is RunEnd or c is RunStart:
                    self._closed = (self._text_mid, self._text)
                    self._text_mid = None
                    break
        return out

    def _convert(self, item: Event, now: int | None) -> list:
        """:meth:`convert` for a generic :class:`Event` (the typed ones are dispatched there)."""
        t = item.type
        data = item.data
        if t == "stream_event":
            return self._stream(item, data, now)
        if t == "assistant":
            return self._assistant(item, data, now)
        if t == "user":
            return self._user(item, data, now)
        if t == "system":
            ev = self._system(item, data, now)
            if type(ev) is RunStart:
                mcp = self.mcp_note(ev)
                return [ev, mcp] if mcp is not None else [ev]
            return [ev]
        if t == "result":
            return self._result(item, data, now)
        if t == "rate_limit_event":
            info = data.get("rate_limit_info")
            if not isinstance(info, dict):
                info = {}
            at = now if now is not None else self._last_ts  # the event has no time of its own
            return [self.note(item, now, "rate_limit", "rate_limit", "rate limit: " + _rate_limit_words(info, at),
                              fields=info or None)]
        if t == "tool_progress":
            return self._progress(item, data, now)
        if t == "tool_use_summary":
            return [self.note(item, now, "status", "tool_use_summary",
                              f"tool use summary: {one_line(s(data.get('summary')), 300)}", fields=_fields(data))]
        if t == "keep_alive":
            return []
        return [self.unknown(item, now)]  # an event type this adapter doesn't know: listed

    def _system_typed(self, item: SystemEvent, now: int | None) -> StatusNote:
        """A ``system/status`` or ``system/thinking_tokens`` line decoded by
        :mod:`cursor_watch.formats.claude_typed` (any other subtype is read the generic way):
        :meth:`_system`'s rules on the struct's values."""
        if item.subtype == "status":
            return _status_note(self, item, now, item.status or "", item.compact_result or "", item.compact_error or "",
                                item.permissionMode or "")
        return self.note(item, now, "status", "thinking_tokens",
                         f"thinking: ~{s(item.estimated_tokens) or '?'} tokens so far (estimated)")

    def _system(self, item: Event, data: dict, now: int | None) -> Any:
        st = item.subtype
        if st == "init":
            return self._init(item, data, now)
        if st in ("hook_started", "hook_response", "hook_progress"):
            return self._hook(item, data, st, now)
        if st == "status":
            return _status_note(self, item, now, *(s(data.get(k)) if data.get(k) else "" for k in _STATUS_KEYS))
        if st == "thinking_tokens":
            return self.note(item, now, "status", st,
                             f"thinking: ~{s(data.get('estimated_tokens')) or '?'} tokens so far (estimated)")
        if st == "compact_boundary":
            meta = data.get("compact_metadata")
            if not isinstance(meta, dict):
                meta = {}
            bits = [s(meta.get("trigger"))] if meta.get("trigger") else []
            pre, post = as_int(meta.get("pre_tokens")), as_int(meta.get("post_tokens"))
            if pre is not None:
                bits.append(f"{pre:,} tokens before")
            if post is not None:
                bits.append(f"{post:,} after")
            return self.note(item, now, "compaction", st, "context compacted" + (f" ({', '.join(bits)})" if bits else ""),
                             fields=meta or None)
        if st == "api_retry":
            attempt, most = as_int(data.get("attempt")), as_int(data.get("max_retries"))
            delay = as_int(data.get("retry_delay_ms"))
            bits = [f"attempt {attempt}" + (f" of {most}" if most is not None else "")] if attempt is not None else []
            if delay is not None:
                bits.append(f"in {delay / 1000:.1f} s")
            why = " ".join(x for x in (s(data.get("error")), f"HTTP {data['error_status']}"
                                        if data.get("error_status") is not None else "") if x)
            return self.note(item, now, "retry", st, "API retry" + (f" {', '.join(bits)}" if bits else "")
                             + (f" ({why})" if why else ""), fields=_fields(data))
        if st == "permission_denied":
            cid = s(data.get("tool_use_id"))
            why = s(data.get("message")) or s(data.get("decision_reason"))
            return self.note(item, now, "permission", st,
                             f"permission denied: {s(data.get('tool_name')) or 'a tool'}" + (f" ({one_line(why, 200)})"
                                                                                              if why else ""),
                             cid, fields=_fields(data))
        if st.startswith("task_"):
            cid = s(data.get("tool_use_id"))
            what = s(data.get("description")) or s(data.get("summary"))
            status = s(data.get("status"))
            patch = data.get("patch")
            if not status and isinstance(patch, dict):
                status = s(patch.get("status"))
            if st == "task_started" and data.get("is_backgrounded") is True or st == "task_notification":
                self._background = True
            text = f"sub-agent {st[5:]}" + (f" {status}" if status else "") + (f": {one_line(what, 160)}" if what else "")
            return self.note(item, now, "subagent", st, text, cid, fields=_fields(data))
        fields = {k: v for k, v in data.items() if k not in ("type", "subtype", "session_id", "uuid")}
        text = (st or "system") + (" " + ", ".join(f"{k}={one_line(s(v), 80)}" for k, v in list(fields.items())[:6])
                                   if fields else "")
        return self.note(item, now, "system", st, text, fields=fields or None)

    def _hook(self, item: Event, data: dict, st: str, now: int | None) -> Any:
        """A hook's lines folded into one note per run of the hook (``hook_id``): its start says
        nothing (:class:`~cursor_watch.core.canonical.Silent`, kept until it answers); its response
        is ``hook SessionStart:startup: success`` (``exit N`` when not 0), its output (stdout,
        then stderr, else ``output``) the note's detail. A hook that never answers is said at
        the end of input (:meth:`finish`). (Claude Code 2.1.270, the sunholo capture: four
        SessionStart hooks started, then answered, each by its ``hook_id``.)"""
        hid = s(data.get("hook_id"))
        name = _hook_name(data)
        if st == "hook_started":
            self._hooks[hid or f"(line {item.line})"] = (name, item)  # (no id: paired by its name)
            return Silent(item, 1, *when(None, now))
        if st == "hook_progress":
            return self.note(item, now, "hook", st, f"hook {name}: in progress", fields=_fields(data))
        if hid:
            self._hooks.pop(hid, None)
        else:
            key = next((k for k, (n, _start) in self._hooks.items() if k.startswith("(line ") and n == name), None)
            if key is not None:
                del self._hooks[key]
        outcome = s(data.get("outcome")) or "answered"
        code = data.get("exit_code")
        text = f"hook {name}: {outcome}" + (f" (exit {s(code)})" if code not in (None, 0) else "")
        return self.note(item, now, "hook", st, text, fields=_fields(data), detail=_hook_output(data))

    def _unanswered_hooks(self, now: int | None) -> list:
        """A note for each hook that started and never answered (the input ended first)."""
        out = [StatusNote(start, *when(None, now), "hook", "hook_started", f"hook {name}: started, no response",
                          natives=0) for name, start in self._hooks.values()]  # (its line was counted)
        self._hooks.clear()
        return out

    def _init(self, item: Event, data: dict, now: int | None) -> RunStart:
        previous_open = bool(self._open_runs) and self._background
        self._kinds.clear()
        self._calls.clear()
        self._errors.clear()
        self._usage.clear()
        self._usage_sum = [0, 0, 0, 0, 0]
        self._usage_known = [0] * 5
        self._background = False
        self._closed = None
        self._last_ts = None  # (a session resumed later: the last run's time is no reference)
        if not previous_open:
            self._open_runs.clear()  # a run without its result before: it ended so
        self._open_runs.append((item.line, previous_open))
        servers = data.get("mcp_servers")
        tools = data.get("tools")
        ev = RunStart(item, *when(None, now), self.agent, agent_version=data.get("claude_code_version"),
                      model=data.get("model"), cwd=data.get("cwd"), session_id=data.get("session_id"),
                      permission_mode=data.get("permissionMode"), api_key_source=data.get("apiKeySource"),
                      tools=[s(t) for t in tools] if isinstance(tools, list) else None,
                      mcp_servers=[(s(m.get("name")), s(m.get("status"))) for m in servers if isinstance(m, dict)]
                      if isinstance(servers, list) else None)
        ev.previous_open = previous_open
        return ev

    def _progress(self, item: Any, data: dict, now: int | None) -> list:
        """A ``tool_progress`` line: a heartbeat of a running call (its id is the line's
        ``parent_tool_use_id``) as a call update, a sub-agent's API retry as a note; nothing for
        a call this run does not know (a hook's heartbeat)."""
        retry = data.get("subagent_retry")
        if isinstance(retry, dict):
            return [self.note(item, now, "retry", "subagent_retry",
                              f"sub-agent API retry attempt {s(retry.get('attempt'))} of {s(retry.get('max_retries'))}",
                              s(data.get("parent_tool_use_id")), fields=retry)]
        cid = s(data.get("parent_tool_use_id"))
        running = self._calls.get(cid)
        if running is None:
            return []
        kind, name, parent, _inp = running
        elapsed = data.get("elapsed_time_seconds")
        ev = ToolUpdate(item, *when(None, now), cid, kind, name, parent_call_id=parent)
        ev.elapsed_s = elapsed if isinstance(elapsed, (int, float)) and not isinstance(elapsed, bool) else None
        return [ev]

    def _stream(self, item: Event, data: dict, now: int | None) -> list:
        """A ``stream_event`` line read from its dict (the generic path): see :meth:`_api_event`."""
        ev = data.get("event")
        if not isinstance(ev, dict):
            return [self.unknown(item, now)]
        index = ev.get("index")
        delta = ev.get("delta")
        if not isinstance(delta, dict):
            delta = {}
        dt = delta.get("type")
        field = _DELTA_FIELDS.get(dt) if type(dt) is str else None
        et = ev.get("type")
        block: tuple[Any, str, str, Any] | None = None
        message_id: Any = None
        if et == "content_block_start":
            cb = ev.get("content_block")
            if not isinstance(cb, dict):
                cb = {}
            block = (cb.get("type"), s(cb.get("id")), s(cb.get("name")), cb.get("input"))
        elif et == "message_start":
            message = ev.get("message")
            message_id = message.get("id") if isinstance(message, dict) else None
        return self._api_event(item, et, s(data.get("parent_tool_use_id")), index if type(index) is int else None,
                               dt, delta.get(field) if field else None, block, message_id, now)

    def _stream_typed(self, item: StreamEvent, now: int | None) -> list:
        """A ``stream_event`` line decoded by :mod:`cursor_watch.formats.claude_typed` (the same
        values as :meth:`_stream` reads: the struct's types are the shapes those rules accept)."""
        ev = item.event
        delta = ev.delta
        dt: str | None = None
        value: Any = None
        if delta:  # a Delta (UNSET and None are false)
            dt = delta.type
            field = _DELTA_FIELDS.get(dt) if dt is not None else None
            if field is not None:
                value = getattr(delta, field)
                if value is UNSET:
                    value = None
        et = ev.type
        block: tuple[Any, str, str, Any] | None = None
        message_id: str | None = None
        if et == "content_block_start":
            cb = ev.content_block
            if cb is UNSET:
                block = (None, "", "", None)
            else:
                try:  # a tool call's input, decoded as the generic path decodes it
                    block = (cb.type, cb.id or "", cb.name or "", raw_loads(cb.input))
                except orjson.JSONDecodeError:  # what msgspec read and orjson refuses: the generic verdict
                    return [invalid_item(item.raw, item.line, item.offset, item.size)]
        elif et == "message_start" and ev.message is not UNSET:
            message_id = ev.message.id
        return self._api_event(item, et, item.parent_tool_use_id or "", ev.index, dt, value, block, message_id, now)

    def _api_event(self, item: Any, et: Any, parent: str, index: int | None, dt: Any, value: Any,
                   start: tuple[Any, str, str, Any] | None, message_id: Any, now: int | None) -> list:
        """The canonical events of one ``stream_event`` line, from what either path read.

        Args:
            et: ``event.type`` (any JSON value); parent: ``parent_tool_use_id`` as a string ("" for
            the main agent); index: ``event.index`` when an integer, else None; dt: ``delta.type``;
            value: the delta's field of that type (``text``, ``thinking``, ``partial_json``: any
            JSON value, None when absent); start: a ``content_block_start``'s block as ``(type,
            id, name, input)`` (``(None, "", "", None)`` when absent or not an object), else None;
            message_id: a ``message_start``'s ``message.id`` (None when absent).
        """
        if et == "content_block_delta":
            if dt == "text_delta":
                if parent or not isinstance(value, str) or not value:
                    return []  # a sub-agent's text comes whole in its assistant line
                ts, src = when(None, now)
                return [Text(item, ts, src, value, TEXT_DELTA)]
            if dt == "thinking_delta":
                if parent or not isinstance(value, str) or not value:
                    return []
                block = self._blocks.get((parent, index))
                if block is not None:
                    block[3].append("")  # the block has text: its stop completes a thinking block
                ts, src = when(None, now)
                return [Thinking(item, ts, src, value)]
            if dt == "input_json_delta":
                block = self._blocks.get((parent, index))
                if block is not None and isinstance(value, str):
                    block[3].append(value)
            return []
        if et == "content_block_start":
            assert start is not None  # (both paths give a content_block_start its block)
            btype, cid, name, inp = start
            self._blocks[(parent, index)] = [btype, cid, name, [], item]
            if btype in ("tool_use", "server_tool_use") and cid and cid not in self._kinds:
                # the call runs from here (live: its input streams for seconds before the whole
                # assistant line); that line, or the input_json_delta pieces at message_stop,
                # fill its arguments, and its tool_result completes it: one call, one id
                return [self._started(item, cid, name or "unknown", inp, parent, None, "", now)]
            return []
        if et == "content_block_stop":
            block = self._blocks.get((parent, index))
            if block is not None and block[0] == "thinking" and not parent and block[3]:
                return [Thinking(item, *when(None, now), "", True)]  # (a redacted one had no text)
            return []
        if et == "message_start":
            if isinstance(message_id, str):
                self._streamed.add(message_id)
            for key in [k for k in self._blocks if k[0] == parent]:
                del self._blocks[key]
            if not parent and self._text_mid is not None and self._text_mid != message_id:
                return self._close_text(item, now)  # its text deltas must not join the last message's
            return []
        if et == "message_stop":
            return self._pending_tools(parent, now)
        return []  # message_delta (usage so far), ping: nothing a view shows

    def _pending_tools(self, parent: str | None, now: int | None) -> list:
        """Tool calls started by ``content_block_start`` whose ``assistant`` line never came (a
        cut stream): their arguments from the ``input_json_delta`` pieces, when those parse.
        A call already completed (or rejected) is left as it is."""
        out: list = []
        for key in [k for k in self._blocks if parent is None or k[0] == parent]:
            btype, cid, name, parts, start = self._blocks.pop(key)
            if btype not in ("tool_use", "server_tool_use") or not cid:
                continue
            if cid in self._kinds and cid not in self._calls:
                continue  # completed already
            try:
                inp = orjson.loads("".join(parts)) if parts else None
            except orjson.JSONDecodeError:
                inp = None
            if cid in self._calls and not isinstance(inp, dict):
                continue  # started at content_block_start; nothing more is known
            out.append(self._started(start, cid, name or "unknown", inp if isinstance(inp, dict) else {}, key[0], None,
                                     "", now))
        return out

    def _started(self, item: Any, cid: str, name: str, inp: Any, parent: str, ts: int | None, mid: str,
                 now: int | None) -> ToolStart:
        kind = kind_of(name)
        self._calls[cid] = (kind, name, parent, inp)
        self._kinds[cid] = kind
        if kind == SUBAGENT_KIND and isinstance(inp, dict) and inp.get("run_in_background") is True:
            self._background = True
        desc = inp.get("description") if isinstance(inp, dict) else None
        t, src = when(ts, now)
        # (positional, in the constructor's order: parent_call_id, description, model_call_id,
        # args, summary; keyword arguments cost a compiled build thousands of instructions a call)
        return ToolStart(item, t, src, cid, kind, name, parent,
                         desc if isinstance(desc, str) and kind != SUBAGENT_KIND else "", mid, inp,
                         summary_of(kind, name, inp))

    def _close_text(self, item: Any, now: int | None) -> list:
        """The end of the message whose segment is still open: a new message begins."""
        if self._text_mid is None:
            return []
        self._text_mid = None
        return [Text(item, *when(None, now), "", TEXT_END)]

    def _assistant(self, item: Event, data: dict, now: int | None) -> list:
        msg = data.get("message")
        if not isinstance(msg, dict):
            return [self.unknown(item, now)]
        content = msg.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        blocks: list[tuple] = []
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict):
                continue
            bt = block.get("type")
            if bt == "text":
                blocks.append(("text", s(block.get("text"))))
            elif bt == "thinking":
                blocks.append(("thinking", s(block.get("thinking"))))
            elif bt in ("tool_use", "server_tool_use"):
                blocks.append(("tool_use", s(block.get("id")), s(block.get("name")), block.get("input")))
            elif isinstance(block.get("tool_use_id"), str):  # a server tool's result (web_search_tool_result...)
                blocks.append(("result", block))
        error = data.get("error")
        return self._message(item, s(data.get("parent_tool_use_id")), s(msg.get("id")), iso_ms(data.get("timestamp")),
                             blocks, error if isinstance(error, str) else "", msg.get("usage"), now)

    def _assistant_typed(self, item: AssistantEvent, now: int | None) -> list:
        """An ``assistant`` line decoded by :mod:`cursor_watch.formats.claude_typed`:
        :meth:`_assistant`'s rules on the struct's values. A line with a server tool's result
        block (rare) is read the generic way (its line's dict); a tool call's ``input`` and the
        message's ``usage`` are decoded as the generic path decodes them, before anything
        changes (a number beyond a double there makes the line invalid, as there)."""
        msg = item.message
        content = msg.content
        blocks: list[tuple] = []
        try:
            if isinstance(content, str):
                blocks.append(("text", content))
            elif content:  # a list of blocks
                for block in content:
                    bt = block.type
                    if bt == "text":
                        blocks.append(("text", block.text or ""))
                    elif bt == "thinking":
                        blocks.append(("thinking", block.thinking or ""))
                    elif bt == "tool_use" or bt == "server_tool_use":
                        blocks.append(("tool_use", block.id or "", block.name or "", raw_loads(block.input)))
                    elif block.tool_use_id is not UNSET:  # maybe a server tool's result: the generic rules
                        data = orjson.loads(item.raw)
                        return self._assistant(Event(data, item.line, item.offset, item.size), data, now)
            usage = raw_loads(msg.usage)
        except orjson.JSONDecodeError:  # what msgspec read and orjson refuses: the generic verdict
            return [invalid_item(item.raw, item.line, item.offset, item.size)]
        return self._message(item, item.parent_tool_use_id or "", msg.id or "", iso_ms(item.timestamp), blocks,
                             item.error or "", usage, now)

    def _message(self, item: Any, parent: str, mid: str, ts: int | None, blocks: list[tuple], error: str,
                 usage_value: Any, now: int | None) -> list:
        """The canonical events of an ``assistant`` line, from what either path read.

        Args:
            parent: ``parent_tool_use_id`` as a string ("" for the main agent); mid: the
            message's ``id`` as a string; ts: the line's time (epoch ms) or None; blocks: its
            content blocks in order, as ``("text", text)``, ``("thinking", text)``,
            ``("tool_use", id, name, input)`` or ``("result", block)`` (a server tool's result,
            its dict); error: the line's ``error`` when a string, else ""; usage_value: the
            message's ``usage`` (any JSON value, None when absent).
        """
        if ts is not None:
            self._last_ts = ts
        streamed = mid in self._streamed
        out: list = []
        t, src = when(ts, now)
        for block in blocks:
            bt = block[0]
            if bt == "text":
                text = block[1]
                if parent:
                    if text:
                        out.append(StatusNote(item, t, src, "subagent", "subagent_text",
                                              f"sub-agent: {one_line(text, 300)}", parent))
                    continue
                # one message's text blocks (several lines sharing message.id) are one segment:
                # each line gives the message's text so far (the blocks concatenated, as Claude
                # Code's result joins them: anthropics/claude-code#78686) and leaves it open; a
                # tool call, the result or another message closes it
                if self._text_mid is not None and self._text_mid == mid and mid:
                    self._text += text
                else:
                    out.extend(self._close_text(item, now))
                    if self._closed is not None and self._closed == (mid, text) and mid:
                        continue  # the text of this message a tool call already closed, again
                    self._text_mid, self._text = mid, text
                out.append(Text(item, t, src, self._text, TEXT_PARTIAL))
            elif bt == "thinking":
                text = block[1]
                if parent or streamed or not text:
                    continue  # streamed already, a sub-agent's, or redacted (a signature only)
                out.append(Thinking(item, t, src, text, True))
            elif bt == "tool_use":
                cid = block[1] or f"(no id, line {item.line})"
                for key, b in list(self._blocks.items()):
                    if b[1] == cid:
                        del self._blocks[key]
                out.append(self._started(item, cid, block[2] or "unknown", block[3], parent, ts, mid, now))
            else:  # a server tool's result (web_search_tool_result...)
                out.append(self._completed(item, block[1], None, ts, now))
        if error:
            out.append(StatusNote(item, t, src, "error", "error", f"assistant error: {error}"))
        usage = usage_of(usage_value)
        if usage is not None:
            # tokens used so far, for live --max-tokens / --max-cost: each message's latest usage
            # once (sub-agents' messages too: they are spent), summed per kind (the sums kept up
            # to date: a message's new figures replace its old ones)
            ukey = mid or f"(line {item.line})"
            old = self._usage.get(ukey)
            if old is not None:
                self._add_usage(old, -1)
            self._usage[ukey] = usage
            self._add_usage(usage, 1)
            # the main agent's call also gives its context size (cursor_watch.core.context); a
            # sub-agent's messages run in a context of their own
            out.append(UsageUpdate(item, t, src, self._usage_total(), call=None if parent else usage, call_key=ukey))
        return out

    def _add_usage(self, u: Usage, sign: int) -> None:
        total, known = self._usage_sum, self._usage_known
        for k, v in enumerate((u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens,
                               u.reasoning_tokens)):
            if v is not None:
                total[k] += sign * v
                known[k] += sign

    def _usage_total(self) -> Usage:
        values = [v if known else None for v, known in zip(self._usage_sum, self._usage_known)]
        out = Usage(values[0], values[1], values[2], values[3], values[4])
        if values[4] is not None:
            out.reasoning_in_output = True
        return out

    def _completed(self, item: Any, block: dict, tur: Any, ts: int | None, now: int | None,
                   raw: Any = None) -> ToolEnd:
        """The end of a call by its ``tool_result`` block (a dict, as the generic path reads it).
        ``raw``: the block's ``content`` still undecoded, a JSON string (the typed path): the
        reason of a failure is decoded from it (a success needs no text)."""
        cid = s(block.get("tool_use_id"))
        kind, name, parent, inp = self._calls.pop(cid, None) or (self._kinds.get(cid, "unknown"), "", "", None)
        failed = block.get("is_error") is True
        reason = ""
        if failed:
            text = result_text(raw_loads(raw) if raw is not None else block.get("content"))
            reason = text
            if cid:
                self._errors[cid] = one_line(text, 500)  # the reason, if the result denies it
        t, src = when(ts, now)
        # (positional: status, outcome, reason, exit_code, parent_call_id, description,
        # model_call_id, args, summary)
        return ToolEnd(item, t, src, cid, kind, name or kind, STATUS_FAILURE if failed else STATUS_SUCCESS,
                       "failure" if failed else "success", reason, None, parent, "", "", None,
                       summary_of(kind, name, inp))

    def _user(self, item: Event, data: dict, now: int | None) -> list:
        msg = data.get("message")
        if not isinstance(msg, dict):
            return [self.unknown(item, now)]
        parent = s(data.get("parent_tool_use_id"))
        ts = iso_ms(data.get("timestamp"))
        if ts is not None:
            self._last_ts = ts
        content = msg.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        out: list = []
        texts = []
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result":
                out.append(self._completed(item, block, None, ts, now))
            elif block.get("type") == "text":
                texts.append(s(block.get("text")))
        return self._user_texts(item, out, texts, parent, ts, data.get("isSynthetic") is True, now)

    def _user_typed(self, item: UserEvent, now: int | None) -> list:
        """A ``user`` line decoded by :mod:`cursor_watch.formats.claude_typed`: :meth:`_user`'s
        rules on the struct's values. A tool result's content stays raw unless it is the reason
        of a failure (a number beyond a double in a content that is not a string makes the line
        invalid, as on the generic path)."""
        parent = item.parent_tool_use_id or ""
        ts = iso_ms(item.timestamp)
        if ts is not None:
            self._last_ts = ts
        content = item.message.content
        out: list = []
        texts = []
        if isinstance(content, str):
            texts.append(content)
        elif content:  # a list of blocks
            results: list[tuple[dict, Any]] = []
            try:
                for block in content:
                    bt = block.type
                    if bt == "tool_result":
                        raw: Any = block.content  # (raw JSON, UNSET; None once decoded or absent)
                        value: Any = None
                        if raw is UNSET:
                            value, raw = None, None
                        elif memoryview(raw)[:1] == b'"':  # a string: decoded only if asked (it always decodes)
                            value = ""
                        else:
                            value, raw = raw_loads(raw), None
                        results.append(({"tool_use_id": block.tool_use_id, "content": value,
                                         "is_error": block.is_error}, raw))
                    elif bt == "text":
                        texts.append(block.text or "")
            except orjson.JSONDecodeError:  # what msgspec read and orjson refuses: the generic verdict
                return [invalid_item(item.raw, item.line, item.offset, item.size)]
            for got, raw in results:
                out.append(self._completed(item, got, None, ts, now, raw))
        return self._user_texts(item, out, texts, parent, ts, item.isSynthetic is True, now)

    def _user_texts(self, item: Any, out: list, texts: list[str], parent: str, ts: int | None,
                    synthetic: bool, now: int | None) -> list:
        """``out`` (a ``user`` line's tool results) and the event its text blocks make."""
        if texts:
            text = "\n".join(texts)
            t, src = when(ts, now)
            if parent:
                out.append(StatusNote(item, t, src, "subagent", "subagent_prompt",
                                      f"sub-agent prompt: {one_line(text, 300)}", parent))
            elif synthetic:
                # written by Claude Code, not the user: the summary a compaction leaves (2.1.285,
                # untether's captures): a status line, never the run's prompt
                out.append(StatusNote(item, t, src, "status", "synthetic_user",
                                      f"synthetic user message: {one_line(text, 300)}"))
            else:
                out.append(Prompt(item, t, src, text))
        return out

    def _result(self, item: Event, data: dict, now: int | None) -> list:
        out: list = []
        for denial in data.get("permission_denials") or [] if isinstance(data.get("permission_denials"), list) else []:
            if not isinstance(denial, dict):
                continue
            cid = s(denial.get("tool_use_id"))
            name = s(denial.get("tool_name"))
            kind = self._kinds.get(cid) or kind_of(name)
            self._calls.pop(cid, None)
            inp = denial.get("tool_input")
            out.append(ToolEnd(item, *when(None, now), cid, kind, name or kind, status=STATUS_REJECTED,
                               outcome="rejected", reason=self._errors.pop(cid, "") or _DENIED,
                               summary=summary_of(kind, name, inp)))
        subtype = s(data.get("subtype"))
        errors = data.get("errors")
        error = "; ".join(s(e) for e in errors) if isinstance(errors, list) else ""
        if error:
            out.append(self.note(item, now, "error", "errors", "errors: " + one_line(error, 300)))
        reason = data.get("terminal_reason")
        if isinstance(reason, str) and reason and reason != "completed":
            out.append(self.note(item, now, "status", "terminal_reason", f"the run ended: {reason}"
                                 + (f" (HTTP {data['api_error_status']})" if data.get("api_error_status") else "")))
        cost, model_usage = self._run_cost(data)
        run_line = None
        if self._open_runs:
            # the oldest open run of its kind: one a task's notification began (the result's
            # origin says so), or one the user's prompt began
            origin = data.get("origin")
            notified = isinstance(origin, dict) and origin.get("kind") == "task-notification"
            runs = self._open_runs
            k = next((k for k, (_line, by_note) in enumerate(runs) if by_note == notified), 0)
            line, _by_note = runs[k]
            del runs[k]
            if k < len(runs):  # a later run began before this result: it ends the run it belongs to
                run_line = line
        text = data.get("result")
        end = RunEnd(item, *when(None, now), subtype=subtype,
                     is_error=data.get("is_error") is True or subtype.startswith("error"),
                     text=text if isinstance(text, str) else ("" if text is None else str(text)),
                     duration_ms=as_int(data.get("duration_ms")), duration_api_ms=as_int(data.get("duration_api_ms")),
                     request_id=data.get("request_id") if isinstance(data.get("request_id"), str) else None,
                     usage=usage_of(data.get("usage")), cost_usd=cost, model_usage=model_usage, error=error,
                     session_id=data.get("session_id") if isinstance(data.get("session_id"), str) else None)
        end.run_line = run_line
        out.append(end)
        self._kinds.clear()  # the run is over: memory stays flat over a file of many runs
        self._errors.clear()
        return out

    def _run_cost(self, data: dict) -> tuple[float | None, dict | None]:
        """``(cost_usd, model_usage)`` of one run.

        Claude Code's ``total_cost_usd`` and ``modelUsage`` are the process's so far, not the
        run's ("read the latest result rather than summing", sdk.d.ts); its ``usage`` is the
        run's own. In real captures (a001-raw, 2.1.233: three runs of one session reporting
        0.0160, 0.0310, 0.0454; untether's 2.1.285 ones) each later run of the same
        ``session_id`` in one stream reports the sum. So a run after another of the same session
        in this source gets the difference from that run's figures when they grew (a figure
        that shrank is kept as reported); the first run of a session here keeps its figures as
        reported (what came before this source is unknown). A result a background task held
        back reports the totals at its release (2.1.239 on), so its share may include the next
        run's: the runs' sum stays right.
        """
        total: Any = data.get("total_cost_usd")  # (any JSON value)
        mu = data.get("modelUsage")
        sid = data.get("session_id")
        prev = self._totals.get(sid) if type(sid) is str and sid else None
        if type(sid) is str and sid:
            self._totals[sid] = (total, mu if isinstance(mu, dict) else {})
        if prev is None or not _grew(total, prev[0]):
            return (float(total) if _number(total) else None), _model_usage(mu)
        return float(total - prev[0]), _model_usage(mu, prev[1])

    def finish(self, now: int | None) -> list:
        """Hook events still held (the input ended after them: they stay in the last run), then
        tool calls whose message never completed (their native events were counted already)."""
        pending = self._pending_tools(None, now)
        for ev in pending:
            ev.natives = 0
        return self._release() + pending + self._unanswered_hooks(now)

    # -- payloads, re-read by offset -------------------------------------------------------------

    @staticmethod
    def payloads(kind: str, call_id: str, started: dict | None, ended: dict | None,
                 known_args: Any = None) -> CallPayloads:
        """Claude Code's payloads of ``call_id``: the ``tool_use`` block's ``input`` (from the
        ``assistant`` line, or a ``content_block_start``), the ``tool_result`` block as written
        (and the line's ``tool_use_result`` beside it), or the ``permission_denials`` entry of a
        rejected call."""
        name = ""
        inp: Any = None
        if started is not None:
            found = _tool_use(started, call_id)
            if found is not None:
                name, inp = found
        block = tur = denial = None
        if ended is not None:
            if ended.get("type") == "result":
                for d in ended.get("permission_denials") or []:
                    if isinstance(d, dict) and d.get("tool_use_id") == call_id:
                        denial = d
                        if inp is None:
                            inp, name = d.get("tool_input"), s(d.get("tool_name"))
            else:
                msg = ended.get("message")
                content = msg.get("content") if isinstance(msg, dict) else None
                results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"] \
                    if isinstance(content, list) else []
                for b in content if isinstance(content, list) else []:
                    if isinstance(b, dict) and b.get("tool_use_id") == call_id:
                        block = b
                tur = ended.get("tool_use_result") if len(results) == 1 else None
                if block is None and ended.get("type") == "assistant":  # a server tool's result
                    found = _tool_use(ended, call_id)
                    if found is not None and inp is None:
                        name, inp = found
        if inp is None:
            inp = known_args
        kind = kind or kind_of(name)
        if denial is not None:  # (the reason is on its tool_result's line, if any: the model's detail says it)
            return CallPayloads(inp, denial, view_of(kind, name, inp, None, None), STATUS_REJECTED, "rejected")
        if block is None:
            return CallPayloads(inp, None, view_of(kind, name, inp, None, None))
        failed = block.get("is_error") is True
        view = view_of(kind, name, inp, block, tur)
        extra = [("tool_use_result", tur)] if tur is not None else []
        return CallPayloads(inp, block, view, STATUS_FAILURE if failed else STATUS_SUCCESS,
                            "failure" if failed else "success",
                            [("error", result_text(block.get("content")))] if failed else [], extra)

    @staticmethod
    def native_payloads(data: dict) -> list[tuple[Any, Any]]:
        """``(input, None)`` of each ``tool_use`` block and ``(None, content)`` of each
        ``tool_result`` block of an ``assistant`` or ``user`` line."""
        out: list[tuple[Any, Any]] = []
        if data.get("type") in ("assistant", "user"):
            msg = data.get("message")
            content = msg.get("content") if isinstance(msg, dict) else None
            for block in content if isinstance(content, list) else ():
                if isinstance(block, dict):
                    if block.get("type") in ("tool_use", "server_tool_use"):
                        out.append((block.get("input") if isinstance(block.get("input"), dict) else None, None))
                    elif "tool_use_id" in block:
                        out.append((None, block.get("content")))
        return out


def _tool_use(data: dict, call_id: str) -> tuple[str, Any] | None:
    """``(name, input)`` of the ``tool_use`` block ``call_id`` on an ``assistant`` line or a
    ``content_block_start`` ``stream_event``, else None."""
    if data.get("type") == "stream_event":
        ev = data.get("event")
        cb = ev.get("content_block") if isinstance(ev, dict) else None
        if isinstance(cb, dict) and cb.get("id") == call_id:
            return s(cb.get("name")), cb.get("input")
        return None
    msg = data.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict) and block.get("id") == call_id and block.get("type") in ("tool_use",
                                                                                          "server_tool_use"):
            return s(block.get("name")), block.get("input")
    return None


# a system/status line's keys that its note tells (see _status_note)
_STATUS_KEYS = ("status", "compact_result", "compact_error", "permissionMode")
_DENIED = "permission denied (the run's permission_denials)"


def _status_note(adapter: ClaudeAdapter, item: Any, now: int | None, status: str, compact_result: str,
                 compact_error: str, mode: str) -> StatusNote:
    """The note of a ``system/status`` line: its status (``requesting``, ``compacting``, or
    none), and what else it says (2.1.285, untether's captures: ``compact_result`` after a
    compaction; ``permissionMode`` on a change)."""
    bits = [status] if status else []
    if compact_result:
        bits.append(f"compaction {compact_result}")
    if compact_error:
        bits.append(f"compaction error: {one_line(compact_error, 200)}")
    if mode:
        bits.append(f"permission mode {mode}")
    fields = {k: v for k, v in zip(_STATUS_KEYS, (status, compact_result, compact_error, mode)) if v}
    return adapter.note(item, now, "status", "status", "status: " + (", ".join(bits) or "none"), fields=fields or None)


def _rate_limit_words(info: dict, at_ms: int | None = None) -> str:
    """``allowed_warning (seven_day, 77 % used, resets 14:00 UTC, in 2 h 05 min)`` from a
    ``rate_limit_info`` (``status``, ``rateLimitType``, ``utilization`` 0-1, ``resetsAt`` epoch
    seconds; untether's 2.1.285 captures; a window's figures may sit only in ``unifiedWindows``:
    dungle-scrubs' a001 capture has no ``utilization`` beside them). The reset is in local time
    (its date too unless it is the day of ``at_ms``), and how long after ``at_ms`` (the event's
    time, epoch ms) when that is known."""
    status = s(info.get("status")) or "event"
    window = s(info.get("rateLimitType"))
    bits = [window] if window else []
    windows = info.get("unifiedWindows")
    if not isinstance(windows, dict):
        windows = {}
    own = windows.get(window)
    if not isinstance(own, dict):
        own = {}
    used: Any = info.get("utilization", own.get("utilization"))  # (any JSON value)
    if _number(used):
        bits.append(f"{used * 100:.0f} % used")
    resets = as_int(info.get("resetsAt", own.get("resetsAt")))
    if resets is not None:
        bits.append(_reset_words(resets, at_ms))
    return status + (f" ({', '.join(bits)})" if bits else "")


def _reset_words(resets_s: int, at_ms: int | None) -> str:
    """``resets 2026-10-03 14:00 CEST`` (local time), ``resets 14:00 CEST, in 2 h 05 min`` when
    ``at_ms`` (epoch ms) is known (the date only when another day); ``resetsAt N`` for a value no
    date has."""
    try:
        when_ = dt.datetime.fromtimestamp(resets_s).astimezone()
        at = dt.datetime.fromtimestamp(at_ms / 1000).astimezone() if at_ms is not None else None
    except (OverflowError, OSError, ValueError):
        return f"resetsAt {resets_s}"
    text = "resets " + when_.strftime("%H:%M %Z" if at is not None and at.date() == when_.date() else "%Y-%m-%d %H:%M %Z")
    if at_ms is not None:
        text += ", " + _in_words(resets_s * 1000 - at_ms)
    return text


def _in_words(ms: int) -> str:
    """``in 12 min``, ``in 2 h 05 min``, ``in 3 d 4 h``; ``12 min ago`` for a time past; ``now``."""
    minutes = int(abs(ms) // 60_000)
    if minutes == 0:
        return "now"
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    span = f"{days} d {hours} h" if days else f"{hours} h {mins:02d} min" if hours else f"{mins} min"
    return f"in {span}" if ms > 0 else f"{span} ago"


def _hook_name(data: dict) -> str:
    """``SessionStart:startup`` (``hook_name`` says the event already), else the event and the
    name, else ``hook``."""
    name, event = s(data.get("hook_name")), s(data.get("hook_event"))
    if name and (not event or name.startswith(event)):
        return name
    return " ".join(x for x in (event, name) if x) or "hook"


def _hook_output(data: dict) -> str:
    """A hook response's output: its ``stdout`` and ``stderr`` (each under a label when both
    have text), else its ``output``; "" when it printed nothing."""
    out, err = s(data.get("stdout")).strip("\n"), s(data.get("stderr")).strip("\n")
    if out and err:
        return f"stdout:\n{out}\nstderr:\n{err}"
    return out or (f"stderr:\n{err}" if err else "") or s(data.get("output")).strip("\n")


def _fields(data: dict) -> dict | None:
    out = {k: v for k, v in data.items() if k not in ("type", "subtype", "session_id", "uuid")}
    return out or None


# a delta's type -> the field holding its text (Anthropic's streaming events)
_DELTA_FIELDS = {"text_delta": "text", "thinking_delta": "thinking", "input_json_delta": "partial_json"}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _grew(now: Any, before: Any) -> bool:
    """Both are numbers and ``now`` is not below ``before`` (a running total that went on)."""
    return _number(now) and _number(before) and now >= before


def _model_usage(mu: Any, before: Any = None) -> dict | None:
    """``modelUsage`` as ``{model: (Usage, cost_usd)}`` (None when absent or empty).

    ``before``: the previous run's ``modelUsage`` of the same session in this source (see
    :meth:`ClaudeAdapter._run_cost`): each number that grew since is its difference.
    """
    if not isinstance(mu, dict) or not mu:
        return None
    out = {}
    for model, u in mu.items():
        if isinstance(u, dict):
            prev = before.get(model) if isinstance(before, dict) else None
            if isinstance(prev, dict):
                u = {k: v - prev[k] if k in prev and _grew(v, prev[k]) else v for k, v in u.items()}
            cost: Any = u.get("costUSD")  # (any JSON value)
            out[s(model)] = (usage_of(u), float(cost) if _number(cost) else None)
    return out or None
