"""Per-tool knowledge: names, one-line summaries and outcome classification.

Tool variants (``stream-json-reference.md`` section 2.5): the key of the
``tool_call`` object that ends in ``ToolCall`` (siblings such as ``toolCallId``,
``startedAtMs`` and ``hookAdditionalContexts`` sit beside it since mid-2026), or
the documented ``function`` shape ``{"name", "arguments"}`` (Cursor's docs; never
seen in a capture).
"""

from __future__ import annotations

from typing import Any

# Outcome keys that mean the tool did its job (reference 2.5.1, from AgentsServer's
# reading of the CLI bundle). Every other key but "rejected" is a failure.
SUCCESS_OUTCOMES = frozenset({"success", "complete", "registered", "startSuccess", "saveSuccess", "discardSuccess"})
# Keys that sit beside the outcome key in ``result`` (shell adds isBackground; AgentsServer
# tolerates pid and sandboxPolicy).
RESULT_SIBLINGS = frozenset({"isBackground", "pid", "sandboxPolicy"})

# A shell result's ``interleavedOutput`` is its ``stdout`` and ``stderr`` again, interleaved
# (every real capture with shell output: maestro-02, crew); the detail shows it only when
# they are absent, and a search doesn't count its matches twice.
DUPLICATE_OUTPUT = ("interleavedOutput", ("stdout", "stderr"))

STATUS_RUNNING = "running"
STATUS_SUCCESS = "success"
STATUS_FAILURE = "failure"
STATUS_REJECTED = "rejected"
STATUS_INCOMPLETE = "incomplete"


def find_variant(tool_call: Any) -> tuple[str, dict]:
    """Find the tool variant inside an event's ``tool_call`` object.

    Args:
        tool_call: the ``tool_call`` value of a ``tool_call`` event.

    Returns:
        ``(tool name, variant body)``: the name is the ``*ToolCall`` key without the
        suffix (``shell``, ``read``, ...), or ``function.name`` for the documented
        ``function`` shape; the body is the dict holding ``args``/``result`` (for the
        function shape, ``{"args": {"arguments": ...}, ...}``). ``("unknown", {})``
        when neither shape is present.
    """
    if not isinstance(tool_call, dict):
        return "unknown", {}
    for key, value in tool_call.items():
        if key.endswith("ToolCall") and len(key) > 8:
            return key[:-8], value if isinstance(value, dict) else {}
    fn = tool_call.get("function")
    if isinstance(fn, dict):
        name = fn.get("name")
        body: dict = {"args": {"arguments": fn.get("arguments")}}
        if "result" in fn:
            body["result"] = fn["result"]
        elif "result" in tool_call:
            body["result"] = tool_call["result"]
        return (name if isinstance(name, str) and name else "function"), body
    return "unknown", {}


def classify_result(result: Any) -> tuple[str, str, dict]:
    """Classify a completed call's ``result`` object.

    Args:
        result: the variant's ``result`` (a protobuf oneof: one outcome key).

    Returns:
        ``(status, outcome key, outcome payload)`` where status is ``success``,
        ``failure`` or ``rejected``. A ``success`` or ``failure`` with a non-zero
        ``exitCode`` is a failure; a zero ``exitCode`` under ``failure`` stays a
        failure. A missing result counts as success (the CLI reported completion
        and nothing else; the documented ``function`` shape has no result).
    """
    if not isinstance(result, dict):
        return STATUS_SUCCESS, "", {}
    outcome = ""
    payload: Any = {}
    for key, value in result.items():
        if key not in RESULT_SIBLINGS:
            outcome, payload = key, value
            break
    if not outcome:
        return STATUS_SUCCESS, "", {}
    if not isinstance(payload, dict):
        payload = {"value": payload}
    if outcome == "rejected":
        return STATUS_REJECTED, outcome, payload
    if outcome in SUCCESS_OUTCOMES:
        code = payload.get("exitCode")
        if isinstance(code, (int, float)) and code != 0:
            return STATUS_FAILURE, outcome, payload
        return STATUS_SUCCESS, outcome, payload
    return STATUS_FAILURE, outcome, payload


def _s(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


def _one_line(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


_TODO_STATUS = {
    "TODO_STATUS_PENDING": "pending",
    "TODO_STATUS_IN_PROGRESS": "in progress",
    "TODO_STATUS_COMPLETED": "completed",
    "TODO_STATUS_CANCELLED": "cancelled",
}


def todo_status(status: Any) -> str:
    """``TODO_STATUS_IN_PROGRESS`` -> ``in progress`` (protobuf enum names, crew capture)."""
    s = _s(status)
    return _TODO_STATUS.get(s, s.removeprefix("TODO_STATUS_").lower().replace("_", " ") or "pending")


def summarize(tool: str, args: Any, outcome_payload: Any = None) -> str:
    """One-line summary of a tool call for tables and transcripts.

    Args:
        tool: tool name (``shell``, ``read``, ...).
        args: the call's ``args`` (may be missing: rejected calls carry none).
        outcome_payload: the outcome body, used when args are missing (a rejected
            shell call names its ``command`` there; a read result its ``path``).

    Returns:
        A single line (whitespace folded, at most 200 characters); never raises.
    """
    a = args if isinstance(args, dict) else {}
    r = outcome_payload if isinstance(outcome_payload, dict) else {}

    def pick(*keys: str) -> str:
        for src in (a, r):
            for k in keys:
                v = src.get(k)
                if isinstance(v, str) and v:
                    return v
        return ""

    try:
        if tool == "shell":
            return _one_line(pick("command"))
        if tool in ("read", "edit", "write", "delete", "ls"):
            return _one_line(pick("path", "targetFile", "targetDirectory"))
        if tool == "grep":
            pattern, path = pick("pattern"), pick("path")
            return _one_line(f"{pattern}" + (f" in {path}" if path else ""))
        if tool == "glob":
            pattern = pick("globPattern", "pattern")
            target = pick("targetDirectory")
            return _one_line(pattern + (f" in {target}" if target else ""))
        if tool == "webFetch":
            return _one_line(pick("url"))
        if tool == "webSearch":
            return _one_line(pick("searchTerm", "query"))
        if tool == "updateTodos":
            todos = a.get("todos") or r.get("todos") or []
            counts: dict[str, int] = {}
            for t in todos if isinstance(todos, list) else []:
                st = todo_status(t.get("status") if isinstance(t, dict) else None)
                counts[st] = counts.get(st, 0) + 1
            order = ["completed", "in progress", "pending", "cancelled"]
            parts = [f"{counts.pop(k)} {k}" for k in order if k in counts]
            parts += [f"{v} {k}" for k, v in counts.items()]
            n = len(todos) if isinstance(todos, list) else 0
            return f"{n} todos" + (": " + ", ".join(parts) if parts else "")
        if tool == "task":
            return _one_line(pick("description", "prompt"))
        if tool == "mcp":
            return _one_line(pick("toolName", "name"))
        if tool == "getMcpTools":
            server, name = pick("server"), pick("toolName")
            return _one_line(f"{server} {name}".strip())
        if tool == "askQuestion":
            title = pick("title")
            qs = a.get("questions")
            if not title and isinstance(qs, list) and qs and isinstance(qs[0], dict):
                title = _s(qs[0].get("prompt"))
            return _one_line(title)
        if tool == "semSearch":
            return _one_line(pick("query"))
        if tool == "createPlan":
            return _one_line(pick("name", "overview"))
    except Exception:  # noqa: BLE001 - summaries must never break a view
        return tool
    return _first_arg(tool, a)


def _first_arg(tool: str, args: dict) -> str:
    for key, value in args.items():
        if key in ("toolCallId",):
            continue
        if isinstance(value, (str, int, float, bool)):
            return _one_line(f"{tool} {key}={value}")
        return _one_line(f"{tool} {key}=…")
    return tool


# -- detail sections ---------------------------------------------------------------
# What the detail view shows for a call, as plain data (the screen renders it). Kinds:
#   "fields": list of (label, value) pairs     "text": str (preformatted)
#   "code": str, with ``language`` a file path or lexer name
#   "diff": str (unified diff)                 "markdown": str
#   "json": any JSON value                     "checklist": list of (state, text), state in
#                                               "completed" | "in progress" | "pending" | "cancelled"
#   "matches": list of (file, [(line number or None, text)])

DETAIL_TEXT_LIMIT = 100_000  # characters of one payload shown; the rest is cut with a note
DETAIL_LINE_LIMIT = 1_000  # lines of one payload shown (rendering cost grows with lines)


class Section:
    """One block of the tool-call detail view (see the kinds above)."""

    __slots__ = ("title", "kind", "body", "language")

    def __init__(self, title: str, kind: str, body: Any, language: str = "") -> None:
        self.title = title
        self.kind = kind
        self.body = body
        self.language = language

    def __repr__(self) -> str:
        return f"Section({self.title!r}, {self.kind!r})"


def cut_payload(text: Any) -> str:
    """The first ``DETAIL_LINE_LIMIT`` lines / ``DETAIL_TEXT_LIMIT`` characters, with a note
    saying how much was left out (the detail's text, code and diff sections show this)."""
    s = _s(text)
    cut = s[:DETAIL_TEXT_LIMIT]
    end = -1
    for _ in range(DETAIL_LINE_LIMIT):
        end = cut.find("\n", end + 1)
        if end < 0:
            break
    if end >= 0:
        cut = cut[:end]
    if len(cut) < len(s):
        rest = s[len(cut):]
        return cut + f"\n… {rest.count(chr(10)):,} more lines ({len(rest):,} characters) not shown"
    return s


def detail_sections(tool: str, args: Any, result: Any) -> list[Section]:
    """The detail of a tool call as sections, the way a person wants to read it.

    Args:
        tool: tool name (``shell``, ``read``, ``edit``, ...).
        args: the call's ``args`` (from ``started``, else ``completed``), or None.
        result: the variant's ``result`` object (``{"success": {...}}``...), or None.

    Returns:
        Sections: the tool's own view of arguments and result (shell: command, exit
        code, stdout, stderr; read: the content highlighted by the file's extension;
        edit: the diff; write: the text; grep: matches by file; updateTodos: a
        checklist; webFetch: the Markdown), then the remaining data as JSON. Never raises.
    """
    a = args if isinstance(args, dict) else {}
    status, outcome, payload = classify_result(result) if result is not None else ("running", "", {})
    try:
        sections = _tool_sections(tool, a, outcome, payload)
    except Exception:  # noqa: BLE001 - fall back to raw JSON for shapes we don't expect
        sections = []
    if status != "success" and not (tool == "shell" and outcome == "failure"):  # shell shows its exit code
        reason = [(k, _s(v)) for k, v in payload.items() if k in ("reason", "error", "message", "exitCode", "signal")
                  and isinstance(v, (str, int, float)) and _s(v) != ""]
        sections.insert(0, Section(f"outcome: {outcome or 'none'}", "fields", reason or [("outcome", outcome)]))
    if a:
        sections.append(Section("arguments", "json", _trim_json(a)))
    if result is not None:
        sections.append(Section("result", "json", _trim_json(result)))
    return sections


def _trim_json(value: Any, depth: int = 0) -> Any:
    """Copy of ``value`` with long strings cut, for the JSON view."""
    if isinstance(value, str):
        return value if len(value) <= 4000 else value[:4000] + f"… ({len(value) - 4000:,} more characters)"
    if depth > 20:
        return "…"
    if isinstance(value, dict):
        return {k: _trim_json(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        out = [_trim_json(v, depth + 1) for v in value[:500]]
        if len(value) > 500:
            out.append(f"… {len(value) - 500} more items")
        return out
    return value


def _tool_sections(tool: str, a: dict, outcome: str, p: dict) -> list[Section]:
    out: list[Section] = []
    if tool == "shell":
        cmd = a.get("command") or p.get("command")
        fields = [("command", _s(cmd))]
        wd = a.get("workingDirectory") or p.get("workingDirectory")
        if wd:
            fields.append(("working directory", _s(wd)))
        if "exitCode" in p:
            fields.append(("exit code", _s(p.get("exitCode"))))
        if p.get("signal"):
            fields.append(("signal", _s(p.get("signal"))))
        t = p.get("executionTime") or p.get("localExecutionTimeMs")
        if t is not None:
            fields.append(("execution time", f"{t} ms"))
        if a.get("timeout"):
            fields.append(("timeout", f"{a.get('timeout')} ms"))
        out.append(Section("shell", "fields", fields))
        if p.get("stdout"):
            out.append(Section("stdout", "text", cut_payload(p["stdout"])))
        if p.get("stderr"):
            out.append(Section("stderr", "text", cut_payload(p["stderr"])))
        if not p.get("stdout") and not p.get("stderr") and p.get("interleavedOutput"):
            out.append(Section("output", "text", cut_payload(p["interleavedOutput"])))
    elif tool == "read":
        path = _s(a.get("path") or p.get("path"))
        fields = [("path", path)]
        for key, label in (("totalLines", "lines"), ("fileSize", "bytes"), ("totalChars", "characters")):
            if key in p:
                fields.append((label, _s(p[key])))
        rr = p.get("readRange")
        if isinstance(rr, dict):
            fields.append(("range", f"{rr.get('startLine')}-{rr.get('endLine')}"))
        if p.get("exceededLimit"):
            fields.append(("exceeded limit", "yes"))
        out.append(Section("read", "fields", fields))
        if "content" in p:
            out.append(Section("content", "code", cut_payload(p.get("content")), language=path))
    elif tool == "edit":
        path = _s(a.get("path") or p.get("path"))
        fields = [("path", path)]
        if "linesAdded" in p or "linesRemoved" in p:
            fields.append(("lines", f"+{p.get('linesAdded', 0)} -{p.get('linesRemoved', 0)}"))
        if p.get("message"):
            fields.append(("message", _s(p["message"])))
        out.append(Section("edit", "fields", fields))
        if p.get("diffString"):
            out.append(Section("diff", "diff", cut_payload(p["diffString"])))
        elif a.get("streamContent"):
            out.append(Section("new content", "code", cut_payload(a["streamContent"]), language=path))
        else:
            for key in ("strReplace", "applyPatch", "multiStrReplace"):
                if key in a:
                    out.append(Section(key, "json", _trim_json(a[key])))
    elif tool == "write":
        path = _s(a.get("path") or p.get("path"))
        fields = [("path", path)] + [(k, _s(p[k])) for k in ("linesCreated", "fileSize", "linesAdded") if k in p]
        out.append(Section("write", "fields", fields))
        if a.get("fileText") is not None:
            out.append(Section("text", "code", cut_payload(a.get("fileText")), language=path))
    elif tool == "grep":
        fields = [("pattern", _s(a.get("pattern") or p.get("pattern"))), ("path", _s(a.get("path") or p.get("path")))]
        out.append(Section("grep", "fields", fields))
        files: list[tuple[str, list]] = []
        wr = p.get("workspaceResults")
        for root in (wr.values() if isinstance(wr, dict) else []):
            content = root.get("content") if isinstance(root, dict) else None
            for f in (content or {}).get("matches", []) if isinstance(content, dict) else []:
                lines = [(m.get("lineNumber"), _s(m.get("content"))) for m in f.get("matches", []) if isinstance(m, dict)]
                files.append((_s(f.get("file")), lines))
            files_only = root.get("files") if isinstance(root, dict) else None
            if isinstance(files_only, dict):
                for f in files_only.get("files", []):
                    files.append((_s(f), []))
        if files:
            out.append(Section(f"matches in {len(files)} file{'s' if len(files) != 1 else ''}", "matches", files))
    elif tool == "glob":
        files = p.get("files") if isinstance(p.get("files"), list) else []
        out.append(Section("glob", "fields", [("pattern", _s(a.get("globPattern") or p.get("pattern"))),
                                              ("directory", _s(a.get("targetDirectory") or p.get("path"))),
                                              ("files", _s(p.get("totalFiles", len(files))))]))
        if files:
            out.append(Section("files", "text", cut_payload("\n".join(_s(f) for f in files))))
    elif tool == "updateTodos":
        todos = p.get("todos") if isinstance(p.get("todos"), list) else a.get("todos")
        items = [(todo_status(t.get("status")), _s(t.get("content"))) for t in todos or [] if isinstance(t, dict)]
        out.append(Section("todos", "checklist", items))
    elif tool == "webFetch":
        out.append(Section("webFetch", "fields", [("url", _s(a.get("url") or p.get("url")))]))
        if p.get("markdown"):
            out.append(Section("page", "markdown", cut_payload(p["markdown"])))
    elif tool == "webSearch":
        out.append(Section("webSearch", "fields", [("search", _s(a.get("searchTerm") or a.get("query")))]))
        refs = p.get("references")
        if isinstance(refs, list) and refs:
            md = "\n\n".join(f"**{_s(r.get('title'))}**  \n{_s(r.get('url'))}\n\n{_s(r.get('chunk'))[:2000]}"
                             for r in refs if isinstance(r, dict))
            out.append(Section("references", "markdown", cut_payload(md)))
    elif tool == "task":
        out.append(Section("task", "fields", [("description", _s(a.get("description"))), ("model", _s(a.get("model")))]))
        if a.get("prompt"):
            out.append(Section("prompt", "text", cut_payload(a["prompt"])))
        steps = p.get("conversationSteps")
        texts = [_s(st.get("assistantMessage", {}).get("text")) for st in steps or [] if isinstance(st, dict)
                 and isinstance(st.get("assistantMessage"), dict)]
        if texts:
            out.append(Section("sub-agent said", "markdown", cut_payload("\n\n".join(texts))))
    elif tool == "mcp":
        out.append(Section("mcp", "fields", [("tool", _s(a.get("toolName") or a.get("name"))),
                                             ("server", _s(a.get("providerIdentifier")))]))
        content = p.get("content")
        texts = []
        for c in content if isinstance(content, list) else []:
            t = c.get("text") if isinstance(c, dict) else None
            texts.append(_s(t.get("text")) if isinstance(t, dict) else _s(t))
        if texts:
            out.append(Section("content", "text", cut_payload("\n".join(texts))))
    return out
