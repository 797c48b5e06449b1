"""Other agents' streams (Claude Code, Codex): every real capture, detection, hostile input.

Real captures live in ``../shared/streams/agents/<agent>/`` (each folder's README gives provenance).
Each one is replayed with ``--summary --json``, ``--summary`` and ``--plain`` and compared byte for
byte with ``tests/expected/agents/`` (regenerate with ``CURSOR_WATCH_UPDATE_EXPECTED=1`` for an
intended change, and say so in the commit), and checked against facts read from the capture itself
(not from the adapter): the final text is the agent's own, every tool call is paired, failed calls
are failed, one run per ``init`` / ``thread.started``. Then each adapter's rules, on captures and
on lines built here: sub-agents, denials, hooks, usage and costs, notes (rate limits, hooks, MCP
servers), a call's detail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from conftest import AGENTS_DIR, ROOT, SAMPLES, agent_captures, native_objects

from cursor_watch.core.canonical import Usage
from cursor_watch.formats import Reader, sniff
from cursor_watch.stream.payloads import call_detail
from cursor_watch.stream.watch import Monitor
from cursor_watch.views.summary import write_summaries
from captures import CLAUDE_MCP, CLAUDE_PARTIAL, CODEX_REAL, needs_streams
from replays import capture_params, replayed
import streamlines
from streamlines import claude_init, claude_text

line = streamlines.line  # (bound, not imported: this module's loops name their lines line too)

EXPECTED = ROOT / "tests" / "expected" / "agents"
UPDATE = bool(os.environ.get("CURSOR_WATCH_UPDATE_EXPECTED"))
ENV = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "TERM")}
ENV |= {"CURSOR_WATCH_NO_TUI": "1", "COLUMNS": "120", "TERM": "dumb", "TZ": "UTC"}  # (a rate limit's reset: local time)
MODES = {"json": ["--summary", "--json"], "summary": ["--summary"], "plain": ["--plain"], "report": ["report", "--json"]}
LABELS = {"claude": "claude-code", "codex": "codex", "gemini": "gemini-cli", "cursor": "cursor"}


def captures() -> list[Path]:
    return agent_captures()




def cw(args: list[str], stdin: bytes = b"", env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cursor_watch", *args], capture_output=True, input=stdin,
                          env=env or ENV, cwd=ROOT, timeout=120)


def summaries(out: bytes) -> list[dict]:
    """One summary object, or NDJSON of several runs."""
    text = out.decode()
    if text.startswith("{\n"):
        return [json.loads(text)]
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("path", capture_params())
@pytest.mark.parametrize("mode", list(MODES))
def test_capture_output_is_the_stored_one(path: Path, mode: str):
    p = cw([*MODES[mode], os.path.relpath(path, ROOT)])
    assert b"Traceback" not in p.stderr
    got = p.stdout + f"\n[exit {p.returncode}]\n".encode()
    want = EXPECTED / f"{path.parent.name}__{path.name}.{mode}"
    if UPDATE:
        want.parent.mkdir(parents=True, exist_ok=True)
        want.write_bytes(got)
    assert want.exists(), f"no stored expectation {want.name}: run with CURSOR_WATCH_UPDATE_EXPECTED=1"
    assert got == want.read_bytes()


@pytest.mark.parametrize("path", capture_params())
def test_capture_facts_hold(path: Path):
    """What the capture itself says, checked against the summary (facts read here, not by the adapter)."""
    agent = path.parent.name
    runs = summaries(cw(["--summary", "--json", str(path)]).stdout)
    events = native_objects(path)
    for run in runs:
        assert run["session"]["agent"] == LABELS[agent]
        assert not run["unknown_events"], run["unknown_events"]
        assert all(c["status"] != "running" for c in run["tool_calls"])
    lines = path.read_bytes().count(b"\n")
    assert sum(r["counts"]["lines"] for r in runs) == lines
    assert sum(r["counts"]["events"] + r["counts"]["invalid_lines"] for r in runs) == lines
    if agent == "claude":
        inits = [e for e in events if e.get("type") == "system" and e.get("subtype") == "init"]
        results = [e for e in events if e.get("type") == "result"]
        assert len(runs) == len(inits) == len(results)
        totals: dict[str, float] = {}  # session id -> the last run's total_cost_usd (a running total)
        for run, init, result in zip(runs, inits, results, strict=True):
            assert run["session"]["agent_version"] == init["claude_code_version"]
            assert run["session"]["session_id"] == init["session_id"]
            assert run["result"]["text"] == result["result"]
            assert run["assistant_text"].endswith(result["result"])
            total, before = result["total_cost_usd"], totals.get(result["session_id"])
            share = total - before if before is not None and total >= before else total  # this run's own
            assert run["result"]["cost_usd"] == pytest.approx(share, rel=1e-12)
            totals[result["session_id"]] = total
            if "usage" in result:
                u = result["usage"]  # Claude Code's input_tokens leave the cache out; canonical input counts it
                assert run["result"]["usage"]["input_tokens"] == (u["input_tokens"] + u.get("cache_read_input_tokens", 0)
                                                                  + u.get("cache_creation_input_tokens", 0))
                assert run["result"]["usage"]["uncached_input_tokens"] == u["input_tokens"]
                assert run["result"]["usage"]["cache_read_tokens"] == u["cache_read_input_tokens"]
                details = result["usage"].get("output_tokens_details")
                if isinstance(details, dict) and "thinking_tokens" in details:
                    assert run["result"]["usage"]["reasoning_tokens"] == details["thinking_tokens"]
                else:
                    assert "reasoning_tokens" not in run["result"]["usage"]
            else:  # never invented
                assert run["result"]["usage"] is None
            assert run["status"] == ("error" if result["is_error"] else "success")
        uses = {b["id"]: b for e in events if e.get("type") == "assistant"
                for b in e["message"]["content"] if b.get("type") == "tool_use"}
        outcomes = {b["tool_use_id"]: b for e in events if e.get("type") == "user" and isinstance(e["message"]["content"], list)
                    for b in e["message"]["content"] if b.get("type") == "tool_result"}
        calls = {c["call_id"]: c for r in runs for c in r["tool_calls"]}
        assert set(calls) == set(uses)
        for cid, block in uses.items():
            assert calls[cid]["tool"] == block["name"]
            assert calls[cid]["status"] == ("failure" if outcomes[cid].get("is_error") else "success")
        parents = {e["message"]["content"][0].get("id"): e.get("parent_tool_use_id") for e in events
                   if e.get("type") == "assistant" and e["message"]["content"][0].get("type") == "tool_use"}
        for cid, parent in parents.items():
            assert calls[cid]["parent_call_id"] == parent
    elif agent == "codex":
        threads = [e for e in events if e.get("type") == "thread.started"]
        assert len(runs) == len(threads) == 1
        run = runs[0]
        assert run["session"]["session_id"] == threads[0]["thread_id"]
        messages = [e["item"]["text"] for e in events if e.get("type") == "item.completed"
                    and e["item"].get("type") == "agent_message"]
        completed = [e for e in events if e.get("type") == "turn.completed"]
        failed = [e for e in events if e.get("type") == "turn.failed"]
        assert run["status"] == ("error" if failed else "success")
        if messages:
            assert run["result"]["text"] == messages[-1]
            assert run["assistant_text"].endswith(messages[-1])
        if completed:  # each turn.completed has the thread's running total: the last is the run's (one thread)
            assert run["result"]["usage"]["input_tokens"] == completed[-1]["usage"]["input_tokens"]
            assert run["result"]["usage"]["cache_read_tokens"] == completed[-1]["usage"]["cached_input_tokens"]
        tools = {e["item"]["id"]: e["item"] for e in events if e.get("type") == "item.completed"
                 and e["item"].get("type") not in ("agent_message", "reasoning", "error")}
        calls = {c["call_id"]: c for c in run["tool_calls"]}
        assert set(calls) == set(tools)
        for cid, item in tools.items():
            # an MCP call is named by its server and tool; a sub-agent call by its collab tool
            name = {"mcp_tool_call": f"{item.get('server')}.{item.get('tool')}",
                    "collab_tool_call": item.get("tool")}.get(item["type"], item["type"])
            assert calls[cid]["tool"] == name
            code = item.get("exit_code")
            assert calls[cid]["status"] == ("failure" if code not in (None, 0) or item.get("status") == "failed"
                                            else "success")
            assert calls[cid]["duration_ms"] is None  # no times in a Codex stream: none invented on replay
        warnings = [e for e in events if e.get("type") == "item.completed" and e["item"].get("type") == "error"]
        assert sum(1 for n in run["notes"] if n["kind"] == "warning") == len(warnings)


@pytest.mark.parametrize("path", capture_params())
def test_capture_payloads_read_back(path: Path):
    """Every call's detail re-reads its agent's own lines into the canonical sections."""
    data = path.read_bytes()
    mon = Monitor(clock=lambda: 1_000_000.0, reread=lambda off, size: data[off:off + size], live=False)
    mon.feed(data)
    mon.finish()
    for run in mon.runs:
        for call in run.session.tool_calls.values():
            sections, note = call_detail(call, run.reread, agent=run.session.agent)
            assert note == ""
            assert sections, call.call_id
            if call.kind == "shell":
                assert sections[0].title == "shell" and sections[0].body[0][1]  # the command
            if call.kind == "mcp":
                assert any(s.title.startswith("content") and s.body for s in sections)
                assert any(s.title == "arguments of the MCP tool" for s in sections)


def test_claude_subagent_capture_nests_calls_and_notes():
    path = AGENTS_DIR / "claude" / "mlsys-io__lumid-identity__internal__handler__testdata__claude_stream_subagent.ndjson"
    if not path.exists():
        pytest.skip(f"capture not found at {path}")
    [run] = summaries(cw(["--summary", "--json", str(path)]).stdout)
    agent, inner, own = run["tool_calls"]
    assert (agent["tool"], agent["kind"], agent["parent_call_id"]) == ("Agent", "task", None)
    assert (inner["tool"], inner["parent_call_id"]) == ("Bash", agent["call_id"])
    assert own["parent_call_id"] is None
    # the sub-agent's text never joins the main transcript; its lifecycle lines are status lines
    assert "hello-from-subagent\nThen" not in run["assistant_text"]
    assert [n["subtype"] for n in run["notes"] if n["kind"] == "subagent"] == [
        "task_started", "subagent_prompt", "task_progress", "task_updated", "task_notification"]


# -- detection -----------------------------------------------------------------------------

def test_sniff_by_keys_not_prefix():
    assert sniff({"is_error": False, "duration_api_ms": 1, "num_turns": 1, "type": "result"}) == "claude"
    assert sniff({"type": "system", "subtype": "init", "apiKeySource": "login"}) == "cursor"
    assert sniff({"type": "system", "subtype": "init", "claude_code_version": "2.1.1"}) == "claude"
    assert sniff({"type": "system", "subtype": "hook_started", "uuid": "u"}) is None
    assert sniff({"type": "thread.started", "thread_id": "t"}) == "codex"
    assert sniff({"type": "error", "message": "Reconnecting... 2/5"}) == "codex"
    assert sniff({"type": "init", "session_id": "s", "model": "gemini"}) == "gemini"
    assert sniff({"type": "tool_call", "subtype": "started"}) == "cursor"
    assert sniff({"type": "something"}) is None


def _decode(lines: list[bytes], fmt: str = "auto") -> Monitor:
    mon = Monitor(clock=lambda: 1_000_000.0, fmt=fmt, live=False)
    mon.feed(b"".join(line + b"\n" for line in lines))
    mon.finish()
    return mon


def test_a_hook_event_after_a_result_then_a_line_that_gives_nothing_does_not_crash():
    """Held hook events (after a result, maybe the next run's) released by a line that gives no
    canonical event (an empty delta here): they stay in the run they follow, nothing raises
    (found by the typed/generic property test of tests/unit/formats/test_typed.py)."""
    mon = _decode([b'{"type":"system","subtype":"init","session_id":"s","claude_code_version":"2"}',
                   b'{"type":"result","subtype":"success","result":"","session_id":"s"}',
                   b'{"type":"system","subtype":"hook_started","hook_event":"SessionStart"}',
                   b'{"type":"stream_event","event":{"type":"content_block_delta","index":0,'
                   b'"delta":{"type":"text_delta","thinking":"a"}}}'])
    [run] = mon.runs
    assert [n.line for n in run.session.notes] == [3] and run.session.counts()["events"] == 4


def test_hook_events_before_init_are_status_lines_of_the_claude_run():
    """Hook events (from the docs' description: they can come before init) never start a run."""
    mon = _decode([b"not json: a stderr line",
                   b'{"type":"system","subtype":"hook_started","hook_name":"SessionStart:startup","hook_event":"SessionStart","uuid":"1","session_id":"s"}',
                   b'{"type":"system","subtype":"hook_response","hook_name":"SessionStart:startup","hook_event":"SessionStart","outcome":"success","exit_code":0,"uuid":"2","session_id":"s"}',
                   b'{"type":"system","subtype":"init","session_id":"s","model":"m","claude_code_version":"2.1.9","tools":[]}',
                   b'{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"hi"}]},"parent_tool_use_id":null,"session_id":"s"}',
                   b'{"type":"result","subtype":"success","is_error":false,"result":"hi","session_id":"s"}'])
    [run] = mon.runs
    s = run.session
    assert (s.agent, s.agent_version, s.status, s.assistant_text) == ("claude-code", "2.1.9", "success", "hi")
    assert [n.text for n in s.notes] == ["hook SessionStart:startup: success"]  # (one note per hook)
    assert [d.line for d in s.diagnostics] == [1]


def test_format_forced_reads_an_ambiguous_stream_as_told():
    lines = [b'{"type":"assistant","message":{"content":[{"type":"text","text":"x"}]}}']
    assert _decode(lines).session.agent == "cursor"  # undecided to the end: the model's own format
    assert _decode(lines, "claude").session.agent == "claude-code"


def test_reader_holds_items_until_decided():
    reader = Reader()
    from cursor_watch.core.decode import decode_all

    items = decode_all([b'{"type":"system","subtype":"hook_started","uuid":"1"}\n'])
    assert reader.adapt(items) == [] and reader.adapter is None
    items = decode_all([b'{"type":"stream_event","event":{"type":"message_stop"}}\n'])
    out = reader.adapt(items)
    # the hook's start (it says nothing until the hook answers), the message_stop counted with it
    assert reader.adapter.name == "claude" and [(type(e).__name__, e.natives) for e in out] == [("Silent", 2)]


def test_claude_partial_tool_without_its_assistant_line_is_still_a_call():
    """A tool_use announced by content_block_start whose whole assistant line never came (a cut
    stream) is shown with the arguments its input_json_delta pieces give."""
    mon = _decode([
        b'{"type":"system","subtype":"init","session_id":"s","claude_code_version":"2.1.9"}',
        b'{"type":"stream_event","event":{"type":"message_start","message":{"id":"m1"}},"parent_tool_use_id":null}',
        b'{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}},"parent_tool_use_id":null}',
        b'{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\\"command\\": \\"ls"}},"parent_tool_use_id":null}',
        b'{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":" -l\\"}"}},"parent_tool_use_id":null}',
    ])
    [call] = mon.session.tool_calls.values()
    assert (call.call_id, call.tool, call.summary, call.status) == ("toolu_1", "Bash", "ls -l", "incomplete")
    assert mon.session.counts()["events"] == 5


def test_typed_decoding_is_each_adapters_own():
    """The typed decoder is the Cursor adapter's fast path, and each adapter brings its
    own (Claude Code's: claude_typed, its stream_event lines): off until the format is known
    unless one is forced, then the detected adapter's (Cursor's structs are never used on
    another agent's lines: a Claude Code ``assistant`` line fits them); a Cursor typed event
    given to another agent's adapter is read as its line's dict."""
    from cursor_watch.formats import claude_typed

    cursor = b'{"type":"system","subtype":"init","session_id":"s","apiKeySource":"login"}\n'
    claude = b'{"type":"system","subtype":"init","session_id":"s","claude_code_version":"2.1.9"}\n'
    codex = b'{"type":"thread.started","thread_id":"t"}\n'
    from cursor_watch.formats import cursor_typed

    assert Monitor(fmt="cursor").decoder.typed is cursor_typed.DECODER and not Monitor().decoder.typed
    assert Monitor(fmt="claude").decoder.typed is claude_typed.DECODER
    for head, typed in ((cursor, cursor_typed.DECODER), (claude, claude_typed.DECODER), (codex, None)):
        mon = Monitor()
        mon.feed(head)
        assert mon.decoder.typed is typed
    line = (b'{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"toolu_1","name":"Bash",'
            b'"input":{"command":"ls"}}]},"parent_tool_use_id":null}\n')
    mon = Monitor(fmt="claude")
    mon.decoder.typed = cursor_typed.DECODER  # as if left on: the adapter still reads the line as Claude's
    mon.feed(claude + line)
    [call] = mon.session.tool_calls.values()
    assert (call.call_id, call.tool, call.summary) == ("toolu_1", "Bash", "ls")


def test_a_cut_stream_names_the_agents_own_last_event():
    """The end note of a run without a result names the agent's own last event and
    its line, not the canonical event an adapter made (nor one made at the end from an earlier
    line: the partial call above, released when the input ended)."""
    mon = _decode([
        b'{"type":"system","subtype":"init","session_id":"s","claude_code_version":"2.1.9"}',
        b'{"type":"stream_event","event":{"type":"message_start","message":{"id":"m1"}},"parent_tool_use_id":null}',
        b'{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}},"parent_tool_use_id":null}',
        b'{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{}"}},"parent_tool_use_id":null}',
    ])
    assert mon.session.notes[-1].text == ("stream ended without a result after 4 events; last event stream_event "
                                          "on line 4, no times recorded")
    mon = _decode([b'{"type":"thread.started","thread_id":"t"}', b'{"type":"turn.started"}',
                   b'{"type":"item.started","item":{"id":"i1","type":"command_execution","command":"ls","status":"in_progress"}}'])
    assert mon.session.notes[-1].text == ("stream ended without a result after 3 events; last event item.started "
                                          "on line 3, no times recorded")


def test_claude_permission_denial_rejects_the_call():
    """Built from Claude Code's documented result field ``permission_denials`` (no real capture has one)."""
    mon = _decode([
        b'{"type":"system","subtype":"init","session_id":"s","claude_code_version":"2.1.9"}',
        b'{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"toolu_9","name":"Write","input":{"file_path":"/etc/x","content":"y"}}]},"parent_tool_use_id":null,"session_id":"s"}',
        b'{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_9","content":"Claude requested permissions to write to /etc/x, but you haven\'t granted it yet.","is_error":true}]},"parent_tool_use_id":null,"session_id":"s"}',
        b'{"type":"result","subtype":"success","is_error":false,"result":"ok","permission_denials":[{"tool_name":"Write","tool_use_id":"toolu_9","tool_input":{"file_path":"/etc/x"}}],"session_id":"s"}',
    ])
    [call] = mon.session.tool_calls.values()
    assert (call.tool, call.kind, call.status, call.summary) == ("Write", "write", "rejected", "/etc/x")


def test_claude_permission_denial_keeps_the_tool_results_message_as_the_reason():
    """The rejected call's reason is its tool_result's own message, said once in its detail;
    a denial without a tool_result says where the rejection comes from (built from Claude Code's
    documented permission_denials and the tool_result message it writes)."""
    message = "Claude requested permissions to write to /etc/x, but you haven't granted it yet."
    data = b"".join(line + b"\n" for line in [
        b'{"type":"system","subtype":"init","session_id":"s","claude_code_version":"2.1.9"}',
        b'{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"toolu_9","name":"Write","input":{"file_path":"/etc/x","content":"y"}},{"type":"tool_use","id":"toolu_8","name":"Bash","input":{"command":"rm x"}}]},"parent_tool_use_id":null,"session_id":"s"}',
        b'{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_9","content":"' + message.encode() + b'","is_error":true}]},"parent_tool_use_id":null,"session_id":"s"}',
        b'{"type":"result","subtype":"success","is_error":false,"result":"ok","permission_denials":[{"tool_name":"Write","tool_use_id":"toolu_9","tool_input":{"file_path":"/etc/x"}},{"tool_name":"Bash","tool_use_id":"toolu_8","tool_input":{"command":"rm x"}}],"session_id":"s"}',
    ])
    mon = Monitor(clock=lambda: 1.0, reread=lambda off, size: data[off:off + size], live=False)
    mon.feed(data)
    mon.finish()
    write, bash = mon.session.tool_calls.values()
    assert (write.status, write.detail) == ("rejected", message)
    assert (bash.status, bash.detail) == ("rejected", "permission denied (the run's permission_denials)")
    sections, note = call_detail(write, mon.run.reread, agent=mon.session.agent)
    assert note == "" and not any(sec.title.startswith("outcome") for sec in sections)  # the detail above says it
    [j] = summaries(cw(["--summary", "--json"], stdin=data).stdout)
    assert [(c["status"], c["detail"]) for c in j["tool_calls"]] == [("rejected", message),
                                                                     ("rejected", bash.detail)]


def test_claude_edit_detail_has_a_diff():
    """Built from Claude Code's documented Edit input (old_string/new_string; no real capture has one)."""
    data = b"".join(line + b"\n" for line in [
        b'{"type":"system","subtype":"init","session_id":"s","claude_code_version":"2.1.9"}',
        b'{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"toolu_e","name":"Edit","input":{"file_path":"a.py","old_string":"x = 1\\n","new_string":"x = 2\\n"}}]},"parent_tool_use_id":null}',
        b'{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_e","content":"The file a.py has been updated."}]},"parent_tool_use_id":null}',
    ])
    mon = Monitor(clock=lambda: 1.0, reread=lambda off, size: data[off:off + size])
    mon.feed(data)
    mon.finish()
    [call] = mon.session.tool_calls.values()
    sections, _note = call_detail(call, mon.run.reread, agent=mon.session.agent)
    diff = next(s for s in sections if s.kind == "diff")
    assert "-x = 1" in diff.body and "+x = 2" in diff.body


def test_codex_declined_and_failed_commands_and_file_change():
    """Built from the documented Codex item shapes (status declined/failed; file_change has no diff)."""
    mon = _decode([
        b'{"type":"thread.started","thread_id":"t1"}',
        b'{"type":"turn.started"}',
        b'{"type":"item.completed","item":{"id":"item_0","type":"command_execution","command":"rm -rf /","aggregated_output":"","exit_code":null,"status":"declined"}}',
        b'{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"false","aggregated_output":"","exit_code":null,"status":"in_progress"}}',
        b'{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"false","aggregated_output":"","exit_code":1,"status":"failed"}}',
        b'{"type":"item.completed","item":{"id":"item_2","type":"file_change","changes":[{"path":"a.py","kind":"update"}],"status":"completed"}}',
        b'{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"done"}}',
        b'{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":4,"output_tokens":2}}',
        b'{"type":"turn.started"}',
        b'{"type":"item.completed","item":{"id":"item_4","type":"agent_message","text":"again"}}',
        b'{"type":"turn.completed","usage":{"input_tokens":15,"cached_input_tokens":5,"output_tokens":5}}',
    ])
    [run] = mon.runs
    calls = list(run.session.tool_calls.values())
    assert [(c.tool, c.status) for c in calls] == [("command_execution", "rejected"), ("command_execution", "failure"),
                                                  ("file_change", "success")]
    assert calls[2].summary == "a.py"
    assert run.session.result.text == "again" and run.session.status == "success"
    # each turn.completed is the thread's running total (codex-rs usage_from_last_total): the last is the run's
    assert (run.session.result.usage.input_tokens, run.session.result.usage.cache_read_tokens,
            run.session.result.usage.output_tokens) == (15, 5, 5)


def test_payloads_of_a_line_without_the_call_are_none():
    from cursor_watch.formats import call_payloads

    claude = call_payloads("claude-code", "", "x", {"type": "user", "message": {"content": "hi"}}, None)
    assert (claude.args, claude.result, claude.status) == (None, None, "running")
    gemini = call_payloads("gemini-cli", "", "b", None, None)
    assert (gemini.args, gemini.result) == (None, None)


# -- hostile input, per format ----------------------------------------------------------------

BIG = 50 * 1024 * 1024


def _hostile(agent: str) -> bytes:
    """Escapes in tool names and text, a 50 MB line, missing fields, unknown event types, bad lines."""
    esc = "\\u001b[31mred\\u001b[0m \\u202e bidi \\t tab \\u0000 nul"
    big = "x" * BIG
    if agent == "claude":
        lines = [
            '{"type":"system","subtype":"init","session_id":"s","claude_code_version":"2.1.9"}',
            '{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Bash' + esc + '","input":{"command":"echo ' + esc + '"}}]},"parent_tool_use_id":null}',
            '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"' + big + '"}]},"parent_tool_use_id":null}',
            '{"type":"assistant"}', '{"type":"assistant","message":{"content":[{"type":"tool_use"}]}}',
            '{"type":"user","message":{"content":[{"type":"tool_result"}]}}',
            '{"type":"stream_event"}', '{"type":"stream_event","event":{"type":"content_block_delta"}}',
            '{"type":"brand_new_event","x":1}', '{"type":"system","subtype":"task_started"}',
            '{"type":"assistant","message":{"id":"m2","content":[{"type":"text","text":"' + esc + '"}]}}',
            'not json at all', '[1,2]', '{"type":"result"}',
        ]
    elif agent == "gemini":
        lines = [
            '{"type":"init","timestamp":"2026-01-01T00:00:00.000Z","session_id":"g","model":"gemini-x"}',
            '{"type":"message","role":"user","content":"' + esc + '"}',
            '{"type":"tool_use","tool_name":"run_shell_command' + esc + '","tool_id":"t1","parameters":{"command":"' + esc + '"}}',
            '{"type":"tool_result","tool_id":"t1","status":"success","output":"' + big + '"}',
            '{"type":"tool_use"}', '{"type":"tool_result"}', '{"type":"message"}', '{"type":"message","content":7}',
            '{"type":"brand_new_event"}', '{"type":"error"}', 'not json', '[1]',
            '{"type":"message","role":"assistant","content":"' + esc + '","delta":true}',
            '{"type":"result","stats":"nope"}',
        ]
    else:
        lines = [
            'Reading additional input from stdin...',
            '{"type":"thread.started","thread_id":"t"}', '{"type":"turn.started"}',
            '{"type":"item.started","item":{"id":"i1","type":"command_execution","command":"' + esc + '"}}',
            '{"type":"item.completed","item":{"id":"i1","type":"command_execution","command":"x","aggregated_output":"' + big + '","exit_code":0}}',
            '{"type":"item.completed"}', '{"type":"item.completed","item":{}}', '{"type":"item.completed","item":{"type":"weird' + esc + '"}}',
            '{"type":"brand.new.event"}', '{"type":"error"}', '{"type":"turn.failed"}',
            '{"type":"item.completed","item":{"id":"i2","type":"agent_message","text":"' + esc + '"}}',
            '[1,2]', '{"type":"turn.completed","usage":"nope"}',
        ]
    return "\n".join(lines).encode() + b"\n"


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
def test_hostile_stream_never_crashes_and_save_keeps_every_byte(agent: str, tmp_path: Path):
    data = _hostile(agent)
    src = tmp_path / "in.jsonl"
    src.write_bytes(data)
    saved = tmp_path / "saved.jsonl"
    p = cw(["--summary", "--json", "--save", str(saved)], stdin=data)
    assert b"Traceback" not in p.stderr, p.stderr[-2000:]
    assert saved.read_bytes() == data
    [run] = summaries(p.stdout)
    assert run["session"]["agent"] == LABELS[agent]
    n = data.count(b"\n")
    assert run["counts"]["lines"] == n
    assert run["counts"]["events"] + run["counts"]["invalid_lines"] == n
    assert [d["line"] for d in run["diagnostics"]] == [i + 1 for i, line in enumerate(data.split(b"\n")[:-1])
                                                       if not line.startswith(b"{")]
    plain = cw(["--plain", str(src)])
    assert b"Traceback" not in plain.stderr and b"\x1b[31m" not in plain.stdout  # escapes shown escaped


def test_a_directory_of_three_agents_gives_three_runs(tmp_path: Path):
    caps = {p.parent.name: p for p in captures()}
    cursor = SAMPLES / "plain-tools.jsonl"
    if "claude" not in caps or "codex" not in caps:
        pytest.skip(f"agent captures not found at {AGENTS_DIR}")
    claude = AGENTS_DIR / "claude" / "mccorvie__TauCetiWorker__tests__fixtures__claude_stream_mcp_2_1.jsonl"
    codex = AGENTS_DIR / "codex" / "Davedat-110105__adk-harness__tests__fixtures__codex_exec_real.jsonl"
    for name, path in (("a-cursor.jsonl", cursor), ("b-claude.jsonl", claude), ("c-codex.jsonl", codex)):
        (tmp_path / name).write_bytes(path.read_bytes())
    p = cw(["--summary", "--json", str(tmp_path)])
    runs = summaries(p.stdout)
    assert [(Path(r["source"]).name, r["session"]["agent"], r["status"]) for r in runs] == [
        ("a-cursor.jsonl", "cursor", "success"), ("b-claude.jsonl", "claude-code", "success"),
        ("c-codex.jsonl", "codex", "success")]
    assert p.returncode == 0


FAKE_CLI = ROOT / "tests" / "fixtures" / "fake_agent_cli.py"


@pytest.mark.parametrize("agent,argv", [
    ("claude", ["claude", "-p", "do it", "--output-format", "stream-json", "--verbose"]),
    ("codex", ["codex", "exec", "--json", "do it"]),
])
def test_spawn_mode_with_a_fake_cli_replaying_a_real_capture(agent: str, argv: list[str], tmp_path: Path):
    caps = [p for p in captures() if p.parent.name == agent]
    if not caps:
        pytest.skip(f"agent captures not found at {AGENTS_DIR}")
    capture = max(caps, key=lambda p: p.stat().st_size)
    want = summaries(cw(["--summary", "--json", str(capture)]).stdout)
    env = ENV | {"FAKE_AGENT_CAPTURE": str(capture), "FAKE_AGENT_DELAY": "0.002"}
    p = subprocess.run([sys.executable, "-m", "cursor_watch", "--summary", "--json", "--",
                        sys.executable, str(FAKE_CLI), *argv], capture_output=True, env=env, cwd=ROOT, timeout=120)
    got = summaries(p.stdout)
    assert [r["session"]["agent"] for r in got] == [LABELS[agent]] * len(want)
    for g, w in zip(got, want, strict=True):
        assert (g["status"], g["assistant_text"], g["result"]["text"]) == (w["status"], w["assistant_text"],
                                                                            w["result"]["text"])
        assert [(c["call_id"], c["tool"], c["status"]) for c in g["tool_calls"]] == [
            (c["call_id"], c["tool"], c["status"]) for c in w["tool_calls"]]
    assert got[-1]["exit_status"] == 0
    assert p.returncode == (0 if all(r["status"] == "success" for r in got) else 1)


# Built from Gemini CLI's documentation and its event types (headless mode reference;
# packages/core/src/output/types.ts, with stats.models of v0.34.0+): no real capture exists yet
# (shared/streams/agents/gemini/).
GEMINI_FROM_DOCS = [
    b'{"type":"init","timestamp":"2026-03-01T10:00:00.000Z","session_id":"c3f1","model":"gemini-2.5-pro"}',
    b'{"type":"message","timestamp":"2026-03-01T10:00:00.010Z","role":"user","content":"List the files"}',
    b'{"type":"message","timestamp":"2026-03-01T10:00:01.000Z","role":"assistant","content":"Listing ","delta":true}',
    b'{"type":"message","timestamp":"2026-03-01T10:00:01.100Z","role":"assistant","content":"them.","delta":true}',
    b'{"type":"tool_use","timestamp":"2026-03-01T10:00:01.200Z","tool_name":"run_shell_command","tool_id":"run_shell_command-1","parameters":{"command":"ls"}}',
    b'{"type":"tool_result","timestamp":"2026-03-01T10:00:01.700Z","tool_id":"run_shell_command-1","status":"success","output":"a.py\\nb.py"}',
    b'{"type":"tool_use","timestamp":"2026-03-01T10:00:02.000Z","tool_name":"read_file","tool_id":"read_file-2","parameters":{"file_path":"/nope"}}',
    b'{"type":"tool_result","timestamp":"2026-03-01T10:00:02.100Z","tool_id":"read_file-2","status":"error","error":{"type":"FILE_NOT_FOUND","message":"File not found: /nope"}}',
    b'{"type":"error","timestamp":"2026-03-01T10:00:02.200Z","severity":"warning","message":"Loop detected"}',
    b'{"type":"message","timestamp":"2026-03-01T10:00:03.000Z","role":"assistant","content":"Two files: ","delta":true}',
    b'{"type":"message","timestamp":"2026-03-01T10:00:03.100Z","role":"assistant","content":"a.py and b.py.","delta":true}',
    b'{"type":"result","timestamp":"2026-03-01T10:00:03.200Z","status":"success","stats":{"total_tokens":120,"input_tokens":100,"output_tokens":20,"cached":40,"input":60,"duration_ms":3200,"tool_calls":2,"models":{"gemini-2.5-pro":{"total_tokens":120,"input_tokens":100,"output_tokens":20,"cached":40,"input":60}}}}',
]


def test_gemini_stream_from_the_docs(tmp_path: Path):
    data = b"".join(line + b"\n" for line in GEMINI_FROM_DOCS)
    mon = Monitor(clock=lambda: 1.0, reread=lambda off, size: data[off:off + size], live=False)
    mon.feed(data)
    mon.finish()
    [run] = mon.runs
    s = run.session
    assert (s.agent, s.session_id, s.model, s.prompt, s.status) == ("gemini-cli", "c3f1", "gemini-2.5-pro",
                                                                   "List the files", "success")
    assert [seg.text for seg in s.segments] == ["Listing them.", "Two files: a.py and b.py."]
    assert s.result.text == "Two files: a.py and b.py." and s.assistant_text.endswith(s.result.text)
    # stats.input_tokens counts the cached tokens already (canonical input); total - in - out is thinking
    assert s.result.usage == Usage(input_tokens=100, output_tokens=20, cache_read_tokens=40)
    assert s.result.model_usage == {"gemini-2.5-pro": (Usage(input_tokens=100, output_tokens=20, cache_read_tokens=40),
                                                       None)}
    assert s.result.cost_usd is None  # Gemini CLI reports no cost: none invented
    shell, read = s.tool_calls.values()
    assert (shell.tool, shell.kind, shell.status, shell.summary, shell.duration_ms) == (
        "run_shell_command", "shell", "success", "ls", 500)
    assert (read.tool, read.kind, read.status, read.detail) == ("read_file", "read", "failure", "File not found: /nope")
    assert [n.text for n in s.notes] == ["warning: Loop detected"]
    sections, _note = call_detail(shell, run.reread, agent=run.session.agent)
    assert any(sec.title == "output" and "b.py" in sec.body for sec in sections)  # (not split into stdout/stderr)
    path = tmp_path / "gemini.jsonl"
    path.write_bytes(data)
    [j] = summaries(cw(["--summary", "--json", str(path)]).stdout)
    assert j["session"]["agent"] == "gemini-cli" and j["result"]["duration_ms"] == 3200


def _mutations(value, rng, depth=0):
    """``value`` with one nested value swapped for another type (a list, a number, null...)."""
    import copy

    out = copy.deepcopy(value)
    paths = []

    def walk(v, path):
        if isinstance(v, dict):
            for k, x in v.items():
                paths.append(path + [k])
                walk(x, path + [k])
        elif isinstance(v, list):
            for i, x in enumerate(v):
                paths.append(path + [i])
                walk(x, path + [i])

    walk(out, [])
    if not paths:
        return out
    path = rng.choice(paths)
    target = out
    for k in path[:-1]:
        target = target[k]
    target[path[-1]] = rng.choice([[], {}, 7, None, "x", [1, [2]], {"a": []}, True, -1.5])
    return out


@pytest.mark.parametrize("fmt", ["claude", "codex", "gemini"])
def test_mutated_agent_events_never_crash_and_every_line_is_counted(fmt):
    """Every line of the real captures (and the Gemini stream built from its docs), one nested
    value at a time swapped for another type: no exception escapes, no line is lost."""
    import random

    rng = random.Random(19)
    sources = [p.read_bytes() for p in captures() if p.parent.name == fmt]
    if fmt == "gemini":
        sources = [b"".join(line + b"\n" for line in GEMINI_FROM_DOCS)]
    if not sources:
        pytest.skip(f"agent captures not found at {AGENTS_DIR}")
    lines = [orjson.loads(line) for data in sources for line in data.splitlines() if line.startswith(b"{")]
    for round_ in range(40):
        mutated = [_mutations(value, rng) if rng.random() < 0.5 else value for value in lines]
        data = b"".join(orjson.dumps(v) + b"\n" for v in mutated)
        mon = Monitor(clock=lambda: 1.0, fmt=fmt, live=bool(round_ % 2))
        mon.feed(data)
        mon.finish()
        counted = sum(r.session.counts()["events"] + r.session.invalid_lines for r in mon.runs)
        assert counted == len(mutated)
        for run in mon.runs:
            for call in run.session.tool_calls.values():
                call_detail(call, lambda off, size: data[off:off + size], agent=run.session.agent)


# -- token and cost budgets checked live where the agent reports usage as it goes --------


def test_claude_usage_so_far_is_checked_by_budgets_before_the_result():
    from cursor_watch.core.limits import Limits, breaches

    path = AGENTS_DIR / "claude" / "mlsys-io__lumid-identity__internal__handler__testdata__claude_stream_subagent.ndjson"
    if not path.exists():
        pytest.skip(f"agent captures not found at {AGENTS_DIR} (a user's clone has none)")
    lines = path.read_bytes().splitlines(keepends=True)
    expected: dict[str, dict] = {}  # message id -> its last usage, as the capture gives it
    monitor = Monitor(live=False)
    seen_before_result = None
    for line in lines:
        d = orjson.loads(line)
        if d.get("type") == "result":
            seen_before_result = monitor.session.usage
            over = breaches(monitor.session, Limits(max_tokens=1000))
            assert [b.budget for b in over] == ["tokens"], over  # before the result came
            # its model (claude-sonnet-5) has no price in the shipped table: no cost is invented
            assert breaches(monitor.session, Limits(max_cost_usd=0.0)) == []
        if d.get("type") == "assistant" and isinstance(d["message"].get("usage"), dict):
            expected[d["message"]["id"]] = d["message"]["usage"]
        monitor.feed(line)
    monitor.finish()
    assert seen_before_result == Usage(  # the canonical input counts the cache (Claude Code's leaves it out)
        input_tokens=sum(u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"]
                         for u in expected.values()),
        output_tokens=sum(u["output_tokens"] for u in expected.values()),
        cache_read_tokens=sum(u["cache_read_input_tokens"] for u in expected.values()),
        cache_write_tokens=sum(u["cache_creation_input_tokens"] for u in expected.values()),
    )
    # the run's own figures win once it has them: the summary reports the result's usage
    assert monitor.session.result.usage.output_tokens == 344
    assert breaches(monitor.session, Limits(max_tokens=10**9)) == []
    # a Cursor stream reports usage only in its result: nothing to check before it
    cursor = Monitor(live=False)
    for line in (SAMPLES / "plain-tools.jsonl").read_bytes().splitlines(keepends=True)[:-1]:
        cursor.feed(line)
    assert cursor.session.usage is None and breaches(cursor.session, Limits(max_tokens=1)) == []


def test_codex_usage_is_checked_by_budgets_after_each_turn():
    from cursor_watch.core.costs import total_tokens
    from cursor_watch.core.limits import Limits, breaches

    path = AGENTS_DIR / "codex" / "Davedat-110105__adk-harness__tests__fixtures__codex_exec_real.jsonl"
    if not path.exists():
        pytest.skip(f"agent captures not found at {AGENTS_DIR} (a user's clone has none)")
    lines = path.read_bytes().splitlines(keepends=True)
    per_turn = next(orjson.loads(line)["usage"] for line in lines if b'"turn.completed"' in line)
    # a run of two turns (the capture's one turn, then another): usage is known after the first
    monitor = Monitor(live=False)
    for line in lines:
        monitor.feed(line)
    one_turn = total_tokens(monitor.session.result.usage)
    assert one_turn == per_turn["input_tokens"] + per_turn["output_tokens"]  # the cached ones counted once
    limit = Limits(max_tokens=one_turn + 1)  # more than one turn used, less than two
    assert breaches(monitor.session, limit) == []
    # the second turn's turn.completed carries the thread's running total (usage_from_last_total)
    twice = {k: 2 * v for k, v in per_turn.items()}
    for line in (b'{"type":"turn.started"}\n', orjson.dumps({"type": "turn.completed", "usage": twice}) + b"\n"):
        monitor.feed(line)
    assert [b.budget for b in breaches(monitor.session, limit)] == ["tokens"]
    assert monitor.session.result.usage.output_tokens == 2 * per_turn["output_tokens"]


# -- audit of the adapters: partial messages, costs, usage, messages, denials, hooks ----------------

SUBAGENT_CAPTURE = AGENTS_DIR / "claude" / "mlsys-io__lumid-identity__internal__handler__testdata__claude_stream_subagent.ndjson"
A001_CAPTURE = AGENTS_DIR / "claude" / "dungle-scrubs__harness-cli-normalizer__test__fixtures__a001-raw.ndjson"


def test_claude_partial_tool_call_runs_from_its_content_block_start_live():
    """With --include-partial-messages a tool_use id comes first on content_block_start; the
    call is shown running from that line (live: its input streams before the whole assistant
    line), and the assistant line and the tool_result update the same call (real capture,
    fed line by line as a spawned CLI writes it)."""
    if not SUBAGENT_CAPTURE.exists():
        pytest.skip(f"capture not found at {SUBAGENT_CAPTURE} (a user's clone has none)")
    lines = SUBAGENT_CAPTURE.read_bytes().splitlines(keepends=True)
    starts = {}  # tool_use id -> (its content_block_start line, name); read here from the capture
    wholes = {}  # tool_use id -> its whole assistant line
    for n, line in enumerate(lines, 1):
        d = orjson.loads(line)
        ev = d.get("event") if d.get("type") == "stream_event" else None
        if isinstance(ev, dict) and ev.get("type") == "content_block_start" and ev["content_block"]["type"] == "tool_use":
            starts[ev["content_block"]["id"]] = (n, ev["content_block"]["name"])
        if d.get("type") == "assistant":
            for b in d["message"]["content"]:
                if b.get("type") == "tool_use":
                    wholes[b["id"]] = n
    assert starts and all(starts[cid][0] < wholes[cid] for cid in starts)  # the capture's order
    now = [1_000_000.0]
    mon = Monitor(clock=lambda: now[0], live=True)
    for n, line in enumerate(lines, 1):
        now[0] += 150.0  # 0.15 s a line
        mon.feed(line)
        for cid, (start, name) in starts.items():
            call = mon.session.tool_calls.get(cid)
            if n == start:
                assert call is not None, f"{cid} not shown after its content_block_start (line {n})"
                assert (call.tool, call.status, call.started_line) == (name, "running", start)
                assert call.started_ms == now[0]  # live: the receive time of its start
            if n == wholes[cid]:
                assert call.status == "running" and call.args  # the whole line gives the arguments
        if n in {start for start, _ in starts.values()}:
            assert mon.session.running_calls()  # tools ▶1, not idle
    mon.finish()
    calls = list(mon.session.tool_calls.values())
    assert [c.call_id for c in calls] == list(dict.fromkeys(c.call_id for c in calls))  # no duplicate
    for cid, (start, _name) in starts.items():
        call = mon.session.tool_calls[cid]
        assert (call.status, call.started_line) == ("success", start)
    assert mon.session.tool_calls["toolu_01VJSBR9G9SBvyVUQwsb9wzH"].summary == "Run echo command"  # from the whole line


def test_claude_cost_is_each_runs_share_of_the_sessions_running_total():
    """total_cost_usd and modelUsage are the session's so far (a001: three runs of one session
    report 0.0160, 0.0310, 0.0454, while each run's usage is its own): each run gets its share,
    the first run its figures as reported, and --report sums to what the session spent."""
    from cursor_watch.views.report import build_report

    if not A001_CAPTURE.exists():
        pytest.skip(f"capture not found at {A001_CAPTURE} (a user's clone has none)")
    results = [e for e in native_objects(A001_CAPTURE) if e.get("type") == "result"]
    totals = [r["total_cost_usd"] for r in results]
    assert len({r["session_id"] for r in results}) == 1 and totals == sorted(totals)  # the capture's facts
    runs = summaries(cw(["--summary", "--json", str(A001_CAPTURE)]).stdout)
    shares = [totals[0]] + [b - a for a, b in zip(totals, totals[1:])]
    assert [r["result"]["cost_usd"] for r in runs] == pytest.approx(shares)
    assert sum(r["result"]["cost_usd"] for r in runs) == pytest.approx(totals[-1], rel=1e-12)
    for run, result in zip(runs[1:], results[1:]):  # per model: the share, which matches the run's usage
        opus = run["result"]["model_usage"]["claude-opus-5[1m]"]
        u = result["usage"]  # (canonical input counts the cache: Claude Code's input_tokens leave it out)
        assert opus["input_tokens"] == u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"]
        assert opus["cache_read_tokens"] == u["cache_read_input_tokens"]
        assert run["result"]["model_usage"]["claude-haiku-4-5-20251001"]["cost_usd"] == 0.0  # not used again
    assert runs[0]["result"]["model_usage"]["claude-haiku-4-5-20251001"]["input_tokens"] == 530  # as reported
    report = build_report([str(A001_CAPTURE)])
    assert report.total.cost_reported == pytest.approx(0.0454345, rel=1e-12)
    assert report.total.cost_reported == pytest.approx(totals[-1], rel=1e-12)


def test_claude_cost_of_another_session_or_a_shrinking_total_is_as_reported():
    """Only a running total of the same session that grew is split (built from a001's shapes)."""
    def run(sid: str, cost: float) -> list[bytes]:
        return [b'{"type":"system","subtype":"init","session_id":"%s","claude_code_version":"2.1.233"}' % sid.encode(),
                b'{"is_error":false,"result":"ok","session_id":"%s","total_cost_usd":%r,"type":"result","subtype":"success",'
                b'"modelUsage":{"m":{"inputTokens":5,"costUSD":%r}}}' % (sid.encode(), cost, cost)]
    mon = _decode(run("a", 0.5) + run("b", 0.75) + run("a", 0.625) + run("a", 0.25))
    assert [r.session.result.cost_usd for r in mon.runs] == [0.5, 0.75, 0.125, 0.25]
    assert [r.session.result.model_usage["m"][0].input_tokens for r in mon.runs] == [5, 5, 0, 5]


SPLIT_TEXT = ROOT / "tests" / "streams" / "agents" / "claude-split-text-blocks.ndjson"


def test_claude_text_blocks_of_one_message_are_one_segment():
    """Several assistant lines sharing one message.id, each with a text block, are one message:
    one segment with the blocks' text concatenated (as Claude Code's result joins them;
    anthropics/claude-code#78686). A tool_use of the message or another message begins the next.
    ``tests/streams/agents/claude-split-text-blocks.ndjson`` is built from the real captures'
    line shapes (mlsys-io sub-agent capture, 2.1.220): not a capture itself."""
    lines = SPLIT_TEXT.read_bytes().splitlines(keepends=True)
    mon = Monitor(clock=lambda: 1.0, live=True)
    mon.feed(b"".join(lines[:2]))
    [seg] = mon.session.segments
    assert (seg.text, seg.closed) == ("Checking ", False)  # live: the message may go on
    mon.feed(lines[2])
    [seg] = mon.session.segments
    assert seg.text == "Checking the files."
    mon.feed(b"".join(lines[3:]))
    mon.finish()
    s = mon.session
    assert [g.text for g in s.segments] == ["Checking the files.", "Two files: a.py and b.py."]
    assert all(g.closed for g in s.segments)
    assert s.result.text == "Two files: a.py and b.py." and s.assistant_text.endswith(s.result.text)
    assert [kind for kind, _key in s.timeline] == ["segment", "tool", "segment"]
    # the same message with partial messages: the deltas and the whole lines give one segment
    # too, and a new message's deltas never join the last one's open segment
    def delta(text: str) -> bytes:
        return orjson.dumps({"type": "stream_event", "event": {"type": "content_block_delta", "index": 0,
                             "delta": {"type": "text_delta", "text": text}}, "parent_tool_use_id": None})
    start = [orjson.dumps({"type": "stream_event", "event": {"type": "message_start", "message": {"id": mid}},
                           "parent_tool_use_id": None}) for mid in ("msg_01A", "msg_01C")]
    partial = [lines[0].rstrip(), start[0], delta("Checking "), lines[1].rstrip(), delta("the "), delta("files."),
               lines[2].rstrip(), start[1], delta("Again."),
               b'{"type":"result","subtype":"success","is_error":false,"result":"Again.","session_id":"s"}']
    s = _decode(partial, "claude").session
    assert [g.text for g in s.segments] == ["Checking the files.", "Again."]


def test_claude_hook_events_between_a_result_and_the_next_init_begin_the_next_run():
    """SessionStart hooks fire before their run's init (Claude Code's docs; the hook line shapes
    of the test above): after run 1's result they are run 2's start, whatever the batches; hooks
    after the last result (nothing follows) stay in the run they follow. Counts stay whole."""
    def hook(st: str, n: int) -> bytes:
        extra = b',"outcome":"success","exit_code":0' if st == "hook_response" else b""
        return (b'{"type":"system","subtype":"%s","hook_name":"SessionStart:resume","hook_event":"SessionStart",'
                b'"uuid":"h%d","session_id":"s"%s}' % (st.encode(), n, extra))

    def run(n: int) -> list[bytes]:
        return [b'{"type":"system","subtype":"init","session_id":"s","model":"m","claude_code_version":"2.1.9","tools":[]}',
                b'{"type":"assistant","message":{"id":"m%d","content":[{"type":"text","text":"hi %d"}]},"parent_tool_use_id":null,"session_id":"s"}' % (n, n),
                b'{"type":"result","subtype":"success","is_error":false,"result":"hi %d","session_id":"s"}' % n]
    lines = run(1) + [hook("hook_started", 1), hook("hook_response", 2)] + run(2) + [hook("hook_started", 3)]
    data = b"".join(line + b"\n" for line in lines)
    for chunks in ([data], [line + b"\n" for line in lines]):  # one batch; a line at a time (live)
        mon = Monitor(clock=lambda: 1.0, live=False)
        for chunk in chunks:
            mon.feed(chunk)
        mon.finish()
        one, two = mon.runs
        assert [n.line for n in one.session.notes] == []
        assert [(n.line, n.text) for n in two.session.notes] == [  # one note per hook
            (5, "hook SessionStart:resume: success"), (9, "hook SessionStart:resume: started, no response")]
        assert (one.first_line, one.last_line, two.first_line) == (1, 3, 4)
        assert one.end_offset == two.first_offset == data.index(lines[3])
        assert one.session.counts()["events"] == one.session.lines == 3
        assert two.session.counts()["events"] == two.session.lines == 6
    [j1, j2] = summaries(cw(["--summary", "--json"], stdin=data).stdout)
    assert (j1["counts"]["lines"], j1["counts"]["events"], j2["counts"]["lines"], j2["counts"]["events"]) == (3, 3, 6, 6)
    assert [n["line"] for n in j2["notes"]] == [5, 9] and j1["notes"] == []


def test_codex_todo_list_shows_its_final_state():
    """A todo_list item changes over item.updated events; its item.completed holds the final list
    (built from the documented Codex item shapes: items of {text, completed})."""
    def todo(kind: str, done: tuple[bool, bool]) -> bytes:
        return orjson.dumps({"type": kind, "item": {"id": "item_1", "type": "todo_list", "items": [
            {"text": "write the test", "completed": done[0]}, {"text": "fix the bug", "completed": done[1]}]}})
    data = b"".join(line + b"\n" for line in [
        b'{"type":"thread.started","thread_id":"t"}', b'{"type":"turn.started"}',
        todo("item.started", (False, False)), todo("item.updated", (True, False)), todo("item.completed", (True, True)),
        b'{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1}}'])
    mon = Monitor(clock=lambda: 1.0, reread=lambda off, size: data[off:off + size], live=False)
    mon.feed(data)
    mon.finish()
    [call] = mon.session.tool_calls.values()
    assert (call.tool, call.status, call.summary) == ("todo_list", "success", "2 todos: 2 completed")
    assert mon.session.counts()["events"] == 6
    sections, _note = call_detail(call, mon.run.reread, agent=mon.session.agent)
    assert sections[0].body == [("completed", "write the test"), ("completed", "fix the bug")]


# -- behaviours that worked untested ----------------------------------------------------------

def test_claude_thinking_tokens_and_compact_boundary_are_status_lines():
    """system/thinking_tokens, system/compact_boundary and the status line after a compaction
    (shapes of untether's real 2.1.285 captures) are worded status lines of the run: not a new
    run, not unknown events."""
    mon = _decode([
        b'{"type":"system","subtype":"init","session_id":"s","claude_code_version":"2.1.285"}',
        b'{"type":"system","subtype":"thinking_tokens","estimated_tokens":157,"estimated_tokens_delta":107,"session_id":"s","uuid":"7f"}',
        b'{"type":"system","subtype":"compact_boundary","compact_metadata":{"trigger":"auto","pre_tokens":101873},"session_id":"s","uuid":"c1"}',
        b'{"type":"system","subtype":"status","status":null,"compact_result":"success","session_id":"s","uuid":"c2"}',
        b'{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s"}',
    ])
    [run] = mon.runs
    s = run.session
    assert [(n.subtype, n.text) for n in s.notes] == [
        ("thinking_tokens", "thinking: ~157 tokens so far (estimated)"),
        ("compact_boundary", "context compacted (auto, 101,873 tokens before)"),
        ("status", "status: compaction success")]
    assert not s.unknown and s.status == "success" and s.counts()["events"] == 5


@pytest.mark.parametrize("subtype", ["error_max_turns", "error_during_execution"])
def test_claude_error_result_subtypes_are_errors_and_exit_1(subtype: str):
    """A result whose subtype is error_* is an error run (exit 1), even with is_error false
    (Claude Code's documented result subtypes; no real capture has one)."""
    data = b"".join(line + b"\n" for line in [
        b'{"type":"system","subtype":"init","session_id":"s","claude_code_version":"2.1.9"}',
        b'{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"working"}]},"parent_tool_use_id":null,"session_id":"s"}',
        b'{"type":"result","subtype":"%s","is_error":false,"num_turns":15,"duration_ms":900,"session_id":"s","total_cost_usd":0.5,"errors":["stopped"]}' % subtype.encode(),
    ])
    p = cw(["--summary", "--json"], stdin=data)
    [run] = summaries(p.stdout)
    assert (run["status"], run["result"]["subtype"], run["result"]["is_error"]) == ("error", subtype, True)
    assert "errors: stopped" in [n["text"] for n in run["notes"]]
    assert p.returncode == 1


def test_codex_retry_notice_then_turn_completed_is_a_success():
    """A top-level error (a retry notice, as in the pagehub capture) is a status line; the turn
    that completes after it makes the run a success (exit 0)."""
    data = b"".join(line + b"\n" for line in [
        b'{"type":"thread.started","thread_id":"t"}', b'{"type":"turn.started"}',
        b'{"type":"error","message":"Reconnecting... 2/5 (stream disconnected before completion)"}',
        b'{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"done"}}',
        b'{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":2}}',
    ])
    p = cw(["--summary", "--json"], stdin=data)
    [run] = summaries(p.stdout)
    assert (run["status"], run["result"]["text"]) == ("success", "done")
    assert [(n["kind"], n["text"]) for n in run["notes"] if n["subtype"] == "error"] == [
        ("retry", "retry: Reconnecting... 2/5 (stream disconnected before completion)")]
    assert p.returncode == 0


def test_codex_file_change_detail_says_there_is_no_diff_and_lists_the_files():
    """Codex's file_change item has changes of {path, kind} and no diff (documented item shape)."""
    data = b"".join(line + b"\n" for line in [
        b'{"type":"thread.started","thread_id":"t"}', b'{"type":"turn.started"}',
        b'{"type":"item.completed","item":{"id":"item_1","type":"file_change","changes":[{"path":"a.py","kind":"update"},{"path":"b.py","kind":"add"}],"status":"completed"}}',
        b'{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1}}',
    ])
    mon = Monitor(clock=lambda: 1.0, reread=lambda off, size: data[off:off + size], live=False)
    mon.feed(data)
    mon.finish()
    [call] = mon.session.tool_calls.values()
    assert (call.tool, call.kind, call.status, call.summary) == ("file_change", "edit", "success", "a.py, b.py")
    sections, note = call_detail(call, mon.run.reread, agent=mon.session.agent)
    edit = next(sec for sec in sections if sec.title == "edit")  # the files and what happened to each
    assert note == "" and edit.body == [("path", "a.py, b.py"), ("update", "a.py"), ("add", "b.py")]
    assert not any(sec.kind == "diff" for sec in sections)  # the stream gives none: none is made up


# Codex: the command's output is labelled as what it is; an error item is never an error

def test_codex_command_output_is_labelled_output_not_stdout():
    """``aggregated_output`` is stdout and stderr together (codex-rs exec_events.rs)."""
    from cursor_watch.stream.payloads import call_detail

    s = replayed(CODEX_REAL)
    call = s.tool_calls.at(1)
    sections, _ = call_detail(call, lambda o, n: CODEX_REAL.read_bytes()[o:o + n], raw=False, agent=s.agent)
    fields = [label for sec in sections if sec.kind == "fields" for label, _v in sec.body]
    titles = [sec.title for sec in sections]
    assert "stdout" not in fields + titles, (fields, titles)
    assert any("output" in t for t in titles + fields), (fields, titles)


def test_codex_error_items_are_warnings_and_a_reroute_a_notice():
    from cursor_watch.stream.watch import Monitor

    lines = [{"type": "thread.started", "thread_id": "t0"},
             {"type": "item.completed", "item": {"id": "item_0", "type": "error",
                                                 "message": "model rerouted: gpt-5.5 -> gpt-5.5-mini (HighRiskCyberActivity)"}},
             {"type": "item.completed", "item": {"id": "item_1", "type": "error",
                                                 "message": "Falling back from WebSockets to HTTPS transport"}},
             {"type": "turn.completed", "usage": {"input_tokens": 1, "cached_input_tokens": 0, "output_tokens": 1}}]
    mon = Monitor(live=False)
    mon.feed(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    mon.finish()
    notes = [(n.kind, n.text) for n in mon.session.notes]
    assert ("model", "model rerouted: gpt-5.5 -> gpt-5.5-mini (HighRiskCyberActivity)") in notes, notes
    assert ("warning", "warning: Falling back from WebSockets to HTTPS transport") in notes, notes
    assert not any(k == "error" or t.startswith("warning: model rerouted") for k, t in notes), notes
    assert mon.session.model == "gpt-5.5-mini"


def test_cursor_task_call_is_one_call_with_what_the_sub_agent_said():
    """Cursor's taskToolCall (the one real one: rogazth/crew cursor-tools.jsonl) carries the
    sub-agent's messages in result.success.conversationSteps and no inner events: one call, no
    parent links, its detail shows the sub-agent's text (docs/formats.md, Cursor)."""
    path = ROOT.parent / "shared" / "streams" / "real" / "rogazth__crew__crates__crew-core__tests__fixtures__protocols__cursor-tools.jsonl"
    if not path.exists():
        pytest.skip(f"capture not found at {path} (a user's clone has none)")
    data = path.read_bytes()
    steps = [orjson.loads(line)["tool_call"]["taskToolCall"]["result"]["success"]["conversationSteps"]
             for line in data.splitlines() if b"taskToolCall" in line]
    mon = Monitor(clock=lambda: 1.0, reread=lambda off, size: data[off:off + size], live=False)
    mon.feed(data)
    mon.finish()
    s = mon.session
    [task] = [c for c in s.tool_calls.values() if c.kind == "task"]
    assert not any(c.parent_call_id for c in s.tool_calls.values()) and s.subagent_calls == 0
    sections, _note = call_detail(task, mon.run.reread, agent=mon.session.agent)
    said = next(sec for sec in sections if sec.title == "sub-agent said")
    assert said.body == steps[0][0]["assistantMessage"]["text"]


def test_claude_synthetic_user_message_is_a_status_line_not_the_prompt():
    """After an auto-compaction Claude Code writes the summary as a user line with isSynthetic
    (untether's real 2.1.285 capture): it is not the run's prompt."""
    mon = _decode([
        b'{"type":"system","subtype":"init","session_id":"s","claude_code_version":"2.1.285"}',
        b'{"type":"user","message":{"role":"user","content":[{"type":"text","text":"This session is being continued from a previous conversation"}]},"parent_tool_use_id":null,"session_id":"s","uuid":"b9","isSynthetic":true}',
        b'{"type":"result","subtype":"success","is_error":false,"result":"901","session_id":"s"}',
    ])
    s = mon.session
    assert s.prompt is None
    assert [(n.subtype, n.text) for n in s.notes] == [
        ("synthetic_user", "synthetic user message: This session is being continued from a previous conversation")]


def test_claude_running_usage_is_the_sum_of_each_messages_latest_usage():
    """The tokens-so-far the Claude Code adapter reports (the live budgets, a
    UsageUpdate) are each message's latest usage summed per kind (integers only), over the run;
    kept as running sums, they equal summing every message again (random message ids, updates,
    odd values, inits)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from cursor_watch.core.canonical import UsageUpdate
    from cursor_watch.core.decode import Event
    from cursor_watch.formats.claude import ClaudeAdapter, usage_of

    value = st.one_of(st.integers(0, 10**6), st.integers(0, 10**6), st.booleans(), st.none(), st.sampled_from(["7", 1.5]))
    usage = st.fixed_dictionaries({}, optional={"input_tokens": value, "output_tokens": value,
                                                "cache_read_input_tokens": value, "cache_creation_input_tokens": value,
                                                "output_tokens_details": st.fixed_dictionaries({"thinking_tokens": value})})
    step = st.one_of(st.tuples(st.sampled_from(["m1", "m2", "m3", ""]), usage), st.just(("init", None)))

    @settings(max_examples=200, deadline=None)
    @given(st.lists(step, max_size=30))
    def check(steps):
        adapter = ClaudeAdapter()
        latest: dict = {}
        for n, (mid, u) in enumerate(steps, 1):
            if mid == "init":
                data = {"type": "system", "subtype": "init", "session_id": "s"}
                adapter.adapt([Event(data, n, 0, 1)], None)
                latest.clear()
                continue
            data = {"type": "assistant", "message": {"id": mid, "content": [{"type": "text", "text": "x"}], "usage": u}}
            marked = [e for e in adapter.adapt([Event(data, n, 0, 1)], None) if isinstance(e, UsageUpdate)]
            latest[mid or f"(line {n})"] = usage_of(u)
            kinds = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens")
            want = {}
            for k in kinds:  # the canonical values summed where known (None where no message gave one)
                values = [getattr(x, k) for x in latest.values() if getattr(x, k) is not None]
                want[k] = sum(values) if values else None
            assert len(marked) == 1
            assert {k: getattr(marked[0].usage, k) for k in kinds} == want

    check()


@pytest.mark.parametrize("path", capture_params())
def test_a_paced_replay_counts_the_agents_own_events_as_a_plain_read(path: Path):
    """--speed applies the adapted items one by one (Monitor.items, Monitor.apply): each run
    counts the agent's own events as a batch read does (a source's first init, which begins
    no run, used to leave its segment's correction unapplied: the ailang capture counted 35
    events of 187)."""
    raw = path.read_bytes()
    batch = Monitor(clock=lambda: 1_000_000.0, live=False)
    batch.feed(raw)
    batch.finish()
    paced = Monitor(clock=lambda: 1_000_000.0, live=False)
    for item in paced.items(raw):
        paced.apply(item)
    paced.finish()
    assert [r.session.counts() for r in paced.runs] == [r.session.counts() for r in batch.runs]


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_fields_of_every_wrong_type_never_fail_a_type_check(agent):
    """Every field of the lines the Claude Code or Codex adapter reads replaced by a value of each
    JSON type (or deleted; integers beyond 64 bits too): each line is read (an event or a
    diagnostic), every call's detail re-read, and every run written by ``--summary --json``,
    without a type check of the compiled adapter failing (CompiledTypeError: it would stop a
    watch with exit 70). tests/e2e/test_build.py compares the two builds' outputs on such streams."""
    from claude_hostile import hostile_stream as claude_stream
    from codex_hostile import hostile_stream as codex_stream

    data = {"claude": claude_stream, "codex": codex_stream}[agent]()
    mon = Monitor(clock=lambda: 1_000_000.0, fmt=agent, reread=lambda off, size: data[off:off + size], live=False)
    mon.feed(data)
    mon.finish()
    counts = [run.session.counts() for run in mon.runs]
    assert sum(c["events"] + c["invalid_lines"] for c in counts) == data.count(b"\n")
    calls = 0
    for run in mon.runs:
        for call in run.session.tool_calls.values():
            call_detail(call, run.reread, agent=run.session.agent)
            calls += 1
    assert calls > len(mon.runs)
    pieces: list[bytes] = []
    write_summaries(mon.runs, pieces.append)
    assert len(b"".join(pieces).splitlines()) == len(mon.runs)  # one line (object) per run


# -- notes: rate limits, hooks, MCP servers --------------------------------------------------------

SUNHOLO = CLAUDE_PARTIAL  # the names these tests give two captures named before
A001 = A001_CAPTURE
COMPACTION = AGENTS_DIR / "claude" / "shane-kercheval__switchboard__crates__harness__tests__fixtures__claude__compaction-success.jsonl"


def notes_of(data: bytes, tmp_path: Path, tz: str = "UTC") -> list[dict]:
    f = tmp_path / "run.jsonl"
    f.write_bytes(data)
    p = cw(["--summary", "--json", str(f)], env={**ENV, "TZ": tz})
    assert p.returncode in (0, 1), p.stderr
    return orjson.loads(p.stdout)["notes"]


def test_a_rate_limit_says_its_reset_in_local_time_and_how_soon(tmp_path):
    """``resetsAt`` (epoch seconds) in the machine's time zone and "in 12 min" after the event
    (its time: the run's last stream time, the event has none); ``utilization`` as a percent."""
    info = {"status": "allowed_warning", "resetsAt": 1_795_773_600 + 12 * 60, "rateLimitType": "five_hour",
            "utilization": 0.91, "isUsingOverage": False}
    data = claude_init() + claude_text("hi") + line(type="rate_limit_event", rate_limit_info=info, session_id="s1")
    tokyo = [n["text"] for n in notes_of(data, tmp_path, "Asia/Tokyo") if n["kind"] == "rate_limit"]
    assert tokyo == ["rate limit: allowed_warning (five_hour, 91 % used, resets 19:12 JST, in 12 min)"]
    utc = [n["text"] for n in notes_of(data, tmp_path, "UTC") if n["kind"] == "rate_limit"]
    assert utc == ["rate limit: allowed_warning (five_hour, 91 % used, resets 10:12 UTC, in 12 min)"]
    # no time known before it (a replay, right after the init): the date, no "in"
    data = claude_init() + line(type="rate_limit_event", rate_limit_info=info, session_id="s1")
    assert [n["text"] for n in notes_of(data, tmp_path) if n["kind"] == "rate_limit"] == \
        ["rate limit: allowed_warning (five_hour, 91 % used, resets 2026-11-27 10:12 UTC)"]


@needs_streams
def test_a_rate_limit_reads_its_window_from_unified_windows():
    """The compaction-success capture has no ``utilization`` beside ``status``: its five-hour
    window's is in ``unifiedWindows`` (12 %)."""
    out = cw(["--plain", str(COMPACTION)]).stdout.decode()
    assert "· rate limit: allowed (five_hour, 12 % used, resets 2026-09-17 02:00 UTC)" in out
    assert "resetsAt=" not in out and "1789610400" not in out


@needs_streams
def test_hooks_fold_into_one_note_each_with_their_output_as_detail():
    """sunholo's capture: four SessionStart hooks start, then answer (each by its hook_id): four
    notes, not eight, each with its outcome and output."""
    s = orjson.loads(cw(["--summary", "--json", str(SUNHOLO)]).stdout)
    hooks = [n for n in s["notes"] if n["kind"] == "hook"]
    assert [(n["text"], n.get("detail")) for n in hooks] == \
        [("hook SessionStart:startup: success", "[trimmed for fixture]")] * 4
    plain = cw(["--plain", str(SUNHOLO)]).stdout.decode()
    assert plain.count("· hook SessionStart:startup: success\n    [trimmed for fixture]\n") == 4
    assert "started" not in plain.split("claude 2.1.270")[0]


def test_a_failed_hook_says_its_exit_code_and_its_output_and_one_that_never_answers_says_so(tmp_path):
    stdout = "\n".join(f"line {n}" for n in range(1, 15))
    data = (claude_init()
            + line(type="system", subtype="hook_started", hook_id="h1", hook_name="PreToolUse:Bash", hook_event="PreToolUse",
                   session_id="s1")
            + line(type="system", subtype="hook_response", hook_id="h1", hook_name="PreToolUse:Bash",
                   hook_event="PreToolUse", output=stdout + "\nno", stdout=stdout, stderr="no", exit_code=2,
                   outcome="error", session_id="s1")
            + line(type="system", subtype="hook_started", hook_id="h2", hook_name="Stop", hook_event="Stop",
                   session_id="s1"))
    notes = [n for n in notes_of(data, tmp_path) if n["kind"] == "hook"]
    assert [n["text"] for n in notes] == ["hook PreToolUse:Bash: error (exit 2)", "hook Stop: started, no response"]
    assert notes[0]["detail"] == f"stdout:\n{stdout}\nstderr:\nno"
    f = tmp_path / "run.jsonl"
    plain = cw(["--plain", str(f)]).stdout.decode()
    assert "· hook PreToolUse:Bash: error (exit 2)\n    stdout:\n    line 1\n" in plain
    assert "    … 7 more lines (--summary --json has them all)\n" in plain  # 17 lines, 10 shown


@needs_streams
def test_mcp_servers_not_connected_are_a_note_and_all_are_in_the_header_and_the_json():
    s = orjson.loads(cw(["--summary", "--json", str(A001)]).stdout.splitlines()[0])
    assert s["session"]["mcp_servers"] == [{"name": "claude.ai Google Calendar", "status": "needs-auth"},
                                           {"name": "claude.ai Gmail", "status": "needs-auth"},
                                           {"name": "claude.ai Google Drive", "status": "needs-auth"}]
    assert {"line": 1, "kind": "mcp", "subtype": "mcp_servers",
            "text": "MCP servers not connected: claude.ai Google Calendar (needs-auth), claude.ai Gmail (needs-auth), "
                    "claude.ai Google Drive (needs-auth)"} in s["notes"]
    plain = cw(["--plain", str(CLAUDE_MCP)]).stdout.decode()
    assert plain.splitlines()[0].endswith("(permission bypassPermissions, MCP lean_beam)")  # connected: no note
    assert "MCP servers not connected" not in plain
    summary = cw(["--summary", str(A001)], env={**ENV, "COLUMNS": "300"}).stdout.decode()
    assert "MCP claude.ai Google Calendar (needs-auth), claude.ai Gmail (needs-auth)" in summary.splitlines()[1]
