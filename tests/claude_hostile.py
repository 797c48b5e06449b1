"""Claude Code streams with fields of every wrong JSON type (tests/test_agents.py, tests/test_build.py).

One scenario of the lines the Claude adapter reads (hooks, init, status lines, stream events,
assistant and user lines with tool calls and results, a rate limit, a tool's heartbeat, results
with costs and denials), then the scenario again for each path of each line (every key and list
item, nested) with the value there replaced by a junk value, or deleted. The compiled adapter's
annotations must hold for every such value (a type check failing is exit 70, not a diagnostic).
"""

from __future__ import annotations

import copy
import json
from typing import Any

_TS = "2026-07-25T02:22:22.144Z"
BASE: list[dict] = [
    {"type": "system", "subtype": "hook_started", "hook_id": "h1", "hook_name": "SessionStart:startup",
     "hook_event": "SessionStart", "session_id": "s"},
    {"type": "system", "subtype": "hook_response", "hook_id": "h1", "hook_name": "SessionStart:startup",
     "hook_event": "SessionStart", "outcome": "success", "exit_code": 0, "stdout": "o", "stderr": "e"},
    {"type": "system", "subtype": "init", "session_id": "s", "model": "m", "cwd": "/w", "claude_code_version": "2.1.3",
     "tools": ["Bash"], "mcp_servers": [{"name": "a", "status": "needs-auth"}]},
    {"type": "system", "subtype": "status", "status": "compacting", "compact_result": "ok", "permissionMode": "plan"},
    {"type": "system", "subtype": "thinking_tokens", "estimated_tokens": 12},
    {"type": "system", "subtype": "compact_boundary", "compact_metadata": {"trigger": "auto", "pre_tokens": 9}},
    {"type": "system", "subtype": "api_retry", "attempt": 1, "max_retries": 5, "retry_delay_ms": 1500,
     "error_status": 529, "error": "overloaded"},
    {"type": "system", "subtype": "task_started", "tool_use_id": "t5", "description": "d", "patch": {"status": "x"}},
    {"type": "stream_event", "event": {"type": "message_start", "message": {"id": "m1"}}},
    {"type": "stream_event", "event": {"type": "content_block_delta", "index": 0,
                                       "delta": {"type": "thinking_delta", "thinking": "hm"}}},
    {"type": "stream_event", "event": {"type": "content_block_delta", "index": 1,
                                       "delta": {"type": "text_delta", "text": "Hi"}}},
    {"type": "stream_event", "event": {"type": "content_block_start", "index": 2,
                                       "content_block": {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}}},
    {"type": "stream_event", "event": {"type": "content_block_delta", "index": 2,
                                       "delta": {"type": "input_json_delta", "partial_json": "{\"command\": \"ls\"}"}}},
    {"type": "stream_event", "event": {"type": "content_block_stop", "index": 0}},
    {"type": "stream_event", "event": {"type": "message_stop"}},
    {"type": "assistant", "message": {"id": "m1", "content": [
        {"type": "text", "text": "Hi"}, {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}},
        {"type": "tool_use", "id": "t2", "name": "Edit", "input": {"file_path": "f", "old_string": "a\n", "new_string": "b\n"}},
        {"type": "tool_use", "id": "t5", "name": "Task", "input": {"description": "d", "run_in_background": True}}],
        "usage": {"input_tokens": 3, "output_tokens": 5, "cache_read_input_tokens": 1,
                  "output_tokens_details": {"thinking_tokens": 1}}}, "timestamp": _TS},
    {"type": "tool_progress", "parent_tool_use_id": "t1", "elapsed_time_seconds": 30},
    {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
     "tool_use_result": {"stdout": "ok", "stderr": ""}, "timestamp": _TS},
    {"type": "user", "message": {"content": [
        {"type": "tool_result", "tool_use_id": "t2", "content": [{"type": "text", "text": "e"}], "is_error": True},
        {"type": "text", "text": "note"}]},
     "tool_use_result": {"structuredPatch": [{"oldStart": 1, "oldLines": 1, "lines": ["-a", "+b"]}]}},
    {"type": "assistant", "message": {"id": "m2", "content": [{"type": "text", "text": "sub"}]},
     "parent_tool_use_id": "t5", "error": "rate_limit"},
    {"type": "rate_limit_event", "rate_limit_info": {"status": "allowed_warning", "rateLimitType": "seven_day",
                                                      "utilization": 0.5, "resetsAt": 1785000000}},
    {"type": "result", "subtype": "success", "result": "Hi", "session_id": "s", "duration_ms": 10,
     "total_cost_usd": 0.5, "usage": {"input_tokens": 3}, "modelUsage": {"m": {"inputTokens": 3, "costUSD": 0.5}},
     "permission_denials": [{"tool_use_id": "t9", "tool_name": "Bash", "tool_input": {"command": "rm"}}],
     "errors": ["e"], "terminal_reason": "max_turns", "origin": {"kind": "task-notification"}},
    {"type": "system", "subtype": "init", "session_id": "s"},
    {"type": "result", "subtype": "success", "session_id": "s", "total_cost_usd": 0.9,
     "modelUsage": {"m": {"inputTokens": 5, "costUSD": 0.9}}},
]
# every JSON type; integers beyond 64 bits (orjson reads them as floats) and at its edges
JUNK: list[Any] = [None, True, 0, -7, 2**63, 2**64 - 1, 2**64 + 5, -(10**30), 1.5, "x", "", [], [None, 1, "a"], {},
                   {"type": "text", "text": 5, "id": [], "content": {}}]
DELETE = object()


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    out: list[tuple] = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for k, v in items:
        out.append(prefix + (k,))
        out.extend(_paths(v, prefix + (k,)))
    return out


def _mutated(line: dict, path: tuple, junk: Any) -> dict:
    line = copy.deepcopy(line)
    parent = line
    for k in path[:-1]:
        parent = parent[k]
    if junk is DELETE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = copy.deepcopy(junk)
    return line


def hostile_stream(junk_values: list[Any] | None = None, base: list[dict] | None = None) -> bytes:
    """The scenario (``base``: Claude Code's :data:`BASE` unless given; tests/codex_hostile.py
    gives Codex's), then a copy of it for each (line, path, junk value): NDJSON."""
    base = BASE if base is None else base
    out = [base]
    for junk in (JUNK + [DELETE]) if junk_values is None else junk_values:
        for i, line in enumerate(base):
            for path in _paths(line):
                out.append(base[:i] + [_mutated(line, path, junk)] + base[i + 1:])
    return b"".join(json.dumps(obj, separators=(",", ":")).encode() + b"\n" for scenario in out for obj in scenario)
