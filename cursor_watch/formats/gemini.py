"""Google Gemini CLI: ``gemini -p PROMPT --output-format stream-json``.

Facts (Gemini CLI's headless-mode documentation, and the event types of its source,
``packages/core/src/output/types.ts``; no real capture was found, see
``shared/streams/agents/gemini/README.md``): every event has ``type`` and an ISO ``timestamp``.

* ``init``: ``session_id``, ``model``;
* ``message``: ``role`` (``user``/``assistant``), ``content``, ``delta`` (a chunk of the reply);
* ``tool_use``: ``tool_name``, ``tool_id`` (the pairing key), ``parameters``;
* ``tool_result``: ``tool_id``, ``status`` (``success``/``error``), ``output``, ``error``
  (``{type, message}``);
* ``error``: ``severity`` (``warning``/``error``), ``message``: non-fatal;
* ``result``: ``status`` (``success``/``error``), ``error``, ``stats`` (``total_tokens``,
  ``input_tokens`` (cached included), ``output_tokens``, ``cached``, ``input``, ``duration_ms``,
  ``tool_calls``, and from v0.34.0 ``models``: the same token keys per model). The result has no
  text: the final text is the assistant's reply after its last tool call.

Versions: ``stream-json`` exists from v0.11.0 (gemini-cli PR #10883, 2025-10-15); these event
types are unchanged up to the source read (0.56.0-nightly.20260806), but for ``stats.models``.
"""

from __future__ import annotations

from typing import Any

from .common import Adapter, Event, Item, event, iso_ms, note, one_line, s, tool_event

# Gemini CLI's built-in tool names -> canonical kinds (others are their own kind)
KINDS = {"run_shell_command": "shell", "read_file": "read", "read_many_files": "read", "write_file": "write",
         "replace": "edit", "edit": "edit", "glob": "glob", "search_file_content": "grep", "grep": "grep",
         "list_directory": "ls", "web_fetch": "webFetch", "google_web_search": "webSearch",
         "write_todos": "updateTodos"}


def kind_of(name: str) -> str:
    """The canonical kind of a Gemini CLI tool name."""
    return KINDS.get(name) or (name if name.isidentifier() else "unknown")


def tool_args(kind: str, params: Any) -> dict:
    """The canonical arguments: the native ``parameters`` plus the names the kind's views read."""
    a = dict(params) if isinstance(params, dict) else {}
    path = a.get("file_path") or a.get("absolute_path") or a.get("dir_path")
    if kind in ("read", "edit", "write", "ls", "grep") and path is not None:
        a.setdefault("path", path)
    if kind == "write" and "content" in a:
        a.setdefault("fileText", a["content"])
    if kind == "glob":
        a.setdefault("globPattern", a.get("pattern"))
        if path:
            a.setdefault("targetDirectory", path)
    if kind == "webFetch" and "url" not in a and isinstance(a.get("prompt"), str):
        a["url"] = a["prompt"]
    if kind == "updateTodos" and isinstance(a.get("todos"), list):
        a["todos"] = [{"content": s(t.get("description") or t.get("content")), "status": s(t.get("status"))}
                      for t in a["todos"] if isinstance(t, dict)]
    return a


def tool_result(kind: str, data: dict) -> dict:
    """The canonical ``result`` object of a ``tool_result`` event."""
    output = s(data.get("output"))
    if data.get("status") == "error" or data.get("error"):
        err = data.get("error")
        msg = s(err.get("message")) if isinstance(err, dict) else s(err)
        p: dict[str, Any] = {"error": msg or output}
        if isinstance(err, dict) and err.get("type"):
            p["type"] = s(err["type"])
        return {"failure": p}
    if kind == "shell":
        return {"success": {"stdout": output}}
    if kind == "read":
        return {"success": {"content": output}}
    if kind == "webFetch":
        return {"success": {"markdown": output}}
    if kind in ("edit", "write"):
        return {"success": {"message": one_line(output, 300)}}
    return {"success": {"output": output}}


class GeminiAdapter(Adapter):
    """Gemini CLI ``stream-json`` -> canonical events (see the module's notes)."""

    name = "gemini"
    agent = "gemini-cli"

    def __init__(self) -> None:
        self._kinds: dict[str, tuple[str, str]] = {}  # running tool_id -> (kind, name)
        self._reply: list[str] = []  # assistant text since the last tool call

    def convert(self, item: Event) -> list[Item]:
        t = item.type
        data = item.data
        ts = iso_ms(data.get("timestamp"))
        if t == "message":
            text = data.get("content")
            if not isinstance(text, str) or not text:
                return []
            if data.get("role") == "user":
                user: dict[str, Any] = {"type": "user", "message": {"role": "user",
                                                                      "content": [{"type": "text", "text": text}]}}
                if ts is not None:
                    user["timestamp_ms"] = ts
                return [event(user, item)]
            self._reply.append(text)
            out: dict[str, Any] = {"type": "assistant",
                                   "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}}
            if data.get("delta") is True:
                out["delta"] = True
            else:
                out["model_call_id"] = ""  # a whole message: a flush
            if ts is not None:
                out["timestamp_ms"] = ts
            return [event(out, item)]
        if t == "tool_use":
            name = s(data.get("tool_name")) or "unknown"
            kind = kind_of(name)
            cid = s(data.get("tool_id")) or f"(no tool_id, line {item.line})"
            self._kinds[cid] = (kind, name)
            self._reply = []
            return [tool_event(item, "started", cid, kind, name, {"args": tool_args(kind, data.get("parameters"))},
                               ts=ts, live=self.live)]
        if t == "tool_result":
            cid = s(data.get("tool_id")) or f"(no tool_id, line {item.line})"
            kind, name = self._kinds.pop(cid, ("unknown", ""))
            return [tool_event(item, "completed", cid, kind, name or kind, {"result": tool_result(kind, data)},
                               ts=ts, live=self.live)]
        if t == "init":
            self._kinds.clear()
            self._reply = []
            init: dict[str, Any] = {"type": "system", "subtype": "init", "agent": self.agent,
                                    "session_id": data.get("session_id"), "model": data.get("model")}
            if ts is not None:
                init["timestamp_ms"] = ts
            return [event(init, item)]
        if t == "error":
            severity = s(data.get("severity")) or "error"
            return [note(item, severity, f"{severity}: {one_line(s(data.get('message')), 300)}",
                         "warning" if severity == "warning" else "error")]
        if t == "result":
            return self._result(item, data, ts)
        return [item]

    def _result(self, item: Event, data: dict, ts: int | None) -> list[Item]:
        stats = data.get("stats") if isinstance(data.get("stats"), dict) else None
        usage = None
        if stats is not None:
            usage = {"input_tokens": stats.get("input_tokens"), "output_tokens": stats.get("output_tokens"),
                     "cache_read_tokens": stats.get("cached"), "cache_write_tokens": None}
        failed = data.get("status") == "error"
        out: list[Item] = []
        err = data.get("error")
        if isinstance(err, dict) and err.get("message"):
            out.append(note(item, "error", f"error: {one_line(s(err.get('message')), 300)}", "error"))
        result: dict[str, Any] = {"type": "result", "subtype": s(data.get("status")) or "success", "is_error": failed,
                                  "result": "".join(self._reply), "usage": usage,
                                  "duration_ms": stats.get("duration_ms") if stats else None,
                                  "model_usage": _model_usage(stats.get("models") if stats else None)}
        if ts is not None:
            result["timestamp_ms"] = ts
        out.append(event(result, item))
        return out


def _model_usage(models: Any) -> dict | None:
    """``stats.models`` (per model: ``input_tokens`` (cached included), ``output_tokens``,
    ``cached``, ``input``, ``total_tokens``; CLI v0.34.0 onward, gemini-cli PR #21839) as the
    canonical ``{model: {usage keys, "cost_usd"}}``: Gemini CLI reports no cost (None); None
    when absent or empty."""
    if not isinstance(models, dict) or not models:
        return None
    return {s(name): {"input_tokens": m.get("input_tokens"), "output_tokens": m.get("output_tokens"),
                      "cache_read_tokens": m.get("cached"), "cache_write_tokens": None, "cost_usd": None}
            for name, m in models.items() if isinstance(m, dict)} or None


def tool_call_of(data: dict, call_id: str, kind: str, args: Any) -> Any:
    """The canonical ``tool_call`` object for ``call_id`` in one Gemini CLI line, or None."""
    t = data.get("type")
    if t not in ("tool_use", "tool_result") or data.get("tool_id") != call_id:
        return None
    if t == "tool_use":
        k = kind_of(s(data.get("tool_name")))
        return {k + "ToolCall": {"args": tool_args(k, data.get("parameters"))}}
    k = kind or "unknown"
    return {k + "ToolCall": {"result": tool_result(k, data)}}
