"""Google Gemini CLI: ``gemini -p PROMPT --output-format stream-json``.

Facts (google-gemini/gemini-cli ``packages/core/src/output/types.ts`` and
``packages/cli/src/nonInteractiveCli.ts`` at 5411f11 (0.56.0-nightly), the same in the 0.61.0 npm
bundle; the real captures in ``shared/streams/agents/gemini/``, CLI 0.42.0): every event has
``type`` and an ISO ``timestamp``.

* ``init``: ``session_id``, ``model`` (the configured name, often the alias ``auto``); no CLI
  version anywhere in the stream.
* ``message``: ``role`` (``user``/``assistant``), ``content``, ``delta`` (assistant text comes
  only as deltas, never as a whole message);
* ``tool_use``: ``tool_name``, ``tool_id`` (the pairing key), ``parameters``;
* ``tool_result``: ``tool_id``, ``status`` (``success``/``error``), ``output`` (absent for edits
  and writes), ``error`` (``{type, message}``);
* ``error``: ``severity`` (``warning``/``error``), ``message``: not fatal by itself (a loop
  detected, a stream that failed after its retries: it may come after a complete-looking answer);
* ``result``: ``status`` (``success``/``error``), ``error``, ``stats``: ``input_tokens`` (every
  prompt token, cached ones included), ``cached`` (the cached part) and ``input`` (the rest:
  both from v0.22.0), ``output_tokens`` (without thinking), ``total_tokens`` (thinking and
  tool-use tokens too), ``duration_ms`` (a fatal error writes 0: not measured), ``tool_calls``,
  and from v0.34.0 ``models`` (the same per model, helper models too). The result has no text:
  the final text is the assistant's reply after its last tool call.

Tools: ``run_shell_command``, ``read_file``, ``read_many_files``, ``write_file``, ``replace``,
``glob``, ``grep_search`` (``search_file_content`` before v0.28.0), ``list_directory``,
``web_fetch``, ``google_web_search``, ``write_todos``; MCP tools are ``mcp_<server>_<tool>``.
"""

from __future__ import annotations

import difflib
from typing import Any

from ..core.canonical import (TEXT_DELTA, TEXT_MESSAGE, Prompt, RunEnd, RunStart, Silent, Text, ToolEnd, ToolStart,
                         Usage, as_int)
from ..core.tools import STATUS_FAILURE, STATUS_SUCCESS, summarize, todo_status
from .common import Adapter, CallPayloads, Event, iso_ms, one_line, s, when

# Gemini CLI's built-in tool names -> canonical kinds (others are their own kind)
KINDS = {"run_shell_command": "shell", "read_file": "read", "read_many_files": "read", "write_file": "write",
         "replace": "edit", "edit": "edit", "glob": "glob", "grep_search": "grep", "search_file_content": "grep",
         "grep": "grep", "list_directory": "ls", "web_fetch": "webFetch", "google_web_search": "webSearch",
         "write_todos": "updateTodos"}


def kind_of(name: str) -> str:
    """The canonical kind of a Gemini CLI tool name."""
    kind = KINDS.get(name)
    if kind:
        return kind
    if name.startswith("mcp_"):
        return "mcp"
    return name if name.isidentifier() else "unknown"


def usage_of(stats: Any) -> Usage | None:
    """The canonical :class:`~cursor_watch.core.canonical.Usage` of ``result.stats`` (or one of its
    ``models``): ``input_tokens`` counts the cached tokens already, ``cached`` is their part;
    ``total_tokens - input_tokens - output_tokens`` (thinking and tool-use tokens, which Gemini
    CLI's output leaves out) is the reasoning, apart from the output."""
    if not isinstance(stats, dict):
        return None
    inp, out, total = as_int(stats.get("input_tokens")), as_int(stats.get("output_tokens")), as_int(stats.get("total_tokens"))
    usage = Usage(inp, out, as_int(stats.get("cached")))
    if inp is not None and out is not None and total is not None and total > inp + out:
        usage.reasoning_tokens = total - inp - out
        usage.reasoning_in_output = False
    return usage


def _summary_args(kind: str, name: str, params: Any) -> dict:
    """The parameters under the names :func:`cursor_watch.core.tools.summarize` reads for ``kind``."""
    a = dict(params) if isinstance(params, dict) else {}
    path = a.get("file_path") or a.get("absolute_path") or a.get("dir_path")
    if kind in ("read", "edit", "write", "ls", "grep") and path is not None:
        a.setdefault("path", path)
    if kind == "read" and "path" not in a and isinstance(a.get("include"), list):
        a["path"] = ", ".join(s(x) for x in a["include"])
    if kind == "glob":
        a.setdefault("globPattern", a.get("pattern"))
        if path:
            a.setdefault("targetDirectory", path)
    if kind == "webFetch" and "url" not in a and isinstance(a.get("prompt"), str):
        a["url"] = a["prompt"]
    if kind == "updateTodos" and isinstance(a.get("todos"), list):
        a["todos"] = [{"content": s(t.get("description") or t.get("content")), "status": s(t.get("status"))}
                      for t in a["todos"] if isinstance(t, dict)]
    if kind == "mcp":
        a.setdefault("toolName", name[4:])
    return a


class GeminiAdapter(Adapter):
    """Gemini CLI ``stream-json`` -> canonical events (see the module's notes)."""

    name = "gemini"
    agent = "gemini-cli"

    def __init__(self) -> None:
        super().__init__()
        self._kinds: dict[str, tuple[str, str, Any]] = {}  # running tool_id -> (kind, name, parameters)
        self._reply: list[str] = []  # assistant text since the last tool call

    def convert(self, item: Any, now: int | None) -> list:
        t = item.type
        data = item.data
        ts = iso_ms(data.get("timestamp"))
        tw = when(ts, now)
        if t == "message":
            text = data.get("content")
            if not isinstance(text, str) or not text:
                return [Silent(item, 1, *tw)] if ts is not None else []
            if data.get("role") == "user":
                return [Prompt(item, *tw, text)]
            self._reply.append(text)
            return [Text(item, *tw, text, TEXT_DELTA if data.get("delta") is True else TEXT_MESSAGE)]
        if t == "tool_use":
            name = s(data.get("tool_name")) or "unknown"
            kind = kind_of(name)
            cid = s(data.get("tool_id")) or f"(no tool_id, line {item.line})"
            params = data.get("parameters")
            self._kinds[cid] = (kind, name, params)
            self._reply = []
            desc = params.get("description") if isinstance(params, dict) else None
            return [ToolStart(item, *tw, cid, kind, name, args=params,
                              summary=summarize(kind, _summary_args(kind, name, params)),
                              description=desc if isinstance(desc, str) else "")]
        if t == "tool_result":
            cid = s(data.get("tool_id")) or f"(no tool_id, line {item.line})"
            kind, name, params = self._kinds.pop(cid, ("unknown", "", None))
            status, reason = _outcome(data)
            return [ToolEnd(item, *tw, cid, kind, name or kind, status=status, outcome=status,
                            reason=reason, summary=summarize(kind, _summary_args(kind, name, params)))]
        if t == "init":
            self._kinds.clear()
            self._reply = []
            return [RunStart(item, *tw, self.agent, session_id=data.get("session_id"), model=data.get("model"))]
        if t == "error":
            severity = s(data.get("severity")) or "error"
            return [self.note(item, now, "warning" if severity == "warning" else "error", severity,
                              f"{severity}: {one_line(s(data.get('message')), 300)}", ts=ts)]
        if t == "result":
            return self._result(item, data, ts, now)
        return [self.unknown(item, now, ts)]

    def _result(self, item: Event, data: dict, ts: int | None, now: int | None) -> list:
        stats = data.get("stats") if isinstance(data.get("stats"), dict) else None
        failed = data.get("status") == "error"
        out: list = []
        err = data.get("error")
        message = s(err.get("message")) if isinstance(err, dict) else ""
        if message:
            out.append(self.note(item, now, "error", "error", f"error: {one_line(message, 300)}", ts=ts))
        duration = as_int(stats.get("duration_ms")) if stats else None
        if failed and duration == 0:
            duration = None  # a fatal error's result writes 0 there (handleError): not measured
        models = stats.get("models") if stats else None
        model_usage = {s(name): (usage_of(m), None) for name, m in models.items() if isinstance(m, dict)} \
            if isinstance(models, dict) and models else None
        out.append(RunEnd(item, *when(ts, now), subtype=s(data.get("status")) or "success", is_error=failed,
                          text="".join(self._reply), duration_ms=duration, usage=usage_of(stats),
                          model_usage=model_usage or None, error=message))
        return out

    # -- payloads, re-read by offset -------------------------------------------------------------

    @staticmethod
    def payloads(kind: str, call_id: str, started: dict | None, ended: dict | None,
                 known_args: Any = None) -> CallPayloads:
        """Gemini CLI's payloads: the ``tool_use`` event's ``parameters`` and the ``tool_result``
        event as written (but its ``type`` and ``timestamp``)."""
        params = started.get("parameters") if started is not None else known_args
        name = s(started.get("tool_name")) if started is not None else ""
        kind = kind or kind_of(name)
        result = {k: v for k, v in ended.items() if k not in ("type", "timestamp")} if ended is not None else None
        view = _view(kind, params, ended, name)
        if ended is None:
            return CallPayloads(params, None, view)
        status, reason = _outcome(ended)
        err = ended.get("error")
        reasons: list[tuple[str, Any]] = []
        if status != STATUS_SUCCESS:
            reasons.append(("error", reason))
            if isinstance(err, dict) and err.get("type"):
                reasons.append(("type", s(err["type"])))
        return CallPayloads(params, result, view, status, status, reasons)

    @staticmethod
    def native_payloads(data: dict) -> list[tuple[Any, Any]]:
        """A ``tool_use`` event's ``parameters``; a ``tool_result`` event's ``output`` and ``error``."""
        t = data.get("type")
        if t == "tool_use":
            return [(data.get("parameters") if isinstance(data.get("parameters"), dict) else None, None)]
        if t == "tool_result":
            return [(None, {k: data.get(k) for k in ("output", "error") if k in data})]
        return []


def _outcome(data: dict) -> tuple[str, str]:
    """``(status, reason)`` of a ``tool_result`` event."""
    if data.get("status") == "error" or data.get("error"):
        err = data.get("error")
        msg = s(err.get("message")) if isinstance(err, dict) else s(err)
        return STATUS_FAILURE, msg or s(data.get("output"))
    return STATUS_SUCCESS, ""


def _view(kind: str, params: Any, ended: dict | None, name: str = "") -> dict:
    """The canonical view fields of a call from its ``parameters`` and ``tool_result``."""
    a = params if isinstance(params, dict) else {}
    output = ended.get("output") if ended is not None else None
    v: dict[str, Any] = {}
    path = s(a.get("file_path") or a.get("absolute_path") or a.get("dir_path") or a.get("path"))
    if kind == "shell":
        v["command"] = s(a.get("command"))
        if a.get("dir_path"):
            v["cwd"] = s(a["dir_path"])
        if output:
            v["output"] = s(output)
    elif kind == "read":
        include = a.get("include")
        v["path"] = path or (", ".join(s(x) for x in include) if isinstance(include, list) else "")
        v["stats"] = [(k.replace("_", " "), s(a[k])) for k in ("start_line", "end_line") if a.get(k) is not None]
        if output is not None:
            v["content"] = s(output)
    elif kind in ("edit", "write"):
        v["path"] = path
        v["stats"] = [("message", one_line(s(output), 300))] if output else []
        if kind == "write" and isinstance(a.get("content"), str):
            v["text"] = a["content"]
        elif kind == "edit" and isinstance(a.get("old_string"), str) and isinstance(a.get("new_string"), str):
            v["diff"] = "".join(difflib.unified_diff(a["old_string"].splitlines(True), a["new_string"].splitlines(True),
                                                     path, path, n=2))
    elif kind in ("grep", "glob", "ls"):
        v["pattern"] = s(a.get("pattern"))
        v["path" if kind != "glob" else "directory"] = path
        if output:
            v["output"] = s(output)
    elif kind == "webFetch":
        v["url"] = s(a.get("url") or a.get("prompt"))
        if output:
            v["markdown"] = s(output)
    elif kind == "webSearch":
        v["query"] = s(a.get("query"))
        if output:
            v["output"] = s(output)
    elif kind == "updateTodos":
        v["todos"] = [(todo_status(t.get("status")), s(t.get("description") or t.get("content")))
                      for t in a.get("todos") or [] if isinstance(t, dict)]
    elif kind == "mcp":
        v["tool"] = name[4:] if name.startswith("mcp_") else name
        v["arguments"] = a
        if output is not None:
            v["content"] = s(output)
    elif output:
        v["output"] = s(output)
    return v
