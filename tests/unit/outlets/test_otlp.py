"""--otlp: span records from the model, through the OpenTelemetry SDK (in-memory exporter).

The acceptance against a real backend (Arize Phoenix) is in test_otlp_phoenix.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import orjson
import pytest

from cursor_watch.core import costs as otlp_costs
from cursor_watch.outlets import otlp
from cursor_watch.stream.watch import Monitor

from conftest import ROOT, Watcher, real_params, wait_opened

sdk = pytest.importorskip("opentelemetry.sdk.trace", reason="the [otel] extra (OpenTelemetry SDK) is not installed")
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.trace import SpanKind, StatusCode  # noqa: E402

from cursor_watch.outlets.otlp_sdk import LocalSink, otlp_json_lines  # noqa: E402

CONTENT_ATTRS = ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments",
                 "gen_ai.tool.call.result", "cursor_watch.tool.summary", "gen_ai.tool.description",
                 "input.value", "output.value")
USAGE_ATTRS = ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.usage.cache_read.input_tokens",
               "gen_ai.usage.cache_creation.input_tokens", "gen_ai.usage.reasoning.output_tokens",
               "llm.token_count.prompt", "llm.token_count.completion", "llm.token_count.total")
AGENTS_DIR = ROOT.parent / "shared" / "streams" / "agents"


def agent_params():
    """Every shared capture of every agent: Cursor's (real_params) and Claude Code's, Codex's and
    Gemini CLI's (../shared/streams/agents/*/)."""
    caps = sorted(p for p in AGENTS_DIR.glob("*/*") if p.suffix in (".jsonl", ".ndjson")) if AGENTS_DIR.is_dir() else []
    return real_params() + [pytest.param(p, id=f"{p.parent.name}-{p.name[-50:]}") for p in caps]
SID = "3f0d8a0e-1111-2222-3333-444455556666"


def replay(data: bytes, content: bool = False, chunk: int | None = None, clock: float = 5_000.0, live: bool = True):
    """Feed ``data`` through a Monitor with the outlet watching; returns (monitor, spans)
    (``live``: the Monitor's, events without a time of their own get ``clock``'s time)."""
    exporter = InMemorySpanExporter()
    outlet = otlp.OtlpOutlet(LocalSink(exporter), content=content, clock=lambda: clock)
    mon = Monitor(clock=lambda: clock, source="/logs/x.jsonl", source_label="x.jsonl",
                  reread=lambda off, size: data[off:off + size], live=live)
    pieces = [data] if chunk is None else [data[i:i + chunk] for i in range(0, len(data), chunk)]
    for piece in pieces:
        for run, batch in mon.split(mon.feed(piece)):
            outlet.observe(run, batch)
    for run, batch in mon.split(mon.finish()):
        outlet.observe(run, batch)
    report = outlet.close()
    assert report["errors"] == 0, report
    return mon, exporter.get_finished_spans()


def ev(**kw) -> bytes:
    kw.setdefault("session_id", SID)
    return orjson.dumps(kw) + b"\n"


def shell(call_id: str, sub: str, ts: int, *, started: int | None = None, completed: int | None = None,
          outcome: str = "success", exit_code: int = 0, command: str = "ls", parent: dict | None = None) -> bytes:
    body: dict = {"args": {"command": command}}
    if sub == "completed":
        body["result"] = {outcome: {"command": command, "exitCode": exit_code, "stdout": "out", "stderr": "err"}}
    tc: dict = {"shellToolCall": body, "toolCallId": call_id}
    if started is not None:
        tc["startedAtMs"] = str(started)
    if completed is not None:
        tc["completedAtMs"] = str(completed)
    return ev(type="tool_call", subtype=sub, call_id=call_id, tool_call=tc, model_call_id="m-0-abcd", timestamp_ms=ts)


def stream(*parts: bytes, result: bool = True, usage: dict | None = None, text: str = "done") -> bytes:
    head = ev(type="system", subtype="init", model="Composer 2.5", cwd="/w", permissionMode="default",
              apiKeySource="login") + ev(type="user", message={"role": "user", "content": [{"type": "text", "text": "do it"}]})
    tail = b""
    if result:
        tail = ev(type="assistant", message={"role": "assistant", "content": [{"type": "text", "text": text}]}) + ev(
            type="result", subtype="success", is_error=False, duration_ms=900, result=text, request_id="r-1",
            usage=usage or {"inputTokens": 10, "outputTokens": 2, "cacheReadTokens": 7, "cacheWriteTokens": 1})
    return head + b"".join(parts) + tail


def by_name(spans, prefix: str):
    return [s for s in spans if s.name.startswith(prefix)]


# -- ids -----------------------------------------------------------------------------------------

def test_ids_are_the_documented_sha256_prefixes():
    opening = (1000, "do it", "c1\nfc")
    digest = hashlib.sha256(b"cursor-watch opening\x00" + b"1000\x00do it\x00c1\nfc\x00").digest()[:8].hex()
    assert otlp.opening_digest(opening) == digest
    assert otlp.opening_digest((None, None, None)) == hashlib.sha256(b"cursor-watch opening\x00\x00\x00\x00").digest()[:8].hex()
    key = otlp.run_key(SID, 2, "/logs/x.jsonl", opening)
    assert key == f"{SID}/2/{digest}"
    # a run's key: its session's opening, fixed when its first call ended
    data = stream(shell("c1\nfc", "started", 1000, started=1000), shell("c1\nfc", "completed", 1500, completed=1400))
    mon, _ = replay(data)
    assert mon.runs[0].session.opening == (1000, "do it", "c1\nfc")
    assert otlp.key_of(mon.runs[0]) == otlp.run_key(SID, 1, "/logs/x.jsonl", opening)
    assert otlp.trace_id_of(key) == int.from_bytes(hashlib.sha256(b"cursor-watch trace\x00" + key.encode() + b"\x00").digest()[:16], "big")
    assert otlp.run_span_id_of(key) == int.from_bytes(hashlib.sha256(b"cursor-watch run\x00" + key.encode() + b"\x00").digest()[:8], "big")
    cid = "call_1\nfc_2"
    want = hashlib.sha256(b"cursor-watch tool\x00" + key.encode() + b"\x00" + cid.encode() + b"\x00").digest()[:8]
    assert otlp.tool_span_id_of(key, cid) == int.from_bytes(want, "big")
    assert otlp.run_key(None, 1, "/logs/x.jsonl") == "source:/logs/x.jsonl/1"
    assert otlp.run_key(None, 1, "/logs/x.jsonl", (None, None, None)).startswith("source:/logs/x.jsonl/1/")


def test_same_log_twice_gives_the_same_ids_and_another_run_another_trace():
    data = stream(shell("c1", "started", 1000, started=1000), shell("c1", "completed", 1500, started=1000, completed=1400))
    _, first = replay(data)
    _, second = replay(data, chunk=7)  # read in other pieces: the same spans
    ids = sorted((s.context.trace_id, s.context.span_id, s.name) for s in first)
    assert ids == sorted((s.context.trace_id, s.context.span_id, s.name) for s in second)
    two_runs = data + data  # a second init: run 2 of the same session is its own trace
    _, spans = replay(two_runs)
    runs = by_name(spans, "invoke_agent")
    assert len(runs) == 2 and len({s.context.trace_id for s in runs}) == 2
    assert {s.context.trace_id for s in spans} == {s.context.trace_id for s in runs}


# -- the span model on real captures -------------------------------------------------------------

@pytest.mark.parametrize("path", agent_params())
def test_real_capture_spans_follow_the_model(path: Path):
    data = path.read_bytes()
    mon, spans = replay(data)
    runs = by_name(spans, "invoke_agent ")
    tools = by_name(spans, "execute_tool ")
    llms = by_name(spans, "chat")
    assert len(runs) == len(mon.runs) and len(spans) == len(runs) + len(tools) + len(llms)
    for run in mon.runs:
        s = run.session
        key = otlp.key_of(run)
        trace_id = otlp.trace_id_of(key)
        root = [r for r in runs if r.context.trace_id == trace_id]
        assert len(root) == 1
        root = root[0]
        assert root.parent is None and root.kind == SpanKind.CLIENT
        assert root.attributes["gen_ai.operation.name"] == "invoke_agent"
        assert root.attributes["gen_ai.agent.name"] == (s.agent or "cursor")
        assert root.attributes["openinference.span.kind"] == "AGENT"
        assert root.attributes.get("gen_ai.conversation.id") == s.session_id == root.attributes.get("session.id")
        assert root.attributes.get("gen_ai.request.model") == s.model
        assert not set(root.attributes) & set(USAGE_ATTRS)  # usage only on the chat spans: counted once
        usage = otlp.usage_of(s)
        mine_llm = [x for x in llms if x.context.trace_id == trace_id]
        if usage is None:
            cost = otlp_costs.reported_cost(s)
            assert [x.attributes.get("llm.cost.total") for x in mine_llm] == ([] if cost is None else [cost])
        else:
            per_model = s.result.model_usage if s.result is not None and s.result.model_usage else None
            assert len(mine_llm) == (len([m for m, (u, _c) in per_model.items() if u is not None]) if per_model else 1)
            for llm in mine_llm:
                assert llm.kind == SpanKind.CLIENT and llm.parent.span_id == root.context.span_id
                assert llm.attributes["openinference.span.kind"] == "LLM"
                assert llm.attributes["gen_ai.operation.name"] == "chat"
                assert llm.attributes["llm.provider"] == llm.attributes["gen_ai.provider.name"]
                assert (llm.start_time, llm.end_time) == (root.start_time, root.end_time)
            if not per_model:
                (llm,) = mine_llm
                assert llm.name == (f"chat {s.model}" if s.model else "chat")
                assert llm.attributes.get("llm.model_name") == s.model
                assert llm.attributes.get("llm.token_count.total") == usage.total_tokens
                assert llm.attributes.get("gen_ai.usage.input_tokens") == usage.input_tokens
                assert llm.attributes.get("llm.token_count.prompt") == usage.input_tokens
                assert llm.attributes.get("gen_ai.usage.cache_read.input_tokens") == usage.cache_read_tokens
                assert llm.attributes.get("gen_ai.usage.cache_creation.input_tokens") == usage.cache_write_tokens
                assert llm.attributes.get("gen_ai.usage.reasoning.output_tokens") == usage.reasoning_tokens
            # the trace's tokens: the agent's per-model figures where it gives them (Claude Code's
            # modelUsage also counts what result.usage leaves out, e.g. a compaction's calls), else the run's
            total = sum(x.attributes.get("llm.token_count.total", 0) for x in mine_llm)
            assert total == (sum(u.total_tokens or 0 for u, _c in per_model.values() if u is not None) if per_model
                             else usage.total_tokens)
            reported = otlp_costs.reported_cost(s)
            costs = [x.attributes["llm.cost.total"] for x in mine_llm if "llm.cost.total" in x.attributes]
            if reported is not None:
                assert sum(costs) == pytest.approx(reported)
                assert all(x.attributes.get("gen_ai.usage.cost") == x.attributes.get("llm.cost.total") for x in mine_llm)
            else:
                assert costs == [] and not any("gen_ai.usage.cost" in x.attributes for x in mine_llm)
        # true latency: from the earlier of the first event and (end - the reported duration) to the end
        duration = s.result.duration_ms if s.result is not None else None
        if duration and s.last_ts_ms is None:  # a stream without times: as long as its reported duration
            assert root.end_time - root.start_time >= duration * 1_000_000
        if s.last_ts_ms is not None:
            assert root.end_time == max([s.last_ts_ms] + [c.completed_ms or 0 for c in s.tool_calls.values()]) * 1_000_000
            if duration:
                assert root.end_time - root.start_time >= duration * 1_000_000
                if s.first_ts_ms >= s.last_ts_ms - duration and all(
                        (c.started_ms or s.last_ts_ms) >= s.last_ts_ms - duration for c in s.tool_calls.values()):
                    assert root.end_time - root.start_time == duration * 1_000_000
        if s.status == "success":
            assert root.status.status_code == StatusCode.UNSET
        else:
            assert root.status.status_code == StatusCode.ERROR and root.attributes["error.type"]
        calls = list(s.tool_calls.values())
        mine = [t for t in tools if t.context.trace_id == trace_id]
        assert len(mine) == len(calls)
        by_id = {t.attributes["gen_ai.tool.call.id"]: t for t in mine}
        assert set(by_id) == {c.call_id for c in calls}
        for call in calls:
            span = by_id[call.call_id]
            if call.kind == "mcp":  # named by server and tool, the agent's own name kept apart
                server, tool = otlp.mcp_names(call)
                assert tool and span.attributes["cursor_watch.mcp.tool"] == tool
                assert span.name == (f"execute_tool {server}.{tool}" if server else f"execute_tool {tool}")
            else:
                assert span.name == f"execute_tool {call.tool}"
            assert span.kind == SpanKind.INTERNAL
            assert span.parent.span_id == (otlp.tool_span_id_of(key, call.parent_call_id) if call.parent_call_id
                                           else root.context.span_id)
            assert span.context.span_id == otlp.tool_span_id_of(key, call.call_id)
            if call.started_ms is not None:
                assert span.start_time == call.started_ms * 1_000_000
            if call.completed_ms is not None:
                assert span.end_time == call.completed_ms * 1_000_000
            assert root.start_time <= span.start_time and span.end_time <= root.end_time
            if call.status == "success":
                assert span.status.status_code == StatusCode.UNSET
            else:
                assert span.status.status_code == StatusCode.ERROR
                assert span.attributes["error.type"] in (call.status, call.outcome)
            if call.exit_code is not None:
                assert span.attributes["process.exit.code"] == call.exit_code
        for span in runs + tools + llms:
            assert not set(span.attributes) & set(CONTENT_ATTRS), span.name
    encode_spans(spans).SerializeToString()  # the OTLP encoder takes every one


@pytest.mark.parametrize("path", real_params())
def test_real_capture_content_is_the_reconstructed_text(path: Path):
    mon, spans = replay(path.read_bytes(), content=True)
    for run in mon.runs:
        s = run.session
        trace_id = otlp.trace_id_of(otlp.key_of(run))
        root = [r for r in by_name(spans, "invoke_agent") if r.context.trace_id == trace_id][0]
        out = json.loads(root.attributes["gen_ai.output.messages"])
        text = "".join(p["content"] for p in out[0]["parts"] if p["type"] == "text")
        assert text == otlp.clean_content(s.assistant_text)
        if len(s.assistant_text) < otlp.CONTENT_CAP and s.assistant_text.isprintable():
            assert text == s.assistant_text
        if s.prompt is not None:
            prompt = json.loads(root.attributes["gen_ai.input.messages"])[0]["parts"][0]["content"]
            assert prompt == otlp.clean_content(s.prompt)
    for span in by_name(spans, "execute_tool"):
        assert "gen_ai.tool.call.arguments" in span.attributes or "gen_ai.tool.call.result" in span.attributes


# -- rules ---------------------------------------------------------------------------------------

def test_failed_rejected_and_incomplete_calls_are_errors_and_an_unfinished_run_too():
    data = stream(
        shell("ok", "started", 1000, started=1000),
        shell("ok", "completed", 1100, started=1000, completed=1090),
        shell("bad", "started", 1200, started=1200),
        shell("bad", "completed", 1300, started=1200, completed=1290, outcome="failure", exit_code=2),
        shell("no", "completed", 1400, started=1395, completed=1399, outcome="rejected"),
        shell("cut", "started", 1500, started=1500),
        ev(type="thinking", subtype="delta", text="hm", timestamp_ms=1700),
        result=False,
    )
    _, spans = replay(data)
    tools = {s.attributes["gen_ai.tool.call.id"]: s for s in by_name(spans, "execute_tool")}
    assert tools["ok"].status.status_code == StatusCode.UNSET and "error.type" not in tools["ok"].attributes
    assert tools["bad"].status.status_code == StatusCode.ERROR
    assert tools["bad"].attributes["error.type"] == "failure" and tools["bad"].status.description == "exit 2"
    assert tools["bad"].attributes["process.exit.code"] == 2
    assert tools["no"].attributes["error.type"] == "rejected"
    cut = tools["cut"]
    assert cut.attributes["error.type"] == "incomplete" and "still running" in cut.status.description
    assert cut.start_time == 1500 * 10**6 and cut.end_time == 1700 * 10**6  # ends with the run
    (root,) = by_name(spans, "invoke_agent")
    assert root.status.status_code == StatusCode.ERROR and root.attributes["error.type"] == "no_result"
    assert root.start_time == 1000 * 10**6 and root.end_time == 1700 * 10**6
    assert "stderr" not in repr(cut.attributes) and "err" not in tools["bad"].status.description


def test_error_result_and_notes_as_events():
    data = stream(
        ev(type="connection", subtype="reconnecting", attempt=1, endpoint_url="https://x", timestamp_ms=2000),
        ev(type="retry", subtype="starting", attempt=1, is_resume=False, timestamp_ms=2001),
        result=False,
    ) + ev(type="result", subtype="error", is_error=True, result="Rate limit exceeded", duration_ms=5)
    _, spans = replay(data)
    (root,) = spans
    assert root.status.status_code == StatusCode.ERROR and root.attributes["error.type"] == "error"
    names = [(e.name, e.timestamp) for e in root.events]
    assert names == [("connection", 2000 * 10**6), ("retry", 2001 * 10**6)]
    assert root.events[1].attributes["cursor_watch.note.text"] == "retry starting, attempt 1"


def test_a_stream_without_times_says_so():
    data = (ev(type="system", subtype="init", model="m") + ev(type="tool_call", subtype="started", call_id="a",
            tool_call={"readToolCall": {"args": {"path": "p"}}}) + ev(type="tool_call", subtype="completed", call_id="a",
            tool_call={"readToolCall": {"args": {"path": "p"}, "result": {"success": {}}}}) +
            ev(type="result", subtype="success", is_error=False, result=""))
    _, spans = replay(data, clock=7_000.0)
    (tool,) = by_name(spans, "execute_tool")
    (root,) = by_name(spans, "invoke_agent")
    assert tool.attributes["cursor_watch.time_source"] == "received"
    assert root.attributes["cursor_watch.time_source"] == "received"
    assert tool.start_time == 7_000 * 10**6 and root.end_time == 7_000 * 10**6


def test_agent_label_version_and_sub_agent_parent_are_read_when_the_model_has_them():
    session = SimpleNamespace(agent="claude-code", agent_version="2.1.3")
    assert otlp.agent_of(session) == "claude-code" and otlp._version_of(session) == "2.1.3"
    assert otlp.agent_of(SimpleNamespace()) == "cursor"
    ids = otlp.RunIds("s/1", 0.0)
    call = SimpleNamespace(tool="read", call_id="child", status="success", outcome="success", exit_code=None,
                           model_call_id="", started_ms=10, completed_ms=20, detail="", summary="", description="",
                           args=None, parent_call_id="task-1")
    record = otlp.tool_record(SimpleNamespace(), call, ids)
    assert record["p"] == f"{otlp.tool_span_id_of('s/1', 'task-1'):016x}"
    del call.parent_call_id  # a call without a parent: a child of the run span
    assert otlp.tool_record(SimpleNamespace(), call, ids)["p"] == f"{ids.span_id:016x}"


def test_hostile_stream_never_breaks_the_export():
    esc = "\x1b[31m\x1b]52;c;AAAA\x07\x9b2J\x07"
    huge = "x" * 300_000
    hostile = esc + "\u202e" + huge  # escapes, a bidi override, 300 kB (a lone surrogate is an invalid line)

    def jev(**kw) -> bytes:  # json.dumps writes the surrogate and the controls as \u escapes
        kw.setdefault("session_id", hostile)
        return json.dumps(kw).encode() + b"\n"

    variant = "evil" + hostile[:40].replace("\x1b", "") + "ToolCall"
    data = b"".join([
        jev(type="system", subtype="init", model=hostile, cwd=hostile, permissionMode=hostile),
        jev(type="user", message={"role": "user", "content": [{"type": "text", "text": hostile}]}),
        jev(type="thinking", subtype="delta", text=hostile, timestamp_ms=1),
        jev(type="tool_call", subtype="started", call_id=hostile, timestamp_ms=1, model_call_id=hostile,
            tool_call={variant: {"args": {"command": hostile, hostile: [hostile]}}, "startedAtMs": "-5"}),
        jev(type="tool_call", subtype="completed", call_id=hostile, timestamp_ms=2,
            tool_call={variant: {"result": {hostile: {"exitCode": 10**30, "stderr": hostile}}},
                       "completedAtMs": "99999999999999999999"}),
        jev(type="interaction_query", subtype="request", query_type=hostile, timestamp_ms=3,
            query={"id": 0, "x": {"args": {"toolCallId": hostile, "url": hostile}}}),
        jev(type="assistant", message={"role": "assistant", "content": [{"type": "text", "text": hostile}]}),
        jev(type="result", subtype=hostile, is_error=True, result=hostile, request_id=hostile,
            usage={"inputTokens": 10**40, "outputTokens": -(10**30)}),
    ])
    for content in (False, True):
        mon, spans = replay(data, content=content)
        assert len(spans) == 3 and len(by_name(spans, "chat")) == 1  # run, tool call, and the run's chat span
        for span in spans:
            assert span.context.is_valid and len(f"{span.context.trace_id:032x}") == 32
            assert len(span.name) <= 200
            texts = [(k, v) for k, v in span.attributes.items() if isinstance(v, str)]
            texts += [(e.name, v) for e in span.events for v in e.attributes.values() if isinstance(v, str)]
            texts.append(("status", span.status.description or ""))
            for key, value in texts:
                assert "\x1b" not in value and "\x9b" not in value and "\x07" not in value, key
                value.encode("utf-8")  # no lone surrogate left
                limit = otlp.CONTENT_CAP if content else otlp.LINE_CAP * 4 + 1  # the documented cap
                assert len(value) <= limit, (key, len(value))
            assert 0 <= span.start_time <= span.end_time < 2**64
            for value in span.attributes.values():
                if isinstance(value, int):
                    assert -(2**63) <= value < 2**63
        encode_spans(spans).SerializeToString()  # valid UTF-8, int64 in range: the encoder takes them
        if not content:
            assert not any("x" * 1030 in v for s in spans for v in s.attributes.values() if isinstance(v, str))


def test_text_cleaning_removes_escapes_and_shows_lone_surrogates():
    for clean in (otlp.clean_line, otlp.clean_id, otlp.clean_content):
        out = clean("a\x1b[1mb\x1b]8;;http://x\x07c\ud800d\x00")
        assert out.encode("utf-8") and "\x1b" not in out and "\x07" not in out
        assert out.startswith("abc") and "\\ud800" in out and "\\x00" in out
    assert otlp.clean_id("call_1\nfc_2") == "call_1\nfc_2"  # the id as the stream wrote it
    assert otlp.clean_line("call_1\nfc_2") == "call_1\\nfc_2"
    cut = otlp.clean_content("y" * (otlp.CONTENT_CAP + 5))
    note = f"… [{otlp.CONTENT_CAP + 5 - cut.index('…')} more characters not sent]"
    assert otlp.CONTENT_CAP - 8 <= len(cut) <= otlp.CONTENT_CAP and cut.endswith(note)  # the note within the cap
    assert otlp.clean_content("y" * otlp.CONTENT_CAP) == "y" * otlp.CONTENT_CAP
    escaped = otlp.clean_content("\x00" * otlp.CONTENT_CAP)  # escaping (\x00: 4 characters each) counts too
    assert len(escaped) <= otlp.CONTENT_CAP and escaped.startswith("\\x00") and escaped.endswith("more characters not sent]")


def test_otlp_json_file_is_the_same_spans_in_otlp_json(tmp_path):
    data = stream(shell("c1\nfc", "started", 1000, started=1000), shell("c1\nfc", "completed", 1500, started=1000, completed=1400))
    mon, spans = replay(data)
    records = [r for run in mon.runs for r in otlp.run_records(run)]
    lines = list(otlp_json_lines(records))
    assert len(lines) == 1
    doc = json.loads(lines[0])
    got = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert {(s["traceId"], s["spanId"]) for s in got} == {(f"{s.context.trace_id:032x}", f"{s.context.span_id:016x}") for s in spans}
    tool = [s for s in got if s["name"] == "execute_tool shell"][0]
    assert tool["parentSpanId"] == f"{otlp.run_span_id_of(otlp.key_of(mon.runs[0])):016x}"
    assert int(tool["startTimeUnixNano"]) == 1000 * 10**6 and int(tool["endTimeUnixNano"]) == 1400 * 10**6
    assert tool["kind"] == 1  # SPAN_KIND_INTERNAL as an integer (OTLP/JSON)
    attrs = {a["key"]: a["value"] for a in tool["attributes"]}
    assert attrs["gen_ai.tool.call.id"] == {"stringValue": "c1\nfc"}


def test_cli_export_otlp_json_and_missing_extra(tmp_path):
    path = ROOT / "sample_streams" / "failed-no-result.jsonl"  # it ends without a result: exit 1
    out = tmp_path / "runs.otlp.json"
    done = subprocess.run([sys.executable, "-m", "cursor_watch", "--summary", "--export", str(out), str(path)],
                          capture_output=True, cwd=ROOT)
    assert done.returncode == 1 and done.stderr == b"", done.stderr
    lines = out.read_bytes().splitlines()
    assert lines and all(json.loads(line)["resourceSpans"] for line in lines)
    # without the extra: one line, exit 2 (find_spec sees no opentelemetry)
    code = ("import importlib.util, sys; real = importlib.util.find_spec\n"
            "importlib.util.find_spec = lambda n, *a: None if n.startswith('opentelemetry') else real(n, *a)\n"
            "from cursor_watch.cli import main; sys.exit(main(sys.argv[1:]))")
    for args in (["--otlp", str(path)], ["--summary", "--export", str(tmp_path / "x.otlp.json"), str(path)]):
        done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, cwd=ROOT, text=True)
        assert done.returncode == 2
        assert done.stderr == "cursor-watch: OpenTelemetry export needs the SDK and its OTLP exporter: pip install 'cursor-watch[otel]'\n"
    done = subprocess.run([sys.executable, "-m", "cursor_watch", "--summary", "--otlp", str(path)], capture_output=True,
                          cwd=ROOT, text=True, env={**__import__("os").environ, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"})
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "http/json" in done.stderr



# -- usage where backends count it, true latency, content panes, names -------------------

def test_run_latency_is_the_reported_duration_not_the_first_timed_event():
    # a Cursor run: events carry times only near the end (1000, 1500 ms); its result says 900 ms
    data = stream(shell("c1", "started", 1000, started=1000), shell("c1", "completed", 1500, completed=1400))
    _, spans = replay(data)
    root = root_of(spans)
    assert root.end_time == 1500 * 1_000_000
    assert root.end_time - root.start_time == 900 * 1_000_000  # 1500 - 900, earlier than the first event (1000)
    (llm,) = by_name(spans, "chat")
    assert (llm.start_time, llm.end_time) == (root.start_time, root.end_time)


CODEX_WARNING = b"".join(orjson.dumps(x) + b"\n" for x in (
    {"type": "thread.started", "thread_id": "th-1"},
    {"type": "turn.started"},
    {"type": "item.completed", "item": {"id": "item_0", "type": "error", "message": "model rerouted"}},
    {"type": "item.completed", "item": {"id": "item_1", "type": "agent_message", "text": "done"}},
    {"type": "turn.completed", "usage": {"input_tokens": 10, "cached_input_tokens": 4, "output_tokens": 3}},
))


def test_a_note_without_a_time_carries_the_received_time_live_and_none_in_a_replay():
    _, live = replay(CODEX_WARNING, clock=7_000.0, live=True)
    _, replayed = replay(CODEX_WARNING, clock=7_000.0, live=False)
    for spans, want in ((live, 7_000 * 1_000_000), (replayed, 0)):
        root = root_of(spans)
        assert root.events, root.name
        assert [e.timestamp for e in root.events] == [want] * len(root.events)  # not the run's start
        if want == 0:
            assert all(e.attributes["cursor_watch.time_source"] == "none" for e in root.events)
    (llm,) = by_name(replayed, "chat")
    assert llm.attributes["llm.provider"] == "openai" and llm.attributes["gen_ai.usage.input_tokens"] == 10
    assert llm.attributes["llm.token_count.prompt_details.cache_read"] == 4 and llm.attributes["llm.token_count.total"] == 13


def test_content_fills_the_input_and_output_panes_and_keeps_segments_apart():
    said = ev(type="assistant", message={"role": "assistant", "content": [{"type": "text", "text": "first."}]})
    data = stream(said, shell("c1", "started", 1000, started=1000, command="echo hi"),
                  shell("c1", "completed", 1500, completed=1400, command="echo hi"), text="second.")
    _, plain = replay(data)
    assert not any({"input.value", "output.value"} & set(s.attributes) for s in plain)  # nothing without content
    _, spans = replay(data, content=True)
    root = root_of(spans)
    assert root.attributes["input.value"] == "do it" and root.attributes["input.mime_type"] == "text/plain"
    assert root.attributes["output.value"] == "second." and root.attributes["output.mime_type"] == "text/plain"
    parts = json.loads(root.attributes["gen_ai.output.messages"])[0]["parts"]
    assert [p["content"] for p in parts if p["type"] == "text"] == ["first.", "second."]
    (tool,) = by_name(spans, "execute_tool")
    assert json.loads(tool.attributes["input.value"]) == {"command": "echo hi"}
    assert tool.attributes["input.mime_type"] == "application/json"
    assert tool.attributes["output.value"] and tool.attributes["output.mime_type"] in ("application/json", "text/plain")
    assert "gen_ai.tool.description" not in tool.attributes


def test_a_call_description_argument_is_not_the_tool_description():
    path = AGENTS_DIR / "claude" / "mlsys-io__lumid-identity__internal__handler__testdata__claude_stream_subagent.ndjson"
    if not path.exists():
        pytest.skip(f"{path} not found (a user's clone has none)")
    data = path.read_bytes()
    assert b'"description"' in data  # its Task call carries a description argument
    _, spans = replay(data, content=True)
    assert by_name(spans, "execute_tool")
    assert not any("gen_ai.tool.description" in s.attributes for s in spans)


def test_codex_mcp_calls_are_named_by_server_and_tool():
    path = AGENTS_DIR / "codex" / "mccorvie__TauCetiWorker__tests__fixtures__codex_exec_mcp_0_160.jsonl"
    if not path.exists():
        pytest.skip(f"{path} not found (a user's clone has none)")
    _, spans = replay(path.read_bytes(), live=False)
    names = sorted({s.name for s in by_name(spans, "execute_tool")})
    assert "execute_tool lean_beam.lean_sync" in names and "execute_tool mcp_tool_call" not in names
    sync = [s for s in spans if s.name == "execute_tool lean_beam.lean_sync"][0]
    assert sync.attributes["cursor_watch.mcp.server"] == "lean_beam" and sync.attributes["cursor_watch.mcp.tool"] == "lean_sync"
    assert sync.attributes["gen_ai.tool.type"] == "extension"


def test_claude_mcp_call_names_and_per_model_usage_and_reported_cost():
    call = SimpleNamespace(kind="mcp", tool="mcp__lean__goals", args={"path": "x"})
    assert otlp.mcp_names(call) == ("lean", "goals")
    assert otlp.mcp_names(SimpleNamespace(kind="mcp", tool="lean.sync", args={"server": "lean", "tool": "sync"})) == (
        "lean", "sync")
    assert otlp.mcp_names(SimpleNamespace(kind="mcp", tool="mcp", args={"toolName": "t", "providerIdentifier": "p"})) == (
        "p", "t")
    assert otlp.mcp_names(SimpleNamespace(kind="shell", tool="Bash", args={})) == ("", "")
    path = AGENTS_DIR / "claude" / "dungle-scrubs__harness-cli-normalizer__test__fixtures__a001-raw.ndjson"
    if not path.exists():
        pytest.skip(f"{path} not found (a user's clone has none)")
    mon, spans = replay(path.read_bytes(), live=False)
    s = mon.runs[0].session
    assert len(s.result.model_usage) == 2  # haiku and opus, each with its cost
    trace_id = otlp.trace_id_of(otlp.key_of(mon.runs[0]))
    llms = {x.attributes["llm.model_name"]: x for x in by_name(spans, "chat") if x.context.trace_id == trace_id}
    assert set(llms) == set(s.result.model_usage)
    for model, (usage, cost) in s.result.model_usage.items():
        assert llms[model].attributes["llm.cost.total"] == llms[model].attributes["gen_ai.usage.cost"] == cost
        assert llms[model].attributes["llm.token_count.total"] == usage.total_tokens
        assert "cursor_watch.cost.estimate_usd" not in llms[model].attributes  # a reported cost: no estimate


def test_an_estimate_is_never_sent_as_a_reported_cost():
    data = stream(usage={"inputTokens": 1000, "outputTokens": 100})
    data = data.replace(b'"Composer 2.5"', b'"GPT-5 Mini"')
    _, spans = replay(data)
    (llm,) = by_name(spans, "chat")
    assert "llm.cost.total" not in llm.attributes and "gen_ai.usage.cost" not in llm.attributes
    assert llm.attributes["cursor_watch.cost.estimate_usd"] > 0 and llm.attributes["cursor_watch.cost.price_source"]


def test_the_sent_line_says_how_many_spans_of_how_many_runs_and_their_dates():
    report = {"ok": 12, "runs": 3, "first_run_ms": 1_789_000_000_000, "last_run_ms": 1_791_000_000_000}
    assert otlp.sent_line(report, "http://h/v1/traces") == (
        "--otlp: 12 spans of 3 runs sent to http://h/v1/traces (runs dated 2026-09-10 00:26 UTC to 2026-10-03 04:00 UTC)")
    assert otlp.sent_line({"ok": 0, "runs": 0}, "http://h/v1/traces") == "--otlp: 0 spans of 0 runs sent to http://h/v1/traces"


def test_endpoint_option_is_a_base_url_or_a_full_one():
    assert otlp.traces_endpoint("http://h:4318", "http/protobuf") == "http://h:4318/v1/traces"
    assert otlp.traces_endpoint("http://h:4318/", "http/protobuf") == "http://h:4318/v1/traces"
    # a base with a path (Langfuse's documented one) gets /v1/traces too; a full traces URL is kept
    assert otlp.traces_endpoint("http://h:4318/api/public/otel", "http/protobuf") == "http://h:4318/api/public/otel/v1/traces"
    assert otlp.traces_endpoint("http://h:4318/api/public/otel/v1/traces", "http/protobuf") == (
        "http://h:4318/api/public/otel/v1/traces")
    assert otlp.traces_endpoint("http://h:4318/v1/traces/", "http/protobuf") == "http://h:4318/v1/traces"
    assert otlp.traces_endpoint("http://h:4317", "grpc") == "http://h:4317"
    # OTEL_EXPORTER_OTLP_ENDPOINT the same way (the SDK alone would append /v1/traces to a full URL)
    for base in ("http://h:4318/api/public/otel", "http://h:4318/api/public/otel/v1/traces"):
        env = otlp.endpoint_env({"OTEL_EXPORTER_OTLP_ENDPOINT": base}, None, "http/protobuf")
        assert env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] == "http://h:4318/api/public/otel/v1/traces"
        assert env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] == otlp.endpoint_env({}, base, "http/protobuf")[
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]
    explicit = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://b/x"}
    assert otlp.endpoint_env(dict(explicit), None, "http/protobuf") == explicit  # the traces variable as given
    assert "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" not in otlp.endpoint_env({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://g:4317"},
                                                                         None, "grpc")


def test_an_empty_stream_sends_nothing_and_a_line_of_garbage_is_a_run():
    assert replay(b"")[1] == ()
    (root,) = replay(b"not json\n")[1]
    assert root.attributes["cursor_watch.invalid_lines"] == 1 and root.attributes["error.type"] == "no_result"


# -- ids of runs of one session -----------------------------------------------

DIRECT = ROOT.parent / "shared" / "streams" / "real" / "reifying__cursor-hack__experiments__direct-sleep.jsonl"
FULL = ROOT.parent / "shared" / "streams" / "real" / "reifying__cursor-hack__internal__events__testdata__full_session.jsonl"


def root_of(spans):
    (root,) = by_name(spans, "invoke_agent")
    return root


@pytest.mark.skipif(not DIRECT.exists() or not FULL.exists(), reason="real captures not found")
def test_two_logs_of_one_session_and_run_index_are_two_traces_and_each_log_is_one():
    """Both captures are run 1 of session d43015b9 (the second is a trimmed copy of the first with
    other call ids): the session id and run index alone gave them one trace id and one run span id."""
    mon_a, direct = replay(DIRECT.read_bytes())
    mon_b, full = replay(FULL.read_bytes())
    a, b = root_of(direct), root_of(full)
    assert a.attributes["gen_ai.conversation.id"] == b.attributes["gen_ai.conversation.id"]
    assert mon_a.runs[0].index == mon_b.runs[0].index == 1
    assert a.context.trace_id != b.context.trace_id and a.context.span_id != b.context.span_id
    # each log is one trace however it is read (in other pieces: a live pipe's chunks)
    for path, spans in ((DIRECT, direct), (FULL, full)):
        _, again = replay(path.read_bytes(), chunk=97)
        assert sorted((s.context.trace_id, s.context.span_id) for s in again) == sorted(
            (s.context.trace_id, s.context.span_id) for s in spans)
        assert len({s.context.trace_id for s in spans}) == 1


def test_a_resumed_chat_in_a_new_log_is_a_new_trace():
    """--resume keeps the session id; the resumed run is run 1 of its new log, with another prompt
    and other times and call ids: another trace."""
    first = stream(shell("c1", "started", 1000, started=1000), shell("c1", "completed", 1500, completed=1400))
    resumed = first.replace(b'"do it"', b'"and now the docs"').replace(b'"c1"', b'"c9"').replace(b"1000", b"9000")
    one, two = root_of(replay(first)[1]), root_of(replay(resumed)[1])
    assert one.attributes["gen_ai.conversation.id"] == two.attributes["gen_ai.conversation.id"] == SID
    assert one.context.trace_id != two.context.trace_id
    # any one of the opening's parts tells them apart: the prompt alone
    only_prompt = first.replace(b'"do it"', b'"and now the docs"')
    assert root_of(replay(only_prompt)[1]).context.trace_id != one.context.trace_id


def test_the_opening_is_fixed_when_the_first_call_ends_not_by_what_follows():
    """A later prompt-like user message or call does not move the ids of a trace already begun
    (live, the first tool span was sent then)."""
    base = stream(shell("c1", "started", 1000, started=1000), shell("c1", "completed", 1500, completed=1400),
                  result=False)
    more = base + shell("c2", "started", 1600, started=1600) + ev(
        type="user", message={"role": "user", "content": [{"type": "text", "text": "later"}]})
    ids_base = {s.context.span_id for s in by_name(replay(base)[1], "execute_tool")}
    ids_more = {s.context.span_id for s in by_name(replay(more)[1], "execute_tool")}
    assert ids_base < ids_more


# -- when the run span is sent ------------------------------------------------

def live_outlet(ends_at_result):
    exporter = InMemorySpanExporter()
    outlet = otlp.OtlpOutlet(LocalSink(exporter), clock=lambda: 5_000.0, ends_at_result=ends_at_result)
    mon = Monitor(clock=lambda: 5_000.0, source="/logs/x.jsonl", source_label="x.jsonl")
    return exporter, outlet, mon


def test_a_followed_or_piped_run_span_is_sent_at_its_result_a_replayed_one_at_its_end():
    data = stream(shell("c1", "started", 1000, started=1000), shell("c1", "completed", 1500, completed=1400))
    for ends_at_result, before_end in ((lambda run: True, ["chat Composer 2.5", "execute_tool shell",
                                                         "invoke_agent cursor"]),
                                       (None, ["execute_tool shell"])):
        exporter, outlet, mon = live_outlet(ends_at_result)
        for run, batch in mon.split(mon.feed(data)):
            outlet.observe(run, batch)
        assert sorted(s.name for s in exporter.get_finished_spans()) == before_end  # the source goes on
        for run, batch in mon.split(mon.finish()):
            outlet.observe(run, batch)
        spans = exporter.get_finished_spans()
        assert sorted(s.name for s in spans) == ["chat Composer 2.5", "execute_tool shell", "invoke_agent cursor"]  # once
        assert root_of(spans).status.status_code == StatusCode.UNSET
        (llm,) = by_name(spans, "chat")
        assert llm.attributes["gen_ai.usage.input_tokens"] == 18  # 10 uncached + 7 read + 1 written
        assert llm.attributes["llm.token_count.total"] == 20 and llm.attributes["llm.token_count.prompt_details.cache_read"] == 7


def test_a_run_still_going_when_the_watch_stops_sends_no_run_span_and_a_replay_completes_its_trace():
    """Stopping a followed file or a pipe is not the run's end: no ERROR no_result run span, no
    'incomplete' span for the call still running; the finished log, replayed later, sends the rest
    with the same ids (one trace)."""
    head = stream(shell("c1", "started", 1000, started=1000), shell("c1", "completed", 1500, completed=1400),
                  shell("c2", "started", 1600, started=1600), result=False)
    exporter, outlet, mon = live_outlet(lambda run: True)
    for run, batch in mon.split(mon.feed(head)):
        outlet.observe(run, batch)
    mon.run.observed_until_stop = True  # what Watch sets when it is stopped before the input ends
    for run, batch in mon.split(mon.finish(reason="cursor-watch was stopped by signal 15 (SIGTERM)")):
        outlet.observe(run, batch)
    live = exporter.get_finished_spans()
    assert [s.attributes["gen_ai.tool.call.id"] for s in live] == ["c1"]
    assert all(s.status.status_code == StatusCode.UNSET for s in live)
    # the agent went on and finished; its log replayed later: the same trace, the same span for c1
    whole = head + shell("c2", "completed", 1700, completed=1690) + stream(result=True)[len(stream(result=False)):]
    _, later = replay(whole)
    assert {s.context.trace_id for s in later} == {live[0].context.trace_id}
    c1 = [s for s in later if s.attributes.get("gen_ai.tool.call.id") == "c1"][0]
    assert c1.context.span_id == live[0].context.span_id and live[0].parent.span_id == root_of(later).context.span_id
    assert root_of(later).status.status_code == StatusCode.UNSET


def test_a_rejected_call_span_carries_the_rejection_reason():
    rejected = ev(type="tool_call", subtype="completed", call_id="r1", timestamp_ms=1200,
                  tool_call={"shellToolCall": {"args": {"command": "rm -rf /"}, "result": {"rejected": {
                      "command": "rm -rf /", "reason": "the user declined: too risky"}}},
                             "startedAtMs": "1100", "completedAtMs": "1190"})
    _, spans = replay(stream(shell("r1", "started", 1100, started=1100), rejected))
    (tool,) = by_name(spans, "execute_tool")
    assert tool.status.status_code == StatusCode.ERROR and tool.attributes["error.type"] == "rejected"
    assert tool.status.description == "the user declined: too risky"  # sent without --otlp-content too


# -- end to end: live sources to a local OTLP receiver --------------------------------------------

pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="the [otel] extra (OTLP exporter) is not installed")
from otlp_receiver import Receiver, sent_only  # noqa: E402

CMD = [sys.executable, "-m", "cursor_watch"]


def cw_env(tmp_path, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    return {**env, "NO_COLOR": "1", "PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": str(tmp_path / "config"), **extra}




def session_stream(sid: str, prompt: str, *parts: bytes, result: bool = True) -> bytes:
    def e(**kw) -> bytes:
        return orjson.dumps({**kw, "session_id": sid}) + b"\n"

    out = e(type="system", subtype="init", model="Composer 2.5", cwd="/w") + e(
        type="user", message={"role": "user", "content": [{"type": "text", "text": prompt}]})
    out += b"".join(parts)
    if result:
        out += e(type="result", subtype="success", is_error=False, duration_ms=900, result="ok", request_id="r",
                 usage={"inputTokens": 3, "outputTokens": 1})
    return out


def call(sid: str, call_id: str, sub: str, ts: int) -> bytes:
    tc = {"shellToolCall": {"args": {"command": "ls"}}}
    if sub == "completed":
        tc["shellToolCall"]["result"] = {"success": {"exitCode": 0, "stdout": ""}}
    return orjson.dumps({"type": "tool_call", "subtype": sub, "call_id": call_id, "tool_call": tc,
                         "session_id": sid, "timestamp_ms": ts}) + b"\n"


def test_follow_dir_sends_a_run_span_at_its_result_and_stopping_claims_no_end(tmp_path):
    """-f DIR: a run whose result arrived has ended: its run span is sent then, while the watch
    goes on. Stopping the watch (SIGTERM) while another followed run is in progress sends no run
    span saying it ended without a result, no 'incomplete' span for its running call, and no
    `failed` alert."""
    logs = tmp_path / "logs"
    logs.mkdir()
    done, going = logs / "done.jsonl", logs / "going.jsonl"
    done.write_bytes(b"")
    going.write_bytes(b"")
    alerts = tmp_path / "alerts.jsonl"
    with Receiver() as r:
        watch = subprocess.Popen(CMD + ["--plain", "-f", str(logs), "--otlp-endpoint", r.url,
                                        "--alert-cmd", f"cat >> {alerts}"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, env=cw_env(tmp_path))
        try:
            wait_opened(watch.pid, done)
            wait_opened(watch.pid, going)
            with open(going, "ab") as f:
                f.write(session_stream("going-1", "still at it", call("going-1", "g1", "started", 1000),
                                       call("going-1", "g1", "completed", 1100), call("going-1", "g2", "started", 1200),
                                       result=False))
            with open(done, "ab") as f:
                f.write(session_stream("done-1", "quick one", call("done-1", "d1", "started", 2000),
                                       call("done-1", "d1", "completed", 2100)))
            spans = r.wait(lambda s: any(x.name.startswith("invoke_agent") for x in s)
                           and any(x.attributes.get("gen_ai.tool.call.id") == "g1" for x in s), timeout=30)
            assert watch.poll() is None  # the watch goes on: the run span came at the result
            (root,) = [s for s in spans if s.name.startswith("invoke_agent")]
            assert root.attributes["gen_ai.conversation.id"] == "done-1" and root.status_code == 0
        finally:
            watch.send_signal(signal.SIGTERM)
            out, err = watch.communicate(timeout=60)
    assert watch.returncode == 143, err
    sent_only(err)  # every span sent
    by_id = {s.attributes.get("gen_ai.tool.call.id"): s for s in r.spans if s.name.startswith("execute_tool")}
    assert sorted(by_id) == ["d1", "g1"]  # g2 was still running: no span claims it ended
    assert [s.attributes["gen_ai.conversation.id"] for s in r.spans if s.name.startswith("invoke_agent")] == ["done-1"]
    assert not any(s.status_code == 2 for s in r.spans)
    sent = [orjson.loads(line) for line in alerts.read_bytes().splitlines()] if alerts.exists() else []
    assert [a["kind"] for a in sent] == []  # no `failed` for the run we stopped watching (ended is off by default)
    assert b"ended without a result" in out  # the transcript still says where it was cut


def test_a_piped_run_live_is_the_same_trace_as_its_log_replayed(tmp_path):
    """The run span of a pipe that stays open is sent at the result; its ids equal those of the
    same log replayed from a file."""
    path = DIRECT if DIRECT.exists() else ROOT / "sample_streams" / "plain-tools.jsonl"
    data = path.read_bytes()
    with Receiver() as live, Receiver() as replayed:
        watch = subprocess.Popen(CMD + ["--plain", "--otlp-endpoint", live.url], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, env=cw_env(tmp_path))
        try:
            for line in data.splitlines(keepends=True):  # line by line, as an agent writes
                watch.stdin.write(line)
                watch.stdin.flush()
            live.wait(lambda s: any(x.name.startswith("invoke_agent") for x in s), timeout=30)
            assert watch.poll() is None  # the pipe is still open
        finally:
            watch.communicate(timeout=60)  # closes the pipe: the input ends
        assert watch.returncode == 0
        p = subprocess.run(CMD + ["--summary", "--otlp-endpoint", replayed.url, str(path)], capture_output=True,
                           cwd=ROOT, env=cw_env(tmp_path), timeout=60)
        sent_only(p.stderr)
        ids = lambda spans: sorted((s.trace_id, s.span_id, s.parent_id, s.name) for s in spans)  # noqa: E731
        assert ids(live.spans) == ids(replayed.spans) and len(live.spans) >= 2


def test_a_pipe_stopped_while_its_run_goes_on_sends_no_end_and_raises_no_failed_alert(tmp_path):
    alerts = tmp_path / "alerts.jsonl"
    with Receiver() as r:
        watch = Watcher(CMD + ["--plain", "--otlp-endpoint", r.url, "--alert-cmd", f"cat >> {alerts}"],
                        env=cw_env(tmp_path), stdin=subprocess.PIPE)
        try:
            watch.proc.stdin.write(session_stream("pipe-1", "long task", call("pipe-1", "p1", "started", 1000),
                                                  call("pipe-1", "p1", "completed", 1100),
                                                  call("pipe-1", "p2", "started", 1200), result=False))
            watch.proc.stdin.flush()
            r.wait(lambda s: len(s) == 1, timeout=30)  # p1's span
            watch.wait_for("▶ [2] shell  ls")  # p2's start: the watch has read it all
        finally:
            watch.signal(signal.SIGINT)
            code = watch.finish(60)
    assert code == 130, bytes(watch.err)
    assert [s.attributes["gen_ai.tool.call.id"] for s in r.spans] == ["p1"] and r.spans[0].status_code == 0
    assert not alerts.exists() or alerts.read_bytes() == b""


def test_content_switch_from_the_environment_and_the_resource(tmp_path):
    """OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true adds content as --otlp-content does;
    OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES reach the resource, with host.name."""
    path = ROOT / "sample_streams" / "plain-tools.jsonl"
    with Receiver() as plain, Receiver() as content:
        p = subprocess.run(CMD + ["--summary", "--otlp-endpoint", plain.url, str(path)], capture_output=True,
                           cwd=ROOT, env=cw_env(tmp_path), timeout=60)
        sent_only(p.stderr)
        env = cw_env(tmp_path, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true", OTEL_SERVICE_NAME="ci-agents",
                     OTEL_RESOURCE_ATTRIBUTES="deployment.environment=ci,team=build")
        p = subprocess.run(CMD + ["--summary", "--otlp-endpoint", content.url, str(path)], capture_output=True,
                           cwd=ROOT, env=env, timeout=60)
        sent_only(p.stderr)
    assert len(plain.spans) == len(content.spans) > 1
    assert not any(set(CONTENT_ATTRS) & set(s.attributes) for s in plain.spans)
    (root,) = [s for s in content.spans if s.name.startswith("invoke_agent")]
    assert "gen_ai.input.messages" in root.attributes and "gen_ai.output.messages" in root.attributes
    assert all("gen_ai.tool.call.arguments" in s.attributes for s in content.spans if s.name.startswith("execute_tool"))
    assert root.attributes["input.mime_type"] == "text/plain" and root.attributes["input.value"]
    assert plain.spans[0].resource["service.name"] == "cursor-watch"
    res = content.spans[0].resource
    assert res["service.name"] == "ci-agents" and res["deployment.environment"] == "ci" and res["team"] == "build"
    assert res["host.name"] == socket.gethostname() == plain.spans[0].resource["host.name"]


# -- the TUI -----------------------------------------------------------------------------------


class FailingSink:
    """Takes records and says, as the exporter process does when its backend refuses, that they
    could not be sent."""

    def __init__(self) -> None:
        self.failed = 0
        self.dropped = 0
        self.error = ""

    def put(self, record: dict) -> None:
        self.failed += 1
        self.error = "[Errno 111] Connection refused"

    def close(self) -> dict:
        return {"ok": 0, "failed": self.failed, "dropped": 0, "written": self.failed, "error": self.error, "done": True}


async def test_the_tui_diagnostics_pane_counts_spans_not_sent():
    from apphelpers import make_app, wait_ticks, wait_until
    from cursor_watch.tui.screens.run import RunScreen
    from cursor_watch.stream.sources import QueueSource
    from cursor_watch.tui.widgets.diagnostics import DiagnosticsPane

    class Clock:
        t = 1000.0

        def __call__(self) -> float:
            return self.t

    clock = Clock()
    source = QueueSource("agent")
    app = make_app(source, monotonic=clock)
    outlet = otlp.OtlpOutlet(FailingSink())
    app.outlets.otlp = outlet

    def pane_lines() -> list[str]:
        return [str(line) for line in app.screen.query_one(DiagnosticsPane).lines]

    async with app.run_test(size=(160, 40)) as pilot:
        await source.push(stream(shell("c1", "started", 1000, started=1000),
                                 shell("c1", "completed", 1500, completed=1400), result=False))
        await wait_until(pilot, lambda: isinstance(app.screen, RunScreen) and outlet.records == 1)
        clock.t += 1.5
        await wait_until(pilot, lambda: any("--otlp" in line for line in pane_lines()))
        assert [line for line in pane_lines() if "--otlp" in line] == [
            f"--otlp: 1 of 1 spans could not be sent to {otlp.describe_endpoint(None, otlp.protocol())} so far "
            "([Errno 111] Connection refused)"]
        await source.push(shell("c2", "started", 1600, started=1600) + shell("c2", "completed", 1700, completed=1690))
        await wait_until(pilot, lambda: outlet.records == 2)
        clock.t += 1.5
        await wait_until(pilot, lambda: any(line.startswith("--otlp: 2 of 2") for line in pane_lines()))
        # a line when the count has doubled (or the reason changed), not at every failure: a
        # dead backend must not fill the pane
        for n in (3, 4):
            await source.push(shell(f"c{n}", "started", 1700 + n, started=1700 + n)
                              + shell(f"c{n}", "completed", 1800 + n, completed=1800 + n))
            await wait_until(pilot, lambda: outlet.records == n)
            clock.t += 1.5
            await wait_ticks(pilot, app)  # a slow tick (its check of the export) has seen n records
        await wait_until(pilot, lambda: any(line.startswith("--otlp: 4 of 4") for line in pane_lines()))
        assert [line[:15] for line in pane_lines() if "--otlp" in line] == [
            "--otlp: 1 of 1 ", "--otlp: 2 of 2 ", "--otlp: 4 of 4 "]


@pytest.mark.e2e
@pytest.mark.parametrize("how", ["file", "pipe"])
def test_otlp_from_the_tui(tmp_path, how):
    """--otlp in the real TUI (run in tmux): a replayed file, and a pipe that stays open (its run
    span is sent at the result, while the TUI still reads it)."""
    from conftest import gone, wait_for
    from tmux import Tmux, python_pids

    path = ROOT / "sample_streams" / "plain-tools.jsonl"
    py, sample = shlex.quote(sys.executable), shlex.quote(str(path))
    mon = Monitor()
    mon.feed(path.read_bytes())
    mon.finish()
    expected = sum(len(r.session.tool_calls) + 1 + (otlp.usage_of(r.session) is not None) for r in mon.runs)
    with Receiver() as r:
        if how == "file":
            command = f"{py} -m cursor_watch --otlp-endpoint {r.url} {sample}"
        else:
            feed = shlex.quote(f"cat {sample}; sleep 120")
            command = f"sh -c {feed} | {py} -m cursor_watch --otlp-endpoint {r.url}"
        t = Tmux(command)
        try:
            t.wait_for("success", timeout=60)
            spans = r.wait(lambda s: len(s) == expected, timeout=60)
            assert "EXIT=" not in t.screen() and t.alternate_screen()  # the TUI is still up
            assert sum(s.name.startswith("invoke_agent") for s in spans) == len(mon.runs)
            (pid,) = python_pids(f"cursor_watch --otlp-endpoint {r.url}")
            t.keys("q")
            if how == "file":
                t.wait_for("EXIT=0")
            else:  # the shell waits for the writer's sleep: the TUI has quit when the screen is restored
                wait_for(lambda: not t.alternate_screen(), "the terminal restored")
            # it has exited, and its exporter (a child it waits for or stops) with it: every span is in
            wait_for(lambda: gone(pid), "cursor-watch to exit")
            assert len(r.spans) == expected  # nothing more, nothing twice
            assert "could not be sent" not in t.screen()
        finally:
            t.close()
