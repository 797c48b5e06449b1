"""Per-tool knowledge: names, one-line summaries and outcome classification.

Tool variants (``stream-json-reference.md`` section 2.5): the key of the
``tool_call`` object that ends in ``ToolCall`` (siblings such as ``toolCallId``,
``startedAtMs`` and ``hookAdditionalContexts`` sit beside it since mid-2026), or
the documented ``function`` shape ``{"name", "arguments"}`` (Cursor's docs; never
seen in a capture).
"""

from __future__ import annotations

import contextlib
import os
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


def folded(text: str, limit: int) -> str:
    """``" ".join(text.split())[:limit]``: whitespace runs folded to one space, then cut at
    ``limit`` characters (``limit`` >= 0), without folding all of a long text.

    The folding of a prefix of ``text`` is always a prefix of the folding of ``text`` (a word
    cut at the prefix's end is a prefix of the whole word), so once a prefix folds to at least
    ``limit`` characters the rest is never looked at: a 60 KB tool output is cut at a cost of a
    few hundred characters.
    """
    n = len(text)
    k = 4 * limit + 64
    while k < n:
        head = " ".join(text[:k].split())
        if len(head) >= limit:
            return head[:limit]
        k *= 4
    return " ".join(text.split())[:limit]


def one_line(text: str, limit: int = 200) -> str:
    """Whitespace folded, cut at ``limit`` characters (the last one then ``…``); only the
    beginning of a long text is folded (:func:`folded`). ``limit`` 0: folded, not cut."""
    if limit <= 0:
        return " ".join(text.split())
    text = folded(text, limit + 1)
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
        A single line (whitespace folded, at most 200 characters), never the tool's name again
        (views show it beside the summary): "" when there is nothing else to say; never raises.
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
            return one_line(pick("command"))
        if tool in ("read", "edit", "write", "delete", "ls"):
            return one_line(pick("path", "targetFile", "targetDirectory"))
        if tool == "grep":
            pattern, path = pick("pattern"), pick("path")
            return one_line(f"{pattern}" + (f" in {path}" if path else ""))
        if tool == "glob":
            pattern = pick("globPattern", "pattern")
            target = pick("targetDirectory")
            return one_line(pattern + (f" in {target}" if target else ""))
        if tool == "webFetch":
            return one_line(pick("url"))
        if tool == "webSearch":
            return one_line(pick("searchTerm", "query"))
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
            return f"{n} todo{'s' if n != 1 else ''}" + (": " + ", ".join(parts) if parts else "")
        if tool == "task":
            return one_line(pick("description", "prompt"))
        if tool == "mcp":  # its arguments (the server and tool are the call's name)
            inner = a.get("args")
            if not isinstance(inner, dict):
                inner = a
            for key, value in inner.items():
                if key not in _MCP_NAMING and isinstance(value, (str, int, float, bool)) and value != "":
                    return one_line(f"{key}={value}")
            return one_line(pick("toolName", "name"))
        if tool == "getMcpTools":  # a server's tool by name, or a search of the tools (``pattern``)
            server, name, pattern = pick("server"), pick("toolName"), pick("pattern")
            return one_line(" ".join(x for x in (server, name, f"pattern={pattern}" if pattern else "") if x))
        if tool == "askQuestion":
            title = pick("title")
            qs = a.get("questions")
            if not title and isinstance(qs, list) and qs and isinstance(qs[0], dict):
                title = _s(qs[0].get("prompt"))
            return one_line(title)
        if tool == "semSearch":
            return one_line(pick("query"))
        if tool == "createPlan":
            return one_line(pick("name", "overview"))
    except Exception:  # noqa: BLE001 - summaries must never break a view
        return ""
    return _first_arg(a)


# an MCP call's own name (Cursor's args, Codex's item), not its arguments
_MCP_NAMING = frozenset({"toolName", "name", "providerIdentifier", "toolCallId", "server"})
PATH_TOOLS = ("read", "edit", "write", "delete", "ls")  # their summary is a path
PATH_IN_TOOLS = ("grep", "glob")  # theirs is ``PATTERN in PATH`` when a path was given


def summary_path(tool: str, summary: str) -> tuple[str, str] | None:
    """The path in a summary made by :func:`summarize`, as ``(text before it, path)``:
    ``("", "/src/app.py")`` for a ``read``, ``("TODO in ", "/src")`` for a ``grep``; None when
    the summary names no path (a shell command, a grep without a path, an empty summary)."""
    if not summary:
        return None
    if tool in PATH_TOOLS:
        return "", summary
    if tool in PATH_IN_TOOLS:
        before, sep, path = summary.rpartition(" in ")
        if sep and before and path:
            return before + sep, path
    return None


def _first_arg(args: dict) -> str:
    """``key=value`` of a call's first argument (``key=…`` when it is not a scalar), "" when it
    has none: the summary of a tool no rule knows. It never repeats the tool's name: every view
    shows the name beside the summary (``ToolSearch  query=select:…``, Claude Code's ToolSearch
    in the mccorvie capture; ``update_topic  strategic_intent=…``, Gemini CLI's tool-use capture)."""
    for key, value in args.items():
        if key in ("toolCallId",):
            continue
        if isinstance(value, (str, int, float, bool)):
            return one_line(f"{key}={value}")
        return one_line(f"{key}=…")
    return ""


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
JSON_STRING_LIMIT = 4_000  # characters of one string in the raw JSON of arguments and results


# Pygments' lexer lookup by file name compiles ~1,500 filename globs and scans the
# installed packages for plugin lexers: 250 ms and 36 MB on the first call (measured). Common
# extensions are looked up by name instead; only the others are guessed.
LEXERS = {".py": "python", ".pyi": "python", ".ts": "typescript", ".tsx": "tsx", ".js": "javascript",
          ".jsx": "jsx", ".mjs": "javascript", ".rs": "rust", ".go": "go", ".md": "markdown", ".json": "json",
          ".toml": "toml", ".yaml": "yaml", ".yml": "yaml", ".sh": "bash", ".bash": "bash", ".c": "c", ".h": "c",
          ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".java": "java", ".kt": "kotlin", ".rb": "ruby",
          ".css": "css", ".html": "html", ".sql": "sql", ".txt": "text", ".log": "text", ".diff": "diff",
          "Makefile": "make", "Dockerfile": "docker"}


def lexer_for(path: str, code: str) -> str:
    """The Pygments lexer name for a ``code`` section's file ``path``.

    From the table above, else guessed by Pygments from the file name and the first
    4,000 characters of ``code``, else by the extension as a lexer name; ``"default"``
    (no highlighting) when nothing fits. Pygments is imported only here (views that
    never highlight don't pay for it).
    """
    name = os.path.basename(path)
    lexer = LEXERS.get(name) or LEXERS.get(os.path.splitext(name)[1].lower())
    if lexer:
        return lexer
    from pygments.lexers import get_lexer_by_name, guess_lexer_for_filename
    from pygments.util import ClassNotFound

    found = None
    if code:
        with contextlib.suppress(ClassNotFound):
            found = guess_lexer_for_filename(path, code[:4000])
    ext = os.path.splitext(path)[1].lstrip(".").lower()
    if found is None and ext:
        with contextlib.suppress(ClassNotFound):
            found = get_lexer_by_name(ext)
    if found is None:
        return "default"
    return found.aliases[0] if found.aliases else found.name


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


def _lines(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def cut_payload(text: Any, limit: int = DETAIL_TEXT_LIMIT) -> str:
    """The first ``DETAIL_LINE_LIMIT`` lines / ``limit`` characters, with a note saying how
    much was left out."""
    s = _s(text)
    cut = s[:limit]
    if cut.count("\n") >= DETAIL_LINE_LIMIT:  # counted in C: most payloads are short
        end = -1
        for _ in range(DETAIL_LINE_LIMIT):
            end = cut.find("\n", end + 1)
        cut = cut[:end]
    if len(cut) < len(s):
        rest = s[len(cut):]
        lines = _lines(s) - _lines(cut)  # a line cut in the middle counts as shown
        more = f"{lines:,} more line{'s' if lines != 1 else ''} ({len(rest):,} characters)" if lines \
            else f"{len(rest):,} more characters"
        return cut + f"\n… {more} not shown"
    return s


def _cut_matches(files: list[tuple[str, list]], limit: int) -> tuple[list[tuple[str, list]], str]:
    """The first ``DETAIL_LINE_LIMIT`` match lines / ``limit`` characters of grep matches,
    and a note on what was left out ("" when nothing was)."""
    shown: list[tuple[str, list]] = []
    lines = chars = 0
    left_lines = left_files = 0
    for file, matches in files:
        if lines >= DETAIL_LINE_LIMIT or chars >= limit:
            left_files += 1
            left_lines += len(matches)
            continue
        kept = []
        for number, text in matches:
            if lines >= DETAIL_LINE_LIMIT or chars >= limit:
                break
            kept.append((number, text))
            lines += 1
            chars += len(text) + 8
        left_lines += len(matches) - len(kept)
        shown.append((file, kept))
    if not left_lines and not left_files:
        return shown, ""
    return shown, f"… {left_lines:,} more matching lines" + (f" in {left_files:,} more files" if left_files else "") \
        + " not shown"


def detail_sections(tool: str, payloads: Any, status: str = "", outcome: str = "", limit: int = DETAIL_TEXT_LIMIT,
                    raw: bool = True, shown: str = "") -> list[Section]:
    """The detail of a tool call as sections, the way a person wants to read it.

    Args:
        tool: the call's canonical kind (``shell``, ``read``, ``edit``, ...).
        payloads: what the agent wrote of the call and its view's canonical fields
            (:class:`cursor_watch.formats.common.CallPayloads`, read by the run's adapter).
        status, outcome: unused (the payloads' own reading of the result decides); kept so a
            caller may pass the model's.
        limit: characters of one payload shown.
        raw: also the arguments and result as the agent wrote them (JSON) after the tool's own
            view (the TUI folds them); False leaves them out where the tool has a view of its
            own (the exports: they would repeat every payload). A tool without one always gets
            them.
        shown: what the view already says of the outcome above the sections (the call's
            ``detail``, e.g. ``User Rejected``): a reason, error or message it holds is not
            listed again, and a rejection with nothing more to say gets no outcome section
            (one line per rejection).

    Returns:
        Sections: the tool's own view (shell: command, exit code, stdout, stderr; read: the
        content highlighted by the file's extension; edit: the diff; write: the text; grep:
        matches by file; updateTodos: a checklist; webFetch: the Markdown), then the raw JSON.
        Each payload (a text, code, diff or Markdown body) is cut at ``limit`` characters and
        ``DETAIL_LINE_LIMIT`` lines, with a note in the body saying how much was left out (an
        export cuts harder to stay under a size). Never raises.
    """
    v = payloads.view if isinstance(payloads.view, dict) else {}
    try:
        sections = _view_sections(tool, v, limit)
    except Exception:  # noqa: BLE001 - fall back to raw JSON for shapes we don't expect
        sections = []
    raw = raw or not sections
    status, outcome = payloads.status, payloads.outcome
    shell_code = tool == "shell" and (outcome == "failure" or (status == "failure" and "exit_code" in v))
    if status != "success" and not shell_code:  # a shell's failure shows its exit code
        said = " ".join(shown.split())
        reason = [(k, _s(val)) for k, val in payloads.reasons if isinstance(val, (str, int, float))
                  and _s(val).strip() != "" and not (said and isinstance(val, str) and " ".join(val.split()) in said)]
        if reason or status != "rejected":
            sections.insert(0, Section(f"outcome: {outcome or 'none'}", "fields", reason or [("outcome", outcome)]))
    args = payloads.args
    if args and raw:
        sections.append(Section("arguments", "json", _trim_json(args, min(limit, JSON_STRING_LIMIT)), language=RAW))
    if payloads.result is not None and raw:
        sections.append(Section("result", "json", _trim_json(payloads.result, min(limit, JSON_STRING_LIMIT)),
                                language=RAW))
    if raw:
        for title, value in payloads.extra:
            sections.append(Section(title, "json", _trim_json(value, min(limit, JSON_STRING_LIMIT)), language=RAW))
    return sections


_SCALARS = (int, float, bool, type(None))


def _trim_json(value: Any, limit: int = JSON_STRING_LIMIT, depth: int = 0) -> Any:
    """Copy of ``value`` with strings cut at ``limit`` characters and lists at 500 items,
    for the JSON view."""
    if isinstance(value, str):
        return value if len(value) <= limit else value[:limit] + f"… ({len(value) - limit:,} more characters)"
    if depth > 20:
        return "…"
    if isinstance(value, dict):
        out_d = {}
        for k, v in value.items():  # leaves inline: an export trims thousands of these
            if type(v) is str and len(v) <= limit or type(v) in _SCALARS:
                out_d[k] = v
            else:
                out_d[k] = _trim_json(v, limit, depth + 1)
        return out_d
    if isinstance(value, list):
        out = [v if type(v) is str and len(v) <= limit or type(v) in _SCALARS
               else _trim_json(v, limit, depth + 1) for v in value[:500]]
        if len(value) > 500:
            out.append(f"… {len(value) - 500} more items")
        return out
    return value


def _view_sections(tool: str, v: dict, limit: int) -> list[Section]:
    """The tool's own view from its canonical fields ``v`` (an adapter's ``view_of``: the
    fields each kind has are read here, whichever agent wrote the call)."""
    out: list[Section] = []
    if tool == "shell":
        fields = [("command", _s(v.get("command")))]
        if v.get("cwd"):
            fields.append(("working directory", _s(v["cwd"])))
        if "exit_code" in v:
            fields.append(("exit code", _s(v.get("exit_code"))))
        if v.get("signal"):
            fields.append(("signal", _s(v["signal"])))
        if v.get("exec_ms") is not None:
            fields.append(("execution time", f"{v['exec_ms']} ms"))
        if v.get("timeout_ms"):
            fields.append(("timeout", f"{v['timeout_ms']} ms"))
        out.append(Section("shell", "fields", fields))
        if v.get("stdout"):
            out.append(Section(v.get("stdout_label") or "stdout", "text", cut_payload(v["stdout"], limit)))
        if v.get("stderr"):
            out.append(Section("stderr", "text", cut_payload(v["stderr"], limit)))
        if not v.get("stdout") and not v.get("stderr") and v.get("output"):
            out.append(Section("output", "text", cut_payload(v["output"], limit)))
    elif tool == "read":
        path = _s(v.get("path"))
        out.append(Section("read", "fields", [("path", path), *v.get("stats", [])]))
        if "content" in v:
            out.append(Section("content", "code", cut_payload(v.get("content"), limit), language=path))
    elif tool == "edit":
        path = _s(v.get("path"))
        out.append(Section("edit", "fields", [("path", path), *v.get("stats", [])]))
        if v.get("diff"):
            out.append(Section("diff", "diff", cut_payload(v["diff"], limit)))
        elif v.get("new_content"):
            out.append(Section("new content", "code", cut_payload(v["new_content"], limit), language=path))
        else:
            for key, value in v.get("edits", []):
                out.append(Section(key, "json", _trim_json(value, min(limit, JSON_STRING_LIMIT))))
    elif tool == "write":
        path = _s(v.get("path"))
        out.append(Section("write", "fields", [("path", path), *v.get("stats", [])]))
        if v.get("text") is not None:
            out.append(Section("text", "code", cut_payload(v.get("text"), limit), language=path))
    elif tool == "grep":
        out.append(Section("grep", "fields", [("pattern", _s(v.get("pattern"))), ("path", _s(v.get("path")))]))
        files = v.get("matches") or []
        if files:
            shown, rest = _cut_matches(files, limit)
            out.append(Section(f"matches in {len(files)} file{'s' if len(files) != 1 else ''}", "matches", shown))
            if rest:
                out.append(Section("more matches", "text", rest))
        elif v.get("output"):
            out.append(Section("output", "text", cut_payload(v["output"], limit)))
    elif tool == "glob":
        files = v.get("files") or []
        out.append(Section("glob", "fields", [("pattern", _s(v.get("pattern"))), ("directory", _s(v.get("directory"))),
                                              ("files", _s(v.get("count", len(files))))]))
        if files:
            out.append(Section("files", "text", cut_payload("\n".join(_s(f) for f in files), limit)))
        elif v.get("output"):
            out.append(Section("output", "text", cut_payload(v["output"], limit)))
    elif tool == "updateTodos":
        out.append(Section("todos", "checklist", list(v.get("todos") or [])))
    elif tool == "webFetch":
        out.append(Section("webFetch", "fields", [("url", _s(v.get("url")))]))
        if v.get("markdown"):
            out.append(Section("page", "markdown", cut_payload(v["markdown"], limit)))
    elif tool == "webSearch":
        out.append(Section("webSearch", "fields", [("search", _s(v.get("query")))]))
        refs = v.get("references")
        if refs:
            md = "\n\n".join(f"**{title}**  \n{url}\n\n{chunk[:2000]}" for title, url, chunk in refs)
            out.append(Section("references", "markdown", cut_payload(md, limit)))
        elif v.get("output"):
            out.append(Section("output", "text", cut_payload(v["output"], limit)))
    elif tool == "task":
        out.append(Section("task", "fields", [("description", _s(v.get("description"))), ("model", _s(v.get("model")))]))
        if v.get("prompt"):
            out.append(Section("prompt", "text", cut_payload(v["prompt"], limit)))
        texts = v.get("said") or []
        if texts:
            out.append(Section("sub-agent said", "markdown", cut_payload("\n\n".join(texts), limit),
                               language=AGENT_MARKDOWN))
    elif tool == "mcp":
        out.append(Section("mcp", "fields", [("tool", _s(v.get("tool"))), ("server", _s(v.get("server")))]))
        inner = v.get("arguments")
        if isinstance(inner, dict) and inner:
            out.append(Section("arguments of the MCP tool", "json", _trim_json(inner, min(limit, JSON_STRING_LIMIT))))
        if v.get("content") is not None:
            out += _text_or_json("content", v["content"], limit)
    elif tool == "getMcpTools":
        out.append(Section("getMcpTools", "fields", [(k, _s(v.get(k))) for k in ("server", "tool", "pattern") if v.get(k)]
                           or [("server", ""), ("tool", "")]))
        if v.get("content"):
            out += _text_or_json("tool description", v["content"], limit)
    elif tool == "createPlan":
        if v.get("stats"):
            out.append(Section("createPlan", "fields", list(v["stats"])))
        if v.get("plan"):
            out.append(Section("plan", "markdown", cut_payload(v["plan"], limit), language=AGENT_MARKDOWN))
        if v.get("todos"):
            out.append(Section("todos", "checklist", list(v["todos"])))
    elif v.get("output"):  # any other kind an adapter gives a text output of
        out.append(Section("output", "text", cut_payload(v["output"], limit)))
    return out


MARKER_DETAIL = 80  # characters of a call's detail its transcript line shows (the rest: ⏎ on the call)


def marker_detail(detail: str, interaction: str = "") -> str:
    """What a finished call's transcript line shows of its ``detail`` (its failure or rejection
    reason): the first :data:`MARKER_DETAIL` characters, whitespace folded; '' when its note
    (``interaction``) already says it. The search counts this, not the whole reason: the rest is
    in the call's result, counted (and listed in the detail view) as a payload match."""
    if not detail or said_in(detail, interaction):
        return ""
    return one_line(detail, 0)[:MARKER_DETAIL]


def said_in(detail: str, text: str) -> bool:
    """True when ``text`` (a call's ``interaction`` note, e.g. ``webFetch response: rejected
    (User Rejected)``) already gives the reason ``detail`` names: a view that printed the
    note doesn't print the same reason again on the call's line."""
    return bool(detail and text) and " ".join(detail.split())[:100] in " ".join(text.split())


def without_reason(text: str, detail: str) -> str:
    """``text`` (an ``interaction`` note) without a closing ``(reason)`` that repeats ``detail``
    (the detail views show the reason once, on the status line)."""
    if detail and text.endswith(")") and said_in(detail, text):
        head, sep, _reason = text.rpartition(" (")
        if sep:
            return head
    return text


# ``Section.language`` of the "json" sections that repeat the arguments and result as the
# stream has them (the TUI folds them under the tool's own view: ``r`` opens them)
RAW = "raw"
# ``Section.language`` of a "markdown" section the agent itself wrote (a plan, a sub-agent's
# answer): the exports keep it as Markdown; a fetched page is shown as its source there.
AGENT_MARKDOWN = "agent"


def json_in_string(text: Any, limit: int = DETAIL_TEXT_LIMIT) -> Any:
    """The JSON object or array that the string ``text`` holds, decoded; None when it holds
    none (MCP results and ``getMcpToolsToolCall``'s ``content`` are JSON written into a
    string: the crew capture). Strings over ``limit`` characters are not decoded (a cut
    payload is shown as text)."""
    if not isinstance(text, str) or len(text) > limit:
        return None
    head = text.lstrip()[:1]
    if head not in ("{", "["):
        return None
    import orjson

    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, (dict, list)) else None


def _text_or_json(title: str, text: Any, limit: int) -> list[Section]:
    """A payload string as a "json" section (decoded, pretty-printed) when it holds JSON, else
    as "text"."""
    value = json_in_string(text, limit)
    if value is not None:
        return [Section(f"{title} (JSON)", "json", _trim_json(value, min(limit, JSON_STRING_LIMIT)))]
    return [Section(title, "text", cut_payload(text, limit))]
