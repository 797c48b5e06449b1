"""Codex ``exec --json`` streams with fields of every wrong JSON type (tests/test_agents.py,
tests/test_build.py): one scenario of the lines the Codex adapter reads (codex.py's notes: every
item type, a reroute, a warning, a question, a reconnect, a second run that fails), then the
scenario again for each path of each line with the value there replaced by a junk value, or
deleted (tests/claude_hostile.py's generator)."""

from __future__ import annotations

from typing import Any

from claude_hostile import hostile_stream as _hostile_stream

CODEX_BASE: list[dict] = [
    {"type": "thread.started", "thread_id": "th1"},
    {"type": "turn.started"},
    {"type": "item.completed", "item": {"id": "item_0", "type": "reasoning", "text": "**Plan**"}},
    {"type": "item.started", "item": {"id": "item_1", "type": "command_execution", "command": "bash -lc ls",
                                      "aggregated_output": "", "exit_code": None, "status": "in_progress"}},
    {"type": "item.completed", "item": {"id": "item_1", "type": "command_execution", "command": "bash -lc ls",
                                        "aggregated_output": "a\nb\n", "exit_code": 2, "status": "failed"}},
    {"type": "item.completed", "item": {"id": "item_2", "type": "file_change", "status": "completed",
                                        "changes": [{"path": "a.py", "kind": "update"}]}},
    {"type": "item.started", "item": {"id": "item_3", "type": "mcp_tool_call", "server": "s", "tool": "t",
                                      "arguments": {"q": 1}, "status": "in_progress"}},
    {"type": "item.completed", "item": {"id": "item_3", "type": "mcp_tool_call", "server": "s", "tool": "t",
                                        "arguments": {"q": 1}, "result": {"content": [{"type": "text", "text": "r"}]},
                                        "error": {"message": "boom"}, "status": "failed"}},
    {"type": "item.completed", "item": {"id": "item_4", "type": "web_search", "query": "q",
                                        "action": {"type": "search", "query": "q", "url": "u"}}},
    {"type": "item.started", "item": {"id": "item_5", "type": "todo_list", "items": [{"text": "a", "completed": False}]}},
    {"type": "item.updated", "item": {"id": "item_5", "type": "todo_list", "items": [{"text": "a", "completed": True}]}},
    {"type": "item.completed", "item": {"id": "item_5", "type": "todo_list", "items": [{"text": "a", "completed": True}]}},
    {"type": "item.completed", "item": {"id": "item_6", "type": "collab_tool_call", "tool": "spawn_agent",
                                        "receiver_thread_ids": ["th2"], "prompt": "p", "status": "completed",
                                        "agents_states": {"th2": {"status": "running", "message": "m"}}}},
    {"type": "item.completed", "item": {"id": "item_7", "type": "collab_tool_call", "tool": "wait",
                                        "receiver_thread_ids": ["th2"], "status": "failed",
                                        "agents_states": {"th2": {"status": "failed", "message": "gone"}}}},
    {"type": "item.completed", "item": {"id": "item_8", "type": "error", "message": "model rerouted: a -> b"}},
    {"type": "item.completed", "item": {"id": "item_9", "type": "error", "message": "a warning"}},
    {"type": "item.completed", "item": {"id": "item_10", "type": "plan", "text": "1. do\n2. check"}},
    {"type": "request_user_input", "call_id": "c1", "questions": [{"question": "ok?", "header": "h"}]},
    {"type": "item.plan.delta", "delta": "x"},
    {"type": "error", "message": "Reconnecting... 2/5"},
    {"type": "item.completed", "item": {"id": "item_11", "type": "agent_message", "text": "done"}},
    {"type": "turn.completed", "usage": {"input_tokens": 10, "cached_input_tokens": 4, "output_tokens": 5,
                                         "reasoning_output_tokens": 1, "cache_write_input_tokens": 2}},
    {"type": "thread.started", "thread_id": "th1"},
    {"type": "turn.started"},
    {"type": "turn.failed", "error": {"message": "fatal"}},
]


def hostile_stream(junk_values: list[Any] | None = None) -> bytes:
    """:data:`CODEX_BASE`, then a copy of it for each (line, path, junk value): NDJSON."""
    return _hostile_stream(junk_values, CODEX_BASE)
