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
