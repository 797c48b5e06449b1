"""OpenAI Codex CLI: ``codex exec --json PROMPT``.

Facts (openai/codex ``codex-rs/exec/src/exec_events.rs`` and
``event_processor_with_jsonl_output.rs`` at 6219b7c, 2026-07-30; the real captures in
``shared/streams/agents/codex/``, CLI 0.144-0.160):

* ``thread.started`` (``thread_id``: the session id) begins a run; ``turn.started``,
  ``turn.completed`` (``usage``: ``input_tokens`` (cached and cache-write tokens included),
  ``cached_input_tokens``, ``cache_write_input_tokens``, ``output_tokens`` (reasoning included),
  ``reasoning_output_tokens``: the **thread's running total**, ``usage_from_last_total``, seeded
  from the saved session on ``exec resume``), ``turn.failed`` (``error.message``: fatal). One turn
  per process; a file may hold several runs.
* ``item.started`` / ``item.updated`` (a ``todo_list`` only) / ``item.completed`` carry ``item``
  with ``id`` (``item_N``, the pairing key) and ``type``: ``agent_message`` (``text``),
  ``reasoning`` (``text``), ``command_execution`` (``command``, ``aggregated_output``: stdout and
  stderr together, ``exit_code``, ``status`` ``in_progress``/``completed``/``failed``/
  ``declined``), ``file_change`` (``changes`` of ``{path, kind}``: no diff), ``mcp_tool_call``
  (``server``, ``tool``, ``arguments``, ``result``, ``error``), ``collab_tool_call`` (sub-agents:
  ``tool`` ``spawn_agent``/``send_input``/``wait``/``close_agent``, ``receiver_thread_ids``,
  ``prompt``, ``agents_states``), ``web_search`` (``query``, ``action``), ``todo_list`` (``items``
  of ``{text, completed}``), ``error`` (``message``: a warning, a config warning or a deprecation
  notice, never fatal; ``model rerouted: A -> B`` is the reroute notice and names the model).
* a top-level ``{"type": "error", "message"}`` is a transport notice (``Reconnecting... 2/5``),
  fatal only when no ``turn.completed`` follows. No event carries a time or (but for a reroute)
  the model. The final text is the turn's last ``agent_message``.
"""

from __future__ import annotations

import re
from typing import Any

from ..core.canonical import (TEXT_MESSAGE, RunEnd, RunStart, Text, Thinking, ToolEnd, ToolStart, ToolUpdate, Usage,
                         as_int)
from ..core.tools import STATUS_FAILURE, STATUS_REJECTED, STATUS_SUCCESS, summarize
from .common import Adapter, CallPayloads, Event, one_line, s, when

# item types -> canonical kinds (the shown name is the item type itself)
KINDS = {"command_execution": "shell", "file_change": "edit", "mcp_tool_call": "mcp", "web_search": "webSearch",
         "todo_list": "updateTodos", "collab_tool_call": "task", "plan": "createPlan"}
_REROUTED = re.compile(r"model rerouted: (\S+) -> (\S+)")


def _as_list(value: Any) -> list:
    """``value`` if it is a list, else ``[]`` (a field of the wrong JSON type reads as empty)."""
    return value if isinstance(value, list) else []


def _as_dict(value: Any) -> dict:
    """``value`` if it is an object, else ``{}``."""
    return value if isinstance(value, dict) else {}


def _fields(data: dict) -> dict | None:
    out = {k: v for k, v in data.items() if k != "type"}
    return out or None


def kind_of(item_type: str) -> str:
    """The canonical kind of a Codex item type (unknown types are their own kind)."""
    return KINDS.get(item_type) or (item_type if item_type.isidentifier() else "unknown")


def usage_of(u: Any) -> Usage | None:
    """The canonical :class:`~cursor_watch.core.canonical.Usage` of a ``turn.completed.usage``:
    Codex's ``input_tokens`` already count the cached ones (``TokenUsage::non_cached_input`` is
    ``input_tokens - cached_input_tokens``), and ``output_tokens`` the reasoning ones."""
    if not isinstance(u, dict):
        return None
    out = Usage(as_int(u.get("input_tokens")), as_int(u.get("output_tokens")), as_int(u.get("cached_input_tokens")),
                as_int(u.get("cache_write_input_tokens")), as_int(u.get("reasoning_output_tokens")))
    if out.reasoning_tokens is not None:
        out.reasoning_in_output = True
    return out


def _minus(now: Usage, before: Usage | None) -> Usage:
    """``now - before`` kind by kind (a thread's running total turned into a run's own); a kind
    that shrank is kept as reported (not a running total then)."""
    if before is None:
        return now
    values = []
    for key in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens"):
        a, b = getattr(now, key), getattr(before, key)
        values.append(a - b if a is not None and b is not None and a >= b else a)
    out = Usage(*values)
    out.reasoning_in_output = now.reasoning_in_output
    return out


def _summary(kind: str, it: dict) -> str:
    """The one-line summary of an item (:func:`cursor_watch.core.tools.summarize`'s wording)."""
    if kind == "shell":
        return summarize("shell", {"command": s(it.get("command"))})
    if kind == "edit":
        changes = _as_list(it.get("changes"))
        return summarize("edit", {"path": ", ".join(s(c.get("path")) for c in changes if isinstance(c, dict))})
    if kind == "mcp":
        args = it.get("arguments")
        return summarize("mcp", {"toolName": s(it.get("tool")), "args": args if isinstance(args, dict) else {}})
    if kind == "webSearch":
        action = _as_dict(it.get("action"))
        return summarize("webSearch", {"query": s(it.get("query")) or s(action.get("query")) or s(action.get("url"))})
    if kind == "updateTodos":
        return summarize("updateTodos", {"todos": _todos(it)})
    if kind == "createPlan":
        return one_line(s(it.get("text")).strip().split("\n", 1)[0], 200)
    if kind == "task":
        tool = s(it.get("tool"))
        prompt = s(it.get("prompt"))
        targets = _as_list(it.get("receiver_thread_ids"))
        what = one_line(prompt, 200) if prompt else (f"{len(targets)} agent{'s' if len(targets) != 1 else ''}"
                                                     if targets else "")
        return one_line(f"{tool} {what}".strip(), 200)
    return summarize(kind, {k: v for k, v in it.items() if k not in ("id", "type", "status")})


def _todos(it: dict) -> list[dict]:
    items = _as_list(it.get("items"))
    return [{"content": s(x.get("text")), "status": "completed" if x.get("completed") else "pending"}
            for x in items if isinstance(x, dict)]


def _outcome(kind: str, it: dict) -> tuple[str, str, str]:
    """``(status, outcome, reason)`` of a completed item."""
    status = s(it.get("status"))
    if status == "declined":
        return STATUS_REJECTED, "declined", "declined"
    err = it.get("error")
    if kind == "mcp" and err:
        return STATUS_FAILURE, "failed", s(err.get("message") if isinstance(err, dict) else err)
    if status == "failed":
        if kind == "task":
            states = _as_dict(it.get("agents_states"))
            msgs = [s(v.get("message")) for v in states.values() if isinstance(v, dict) and v.get("message")]
            return STATUS_FAILURE, "failed", "; ".join(msgs)
        return STATUS_FAILURE, "failed", ""
    code = as_int(it.get("exit_code"))
    if code is not None and code != 0:
        return STATUS_FAILURE, status or "completed", ""
    return STATUS_SUCCESS, status or "completed", ""


class CodexAdapter(Adapter):
    """Codex ``exec --json`` -> canonical events (see the module's notes)."""

    name = "codex"
    agent = "codex"

    def __init__(self) -> None:
        super().__init__()
        self._last_text = ""  # the last agent_message of the current turn
        self._turns = 0
        self._thread_id: str | None = None  # (not "_thread": mypyc would name its C field __thread, a C keyword)
        self._totals: dict[str, Usage] = {}  # thread id -> its running total at the last turn in this source
        self._start_total: Usage | None = None  # the thread's total when this run began (an earlier run's)
        self._spawned: dict[str, str] = {}  # a sub-agent's thread id -> the spawn_agent call that began it

    def convert(self, item: Any, now: int | None) -> list:
        t = item.type
        data = item.data
        if t in ("item.completed", "item.started", "item.updated"):
            it = data.get("item")
            if not isinstance(it, dict):
                return [self.unknown(item, now)]
            return self._item(item, it, t, now)
        if t == "thread.started":
            self._turns = 0
            self._last_text = ""
            self._spawned.clear()
            tid = data.get("thread_id")
            self._thread_id = tid if isinstance(tid, str) else None
            self._start_total = self._totals.get(self._thread_id) if self._thread_id else None
            return [RunStart(item, *when(None, now), self.agent, session_id=tid)]
        if t == "turn.started":
            self._turns += 1
            self._last_text = ""
            return [self.note(item, now, "status", "turn_started", f"turn {self._turns} started")]
        if t == "turn.completed":
            return [self._result(item, data, now, False, "")]
        if t == "turn.failed":
            err = data.get("error")
            msg = s(err.get("message")) if isinstance(err, dict) else s(err)
            return [self.note(item, now, "error", "turn_failed", f"turn failed: {one_line(msg, 300)}"),
                    self._result(item, data, now, True, msg)]
        if t == "error":
            msg = s(data.get("message"))
            kind = "retry" if msg.startswith("Reconnecting") else "error"
            return [self.note(item, now, kind, "error", f"{'retry' if kind == 'retry' else 'error'}: {one_line(msg, 300)}")]
        # the plan-mode events of openai/codex's cc/plan-mode-sdk-mvp branch (08a1f30, 2026-02-19; not in
        # upstream exec at 6219b7c, which rejects such requests): a question waits for a person, a
        # plan's deltas come whole in its item.completed
        if t == "request_user_input":
            questions = _as_list(data.get("questions"))
            first = questions[0] if questions else None
            what = s(first.get("question") or first.get("header")) if isinstance(first, dict) else s(first)
            return [self.note(item, now, "interaction_query", "request",
                              "waiting for input" + (f": {one_line(what, 200)}" if what else ""),
                              s(data.get("call_id")), fields=_fields(data))]
        if t == "item.plan.delta":
            return []
        return [self.unknown(item, now)]

    def _result(self, item: Event, data: dict, now: int | None, failed: bool, error: str) -> RunEnd:
        usage = usage_of(data.get("usage"))
        own = None
        if usage is not None:
            own = _minus(usage, self._start_total)
            if self._thread_id:
                self._totals[self._thread_id] = usage
        return RunEnd(item, *when(None, now), subtype="error" if failed else "success", is_error=failed,
                      text=self._last_text, usage=own, error=error, session_id=self._thread_id)

    def _item(self, item: Event, it: dict, t: str, now: int | None) -> list:
        itype = it.get("type")
        if type(itype) is not str:
            itype = s(itype)
        iid = it.get("id")
        if type(iid) is not str or not iid:
            iid = s(iid) or f"(no id, line {item.line})"
        completed = t == "item.completed"
        if itype == "agent_message":
            if not completed:
                return []  # its text comes whole with item.completed
            text = s(it.get("text"))
            self._last_text = text
            ts, src = when(None, now)
            return [Text(item, ts, src, text, TEXT_MESSAGE)]
        if itype == "reasoning":
            if not completed:
                return []
            ts, src = when(None, now)
            return [Thinking(item, ts, src, s(it.get("text")), True)]
        if itype == "error":
            # the CLI writes its warnings (process_warning, a config warning, a deprecation
            # notice) and a model reroute as `error` items, all while the turn runs on
            # (codex-rs/exec/src/event_processor_with_jsonl_output.rs): a warning, or the reroute
            # as the notice it is; never an error
            msg = s(it.get("message"))
            found = _REROUTED.match(msg)
            if found:  # the only place the stream names a model
                return [self.note(item, now, "model", "rerouted", one_line(msg, 300)),
                        RunStart(item, *when(None, now), self.agent, model=found.group(2), implicit=True)]
            return [self.note(item, now, "warning", "warning", f"warning: {one_line(msg, 300)}")]
        kind = kind_of(itype)
        name = itype
        if kind == "mcp":
            server, tool = s(it.get("server")), s(it.get("tool"))
            name = f"{server}.{tool}" if server and tool else (tool or itype)
        elif kind == "task":
            name = s(it.get("tool")) or itype
        parent = self._collab_parent(it, iid) if kind == "task" else ""
        summary = _summary(kind, it)
        ts, src = when(None, now)
        # (positional, in the constructors' order (cursor_watch.core.canonical): parent_call_id,
        # description, model_call_id, args, summary; a call with *args or **kwargs cost a
        # compiled build 7,000 instructions an event)
        if not completed:
            if t == "item.started":
                return [ToolStart(item, ts, src, iid, kind, name, parent, "", "", it, summary)]
            return [ToolUpdate(item, ts, src, iid, kind, name, parent, "", "", it, summary)]
        status, outcome, reason = _outcome(kind, it)
        done = ToolEnd(item, ts, src, iid, kind, name, status, outcome, reason, as_int(it.get("exit_code")), parent, "",
                       "", it, summary)
        if kind == "updateTodos":
            # a to-do list changes over item.updated events; its item.completed holds the final
            # list: given as a start too, so its summary and arguments are the final ones
            return [ToolStart(item, ts, src, iid, kind, name, parent, "", "", it, summary), done]
        return [done]

    def _collab_parent(self, it: dict, iid: str) -> str:
        """The ``spawn_agent`` call that began the sub-agents a ``collab_tool_call`` talks to (a
        tree like Claude Code's); "" for a spawn itself, or when unknown."""
        targets = [s(x) for x in it.get("receiver_thread_ids") or [] if x] \
            if isinstance(it.get("receiver_thread_ids"), list) else []
        if s(it.get("tool")) == "spawn_agent":
            for tid in targets:
                self._spawned.setdefault(tid, iid)
            return ""
        parents = {self._spawned[tid] for tid in targets if tid in self._spawned}
        return parents.pop() if len(parents) == 1 else ""

    # -- payloads, re-read by offset -------------------------------------------------------------

    @staticmethod
    def payloads(kind: str, call_id: str, started: dict | None, ended: dict | None,
                 known_args: Any = None) -> CallPayloads:
        """Codex's payloads: the item as ``item.started`` wrote it (the arguments) and as
        ``item.completed`` wrote it (the result)."""
        first = started.get("item") if started is not None else None
        last = ended.get("item") if ended is not None else None
        first = first if isinstance(first, dict) else (known_args if isinstance(known_args, dict) else None)
        last = last if isinstance(last, dict) else None
        it = last or first or {}
        kind = kind or kind_of(s(it.get("type")))
        view = _view(kind, it, last is not None)
        if last is None:
            return CallPayloads(first, None, view)
        status, outcome, reason = _outcome(kind, last)
        reasons: list[tuple[str, Any]] = [("reason", reason)] if reason else []
        if last.get("exit_code") not in (None, 0):
            reasons.append(("exit code", last.get("exit_code")))
        return CallPayloads(first, last, view, status, outcome, reasons)

    @staticmethod
    def native_payloads(data: dict) -> list[tuple[Any, Any]]:
        """An item's fields (but ``id``, ``type``, ``status``) as its arguments (``item.started``,
        ``item.updated``) or its result (``item.completed``)."""
        t = data.get("type")
        if t not in ("item.started", "item.updated", "item.completed"):
            return []
        it = data.get("item")
        if not isinstance(it, dict) or it.get("type") in ("agent_message", "reasoning", "error"):
            return []
        rest = {k: v for k, v in it.items() if k not in ("id", "type", "status")}
        return [(rest, None) if t != "item.completed" else (None, rest)]


def _view(kind: str, it: dict, done: bool) -> dict:
    """The canonical view fields of an item (:func:`cursor_watch.core.tools.detail_sections`)."""
    v: dict[str, Any] = {}
    if kind == "shell":
        v["command"] = s(it.get("command"))
        if done and it.get("exit_code") is not None:
            v["exit_code"] = it.get("exit_code")
        out = it.get("aggregated_output")
        if out:
            v["output"] = s(out)  # stdout and stderr together (the CLI keeps them in one)
    elif kind == "edit":
        changes = _as_list(it.get("changes"))
        v["path"] = ", ".join(s(c.get("path")) for c in changes if isinstance(c, dict))
        v["stats"] = [(s(c.get("kind")) or "change", s(c.get("path"))) for c in changes if isinstance(c, dict)]
        diffs = [s(c.get("diff") or c.get("unified_diff")) for c in changes
                 if isinstance(c, dict) and (c.get("diff") or c.get("unified_diff"))]
        if diffs:
            v["diff"] = "\n".join(diffs)
    elif kind == "mcp":
        v["tool"] = s(it.get("tool"))
        v["server"] = s(it.get("server"))
        if isinstance(it.get("arguments"), dict):
            v["arguments"] = it["arguments"]
        res = it.get("result") if isinstance(it.get("result"), dict) else None
        if res is not None:
            content = _as_list(res.get("content"))
            v["content"] = "\n".join(s(c.get("text")) if isinstance(c, dict) else s(c) for c in content)
    elif kind == "webSearch":
        action = _as_dict(it.get("action"))
        v["query"] = s(it.get("query")) or s(action.get("query")) or s(action.get("url"))
    elif kind == "updateTodos":
        v["todos"] = [("completed" if t["status"] == "completed" else "pending", t["content"]) for t in _todos(it)]
    elif kind == "createPlan":
        if it.get("text"):
            v["plan"] = s(it.get("text"))
    elif kind == "task":
        v["description"] = s(it.get("tool"))
        targets = _as_list(it.get("receiver_thread_ids"))
        v["model"] = ", ".join(s(x) for x in targets)
        if it.get("prompt"):
            v["prompt"] = s(it.get("prompt"))
        states = _as_dict(it.get("agents_states"))
        v["said"] = [f"{s(tid)}: {s(st.get('status'))}" + (f" — {s(st.get('message'))}" if st.get("message") else "")
                     for tid, st in states.items() if isinstance(st, dict)]
    return v
