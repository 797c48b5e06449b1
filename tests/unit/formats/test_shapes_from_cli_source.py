"""Each agent as its CLI writes it in 2026: events the shared captures don't
hold, built from each CLI's own source and types (the shapes are cited per test; see
``docs/formats.md``), read through the whole pipeline."""

from __future__ import annotations

import json

from cursor_watch.stream.watch import Monitor

CLOCK_MS = 2_000_000_000_000.0  # "now" far from every stream time: a mix of clocks would show


def read(lines: list[dict], live: bool = False, fmt: str = "auto") -> Monitor:
    data = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    mon = Monitor(clock=lambda: CLOCK_MS, fmt=fmt, live=live, reread=lambda off, size: data[off:off + size])
    mon.feed(data)
    mon.finish()
    return mon


# -- Claude Code (@anthropic-ai/claude-agent-sdk 0.3.332 sdk.d.ts, CLI 2.1.332) ---------------------

def init(sid: str = "s") -> dict:
    return {"type": "system", "subtype": "init", "session_id": sid, "model": "claude-opus-4-7", "cwd": "/repo",
            "permissionMode": "default", "claude_code_version": "2.1.332", "tools": ["Bash", "Agent"],
            "mcp_servers": [{"name": "gh", "status": "connected"}, {"name": "linear", "status": "needs-auth"}]}


def text(mid: str, words: str, ts: str = "2026-11-20T10:00:01.000Z") -> dict:
    return {"type": "assistant", "message": {"id": mid, "content": [{"type": "text", "text": words}]},
            "parent_tool_use_id": None, "session_id": "s", "timestamp": ts}


def result(words: str, **more) -> dict:
    return {"type": "result", "subtype": "success", "is_error": False, "result": words, "session_id": "s",
            "duration_ms": 1000, "total_cost_usd": 0.1, **more}


def test_claude_init_gives_tools_and_mcp_servers_with_their_status():
    (run,) = read([init(), text("m1", "hi"), result("hi")]).runs
    s = run.session
    assert (s.agent_version, s.tools, s.mcp_servers) == ("2.1.332", ["Bash", "Agent"],
                                                        [("gh", "connected"), ("linear", "needs-auth")])


def test_claude_background_agent_runs_each_end_at_their_own_result():
    """A run that started a background agent has its result held back; the task's notification
    begins the next run (a new init) and both results come after it, in the order their runs
    began (sdk.d.ts SDKResultMessage.origin, result_index; the CLI's held-back results)."""
    mon = read([
        init(),
        {"type": "assistant", "message": {"id": "m1", "content": [
            {"type": "tool_use", "id": "toolu_bg", "name": "Agent",
             "input": {"description": "List files", "prompt": "ls", "run_in_background": True}}]},
         "parent_tool_use_id": None, "session_id": "s", "timestamp": "2026-11-20T10:00:01.000Z"},
        {"type": "system", "subtype": "task_started", "task_id": "a1", "tool_use_id": "toolu_bg",
         "description": "List files", "is_backgrounded": True, "session_id": "s"},
        {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "toolu_bg",
                                                  "content": "Async agent launched"}]},
         "parent_tool_use_id": None, "session_id": "s", "timestamp": "2026-11-20T10:00:02.000Z"},
        text("m2", "I've started a background agent.", "2026-11-20T10:00:03.000Z"),
        {"type": "system", "subtype": "task_notification", "task_id": "a1", "tool_use_id": "toolu_bg",
         "status": "completed", "summary": "Agent \"List files\" completed", "session_id": "s"},
        init(),
        text("m3", "The agent found 3 files.", "2026-11-20T10:00:09.000Z"),
        result("I've started a background agent.", result_index=0),
        result("The agent found 3 files.", result_index=1, origin={"kind": "task-notification"}),
    ])
    first, second = mon.runs
    assert (first.session.status, first.session.result.text) == ("success", "I've started a background agent.")
    assert (second.session.status, second.session.result.text) == ("success", "The agent found 3 files.")
    assert not any(n.kind == "end" for n in first.session.notes)  # never "ended without a result"
    assert first.session.assistant_text == "I've started a background agent."
    assert second.session.assistant_text == "The agent found 3 files."


def test_claude_background_run_whose_result_never_comes_ends_with_the_input():
    """Each result ends the open run of its kind (a run the user's prompt began, or one a task's
    notification began: its result's origin says so); a run whose result never came ends with
    the input, and says so."""
    mon = read([init(), {"type": "system", "subtype": "task_started", "task_id": "a1", "is_backgrounded": True,
                         "session_id": "s"}, text("m1", "started"), init(), text("m2", "found"),
                result("found", origin={"kind": "task-notification"})])
    first, second = mon.runs
    assert first.session.result is None and first.session.status == "incomplete"
    assert "never came" in first.session.notes[-1].text
    assert second.session.result.text == "found"


def test_claude_older_order_a_result_at_once_is_read_the_same():
    mon = read([init(), text("m1", "one"), result("one"), init(), text("m2", "two"), result("two")])
    assert [r.session.result.text for r in mon.runs] == ["one", "two"]


def test_claude_heartbeat_updates_its_running_call_and_makes_no_new_one():
    """tool_progress (a heartbeat every 30 s): its tool_use_id is synthetic, the call is its
    parent_tool_use_id (sdk.d.ts SDKToolProgressMessage; the CLI's Ngs)."""
    mon = read([init(),
                {"type": "assistant", "message": {"id": "m1", "content": [
                    {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "npm test"}}]},
                 "parent_tool_use_id": None, "session_id": "s", "timestamp": "2026-11-20T10:00:01.000Z"},
                {"type": "tool_progress", "tool_use_id": "toolu_1-heartbeat-0", "tool_name": "Bash",
                 "parent_tool_use_id": "toolu_1", "elapsed_time_seconds": 30, "heartbeat": True, "session_id": "s"},
                {"type": "tool_progress", "tool_use_id": "hook-Stop-x-heartbeat-0", "tool_name": "Stop",
                 "parent_tool_use_id": "hook-Stop-x", "elapsed_time_seconds": 30, "heartbeat": True}])
    s = mon.session
    (call,) = s.tool_calls.values()
    assert (call.call_id, call.status) == ("toolu_1", "incomplete") and not s.unknown
    assert s.counts()["events"] == 4


def test_claude_status_lines_of_2026():
    import datetime as dt

    resets = dt.datetime.fromtimestamp(1795632000).astimezone().strftime("%Y-%m-%d %H:%M %Z")  # local time
    mon = read([init(),
                {"type": "system", "subtype": "api_retry", "attempt": 2, "max_retries": 10, "retry_delay_ms": 2140,
                 "error_status": 529, "error": "overloaded", "session_id": "s"},
                {"type": "system", "subtype": "permission_denied", "tool_name": "Bash", "tool_use_id": "toolu_9",
                 "message": "Bash is not allowed", "session_id": "s"},
                {"type": "system", "subtype": "compact_boundary", "session_id": "s",
                 "compact_metadata": {"trigger": "auto", "pre_tokens": 167412, "post_tokens": 21877}},
                {"type": "rate_limit_event", "rate_limit_info": {"status": "allowed_warning", "resetsAt": 1795632000,
                                                                 "rateLimitType": "five_hour", "utilization": 0.91}},
                {"type": "tool_use_summary", "summary": "Ran the tests", "preceding_tool_use_ids": ["toolu_1"]},
                {"type": "keep_alive"},
                result("ok", terminal_reason="max_turns")])
    notes = [(n.kind, n.text) for n in mon.session.notes]
    assert notes == [
        ("mcp", "MCP servers not connected: linear (needs-auth)"),  # (the init's server statuses)
        ("retry", "API retry attempt 2 of 10, in 2.1 s (overloaded HTTP 529)"),
        ("permission", "permission denied: Bash (Bash is not allowed)"),
        ("compaction", "context compacted (auto, 167,412 tokens before, 21,877 after)"),
        ("rate_limit", f"rate limit: allowed_warning (five_hour, 91 % used, resets {resets})"),
        ("status", "tool use summary: Ran the tests"),
        ("status", "the run ended: max_turns"),
    ]
    assert not mon.session.unknown and mon.session.counts()["events"] == 8


def test_claude_is_error_with_subtype_success_is_an_error():
    """The run ended on an API error (sdk.d.ts: "with is_error true, the error text when the
    turn ended on an API error"; switchboard's auth-failure capture)."""
    mon = read([init(), text("m1", "Not logged in · Please run /login"),
                {**result("Not logged in · Please run /login"), "is_error": True, "terminal_reason": "api_error"}])
    assert mon.session.status == "error"


def test_a_live_claude_call_has_its_times_from_one_clock():
    """Live, a call begins at its content_block_start (no time of its own: read now) and its
    assistant line and tool_result carry the stream's times: the call's start becomes the
    stream's, never a wall-clock start with a stream-clock end."""
    mon = read([init(),
                {"type": "stream_event", "event": {"type": "content_block_start", "index": 0, "content_block": {
                    "type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}}, "parent_tool_use_id": None},
                {"type": "assistant", "message": {"id": "m1", "content": [
                    {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}]},
                 "parent_tool_use_id": None, "session_id": "s", "timestamp": "2026-11-20T10:00:01.000Z"},
                {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                                          "content": "a"}]},
                 "parent_tool_use_id": None, "session_id": "s", "timestamp": "2026-11-20T10:00:03.500Z"}], live=True)
    (call,) = mon.session.tool_calls.values()
    assert call.duration_ms == 2500 and call.started_ms < call.completed_ms < CLOCK_MS


# -- Codex (openai/codex codex-rs/exec/src/exec_events.rs at 6219b7c) -------------------------------

def item(kind: str, **fields) -> dict:
    return {"type": kind, "item": fields}


def test_codex_sub_agents_are_a_tree_under_their_spawn():
    mon = read([{"type": "thread.started", "thread_id": "t0"}, {"type": "turn.started"},
                item("item.completed", id="item_1", type="collab_tool_call", tool="spawn_agent", sender_thread_id="t0",
                     receiver_thread_ids=["t1"], prompt="Review the tests",
                     agents_states={"t1": {"status": "pending_init", "message": None}}, status="completed"),
                item("item.completed", id="item_2", type="collab_tool_call", tool="wait", sender_thread_id="t0",
                     receiver_thread_ids=["t1"], prompt=None,
                     agents_states={"t1": {"status": "completed", "message": "All green"}}, status="completed"),
                item("item.completed", id="item_3", type="collab_tool_call", tool="close_agent",
                     sender_thread_id="t0", receiver_thread_ids=["t1"], agents_states={}, status="completed"),
                {"type": "turn.completed", "usage": {"input_tokens": 10, "cached_input_tokens": 0, "output_tokens": 1}}])
    spawn, wait, close = mon.session.tool_calls.values()
    assert (spawn.tool, spawn.kind, spawn.parent_call_id, spawn.summary) == ("spawn_agent", "task", "",
                                                                             "spawn_agent Review the tests")
    assert wait.parent_call_id == close.parent_call_id == "item_1" and mon.session.subagent_calls == 2


def test_codex_names_mcp_calls_by_server_and_tool_and_a_reroute_names_the_model():
    mon = read([{"type": "thread.started", "thread_id": "t0"},
                item("item.completed", id="item_0", type="error", message="model rerouted: gpt-5.5 -> gpt-5.5-mini "
                     "(HighRiskCyberActivity)"),
                item("item.completed", id="item_1", type="mcp_tool_call", server="docs", tool="search",
                     arguments={"q": "x"}, result={"content": [{"type": "text", "text": "3 hits"}]}, error=None,
                     status="completed")])
    (call,) = mon.session.tool_calls.values()
    assert (call.tool, call.kind, mon.session.model) == ("docs.search", "mcp", "gpt-5.5-mini")


def test_codex_plan_mode_events_are_a_plan_and_a_wait_for_a_person():
    """The plan-mode branch's events (openai/codex cc/plan-mode-sdk-mvp, 08a1f30; not upstream)."""
    mon = read([{"type": "thread.started", "thread_id": "t0"},
                {"type": "item.plan.delta", "item_id": "item_1", "delta": "1. read"},
                item("item.completed", id="item_1", type="plan", text="1. read\n2. fix"),
                {"type": "request_user_input", "id": "r1", "call_id": "c1",
                 "questions": [{"question": "Which branch?"}]}])
    (call,) = mon.session.tool_calls.values()
    assert (call.kind, call.summary) == ("createPlan", "1. read")
    assert [(n.kind, n.text) for n in mon.session.notes if n.kind == "interaction_query"] == [
        ("interaction_query", "waiting for input: Which branch?")]
    assert mon.session.counts()["events"] == 4


# -- Gemini CLI (google-gemini/gemini-cli packages/core/src/output/types.ts at 5411f11) ------------

def g(kind: str, **fields) -> dict:
    return {"type": kind, "timestamp": "2026-11-20T10:00:00.000Z", **fields}


def test_gemini_grep_search_and_a_fatal_errors_zero_duration():
    mon = read([g("init", session_id="s", model="auto"),
                g("tool_use", tool_name="grep_search", tool_id="grep_search__1", parameters={"pattern": "TODO",
                                                                                             "dir_path": "src"}),
                g("tool_result", tool_id="grep_search__1", status="success", output="src/a.py:1: TODO"),
                g("result", status="error", error={"type": "unknown", "message": "[API Error: quota]"},
                  stats={"total_tokens": 0, "input_tokens": 0, "output_tokens": 0, "duration_ms": 0,
                         "tool_calls": 1})])
    (call,) = mon.session.tool_calls.values()
    assert (call.kind, call.summary) == ("grep", "TODO in src")
    assert mon.session.status == "error" and mon.session.result.duration_ms is None  # 0 there is not measured


def test_gemini_thinking_tokens_are_counted_apart_from_the_output():
    mon = read([g("init", session_id="s", model="gemini-3.5-flash"),
                g("message", role="assistant", content="done", delta=True),
                g("result", status="success", stats={"total_tokens": 48210, "input_tokens": 45022,
                                                     "output_tokens": 812, "cached": 30110, "input": 14912,
                                                     "duration_ms": 18344})])
    u = mon.session.result.usage
    assert (u.input_tokens, u.cache_read_tokens, u.uncached_input_tokens, u.output_tokens) == (45022, 30110, 14912, 812)
    assert (u.reasoning_tokens, u.reasoning_in_output, u.total_tokens) == (48210 - 45022 - 812, False, 48210)
