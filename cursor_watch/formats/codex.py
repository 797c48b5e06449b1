"""OpenAI Codex CLI: ``codex exec --json PROMPT``.

Facts (the Codex CLI's ``exec --json`` event types as its SDKs model them; the real captures in
``shared/streams/agents/codex/``, CLI 0.160 and others):

* ``thread.started`` (``thread_id``: the session id) begins a run; ``turn.started``,
  ``turn.completed`` (``usage``: ``input_tokens`` (cached included), ``cached_input_tokens``,
  ``cache_write_input_tokens``, ``output_tokens``, ``reasoning_output_tokens``), ``turn.failed``
  (``error.message``: fatal). Several turns of one thread are one run, their usage summed.
* ``item.started`` / ``item.updated`` / ``item.completed`` carry ``item`` with ``id`` (``item_N``,
  the pairing key) and ``type``: ``agent_message`` (``text``), ``reasoning`` (``text``),
  ``command_execution`` (``command``, ``aggregated_output``, ``exit_code``, ``status``
  ``in_progress``/``completed``/``failed``/``declined``), ``file_change`` (``changes`` of
  ``{path, kind}``: no diff), ``mcp_tool_call`` (``server``, ``tool``, ``arguments``, ``result``,
  ``error``), ``web_search`` (``query``), ``todo_list`` (``items`` of ``{text, completed}``),
  ``error`` (``message``: a warning, not a failure; may come before ``turn.started``).
* a top-level ``{"type": "error", "message"}`` is a transport notice (``Reconnecting... 2/5``),
  not fatal by itself. No event carries a time.
* The final text is the last ``agent_message`` of the last turn.
"""

from __future__ import annotations

from typing import Any

from .common import Adapter, Event, Item, event, note, one_line, s, tool_event

# item types -> (canonical kind, shown name is the item type itself)
KINDS = {"command_execution": "shell", "file_change": "edit", "mcp_tool_call": "mcp", "web_search": "webSearch",
         "todo_list": "updateTodos"}
_USAGE_KEYS = (("input_tokens", "input_tokens"), ("output_tokens", "output_tokens"),
               ("cache_read_tokens", "cached_input_tokens"), ("cache_write_tokens", "cache_write_input_tokens"),
               ("reasoning_tokens", "reasoning_output_tokens"))


def kind_of(item_type: str) -> str:
    """The canonical kind of a Codex item type (unknown types are their own kind)."""
    return KINDS.get(item_type) or (item_type if item_type.isidentifier() else "unknown")


def item_body(it: dict, completed: bool) -> dict:
    """The canonical variant body (``args``, and ``result`` when ``completed``) of an item."""
    t = s(it.get("type"))
    return _body(it, kind_of(t), completed)


def _body(it: dict, kind: str, completed: bool) -> dict:
    """:func:`item_body` of an item whose canonical ``kind`` is known."""
    a: dict[str, Any]
    status = it.get("status")
    if status.__class__ is not str:
        status = s(status)
    if kind == "shell":
        command = it.get("command")
        a = {"command": command if command.__class__ is str else s(command)}
    elif kind == "edit":
        changes = it.get("changes") if isinstance(it.get("changes"), list) else []
        paths = [s(c.get("path")) for c in changes if isinstance(c, dict)]
        a = {"path": ", ".join(paths), "changes": changes}
    elif kind == "mcp":
        a = {"toolName": s(it.get("tool")), "providerIdentifier": s(it.get("server"))}
        if isinstance(it.get("arguments"), dict):
            a["args"] = it["arguments"]  # where the mcp view reads the MCP tool's own arguments
    elif kind == "webSearch":
        a = {"query": s(it.get("query"))}
    elif kind == "updateTodos":
        items = it.get("items") if isinstance(it.get("items"), list) else []
        a = {"todos": [{"content": s(x.get("text")), "status": "completed" if x.get("completed") else "pending"}
                       for x in items if isinstance(x, dict)]}
    else:
        a = {k: v for k, v in it.items() if k not in ("id", "type")}
    body: dict[str, Any] = {"args": a}
    if not completed:
        return body
    if status == "declined":
        body["result"] = {"rejected": {"reason": "declined"}}
        return body
    if kind == "shell":
        out = it.get("aggregated_output")
        p: dict[str, Any] = {"stdout": out if out.__class__ is str else s(out)}
        code = it.get("exit_code")
        if code is not None:
            p["exitCode"] = code
    elif kind == "edit":
        kinds = [f"{s(c.get('kind'))} {s(c.get('path'))}".strip() for c in a["changes"] if isinstance(c, dict)]
        p = {"message": "Codex's stream gives no diff; files: " + (", ".join(kinds) or "none")}
    elif kind == "mcp":
        res = it.get("result") if isinstance(it.get("result"), dict) else {}
        content = res.get("content") if isinstance(res.get("content"), list) else []
        p = {"content": [{"text": {"text": s(c.get("text")) if isinstance(c, dict) else s(c)}} for c in content]}
        if res.get("structured_content") is not None:
            p["structuredContent"] = res["structured_content"]
        err = it.get("error")
        if err:
            return {**body, "result": {"failure": {"error": s(err.get("message") if isinstance(err, dict) else err)}}}
    elif kind == "updateTodos":
        p = {"todos": a["todos"]}
    else:
        p = {k: v for k, v in it.items() if k not in ("id", "type", "status")}
    body["result"] = {"failure" if status == "failed" else "success": p}
    return body


class CodexAdapter(Adapter):
    """Codex ``exec --json`` -> canonical events (see the module's notes)."""

    name = "codex"
    agent = "codex"

    def __init__(self) -> None:
        self._usage: dict[str, int] = {}
        self._last_text = ""  # the last agent_message of the current turn
        self._turns = 0
        self._thread = None

    def convert(self, item: Event) -> list[Item]:
        t = item.type
        data = item.data
        if t in ("item.completed", "item.started", "item.updated"):
            it = data.get("item")
            if not isinstance(it, dict):
                return [item]
            return self._item(item, it, t == "item.completed")
        if t == "thread.started":
            self._usage = {}
            self._turns = 0
            self._last_text = ""
            self._thread = data.get("thread_id")
            return [event({"type": "system", "subtype": "init", "agent": self.agent,
                           "session_id": data.get("thread_id")}, item)]
        if t == "turn.started":
            self._turns += 1
            self._last_text = ""
            return [note(item, "turn_started", f"turn {self._turns} started", "status")]
        if t == "turn.completed":
            usage = data.get("usage")
            if isinstance(usage, dict):
                for key, native in _USAGE_KEYS:
                    v = usage.get(native)
                    if isinstance(v, int) and not isinstance(v, bool):
                        self._usage[key] = self._usage.get(key, 0) + v
            return [self._result(item, False)]
        if t == "turn.failed":
            err = data.get("error")
            msg = s(err.get("message")) if isinstance(err, dict) else s(err)
            return [note(item, "turn_failed", f"turn failed: {one_line(msg, 300)}", "error"),
                    self._result(item, True)]
        if t == "error":
            return [note(item, "error", f"error: {one_line(s(data.get('message')), 300)}", "error")]
        return [item]

    def _result(self, item: Event, failed: bool) -> Event:
        usage = {key: self._usage.get(key) for key, _native in _USAGE_KEYS} if self._usage else None
        return event({"type": "result", "subtype": "error" if failed else "success", "is_error": failed,
                      "result": self._last_text, "usage": usage, "session_id": self._thread}, item)

    def _item(self, item: Event, it: dict, completed: bool) -> list[Item]:
        t = it.get("type")
        if t.__class__ is not str:
            t = s(t)
        iid = it.get("id")
        if iid.__class__ is not str or not iid:
            iid = s(iid) or f"(no id, line {item.line})"
        if t == "agent_message":
            if not completed:
                return []  # its text comes whole with item.completed
            text = s(it.get("text"))
            self._last_text = text
            return [event({"type": "assistant", "model_call_id": iid,
                           "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}}, item)]
        if t == "reasoning":
            if not completed:
                return []
            text = s(it.get("text"))
            return [event({"type": "thinking", "subtype": "delta", "text": text}, item),
                    event({"type": "thinking", "subtype": "completed"}, item)]
        if t == "error":
            return [note(item, "warning", f"warning: {one_line(s(it.get('message')), 300)}", "warning")]
        kind = kind_of(t)
        done = tool_event(item, "completed" if completed else "started", iid, kind, t, _body(it, kind, completed),
                          live=self.live)
        if completed and kind == "updateTodos":
            # a to-do list changes over item.updated events; its item.completed holds the final
            # list, which the model reads as arguments only from a started event: given first
            return [tool_event(item, "started", iid, kind, t, _body(it, kind, False), live=self.live), done]
        return [done]


def tool_call_of(data: dict, call_id: str, kind: str, args: Any) -> Any:
    """The canonical ``tool_call`` object for ``call_id`` in one Codex line, or None."""
    t = data.get("type")
    if t not in ("item.started", "item.updated", "item.completed"):
        return None
    it = data.get("item")
    if not isinstance(it, dict) or it.get("id") != call_id:
        return None
    return {kind_of(s(it.get("type"))) + "ToolCall": item_body(it, t == "item.completed")}
