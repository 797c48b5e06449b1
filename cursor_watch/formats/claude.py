"""Claude Code: ``claude -p PROMPT --output-format stream-json --verbose [--include-partial-messages]``.

Facts (Claude Code's headless and Agent SDK docs; the real captures in
``shared/streams/agents/claude/``, CLI 2.1.220-2.1.295):

* ``system/init`` (``session_id``, ``model``, ``cwd``, ``permissionMode``, ``claude_code_version``)
  begins a run; a file can hold several (one per ``-p`` turn of a resumed session). Hook events
  (``system/hook_started``/``hook_response``, possibly before ``init``), ``system/status``,
  ``compact_boundary``, ``thinking_tokens`` and ``rate_limit_event`` are status lines.
* ``assistant`` lines carry one message, often one content block per line, several lines
  sharing ``message.id``: ``text``, ``thinking``, ``tool_use`` (``id``, ``name``, ``input``).
  Lines of a sub-agent carry ``parent_tool_use_id`` = the ``Task``/``Agent`` call's id.
* ``user`` lines carry ``tool_result`` blocks (``tool_use_id``, ``content``, ``is_error``) and a
  top-level ``tool_use_result`` (the tool's structured output: ``structuredPatch`` of an edit...);
  one with ``isSynthetic`` (a compaction's summary, 2.1.285) is Claude Code's, not the user's.
* with partial messages, ``stream_event`` wraps the API's stream: ``message_start`` (``message.id``),
  ``content_block_start`` (a ``tool_use`` id only here), ``content_block_delta`` (``text_delta``,
  ``thinking_delta``, ``input_json_delta`` by ``index``, which restarts per message),
  ``content_block_stop``, ``message_delta``, ``message_stop``; the whole ``assistant`` line follows
  each block (sometimes before its ``content_block_stop``).
* ``result`` (keys in any order): ``subtype`` (``success``, ``error_max_turns``,
  ``error_during_execution``...), ``is_error``, ``result`` (the final text), ``duration_ms``,
  ``duration_api_ms``, ``num_turns``, ``usage`` (``input_tokens`` excludes cache reads and
  writes), ``modelUsage``, ``total_cost_usd``, ``permission_denials``.
* ISO ``timestamp`` on ``assistant`` and ``user`` lines only.
"""

from __future__ import annotations

import difflib
from typing import Any

import orjson
from msgspec import UNSET

from ..events import invalid_item
from .claude_typed import DECODER as TYPED_DECODER
from .claude_typed import TYPED_SUBTYPES, AssistantEvent, StreamEvent, SystemEvent, UserEvent
from .claude_typed import loads as raw_loads
from .common import (Adapter, CallEvent, Event, Invalid, Item, as_event, event, iso_ms, lazy_tool_event, note, one_line,
                     s, tool_event)

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


def _usage(u: Any) -> dict | None:
    """The canonical usage keys of a Claude Code usage object, or None when it isn't one.

    ``usage`` (a message's or the result's, snake_case) or a ``modelUsage`` entry (camelCase):
    ``input_tokens`` (cache reads and writes excluded), ``output_tokens``, ``cache_read_tokens``,
    ``cache_write_tokens``; plus ``reasoning_tokens`` where given: the result's
    ``usage.output_tokens_details.thinking_tokens`` (part of ``output_tokens``; real captures
    a001-raw, 2.1.233, and untether's 2.1.285 ones) or a ``modelUsage`` entry's
    ``thinkingTokens`` (2.1.285). Values are the stream's own (a non-number stays as written
    and is read as unknown by the model).
    """
    if not isinstance(u, dict):
        return None
    out = {"input_tokens": u.get("input_tokens", u.get("inputTokens")),
           "output_tokens": u.get("output_tokens", u.get("outputTokens")),
           "cache_read_tokens": u.get("cache_read_input_tokens", u.get("cacheReadInputTokens")),
           "cache_write_tokens": u.get("cache_creation_input_tokens", u.get("cacheCreationInputTokens"))}
    details = u.get("output_tokens_details")
    if isinstance(details, dict) and "thinking_tokens" in details:
        out["reasoning_tokens"] = details["thinking_tokens"]
    elif "thinkingTokens" in u:
        out["reasoning_tokens"] = u["thinkingTokens"]
    return out


def tool_body(kind: str, name: str, inp: Any) -> dict:
    """The canonical variant body (``args``, ``description``) of a ``tool_use`` input.

    The arguments are the native input plus the names the canonical kind's views read
    (``path`` for ``file_path``...), so the raw JSON still shows the agent's own keys.
    """
    a = dict(inp) if isinstance(inp, dict) else {}
    if kind in ("read", "edit", "write"):
        path = a.get("file_path") or a.get("notebook_path")
        if path is not None and "path" not in a:
            a["path"] = path
        if kind == "write" and "content" in a and "fileText" not in a:
            a["fileText"] = a["content"]
    elif kind == "glob":
        a.setdefault("globPattern", a.get("pattern"))
        if a.get("path"):
            a.setdefault("targetDirectory", a["path"])
    elif kind == "task":
        if a.get("subagent_type"):
            a.setdefault("model", a["subagent_type"])
    elif kind == "mcp":
        parts = name.split("__", 2)
        if len(parts) == 3:
            a.setdefault("providerIdentifier", parts[1])
            a.setdefault("toolName", parts[2])
        if isinstance(inp, dict) and inp:
            a.setdefault("args", dict(inp))  # the MCP tool's own arguments, where the mcp view reads them
    body: dict[str, Any] = {"args": a}
    desc = a.get("description")
    if isinstance(desc, str) and desc and kind != "task":
        body["description"] = desc
    return body


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
        out.extend(s(line) for line in hunk.get("lines") or [] if line is not None)
    return "\n".join(out) + "\n"


def _diff(args: dict, tur: Any) -> str:
    """The edit's diff: Claude Code's ``structuredPatch``, else computed from the input's
    ``old_string``/``new_string`` (``edits`` of a MultiEdit); "" when neither is there."""
    path = s(args.get("file_path") or args.get("path") or (tur.get("filePath") if isinstance(tur, dict) else ""))
    if isinstance(tur, dict) and isinstance(tur.get("structuredPatch"), list) and tur["structuredPatch"]:
        return _patch_text(tur["structuredPatch"], path)
    edits = args.get("edits") if isinstance(args.get("edits"), list) else [args]
    out = []
    for e in edits:
        if isinstance(e, dict) and isinstance(e.get("old_string"), str) and isinstance(e.get("new_string"), str):
            out.extend(difflib.unified_diff(e["old_string"].splitlines(True), e["new_string"].splitlines(True),
                                            path, path, n=2))
    return "".join(out)


def tool_result(kind: str, block: dict, tur: Any, args: Any) -> dict:
    """The canonical ``result`` object (one outcome key) of a ``tool_result`` block.

    Args:
        kind: the call's canonical kind; block: the ``tool_result`` block; tur: the line's
        ``tool_use_result`` (or None); args: the native input of the call, if known.
    """
    text = result_text(block.get("content"))
    a = args if isinstance(args, dict) else {}
    if block.get("is_error") is True:
        return {"failure": {"error": text}}
    p: dict[str, Any]
    if kind == "shell":
        p = {"stdout": text}
        if isinstance(tur, dict):
            if isinstance(tur.get("stdout"), str):
                p["stdout"] = tur["stdout"]
            if tur.get("stderr"):
                p["stderr"] = s(tur["stderr"])
            if tur.get("interrupted"):
                p["signal"] = "interrupted"
    elif kind == "read":
        p = {"content": text}
    elif kind == "edit":
        p = {"message": one_line(text, 300)}
        diff = _diff(a, tur)
        if diff:
            p["diffString"] = diff
    elif kind == "webFetch":
        p = {"markdown": text}
    elif kind == "task":
        texts = []
        for b in block.get("content") if isinstance(block.get("content"), list) else [block.get("content")]:
            t = b.get("text") if isinstance(b, dict) else b
            if isinstance(t, str) and t:
                texts.append({"assistantMessage": {"text": t}})
        p = {"conversationSteps": texts}
    elif kind == "mcp":
        p = {"content": [{"text": {"text": text}}]}
    elif kind == "updateTodos":
        p = {"message": one_line(text, 300)}
        if isinstance(tur, dict) and isinstance(tur.get("newTodos"), list):
            p["todos"] = tur["newTodos"]
    else:
        p = {"output": text}
    return {"success": p}


class ClaudeAdapter(Adapter):
    """Claude Code ``stream-json`` -> canonical events (see the module's notes)."""

    name = "claude"
    agent = "claude-code"
    typed_decoder = TYPED_DECODER  # stream_event lines (the bulk of a partial-messages stream)

    def __init__(self) -> None:
        self._streamed: set[str] = set()  # message ids whose blocks came as stream_event deltas
        self._blocks: dict[tuple[str, int], list] = {}  # (parent, index) -> [type, id, name, json parts, item]
        self._calls: dict[str, tuple[str, str, str, Any]] = {}  # running: id -> (kind, name, parent, input)
        self._kinds: dict[str, str] = {}  # every call id seen -> kind (for permission denials)
        self._errors: dict[str, str] = {}  # failed call id -> its tool_result's message (a denial's reason)
        # message id -> its usage (the last assistant line of a message has the final figures; a
        # message's blocks come as several lines with the same id): the run's usage so far
        self._usage: dict[str, dict] = {}
        self._usage_sum: dict[str, int] = {}  # kind -> the integers of _usage's values, summed
        # hook events held back after a result (see convert), and how many the last convert gave
        self._held: list[Item] = []
        self._released = 0
        self._refused: list[tuple[Any, Invalid]] = []  # typed lines orjson refuses, with their diagnostics
        self._after_result = False
        # the message whose text segment is open (its id, its text blocks so far): see _assistant
        self._text_mid: str | None = None
        self._text = ""
        # session id -> the last run's total_cost_usd and modelUsage as reported (running totals
        # of the session: each later run's own share is the difference, see _run_cost)
        self._totals: dict[str, tuple[Any, dict]] = {}

    # -- events ------------------------------------------------------------------------------

    def adapt(self, items: list[Item]) -> list[Item]:
        """As :meth:`Adapter.adapt`, with consecutive text (or thinking) deltas of a batch
        merged into one canonical delta: the model builds the same text from fewer events
        (deltas are most of a stream with partial messages; a batch arrives at once, so a view
        shows the same thing). A merged delta keeps its first line's number and span."""
        out: list[Item] = []
        append = out.append
        convert = self.convert
        unreadable = self._unreadable
        natives = 0
        cuts: list[tuple[int, int]] = []  # (native events, canonical items) before each init
        mtype = ""  # the delta type being merged ("" when none)
        mdata: dict = {}
        texts: list[str] = []
        for item in items:
            cls = item.__class__
            if cls is StreamEvent:  # this adapter's typed decoding (claude_typed): attributes
                natives += 1
                ev = item.event
                et = ev.type
                if et == "content_block_delta":
                    parent = item.parent_tool_use_id or ""
                    delta = ev.delta
                    dt = delta.type if delta else None  # (UNSET and None are false)
                    if mtype and not parent and dt == mtype:
                        text = delta.text if mtype == "text_delta" else delta.thinking
                        if text:  # a str (the struct's type) and not empty
                            texts.append(text)
                            continue  # this native event counts; no canonical one is added
                    if not self._held:
                        # _api_event's delta rules, inline (most lines of a partial-messages
                        # stream): a delta changes neither the hook events held nor the open
                        # text segment (convert's bookkeeping), and its line is no result
                        self._after_result = False
                        if mtype:
                            _merge(mtype, mdata, texts)
                            mtype = ""
                        if dt == "text_delta":
                            text = delta.text
                            if text and not parent:
                                mdata = {"type": "assistant", "delta": True, "message": {
                                    "role": "assistant", "content": [{"type": "text", "text": text}]}}
                                mtype, texts = "text_delta", [text]
                                append(Event(mdata, item.line, item.offset, item.size))
                        elif dt == "thinking_delta":
                            text = delta.thinking
                            if text and not parent:
                                block = self._blocks.get(("", ev.index))
                                if block is not None:
                                    block[3].append("")  # the block has text: its stop completes a thinking block
                                mdata = {"type": "thinking", "subtype": "delta", "text": text}
                                mtype, texts = "thinking_delta", [text]
                                append(Event(mdata, item.line, item.offset, item.size))
                        elif dt == "input_json_delta":
                            block = self._blocks.get((parent, ev.index))
                            if block is not None and delta.partial_json.__class__ is str:
                                block[3].append(delta.partial_json)
                        continue
                elif et == "content_block_stop" and not self._held:
                    self._after_result = False
                    if mtype:
                        _merge(mtype, mdata, texts)
                        mtype = ""
                    parent = item.parent_tool_use_id or ""
                    block = self._blocks.get((parent, ev.index))
                    if block is not None and block[0] == "thinking" and not parent and block[3]:
                        # (a redacted one had no text)
                        append(Event({"type": "thinking", "subtype": "completed"}, item.line, item.offset, item.size))
                    continue
            else:
                if cls is not Event and cls is not UserEvent and cls is not AssistantEvent and not (
                        cls is SystemEvent and item.subtype in TYPED_SUBTYPES):  # (this adapter's typed events,
                    # read in convert)
                    if cls is not Invalid:
                        # a typed Cursor event (formats.cursor_typed), or a system line of a subtype
                        # read the generic way (claude_typed.SystemEvent): read as its line's dict
                        native = item
                        item = as_event(item)
                        if item.__class__ is Invalid and native.__class__ is SystemEvent:
                            self._refused.append((native, item))  # (see _refuse)
                    if item.__class__ is Invalid:
                        if self._held:  # hook events, then not the next init: they stay in the run they follow
                            held = self._release()
                            natives += len(held)
                            out.extend(held)
                        append(item)
                        continue
                natives += 1
                if mtype and item.type == "stream_event":
                    data = item.data
                    ev = data.get("event")
                    if ev.__class__ is dict and ev.get("type") == "content_block_delta" \
                            and not data.get("parent_tool_use_id"):
                        delta = ev.get("delta")
                        if delta.__class__ is dict and delta.get("type") == mtype:
                            text = delta.get("text" if mtype == "text_delta" else "thinking")
                            if text.__class__ is str and text:
                                texts.append(text)
                                continue  # this native event counts; no canonical one is added
            if mtype:
                _merge(mtype, mdata, texts)
                mtype = ""
            held = len(self._held)
            try:  # (as Adapter.adapt: a line whose shape breaks convert is a diagnostic)
                got = convert(item)
            except Exception as err:  # noqa: BLE001 - any shape an agent could write
                got = [unreadable(item, err)]
            if len(self._held) > held:
                natives -= 1  # held back (a hook event after a result): counted where it is released
                continue
            released, self._released = self._released, 0
            natives += released
            if got and got[0].__class__ is Invalid:  # a diagnostic: an invalid line, not an event
                natives -= 1
                out.extend(got)
                continue
            if released and len(got) > released and got[-1 - released].__class__ is Event \
                    and got[-1 - released].type == "system" and got[-1 - released].subtype == "init":
                # an init with the hook events before it: they begin its run (counted in it)
                cuts.append((natives - 1 - released, len(out) + len(got) - 1 - released))
                out.extend(got)
                continue
            if len(got) == 1:
                ev0 = got[0]
                if ev0.__class__ is Event:
                    d = ev0.data
                    if item.type == "stream_event":
                        if d.get("delta") is True:
                            mtype, mdata, texts = "text_delta", d, [d["message"]["content"][0]["text"]]
                        elif ev0.type == "thinking" and ev0.subtype == "delta":
                            mtype, mdata, texts = "thinking_delta", d, [d["text"]]
                    elif ev0.type == "system" and ev0.subtype == "init":
                        cuts.append((natives - 1, len(out)))
                append(ev0)
            else:
                out.extend(got)
        if mtype:
            _merge(mtype, mdata, texts)
        if self._refused:  # lines the typed path read and orjson refuses: invalid natives (see _refuse)
            refused = {id(native): bad for native, bad in self._refused}
            self._refused.clear()
            for k, native in enumerate(items):
                bad = refused.get(id(native))
                if bad is not None:
                    items[k] = bad
        if not cuts:
            self.corrections = [natives - _events(out, 0, len(out))]
        else:  # per run segment: each init's native event counts in the run it begins
            bounds = [(0, 0), *cuts, (natives, len(out))]
            self.corrections = [(n2 - n1) - _events(out, c1, c2) for (n1, c1), (n2, c2) in zip(bounds, bounds[1:])]
        return out

    def _refuse(self, item: Any) -> list[Item]:
        """The diagnostic of a typed line whose part ``orjson`` refuses (msgspec read it: a
        number beyond a double), as the generic path gives it; :meth:`adapt` makes it the
        batch's native item of that line too (the generic path has no event there)."""
        bad = invalid_item(item.raw, item.line, item.offset, item.size)
        self._refused.append((item, bad))
        return [bad]

    def _release(self) -> list[Item]:
        """The hook events held back (see :meth:`convert`), in their order; none held after."""
        held, self._held = self._held, []
        return held

    def convert(self, item: Event) -> list[Item]:
        """The canonical events of one native event (see :meth:`_convert`).

        Hook events (``system/hook_started``/``hook_response``) after a run's ``result`` are
        the next run's start (its SessionStart hooks fire before its ``init``): they are held
        back and given after that ``init``, which carries ``run_first_line``/``run_first_offset``
        (the first hook's line and byte offset: the run begins there). Anything else after them
        (or the end of input) releases them first, in the run they follow.
        :attr:`_released` tells :meth:`adapt` how many held events were given.
        """
        if self._after_result and item.type == "system" and item.subtype in ("hook_started", "hook_response"):
            self._held.append(self._system(item, item.data))
            return []
        cls = item.__class__  # (the dispatch by kind, inline: most lines are typed)
        if cls is StreamEvent:
            out = self._stream_typed(item)
        elif cls is AssistantEvent:
            out = self._assistant_typed(item)
        elif cls is UserEvent:
            out = self._user_typed(item)
        elif cls is SystemEvent:
            out = [self._system_typed(item)]
        else:
            out = self._convert(item)
        self._after_result = item.type == "result"
        if self._held:
            held = self._release()
            self._released = len(held)
            if out and out[0].__class__ is Event and out[0].type == "system" and out[0].subtype == "init":
                out[0].data["run_first_line"] = held[0].line
                out[0].data["run_first_offset"] = held[0].offset
                out = [out[0], *held, *out[1:]]
            else:
                out = held + out
        if self._text_mid is not None:
            # the model closes the open segment at a tool call, a result or an init: the next
            # text block (of the same message after a tool_use) then begins a new segment
            for ev in reversed(out):
                if ev.__class__ is not Invalid:
                    t = ev.type
                    if t == "assistant" and "message_open" in ev.data:
                        break
                    if t == "tool_call" or t == "result" or (t == "system" and ev.subtype == "init"):
                        self._text_mid = None
                        break
        return out

    def _close_text(self, item: Event) -> list[Item]:
        """The whole text of the message whose segment is still open, as a closing flush
        (the model closes the segment, its text unchanged): a new message begins."""
        if self._text_mid is None:
            return []
        mid, text = self._text_mid, self._text
        self._text_mid = None
        return [event({"type": "assistant", "model_call_id": mid,
                       "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}}, item)]

    def _convert(self, item: Event) -> list[Item]:
        """:meth:`convert` for a generic :class:`Event` (the typed ones are dispatched there)."""
        t = item.type
        data = item.data
        if t == "stream_event":
            return self._stream(item, data)
        if t == "assistant":
            return self._assistant(item, data)
        if t == "user":
            return self._user(item, data)
        if t == "system":
            return [self._system(item, data)]
        if t == "result":
            return self._result(item, data)
        if t == "rate_limit_event":
            info = data.get("rate_limit_info") if isinstance(data.get("rate_limit_info"), dict) else {}
            bits = [f"{k}={v}" for k, v in info.items() if k in ("status", "rateLimitType", "resetsAt")]
            return [note(item, "rate_limit", "rate limit: " + (", ".join(bits) or "event"), "rate_limit")]
        return [item]  # an event type this adapter doesn't know: listed as unknown

    def _system_typed(self, item: SystemEvent) -> Event:
        """A ``system/status`` or ``system/thinking_tokens`` line decoded by
        :mod:`cursor_watch.formats.claude_typed` (any other subtype is read the generic way,
        see :meth:`adapt`): :meth:`_system`'s rules on the struct's values."""
        if item.subtype == "status":
            return _status_note(item, item.status or "", item.compact_result or "", item.compact_error or "",
                                item.permissionMode or "")
        return _thinking_tokens_note(item, s(item.estimated_tokens))

    def _system(self, item: Event, data: dict) -> Event:
        st = item.subtype
        if st == "init":
            self._kinds.clear()
            self._calls.clear()
            self._errors.clear()
            self._usage.clear()
            self._usage_sum.clear()
            out = {"type": "system", "subtype": "init", "agent": self.agent}
            for key in ("session_id", "model", "cwd", "permissionMode", "apiKeySource"):
                if key in data:
                    out[key] = data[key]
            if "claude_code_version" in data:
                out["agent_version"] = s(data["claude_code_version"])
            return event(out, item)
        if st in ("hook_started", "hook_response"):
            what = " ".join(x for x in (s(data.get("hook_event")), s(data.get("hook_name"))) if x) or "hook"
            text = f"hook {what} " + ("started" if st == "hook_started" else s(data.get("outcome")) or "response")
            if st == "hook_response" and data.get("exit_code") not in (None, 0):
                text += f" (exit {data.get('exit_code')})"
            return note(item, st, text, "hook")
        if st == "status":
            return _status_note(item, *(s(data.get(k)) if data.get(k) else "" for k in _STATUS_KEYS))
        if st == "thinking_tokens":
            return _thinking_tokens_note(item, s(data.get("estimated_tokens")))
        if st == "compact_boundary":
            meta = data.get("compact_metadata") if isinstance(data.get("compact_metadata"), dict) else {}
            bits = [f"{k} {v}" for k, v in meta.items() if k in ("trigger", "pre_tokens")]
            return note(item, st, "context compacted" + (f" ({', '.join(bits)})" if bits else ""), "status")
        if st.startswith("task_"):
            cid = s(data.get("tool_use_id"))
            what = s(data.get("description")) or s(data.get("summary"))
            status = s(data.get("status"))
            patch = data.get("patch")
            if not status and isinstance(patch, dict):
                status = s(patch.get("status"))
            text = f"sub-agent {st[5:]}" + (f" {status}" if status else "") + (f": {one_line(what, 160)}" if what else "")
            return note(item, st, text, "subagent", cid)
        fields = {k: v for k, v in data.items() if k not in ("type", "subtype", "session_id", "uuid")}
        text = (st or "system") + (" " + ", ".join(f"{k}={one_line(s(v), 80)}" for k, v in list(fields.items())[:6])
                                   if fields else "")
        return note(item, st, text)

    def _stream(self, item: Event, data: dict) -> list[Item]:
        """A ``stream_event`` line read from its dict (the generic path): see :meth:`_api_event`."""
        ev = data.get("event")
        if not isinstance(ev, dict):
            return [item]
        index = ev.get("index")
        delta = ev.get("delta") if isinstance(ev.get("delta"), dict) else {}
        dt = delta.get("type")
        field = _DELTA_FIELDS.get(dt) if dt.__class__ is str else None
        et = ev.get("type")
        block = message_id = None
        if et == "content_block_start":
            cb = ev.get("content_block") if isinstance(ev.get("content_block"), dict) else {}
            block = (cb.get("type"), s(cb.get("id")), s(cb.get("name")), cb.get("input"))
        elif et == "message_start":
            message_id = ev.get("message").get("id") if isinstance(ev.get("message"), dict) else None
        return self._api_event(item, et, s(data.get("parent_tool_use_id")), index if index.__class__ is int else None,
                               dt, delta.get(field) if field else None, block, message_id)

    def _stream_typed(self, item: StreamEvent) -> list[Item]:
        """A ``stream_event`` line decoded by :mod:`cursor_watch.formats.claude_typed` (the same
        values as :meth:`_stream` reads: the struct's types are the shapes those rules accept)."""
        ev = item.event
        delta = ev.delta
        dt = value = None
        if delta:  # a Delta (UNSET and None are false)
            dt = delta.type
            field = _DELTA_FIELDS.get(dt) if dt is not None else None
            if field is not None:
                value = getattr(delta, field)
                if value is UNSET:
                    value = None
        et = ev.type
        block = message_id = None
        if et == "content_block_start":
            cb = ev.content_block
            if cb is UNSET:
                block = (None, "", "", None)
            else:
                try:  # a tool call's input, decoded as the generic path decodes it
                    block = (cb.type, cb.id or "", cb.name or "", raw_loads(cb.input))
                except orjson.JSONDecodeError:  # what msgspec read and orjson refuses: the generic verdict
                    return self._refuse(item)
        elif et == "message_start" and ev.message is not UNSET:
            message_id = ev.message.id
        return self._api_event(item, et, item.parent_tool_use_id or "", ev.index, dt, value, block, message_id)

    def _api_event(self, item: Any, et: Any, parent: str, index: int | None, dt: Any, value: Any,
                   start: tuple | None, message_id: Any) -> list[Item]:
        """The canonical events of one ``stream_event`` line, from what either path read.

        Args:
            et: ``event.type`` (any JSON value); parent: ``parent_tool_use_id`` as a string ("" for
            the main agent); index: ``event.index`` when an integer, else None; dt: ``delta.type``;
            value: the delta's field of that type (``text``, ``thinking``, ``partial_json``: any
            JSON value, None when absent); start: a ``content_block_start``'s block as ``(type,
            id, name, input)`` (``type`` and ``input`` any JSON value, None when absent; ``id``
            and ``name`` as :func:`s` gives them; ``(None, "", "", None)`` when it is absent or
            not an object), else None; message_id: a ``message_start``'s ``message.id`` (any
            JSON value; None when absent, or when the message is not an object).
        """
        if et == "content_block_delta":
            if dt == "text_delta":
                text = value
                if parent or not isinstance(text, str) or not text:
                    return []  # a sub-agent's text comes whole in its assistant line
                return [event({"type": "assistant", "delta": True,
                               "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}}, item)]
            if dt == "thinking_delta":
                text = value
                if parent or not isinstance(text, str) or not text:
                    return []
                block = self._blocks.get((parent, index))
                if block is not None:
                    block[3].append("")  # the block has text: its stop completes a thinking block
                return [event({"type": "thinking", "subtype": "delta", "text": text}, item)]
            if dt == "input_json_delta":
                block = self._blocks.get((parent, index))
                if block is not None and isinstance(value, str):
                    block[3].append(value)
            return []
        if et == "content_block_start":
            btype, cid, name, inp = start  # type: ignore[misc]
            key = (parent, index)
            self._blocks[key] = [btype, cid, name, [], item]  # type: ignore[index]
            if btype in ("tool_use", "server_tool_use") and cid and cid not in self._kinds:
                # the call runs from here (live: its input streams for seconds before the whole
                # assistant line); that line, or the input_json_delta pieces at message_stop,
                # fill its arguments, and its tool_result completes it: one call, one id
                return [self._started(item, cid, name or "unknown", inp, parent, None)]
            return []
        if et == "content_block_stop":
            block = self._blocks.get((parent, index))
            if block is not None and block[0] == "thinking" and not parent and block[3]:
                return [event({"type": "thinking", "subtype": "completed"}, item)]  # (a redacted one had no text)
            return []
        if et == "message_start":
            if isinstance(message_id, str):
                self._streamed.add(message_id)
            for key in [k for k in self._blocks if k[0] == parent]:
                del self._blocks[key]
            if not parent and self._text_mid is not None and self._text_mid != message_id:
                return self._close_text(item)  # its text deltas must not join the last message's
            return []
        if et == "message_stop":
            return self._pending_tools(parent)
        return []  # message_delta (usage so far), ping: nothing a view shows

    def _pending_tools(self, parent: str | None = None) -> list[Item]:
        """Tool calls started by ``content_block_start`` whose ``assistant`` line never came (a
        cut stream): their arguments from the ``input_json_delta`` pieces, when those parse.
        A call already completed (or rejected) is left as it is."""
        out: list[Item] = []
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
            out.append(self._started(start, cid, name or "unknown", inp if isinstance(inp, dict) else {}, key[0], None))
        return out

    def _started(self, item: Event, cid: str, name: str, inp: Any, parent: str, ts: int | None) -> Event:
        kind = kind_of(name)
        self._calls[cid] = (kind, name, parent, inp)
        self._kinds[cid] = kind
        return tool_event(item, "started", cid, kind, name, tool_body(kind, name, inp), parent, ts, self.live)

    def _assistant(self, item: Event, data: dict) -> list[Item]:
        msg = data.get("message")
        if not isinstance(msg, dict):
            return [item]
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
                             blocks, error if isinstance(error, str) else "", msg.get("usage"))

    def _assistant_typed(self, item: AssistantEvent) -> list[Item]:
        """An ``assistant`` line decoded by :mod:`cursor_watch.formats.claude_typed`:
        :meth:`_assistant`'s rules on the struct's values. A line with a server tool's result
        block (rare) is read the generic way (its line's dict); a tool call's ``input`` and the
        message's ``usage`` are decoded as the generic path decodes them, before anything
        changes (a number beyond a double there makes the line invalid, as there)."""
        msg = item.message
        content = msg.content
        blocks: list[tuple] = []
        try:
            if content.__class__ is str:
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
                        generic = as_event(item)
                        if generic.__class__ is Invalid:
                            return self._refuse(item)
                        return self._assistant(generic, generic.data)  # type: ignore[arg-type]
            usage = raw_loads(msg.usage)
        except orjson.JSONDecodeError:  # what msgspec read and orjson refuses: the generic verdict
            return self._refuse(item)
        return self._message(item, item.parent_tool_use_id or "", msg.id or "", iso_ms(item.timestamp), blocks,
                             item.error or "", usage)

    def _message(self, item: Any, parent: str, mid: str, ts: int | None, blocks: list[tuple], error: str,
                 usage_value: Any) -> list[Item]:
        """The canonical events of an ``assistant`` line, from what either path read.

        Args:
            parent: ``parent_tool_use_id`` as a string ("" for the main agent); mid: the
            message's ``id`` as a string; ts: the line's time (epoch ms) or None; blocks: its
            content blocks in order, as ``("text", text)``, ``("thinking", text)``,
            ``("tool_use", id, name, input)`` (strings as :func:`s` gives them; ``input`` any
            JSON value) or ``("result", block)`` (a server tool's result, its dict); error: the
            line's ``error`` when a string, else ""; usage_value: the message's ``usage`` (any
            JSON value, None when absent).
        """
        streamed = mid in self._streamed
        out: list[Item] = []
        for block in blocks:
            bt = block[0]
            if bt == "text":
                text = block[1]
                if parent:
                    if text:
                        out.append(note(item, "subagent_text", f"sub-agent: {one_line(text, 300)}", "subagent", parent))
                    continue
                # one message's text blocks (several lines sharing message.id) are one segment:
                # each line's flush gives the message's text so far (the blocks concatenated, as
                # Claude Code's result joins them: anthropics/claude-code#78686) and leaves the
                # segment open; a tool call, the result or another message closes it
                if self._text_mid is not None and self._text_mid == mid and mid:
                    self._text += text
                else:
                    out.extend(self._close_text(item))
                    self._text_mid, self._text = mid, text
                flush: dict[str, Any] = {"type": "assistant", "model_call_id": mid, "message_open": True,
                                         "message": {"role": "assistant",
                                                     "content": [{"type": "text", "text": self._text}]}}
                if ts is not None:
                    flush["timestamp_ms"] = ts
                out.append(event(flush, item))
            elif bt == "thinking":
                text = block[1]
                if parent or streamed or not text:
                    continue  # streamed already, a sub-agent's, or redacted (a signature only)
                th: dict[str, Any] = {"type": "thinking", "subtype": "delta", "text": text}
                if ts is not None:
                    th["timestamp_ms"] = ts
                out.append(event(th, item))
                out.append(event({"type": "thinking", "subtype": "completed"}, item))
            elif bt == "tool_use":
                cid = block[1] or f"(no id, line {item.line})"
                for key, b in list(self._blocks.items()):
                    if b[1] == cid:
                        del self._blocks[key]
                out.append(self._started(item, cid, block[2] or "unknown", block[3], parent, ts))
            else:  # a server tool's result (web_search_tool_result...)
                out.append(self._completed(item, block[1], None, ts))
        if error:
            out.append(note(item, "error", f"assistant error: {error}", "error"))
        usage = _usage(usage_value)
        if usage is not None:
            # tokens used so far, for live --max-tokens / --max-cost (issue 21): each message's
            # latest usage once (sub-agents' messages too: they are spent), summed per kind
            # (the sums kept up to date: a message's new figures replace its old ones; summing
            # every message again per line made a long run quadratic)
            total = self._usage_sum
            key = mid or f"(line {item.line})"
            old = self._usage.get(key)
            if old is not None:
                for kind, value in old.items():
                    if isinstance(value, int) and not isinstance(value, bool):
                        total[kind] -= value
            self._usage[key] = usage
            for kind, value in usage.items():
                if isinstance(value, int) and not isinstance(value, bool):
                    total[kind] = total.get(kind, 0) + value
            running = {kind: total.get(kind, 0) for kind in usage}
            for ev in out:
                if ev.__class__ is Event:
                    ev.data["running_usage"] = running
                elif ev.__class__ is CallEvent:
                    ev.running_usage = running
        return out

    def _completed(self, item: Any, block: dict, tur: Any, ts: int | None, raw: Any = None) -> CallEvent:
        """The ``completed`` tool call of a ``tool_result`` block (a dict, as the generic path
        reads it). ``raw``: the block's ``content`` still undecoded, a JSON string (the typed
        path, :meth:`_user_typed`; ``block`` then has ``content`` ""): unless the result is a
        failure (its text is the reason), the call's body is built from it only when asked
        (:func:`~cursor_watch.formats.common.lazy_tool_event`)."""
        cid = s(block.get("tool_use_id"))
        kind, name, parent, inp = self._calls.pop(cid, None) or (self._kinds.get(cid, "unknown"), "", "", None)
        if raw is not None:
            if block.get("is_error") is not True:
                def make() -> dict:
                    return {"result": tool_result(kind, {**block, "content": raw_loads(raw)}, tur, inp)}

                return lazy_tool_event(item, cid, kind, name or kind, {"result": tool_result(kind, block, tur, inp)},
                                       make, parent, ts, self.live)
            block = {**block, "content": raw_loads(raw)}
        body: dict[str, Any] = {"result": tool_result(kind, block, tur, inp)}
        failure = body["result"].get("failure")
        if failure is not None and cid:
            self._errors[cid] = one_line(failure["error"], 500)  # the reason, if the result denies it
        return tool_event(item, "completed", cid, kind, name or kind, body, parent, ts, self.live)

    def _user(self, item: Event, data: dict) -> list[Item]:
        msg = data.get("message")
        if not isinstance(msg, dict):
            return [item]
        parent = s(data.get("parent_tool_use_id"))
        ts = iso_ms(data.get("timestamp"))
        content = msg.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        out: list[Item] = []
        results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"] \
            if isinstance(content, list) else []
        tur = data.get("tool_use_result") if len(results) == 1 else None
        texts = []
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result":
                out.append(self._completed(item, block, tur, ts))
            elif block.get("type") == "text":
                texts.append(s(block.get("text")))
        return self._user_texts(item, out, texts, parent, ts, data.get("isSynthetic") is True)

    def _user_typed(self, item: UserEvent) -> list[Item]:
        """A ``user`` line decoded by :mod:`cursor_watch.formats.claude_typed`: :meth:`_user`'s
        rules on the struct's values (the shapes those rules accept). A tool result's content
        that is a JSON string stays raw (see :meth:`_completed`); any other content, and the
        line's ``tool_use_result`` where a result reads it, is decoded as the generic path
        decodes it (a number beyond a double there makes the line invalid, as there)."""
        parent = item.parent_tool_use_id or ""
        ts = iso_ms(item.timestamp)
        content = item.message.content
        out: list[Item] = []
        texts = []
        if content.__class__ is str:
            texts.append(content)
        elif content:  # a list of blocks
            # every part read is decoded before anything changes (a part orjson refuses makes
            # the whole line invalid, as on the generic path)
            results: list[tuple[dict, Any]] = []
            try:
                for block in content:
                    bt = block.type
                    if bt == "tool_result":
                        raw = block.content
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
                tur = raw_loads(item.tool_use_result) if len(results) == 1 else None
            except orjson.JSONDecodeError:  # what msgspec read and orjson refuses: the generic verdict
                return self._refuse(item)
            for got, raw in results:
                out.append(self._completed(item, got, tur, ts, raw))
        return self._user_texts(item, out, texts, parent, ts, item.isSynthetic is True)

    def _user_texts(self, item: Any, out: list[Item], texts: list[str], parent: str, ts: int | None,
                    synthetic: bool) -> list[Item]:
        """``out`` (a ``user`` line's tool results) and the event its text blocks make."""
        if texts:
            text = "\n".join(texts)
            if parent:
                out.append(note(item, "subagent_prompt", f"sub-agent prompt: {one_line(text, 300)}", "subagent", parent))
            elif synthetic:
                # written by Claude Code, not the user: the summary a compaction leaves (2.1.285,
                # untether's captures): a status line, never the run's prompt
                out.append(note(item, "synthetic_user", f"synthetic user message: {one_line(text, 300)}", "status"))
            else:
                user: dict[str, Any] = {"type": "user", "message": {"role": "user",
                                                                      "content": [{"type": "text", "text": text}]}}
                if ts is not None:
                    user["timestamp_ms"] = ts
                out.append(event(user, item))
        return out

    def _result(self, item: Event, data: dict) -> list[Item]:
        out: list[Item] = []
        for denial in data.get("permission_denials") or [] if isinstance(data.get("permission_denials"), list) else []:
            if not isinstance(denial, dict):
                continue
            cid = s(denial.get("tool_use_id"))
            name = s(denial.get("tool_name"))
            kind = self._kinds.get(cid) or kind_of(name)
            self._calls.pop(cid, None)
            out.append(tool_event(item, "completed", cid, kind, name or kind,
                                  {"result": _denied(self._errors.pop(cid, ""))}, live=self.live))
        subtype = s(data.get("subtype"))
        out.append(event({
            "type": "result", "subtype": subtype,
            "is_error": data.get("is_error") is True or subtype.startswith("error"),
            "duration_ms": data.get("duration_ms"), "duration_api_ms": data.get("duration_api_ms"),
            "request_id": data.get("request_id"),
            "result": data.get("result"), "usage": _usage(data.get("usage")),
            **self._run_cost(data),
            "session_id": data.get("session_id"),
        }, item))
        errors = data.get("errors")
        if isinstance(errors, list) and errors:
            out.insert(0, note(item, "errors", "errors: " + one_line("; ".join(s(e) for e in errors), 300), "error"))
        self._kinds.clear()  # the run is over: memory stays flat over a file of many runs
        self._errors.clear()
        return out

    def _run_cost(self, data: dict) -> dict:
        """``cost_usd`` and ``model_usage`` of one run (canonical keys of its ``result``).

        Claude Code's ``total_cost_usd`` and ``modelUsage`` are the session's so far, not the
        run's: in real captures (a001-raw, 2.1.233: three runs of one session reporting 0.0160,
        0.0310, 0.0454; untether's 2.1.285 ones, ``modelUsage`` tokens too) each later run of the
        same ``session_id`` in one stream reports the sum, while its ``usage`` is its own. So a
        run after another of the same session in this source gets the difference from that run's
        figures when they grew (a figure that shrank is kept as reported: not a running total
        then, and its ``modelUsage`` too); the first run of a session here keeps its figures as
        reported (what came before this source is unknown). Each ``modelUsage`` number (tokens,
        ``costUSD``) that grew likewise.
        """
        total = data.get("total_cost_usd")
        mu = data.get("modelUsage")
        sid = data.get("session_id")
        prev = self._totals.get(sid) if sid.__class__ is str and sid else None
        if sid.__class__ is str and sid:
            self._totals[sid] = (total, mu if isinstance(mu, dict) else {})
        if prev is None or not _grew(total, prev[0]):
            return {"cost_usd": total, "model_usage": _model_usage(mu)}
        return {"cost_usd": total - prev[0], "model_usage": _model_usage(mu, prev[1])}

    def finish(self) -> list[Item]:
        """Hook events still held (the input ended after them: they stay in the last run, their
        native events counted here), then tool calls whose message never completed."""
        held = self._release()
        if held:
            self.corrections = [*self.corrections[:-1], self.corrections[-1] + len(held)]
        return held + self._pending_tools()


# a system/status line's keys that its note tells (see _status_note)
_STATUS_KEYS = ("status", "compact_result", "compact_error", "permissionMode")


def _status_note(item: Any, status: str, compact_result: str, compact_error: str, mode: str) -> Event:
    """The note of a ``system/status`` line: its status (``requesting``, ``compacting``, or
    none), and what else it says (2.1.285, untether's captures: ``compact_result`` after a
    compaction; ``permissionMode`` on a change). Each value as :func:`s` gives it, "" where the
    line's value is absent or false."""
    bits = [status] if status else []
    if compact_result:
        bits.append(f"compaction {compact_result}")
    if compact_error:
        bits.append(f"compaction error: {one_line(compact_error, 200)}")
    if mode:
        bits.append(f"permission mode {mode}")
    return note(item, "status", "status: " + (", ".join(bits) or "none"), "status")


def _thinking_tokens_note(item: Any, estimate: str) -> Event:
    """The note of a ``system/thinking_tokens`` line: the thinking so far, as an estimate
    (2.1.270+: ailang, untether captures); ``estimate`` its ``estimated_tokens`` as :func:`s`
    gives it."""
    return note(item, "thinking_tokens", f"thinking: ~{estimate or '?'} tokens so far (estimated)", "status")


# a delta's type -> the field holding its text (Anthropic's streaming events)
_DELTA_FIELDS = {"text_delta": "text", "thinking_delta": "thinking", "input_json_delta": "partial_json"}


def _events(out: list, start: int, end: int) -> int:
    """Canonical events (not invalid lines) in ``out[start:end]``."""
    return sum(1 for i in range(start, end) if out[i].__class__ is not Invalid)


def _merge(kind: str, data: dict, texts: list[str]) -> None:
    """Put the merged deltas' text into the canonical delta's data."""
    if len(texts) > 1:
        if kind == "text_delta":
            data["message"]["content"][0]["text"] = "".join(texts)
        else:
            data["text"] = "".join(texts)


def _denied(reason: str) -> dict:
    """The canonical ``rejected`` result of a call in the run's ``permission_denials``: the
    reason is its ``tool_result``'s own message ("Claude requested permissions to write to ...,
    but you haven't granted it yet."), or says where the rejection comes from when none came."""
    return {"rejected": {"reason": reason or "permission denied (the run's permission_denials)"}}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _grew(now: Any, before: Any) -> bool:
    """Both are numbers and ``now`` is not below ``before`` (a running total that went on)."""
    return _number(now) and _number(before) and now >= before


def _model_usage(mu: Any, before: Any = None) -> dict | None:
    """``modelUsage`` as ``{model: {the usage keys, "cost_usd"}}`` (None when absent or empty).

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
            entry = _usage(u) or {}
            entry["cost_usd"] = u.get("costUSD")
            out[s(model)] = entry
    return out


def tool_call_of(data: dict, call_id: str, kind: str, args: Any) -> Any:
    """The canonical ``tool_call`` object for ``call_id`` in one Claude Code line, or None
    (see :func:`cursor_watch.formats.canonical_tool_call`)."""
    t = data.get("type")
    if t not in ("assistant", "user", "result", "stream_event"):
        return None
    if t == "stream_event":
        ev = data.get("event")
        cb = ev.get("content_block") if isinstance(ev, dict) else None
        if isinstance(cb, dict) and cb.get("id") == call_id:
            name = s(cb.get("name"))
            return {kind_of(name) + "ToolCall": tool_body(kind_of(name), name, cb.get("input"))}
        return None
    if t == "result":
        for denial in data.get("permission_denials") or []:
            if isinstance(denial, dict) and denial.get("tool_use_id") == call_id:
                name = s(denial.get("tool_name"))
                k = kind or kind_of(name)
                return {k + "ToolCall": {"args": tool_body(k, name, denial.get("tool_input"))["args"],
                                         # the reason is on the tool_result's line, not this
                                         # one: the model's detail keeps it (shown above)
                                         "result": {"rejected": {}}}}
        return None
    msg = data.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    if not isinstance(content, list):
        return None
    results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("id") == call_id and block.get("type") in ("tool_use", "server_tool_use"):
            name = s(block.get("name"))
            return {kind_of(name) + "ToolCall": tool_body(kind_of(name), name, block.get("input"))}
        if block.get("tool_use_id") == call_id:
            tur = data.get("tool_use_result") if len(results) == 1 else None
            k = kind or "unknown"
            return {k + "ToolCall": {"result": tool_result(k, block, tur, args)}}
    return None
