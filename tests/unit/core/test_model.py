"""The session model on real captures, on our samples, and on each format rule."""

from __future__ import annotations

import orjson
import pytest

from conftest import EDITED_FIXTURES, SAMPLES, real_params, run_bytes, run_file

from cursor_watch.core.canonical import Usage
from cursor_watch.core.model import _CALL_FIELDS

# Expected tool statuses on the real captures, in order of first appearance (read
# off each capture by hand: outcome keys and exit codes).
REAL_STATUSES = {
    "cagase__dsh-cursor__fixtures__live__stream-json-force.jsonl": [("shell", "success")],
    "dungle-scrubs__harness-cli-normalizer__test__fixtures__cursor-2026.09.15-d2fe57e__probe-15s.ndjson": [
        ("shell", "rejected"), ("shell", "rejected"), ("webFetch", "rejected")],
    "reifying__cursor-hack__experiments__direct-sleep.jsonl": [("shell", "success"), ("shell", "success")],
    "reifying__cursor-hack__experiments__parallel-sleep.jsonl": [("shell", "success"), ("shell", "success")],
    "reifying__cursor-hack__experiments__subagent-sleep-v2.jsonl": [("shell", "success")],
    "reifying__cursor-hack__experiments__subagent-sleep.jsonl": [("shell", "success")],
    "reifying__cursor-hack__internal__events__testdata__full_session.jsonl": [("shell", "success")],
    "rogazth__crew__crates__crew-core__tests__fixtures__protocols__cursor-tools.jsonl": [
        ("getMcpTools", "success"), ("glob", "success"), ("grep", "success"), ("read", "success"),
        ("updateTodos", "success"), ("shell", "failure"), ("webFetch", "success"), ("edit", "success"),
        ("edit", "success"), ("task", "success")],
    "s1rne__agentkit__test__fixtures__cursor.stream.jsonl": [],
    "saurabh7481__maestro__src-tauri__tests__fixtures__cursor__01_simple_no_tool.jsonl": [],
    "saurabh7481__maestro__src-tauri__tests__fixtures__cursor__02_shell_tool_call.jsonl": [("shell", "success")],
    "saurabh7481__maestro__src-tauri__tests__fixtures__cursor__03_edit_tool_call.jsonl": [("edit", "success")],
    "saurabh7481__maestro__src-tauri__tests__fixtures__cursor__04_partial_output.jsonl": [("shell", "success")],
    "saurabh7481__maestro__src-tauri__tests__fixtures__cursor__05_rejected_shell.jsonl": [
        ("shell", "rejected"), ("shell", "rejected")],
}


@pytest.mark.parametrize("path", real_params())
def test_real_capture_text_statuses_and_counts(path):
    lines = [l for l in path.read_bytes().split(b"\n") if l.strip()]
    events = [orjson.loads(l) for l in lines]
    s = run_file(path).session
    result = next((e for e in events if e.get("type") == "result"), None)
    if result is not None and path.name not in EDITED_FIXTURES:
        assert s.assistant_text == result["result"]
        assert s.status == ("error" if result.get("is_error") else "success")
    if result is None:
        assert s.status == "incomplete"
    if path.name in REAL_STATUSES:
        assert [(c.tool, c.status) for c in s.tool_calls.values()] == REAL_STATUSES[path.name]
    call_ids = list(dict.fromkeys(e["call_id"] for e in events if e.get("type") == "tool_call"))
    assert list(s.tool_calls) == call_ids
    assert s.counts() == {
        "lines": len(lines), "events": len(events), "invalid_lines": 0, "unknown_events": 0,
        "tool_calls": len(call_ids),
    }
    init = events[0]
    assert s.session_id == init["session_id"]
    if init["type"] == "system":
        assert (s.model, s.cwd, s.permission_mode) == (init["model"], init["cwd"], init["permissionMode"])


@pytest.mark.parametrize("path", real_params())
def test_real_capture_same_model_in_any_chunking(path):
    whole = run_file(path).session
    for chunk in (1, 7, 4096):
        s = run_file(path, chunk).session
        assert s.assistant_text == whole.assistant_text
        assert [(c.call_id, c.status, c.duration_ms) for c in s.tool_calls.values()] == [
            (c.call_id, c.status, c.duration_ms) for c in whole.tool_calls.values()]


SAMPLE_EXPECT = {
    "plain-tools": (861, 7, [("read", "success"), ("grep", "success"), ("shell", "failure"), ("edit", "success"),
                             ("shell", "success"), ("updateTodos", "success")], "success"),
    "partial-output": (384, 2, [("shell", "success")], "success"),
    "parallel-failed-rejected": (769, 6, [("shell", "success"), ("shell", "success"), ("shell", "success"),
                                          ("shell", "rejected"), ("webFetch", "rejected"), ("webSearch", "rejected"),
                                          ("read", "failure")], "success"),
    "failed-no-result": (46, 1, [("shell", "incomplete")], "incomplete"),
    "partial-interaction": (364, 2, [("askQuestion", "rejected")], "success"),
}


@pytest.mark.parametrize("name", sorted(SAMPLE_EXPECT))
def test_samples(name):
    length, n_segments, statuses, status = SAMPLE_EXPECT[name]
    path = SAMPLES / f"{name}.jsonl"
    s = run_file(path).session
    assert len(s.assistant_text) == length
    assert len(s.segments) == n_segments
    assert [(c.tool, c.status) for c in s.tool_calls.values()] == statuses
    assert s.status == status
    if s.result is not None:
        assert s.assistant_text == s.result.text


def test_failed_sample_counts_the_text_line():
    s = run_file(SAMPLES / "failed-no-result.jsonl").session
    assert s.invalid_lines == 1
    assert s.diagnostics[0].line == 18 and "Error: ConnectError" in s.diagnostics[0].message
    assert [n.kind for n in s.notes].count("retry") == 3


# -- assistant text rules (stream-json-reference.md 2.3) ------------------------

SID = "s"


def ev(**kw) -> bytes:
    kw.setdefault("session_id", SID)
    return orjson.dumps(kw) + b"\n"


def asst(text, ts=None, mcid=None) -> bytes:
    d = {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}}
    if ts is not None:
        d["timestamp_ms"] = ts
    if mcid is not None:
        d["model_call_id"] = mcid
    return ev(**d)


def tool(sub, cid, variant="shellToolCall", args=None, result=None, ts=None, **siblings) -> bytes:
    body = {}
    if args is not None:
        body["args"] = args
    if result is not None:
        body["result"] = result
    d = {"type": "tool_call", "subtype": sub, "call_id": cid, "tool_call": {variant: body, **siblings}}
    if ts is not None:
        d["timestamp_ms"] = ts
    return ev(**d)


def result(text, is_error=False) -> bytes:
    return ev(type="result", subtype="error" if is_error else "success", is_error=is_error, result=text,
              duration_ms=10, duration_api_ms=10)


def test_repeated_tokens_are_kept():
    data = asst("```", 1) + asst("```", 2) + asst("-", 3) + asst("-", 4) + asst("``````--") + result("``````--")
    s = run_bytes(data).session
    assert s.assistant_text == "``````--"


def test_delta_equal_to_pending_followed_by_delta_is_real():
    data = asst("ab", 1) + asst("ab", 2) + asst("c", 3) + asst("ababc") + result("ababc")
    assert run_bytes(data).session.assistant_text == "ababc"


def test_partial_resend_before_interaction_query_counted_once():
    q = ev(type="interaction_query", subtype="request", query_type="askQuestionInteractionQuery",
           query={"id": 0, "askQuestionInteractionQuery": {"args": {"title": "Pick"}}}, timestamp_ms=5)
    r = ev(type="interaction_query", subtype="response", query_type="askQuestionInteractionQuery",
           response={"id": 0, "askQuestionInteractionResponse": {"result": {"rejected": {"reason": "skipped"}}}},
           timestamp_ms=5)
    data = asst("Let me ", 1) + asst("ask.", 2) + asst("Let me ask.", 3) + q + r + asst("Done", 6) + asst("Done") + result("Let me ask.Done")
    s = run_bytes(data).session
    assert s.assistant_text == "Let me ask.Done"
    assert [seg.text for seg in s.segments] == ["Let me ask.", "Done"]
    assert [n.kind for n in s.notes] == ["interaction_query", "interaction_query"]
    assert "rejected" in s.notes[1].text


def test_non_partial_resend_is_the_only_copy():
    q = ev(type="interaction_query", subtype="request", query_type="webSearchRequestQuery",
           query={"id": 0, "webSearchRequestQuery": {"args": {"searchTerm": "x", "toolCallId": "c1"}}}, timestamp_ms=2)
    data = (asst("Searching.", 1) + q + tool("completed", "c1", "webSearchToolCall", {"searchTerm": "x"},
            {"rejected": {"reason": "User Rejected"}}, ts=3) + asst("No luck.") + result("Searching.No luck."))
    s = run_bytes(data).session
    assert s.assistant_text == "Searching.No luck."
    assert s.tool_calls["c1"].status == "rejected"


def test_flush_before_tool_is_a_duplicate_in_partial_mode_and_the_only_copy_otherwise():
    partial = asst("Run", 1) + asst("ning.", 2) + asst("Running.", 3, "r-0-ab") + tool("started", "c", args={"command": "ls"}, ts=3)
    plain = asst("Running.", 3, "r-0-ab") + tool("started", "c", args={"command": "ls"}, ts=3)
    for data in (partial, plain):
        s = run_bytes(data + result("Running.")).session
        assert s.assistant_text == "Running."
        assert len(s.segments) == 1 and s.segments[0].closed


def test_segments_are_split_by_tool_calls_without_separator():
    data = (asst("A.", 1, "r-0-x") + tool("started", "c", args={"command": "ls"}, ts=1)
            + tool("completed", "c", result={"success": {"exitCode": 0}}, ts=2) + asst("B.") + result("A.B."))
    s = run_bytes(data).session
    assert [seg.text for seg in s.segments] == ["A.", "B."]
    assert [k for k, _ in s.timeline] == ["segment", "tool", "segment"]


# -- tool calls (reference 2.5) ----------------------------------------------------

def test_call_id_with_newline_and_out_of_order_completion():
    a, b = "call_1\nfc_1", "call_2\nfc_2"
    data = (tool("started", a, args={"command": "sleep 6"}, ts=1) + tool("started", b, args={"command": "sleep 4"}, ts=1)
            + tool("completed", b, result={"success": {"exitCode": 0}}, ts=4001)
            + tool("completed", a, result={"success": {"exitCode": 0}}, ts=6001))
    s = run_bytes(data).session
    assert list(s.tool_calls) == [a, b]
    assert [c.duration_ms for c in s.tool_calls.values()] == [6000, 4000]
    assert [c.summary for c in s.tool_calls.values()] == ["sleep 6", "sleep 4"]


@pytest.mark.parametrize("res, status", [
    ({"success": {"exitCode": 0}}, "success"),
    ({"success": {"exitCode": 2}}, "failure"),
    ({"failure": {"exitCode": 1, "stderr": "boom"}}, "failure"),
    ({"rejected": {"reason": ""}}, "rejected"),
    ({"error": {"error": "ENOENT"}}, "failure"),
    ({"timeout": {}}, "failure"),
    ({"permissionDenied": {}}, "failure"),
    ({"isBackground": False, "success": {"exitCode": 0}}, "success"),
])
def test_outcomes(res, status):
    s = run_bytes(tool("started", "c", args={"command": "x"}, ts=1) + tool("completed", "c", result=res, ts=2)).session
    assert s.tool_calls["c"].status == status


def test_running_call_at_end_is_incomplete():
    s = run_bytes(tool("started", "c", args={"command": "sleep 100"}, ts=1)).session
    assert s.tool_calls["c"].status == "incomplete"
    assert s.tool_counts["incomplete"] == 1 and s.tool_counts["running"] == 0


def test_completed_without_started_or_args():
    data = tool("completed", "w", "webSearchToolCall", None, {"rejected": {"reason": "User Rejected"}}, ts=9,
                startedAtMs="5", completedAtMs="8")
    s = run_bytes(data).session
    c = s.tool_calls["w"]
    assert (c.tool, c.status, c.started_ms, c.completed_ms, c.duration_ms) == ("webSearch", "rejected", 5, 8, 3)
    assert c.detail == "User Rejected"


def test_rejected_shell_summary_comes_from_result():
    data = tool("started", "c", ts=1) + tool("completed", "c", result={"rejected": {"command": "uname -a", "reason": ""}}, ts=2)
    assert run_bytes(data).session.tool_calls["c"].summary == "uname -a"


def test_string_times_beat_timestamps():
    data = (tool("started", "c", args={"command": "x"}, ts=100, startedAtMs="150")
            + tool("completed", "c", result={"success": {}}, ts=180, startedAtMs="150", completedAtMs="400"))
    c = run_bytes(data).session.tool_calls["c"]
    assert (c.started_ms, c.completed_ms, c.duration_ms) == (150, 400, 250)


def test_arrival_time_when_no_times():
    c = run_bytes(tool("started", "c", args={"command": "x"})).session.tool_calls["c"]
    assert c.started_ms == 1_000_000


def test_a_call_seen_only_as_completed_has_no_invented_start_or_duration():
    # completed without started and without startedAtMs: its end is recorded, its start is not
    stream = (ev(type="system", subtype="init", session_id="s", model="m")
              + ev(type="tool_call", subtype="completed", call_id="c1", session_id="s", timestamp_ms=1_786_000_005_000,
                   tool_call={"shellToolCall": {"args": {"command": "ls"},
                                                "result": {"success": {"exitCode": 0}}}})
              + ev(type="tool_call", subtype="completed", call_id="c2", session_id="s", timestamp_ms=1_786_000_006_000,
                   tool_call={"startedAtMs": "1786000005500", "completedAtMs": "1786000006000",
                              "shellToolCall": {"args": {"command": "pwd"}, "result": {"success": {"exitCode": 0}}}}))
    calls = {c.call_id: c for c in run_bytes(stream).session.tool_calls.values()}
    assert calls["c1"].completed_ms == 1_786_000_005_000 and calls["c1"].started_ms is None
    assert calls["c1"].duration_ms is None  # not 0 ms
    assert calls["c2"].duration_ms == 500  # its own startedAtMs is a recorded start
    from cursor_watch.views.export.common import call_facts

    facts = dict(call_facts(calls["c1"]))
    assert "start not recorded →" in facts.get("time", "") and "ms" not in facts.get("time", ""), facts


def test_function_shape_from_docs():
    data = ev(type="tool_call", subtype="started", call_id="f",
              tool_call={"function": {"name": "lint", "arguments": "{\"path\": \"a.py\"}"}})
    c = run_bytes(data).session.tool_calls["f"]
    assert c.tool == "lint" and c.summary.startswith("arguments=")  # (the name is beside it in every view)


def test_big_payload_is_not_kept_but_its_offset_is():
    content = "x" * 200_000
    started = tool("started", "r", "readToolCall", {"path": "big.txt"}, ts=1)
    completed = tool("completed", "r", "readToolCall", {"path": "big.txt"}, {"success": {"content": content}}, ts=2)
    data = started + completed
    c = run_bytes(data).session.tool_calls["r"]
    assert c.args is None or len(orjson.dumps(c.args)) < 1000
    assert c.end_span == (len(started), len(completed))
    assert data[c.end_span[0] : c.end_span[0] + c.end_span[1]] == completed
    assert not any(isinstance(getattr(c, a), str) and len(getattr(c, a)) > 5000 for a in _CALL_FIELDS)


# -- header, result, notes, counts ---------------------------------------------------

def test_header_result_usage_and_error_status():
    data = (ev(type="system", subtype="init", apiKeySource="login", cwd="/w", model="GPT-5", permissionMode="default")
            + ev(type="user", message={"role": "user", "content": [{"type": "text", "text": "do it"}]})
            + ev(type="result", subtype="error", is_error=True, result="Rate limit", duration_ms=5, duration_api_ms=5,
                 request_id="rq", usage={"inputTokens": 3, "outputTokens": 4, "cacheReadTokens": 5, "cacheWriteTokens": 0}))
    s = run_bytes(data).session
    assert (s.session_id, s.model, s.cwd, s.api_key_source, s.permission_mode, s.prompt) == (
        "s", "GPT-5", "/w", "login", "default", "do it")
    assert s.status == "error"
    # Cursor's inputTokens leave the cache out; the canonical input counts it
    assert s.result.usage == Usage(input_tokens=8, output_tokens=4, cache_read_tokens=5, cache_write_tokens=0)
    assert s.result.usage.uncached_input_tokens == 3
    assert s.result.request_id == "rq"


def test_retry_connection_unknown_and_counts():
    data = (ev(type="connection", subtype="reconnecting", attempt=1, endpoint_url="https://x", timestamp_ms=1)
            + ev(type="retry", subtype="starting", attempt=1, is_resume=False, timestamp_ms=2)
            + ev(type="connection", subtype="reconnected", timestamp_ms=3)
            + ev(type="mystery", subtype="thing") + b"Error: boom\n")
    s = run_bytes(data).session
    assert [n.text for n in s.notes if n.kind != "end"] == [
        "connection reconnecting, attempt 1, https://x", "retry starting, attempt 1", "connection reconnected"]
    assert s.counts() == {"lines": 5, "events": 4, "invalid_lines": 1, "unknown_events": 1, "tool_calls": 0}
    assert s.unknown[0].type == "mystery" and s.status == "incomplete"


def test_thinking_blocks():
    data = (ev(type="thinking", subtype="delta", text="a", timestamp_ms=1) + ev(type="thinking", subtype="delta", text="b", timestamp_ms=2)
            + ev(type="thinking", subtype="completed", timestamp_ms=3) + ev(type="thinking", subtype="delta", text="c", timestamp_ms=4)
            + ev(type="thinking", subtype="completed", timestamp_ms=5))
    s = run_bytes(data).session
    assert [(b.text, b.completed) for b in s.thinking] == [("ab", True), ("c", True)]
    assert s.thinking_text == "abc"


def test_malformed_known_events_never_raise():
    for data in (ev(type="tool_call", subtype="completed", tool_call=5), ev(type="assistant", message="x"),
                 ev(type="assistant", message={"content": [5, {"type": "text", "text": 7}]}),
                 ev(type="result", usage=[1]), ev(type="interaction_query", subtype="request", query=[]),
                 ev(type="system", subtype="init", model=5), ev(type="thinking", subtype="delta", text=None),
                 ev(type="tool_call", subtype="started", call_id=None, tool_call={"xToolCall": None})):
        run_bytes(data)


def test_second_init_fed_to_one_session_is_a_note():
    # the reducer alone: a stream split into runs never feeds it a second init (see test_runs.py)
    from cursor_watch.core.decode import decode_all
    from cursor_watch.formats.cursor import CursorAdapter
    from cursor_watch.core.model import Session

    s = Session(lambda: 0.0)
    items = decode_all([ev(type="system", subtype="init", model="A", session_id="one")
                        + ev(type="system", subtype="init", model="B", session_id="two")])
    for item in CursorAdapter().adapt(items, None):
        s.apply(item)
    assert s.session_id == "one" and "new session two" in s.notes[0].text


def test_delta_equal_to_pending_before_thinking_is_kept():
    thinking = ev(type="thinking", subtype="delta", text="hm", timestamp_ms=3)
    data = asst("ha", 1) + asst("ha", 2) + thinking + asst("haha") + result("haha")
    assert run_bytes(data).session.assistant_text == "haha"


def test_delta_equal_to_pending_right_before_result_is_decided_by_the_result():
    assert run_bytes(asst("ab", 1) + asst("ab", 2) + result("abab")).session.assistant_text == "abab"
    assert run_bytes(asst("ab", 1) + asst("ab", 2) + result("ab")).session.assistant_text == "ab"


def test_resend_before_retry_is_dropped():
    retry = ev(type="retry", subtype="starting", attempt=1, is_resume=False, timestamp_ms=4)
    data = asst("Work", 1) + asst("ing.", 2) + asst("Working.", 3) + retry + asst("Working.") + result("Working.")
    assert run_bytes(data).session.assistant_text == "Working."


def test_folded_cuts_only_the_beginning_of_a_long_text_and_gives_the_same_string():
    """tools.folded (the model's failure detail, the adapters' one_line) folds whitespace of a
    prefix only; the result is exactly the whole text folded and cut."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from cursor_watch.formats.common import one_line
    from cursor_watch.core.tools import folded

    piece = st.one_of(st.text(alphabet="ab", min_size=1, max_size=60), st.text(alphabet=" \n\t\u3000\x85", min_size=1,
                                                                                 max_size=400))

    @settings(max_examples=300, deadline=None)
    @given(st.lists(piece, max_size=200), st.sampled_from([0, 1, 5, 200, 201, 300, 500]))
    def check(pieces, limit):
        text = "".join(pieces)
        whole = " ".join(text.split())
        assert folded(text, limit) == whole[:limit]
        if limit:
            assert one_line(text, limit) == (whole if len(whole) <= limit else whole[: limit - 1] + "…")

    check()


def test_stall_periods_looks_for_recorded_stalls_only_when_a_call_was_that_long():
    """guard.stall_periods skips reading every call back when no call has lasted the stall
    limit (Session.longest_call_ms, kept as calls get their times); the stalls are those of
    every call's duration, on random streams (damaged ones too), with spilling."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
    from streamgen import run_spilling, stream

    from cursor_watch.core.limits import stall_periods

    @settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(stream(), st.sampled_from([0.001, 0.5, 5.0, 300.0]))
    def check(data, stall_s):
        for run in run_spilling(data, hot=2, batch=2).runs:
            s = run.session
            durations = [c.duration_ms for c in s.tool_calls.values() if c.duration_ms is not None]
            # an upper bound of every call's duration (a call completed twice may get shorter)
            assert (s.longest_call_ms is None) if not durations else s.longest_call_ms >= max(durations)
            want = [c.call_id for c in s.tool_calls.values()
                    if c.duration_ms is not None and c.duration_ms >= stall_s * 1000.0]
            assert [p["call_id"] for p in stall_periods(s, stall_s) if p["observed"] == "recorded"] == want

    check()
