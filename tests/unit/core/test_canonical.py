"""The canonical events: one vocabulary and one meaning for every agent.

Checked on every shared real capture of every agent (``../shared/streams/real/`` and
``../shared/streams/agents/``), against figures read from the captures themselves, not from the
adapters: usage in one meaning (OpenTelemetry GenAI's), budgets and estimates on it, the report's
totals, no time that was never recorded (and a run starts at its first timed event), raw payloads
that are the agent's own JSON, and the import structure that keeps the model and the views free of
any agent's format.
"""

from __future__ import annotations

import ast
import datetime as dt
import json
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import orjson
import pytest

from captures import AUTOCOMPACT, need
from command import cw
from conftest import REAL_DIR, ROOT, SAMPLES, agent_captures, expected_exit, native_objects

from cursor_watch.core.costs import estimate, price_table, usage_of
from cursor_watch.formats import line_object
from cursor_watch.core.limits import Limits, breaches
from cursor_watch.stream.payloads import load_payloads
from cursor_watch.views.report import build_report
from cursor_watch.stream.watch import Monitor
from cursor_watch.core.tools import find_variant
from replays import replay, replayed

AGENTS_DIR = ROOT.parent / "shared" / "streams" / "agents"
PKG = ROOT / "cursor_watch"


def all_captures() -> list[Path]:
    out = []
    if REAL_DIR.is_dir():
        out += sorted(p for p in REAL_DIR.iterdir() if p.suffix in (".jsonl", ".ndjson"))
    out += agent_captures()
    return out


def capture_params():
    caps = all_captures()
    if not caps:
        return [pytest.param(None, marks=pytest.mark.skip(reason="shared captures not found (a user's clone has none)"))]
    return [pytest.param(p, id=f"{p.parent.name}-{p.name[:50]}") for p in caps]


# -- one meaning for usage ----------------------------------------------------------------------

@pytest.mark.parametrize("path", capture_params())
def test_input_tokens_include_the_cache_parts_everywhere(path):
    for run in replay(path).runs:
        s = run.session
        usages = [u for u in (usage_of(s), s.usage) if u is not None]
        if s.result is not None and s.result.model_usage:
            usages += [u for u, _cost in s.result.model_usage.values() if u is not None]
        for u in usages:
            if u.input_tokens is not None:
                assert u.input_tokens >= (u.cache_read_tokens or 0) + (u.cache_write_tokens or 0), (path.name, u)
                assert u.uncached_input_tokens == u.input_tokens - (u.cache_read_tokens or 0) - (u.cache_write_tokens or 0)


def _stream_usage(agent: str, obj: dict) -> tuple[int, int] | None:
    """``(input including the cache, output)`` of a run-ending object, read here from the agent's
    own keys (docs/formats.md's mapping, written again independently of the adapters)."""
    if agent == "codex" and obj.get("type") == "turn.completed":
        u = obj["usage"]
        return u["input_tokens"], u["output_tokens"]
    if agent == "gemini" and obj.get("type") == "result" and isinstance(obj.get("stats"), dict):
        st = obj["stats"]
        return st["input_tokens"], st["output_tokens"]
    if obj.get("type") == "result" and isinstance(obj.get("usage"), dict):
        u = obj["usage"]
        if agent == "claude":
            return (u["input_tokens"] + u.get("cache_read_input_tokens", 0) + u.get("cache_creation_input_tokens", 0),
                    u["output_tokens"])
        return (u["inputTokens"] + u.get("cacheReadTokens", 0) + u.get("cacheWriteTokens", 0), u["outputTokens"])
    return None


@pytest.mark.parametrize("path", capture_params())
def test_run_usage_is_the_streams_own_figure_in_the_canonical_meaning(path):
    agent = path.parent.name if path.parent.name != "real" else "cursor"
    want = [u for u in (_stream_usage(agent, o) for o in native_objects(path)) if u is not None]
    got = [(s.result.usage.input_tokens, s.result.usage.output_tokens) for s in (r.session for r in replay(path).runs)
           if s.result is not None and s.result.usage is not None]
    if agent == "codex":  # a running total of the thread: one thread per capture, so each run's own = the total
        assert got == want
    else:
        assert got == want


@pytest.mark.parametrize("path", capture_params())
def test_max_tokens_trips_exactly_when_the_run_passes_it(path):
    for run in replay(path).runs:
        s = run.session
        u = usage_of(s)
        if u is None or u.total_tokens is None:
            assert breaches(s, Limits(max_tokens=0)) == []
            continue
        total = u.total_tokens
        assert total == (u.input_tokens or 0) + (u.output_tokens or 0) + (
            u.reasoning_tokens if u.reasoning_tokens is not None and u.reasoning_in_output is False else 0)
        over = breaches(s, Limits(max_tokens=total - 1))
        assert [b.budget for b in over] == ["tokens"] and over[0].value == total
        assert breaches(s, Limits(max_tokens=total)) == []


def test_codex_cached_tokens_are_counted_once():
    """The issue's case: the shared Codex 0.160 capture used 62,755 + 408 tokens; --max-tokens
    60000 trips at 63,163 (it tripped at 120,379 when cached tokens counted twice)."""
    path = AGENTS_DIR / "codex" / "mccorvie__TauCetiWorker__tests__fixtures__codex_exec_mcp_0_160.jsonl"
    if not path.exists():
        pytest.skip(f"{path.name} not found (a user's clone has none)")
    (run,) = replay(path).runs
    (breach,) = breaches(run.session, Limits(max_tokens=60000))
    assert breach.value == 62755 + 408
    p = subprocess.run([sys.executable, "-m", "cursor_watch", "--summary", "--json", "--max-tokens", "60000", str(path)],
                       capture_output=True, env={**os.environ, "CURSOR_WATCH_NO_TUI": "1"}, timeout=60)
    assert json.loads(p.stdout)["budget"][0]["value"] == 63163


@pytest.mark.parametrize("path", capture_params())
def test_the_cost_estimate_prices_each_token_once(path):
    table = price_table()
    for run in replay(path).runs:
        s = run.session
        u = usage_of(s)
        price = table.get(s.model)
        if u is None or price is None or u.input_tokens is None:
            continue
        cost = estimate(u, s.model, table)
        out = (u.output_tokens or 0) + (u.reasoning_tokens or 0 if u.reasoning_in_output is False else 0)
        want = Decimal(0)
        for tokens, rate in ((u.input_tokens - (u.cache_read_tokens or 0) - (u.cache_write_tokens or 0), price.input),
                             (u.cache_read_tokens or 0, price.cache_read), (u.cache_write_tokens or 0,
                                                                             price.rate("cache_write")),
                             (out, price.output)):
            if tokens:
                want += tokens * rate
        assert cost.estimate == want / Decimal(1_000_000), path.name


def test_report_totals_are_the_sum_of_the_runs():
    paths = all_captures() + sorted(SAMPLES.glob("*.jsonl"))
    report = build_report([str(p) for p in paths])
    runs = [r for p in paths for r in replay(p).runs]
    assert report.total.runs == len(runs)
    for key in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens"):
        want = sum((getattr(usage_of(r.session), key) or 0) if usage_of(r.session) is not None else 0 for r in runs)
        assert report.total.tokens[key] == want, key
    assert report.total.tool_calls == sum(len(r.session.tool_calls) for r in runs)


# -- no invented times ----------------------------------------------------------------------------

TIMELESS = [p for p in all_captures() if p.parent.name == "codex"]


def timeless_params():
    if not TIMELESS:
        return [pytest.param(None, marks=pytest.mark.skip(reason="Codex captures not found (a user's clone has none)"))]
    return [pytest.param(p, id=p.name[:50]) for p in TIMELESS]


@pytest.mark.parametrize("path", timeless_params())
def test_a_stream_without_times_has_none_in_any_outlet(path, tmp_path):
    env = {**os.environ, "CURSOR_WATCH_NO_TUI": "1"}
    summary = json.loads(subprocess.run([sys.executable, "-m", "cursor_watch", "--summary", "--json", str(path)],
                                        capture_output=True, env=env, timeout=60).stdout)
    assert summary["result"] is None or summary["result"]["duration_ms"] is None
    for call in summary["tool_calls"]:
        assert (call["started_ms"], call["completed_ms"], call["duration_ms"]) == (None, None, None)
    report = json.loads(subprocess.run([sys.executable, "-m", "cursor_watch", "report", "--json", str(path)],
                                       capture_output=True, env=env, timeout=60).stdout)
    assert report["total"]["duration_ms"] is None and report["slowest_calls"] == []
    assert all(t["total_ms"] is None and t["max_ms"] is None for t in report["tools"])
    html = tmp_path / "run.html"
    subprocess.run([sys.executable, "-m", "cursor_watch", "--export", str(html), str(path)], env=env, timeout=60,
                   capture_output=True)
    text = html.read_text()
    assert "1970" not in text and ">0 ms<" not in text and " 0 ms" not in text


def _spans(otlp: dict) -> list[dict]:
    return [sp for rs in otlp["resourceSpans"] for ss in rs["scopeSpans"] for sp in ss["spans"]]


@pytest.mark.parametrize("path", capture_params())
def test_every_otlp_child_span_lies_inside_its_parent_and_none_is_from_1970(path, tmp_path):
    pytest.importorskip("opentelemetry.sdk", reason="the [otel] extra is not installed")
    out = tmp_path / "t.otlp.json"
    p = subprocess.run([sys.executable, "-m", "cursor_watch", "--export", str(out), str(path)],
                       capture_output=True, env={**os.environ, "CURSOR_WATCH_NO_TUI": "1"}, timeout=120)
    assert p.returncode == expected_exit(path.read_bytes()), p.stderr
    spans = []
    for line in out.read_text().splitlines():
        if line.strip():
            spans += _spans(json.loads(line))
    by_id = {sp["spanId"]: sp for sp in spans}
    year_2020 = int(dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc).timestamp() * 1e9)
    for sp in spans:
        start, end = int(sp["startTimeUnixNano"]), int(sp["endTimeUnixNano"])
        assert year_2020 < start <= end, (path.name, sp["name"])
        parent = by_id.get(sp.get("parentSpanId", ""))
        if parent is not None:
            assert int(parent["startTimeUnixNano"]) <= start and end <= int(parent["endTimeUnixNano"]), \
                (path.name, sp["name"], parent["name"])


# the run's start is its first event with a time, a leading thinking-only message too

def test_started_is_the_leading_thinking_message(tmp_path):
    """The capture's first timed line is line 2, an assistant message with only a thinking
    block (15:53:29.432); the run's start was taken from line 3's tool_use (15:53:30.709)."""
    from cursor_watch.views.export.common import format_when
    from cursor_watch.formats.common import iso_ms

    need(AUTOCOMPACT)
    line2 = orjson.loads(AUTOCOMPACT.read_bytes().splitlines()[1])
    assert [c["type"] for c in line2["message"]["content"]] == ["thinking"]
    first = iso_ms(line2["timestamp"])
    html = tmp_path / "run.html"
    assert cw("--export", str(html), str(AUTOCOMPACT)).returncode == 0
    assert format_when(first) == "2026-09-30 15:53:29.432 UTC" and format_when(first) in html.read_text()
    otlp = tmp_path / "run.otlp.json"
    assert cw("--export", str(otlp), str(AUTOCOMPACT)).returncode == 0
    spans = [sp for rs in json.loads(otlp.read_text())["resourceSpans"] for ss in rs["scopeSpans"]
             for sp in ss["spans"]]
    runs = sorted(int(sp["startTimeUnixNano"]) for sp in spans if "parentSpanId" not in sp or not sp["parentSpanId"])
    s = replayed(AUTOCOMPACT)
    assert s.first_ts_ms == first  # what the header's elapsed time counts from
    # the run span starts at the first timed event or earlier, where the reported duration says the
    # run began before it (the trace's latency is the run's duration)
    assert runs[0] == min(first, s.last_ts_ms - s.result.duration_ms) * 1_000_000


# -- raw is raw -------------------------------------------------------------------------------------

def _native_call(agent: str, started: dict | None, ended: dict | None, call_id: str) -> tuple:
    """``(args, result)`` of a call as the agent wrote it, read here by each agent's rule."""
    args = result = None
    if agent == "cursor":
        for data in (started, ended):
            if data is not None:
                _tool, body = find_variant(data.get("tool_call"))
                if args is None and isinstance(body.get("args"), dict):
                    args = body["args"]
                if data is ended and "result" in body:
                    result = body["result"]
    elif agent == "claude":
        if started is not None:
            blocks = started.get("message", {}).get("content") if started.get("type") == "assistant" else \
                [started["event"]["content_block"]]
            args = next(b["input"] for b in blocks if isinstance(b, dict) and b.get("id") == call_id)
        if ended is not None and ended.get("type") == "user":
            result = next(b for b in ended["message"]["content"] if isinstance(b, dict) and b.get("tool_use_id") == call_id)
        elif ended is not None and ended.get("type") == "result":
            result = next(d for d in ended["permission_denials"] if d.get("tool_use_id") == call_id)
    elif agent == "codex":
        args = started["item"] if started is not None else None
        result = ended["item"] if ended is not None else None
    elif agent == "gemini":
        args = started["parameters"] if started is not None else None
        result = {k: v for k, v in ended.items() if k not in ("type", "timestamp")} if ended is not None else None
    return args, result


@pytest.mark.parametrize("path", capture_params())
def test_raw_arguments_and_result_are_the_agents_own_json(path):
    agent = path.parent.name if path.parent.name != "real" else "cursor"
    checked = 0
    for run in replay(path).runs:
        for call in run.session.tool_calls.values():
            found, note = load_payloads(call, run.reread, run.session.agent)
            assert note == ""
            started = line_object(run.reread(*call.start_span)) if call.start_span else None
            ended = line_object(run.reread(*call.end_span)) if call.end_span else None
            want_args, want_result = _native_call(agent, started, ended, call.call_id)
            if want_args is None and started is None and ended is not None and agent == "cursor":
                want_args = None
            assert found.result == want_result, (path.name, call.call_id)
            if started is not None or agent == "cursor":
                assert found.args == want_args, (path.name, call.call_id)
            checked += 1
    tool_lines = sum(1 for o in native_objects(path) if o.get("type") in ("tool_call", "tool_use", "item.started"))
    if tool_lines:
        assert checked


# -- the structure ------------------------------------------------------------------------------------

VIEWS = ["core/model.py", "core/runs.py", "tui/app.py", "views/plain.py", "views/summary.py", "views/report.py", "outlets/otlp.py", "outlets/otlp_sdk.py", "outlets/alerts.py",
         "core/limits.py", "core/costs.py", *(f"tui/screens/{p.name}" for p in (PKG / "tui" / "screens").glob("*.py")),
         *(f"tui/widgets/{p.name}" for p in (PKG / "tui" / "widgets").glob("*.py")),
         *(f"views/export/{p.name}" for p in (PKG / "views" / "export").glob("*.py"))]


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            out.append((node.level, node.module or ""))
        elif isinstance(node, ast.Import):
            out += [(0, a.name) for a in node.names]
    return out


@pytest.mark.parametrize("name", VIEWS)
def test_the_model_and_views_import_no_adapter(name):
    for level, module in _imports(PKG / name):
        assert "formats" not in module.split("."), f"{name} imports {module}"
        assert not module.startswith("cursor_watch.formats")


@pytest.mark.parametrize("path", sorted(PKG.rglob("*.py")), ids=lambda p: str(p.relative_to(PKG)))
def test_no_import_sits_in_the_middle_of_a_module(path):
    body = ast.parse(path.read_text()).body
    seen_other = False
    for node in body:
        is_import = isinstance(node, (ast.Import, ast.ImportFrom))
        is_doc = isinstance(node, ast.Expr) and isinstance(getattr(node, "value", None), ast.Constant)
        if is_import:
            assert not seen_other, f"{path.name}: an import on line {node.lineno} after the module's code began"
        elif not is_doc:
            seen_other = True


def test_the_runner_has_no_per_segment_event_count_corrections():
    text = (PKG / "stream" / "watch.py").read_text() + (PKG / "formats" / "__init__.py").read_text()
    assert "corrections" not in text and "_count_native" not in text


def test_the_model_never_names_an_agent():
    """No string the model's code compares or looks up is an agent's name or one of its event
    types (docstrings aside)."""
    tree = ast.parse((PKG / "core" / "model.py").read_text())
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef)) and n.body and isinstance(n.body[0], ast.Expr)}
    strings = {n.value.lower() for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
               and id(n) not in docs}
    for name in ("claude", "claude-code", "codex", "gemini", "gemini-cli", "cursor", "cursor-agent", "tool_call",
                 "assistant", "stream_event", "item.completed", "tool_use"):
        assert name not in strings, name


# -- formats it does not read ---------------------------------------------------------------------------

OPENCODE = b"".join(json.dumps(e).encode() + b"\n" for e in [
    {"type": "step_start", "timestamp": 1767225600123, "sessionID": "ses_3ffca45a2ffef1fjbYFDGFsNIm",
     "part": {"id": "prt_1", "sessionID": "ses_3ffca45a2ffef1fjbYFDGFsNIm", "messageID": "msg_1", "type": "step-start"}},
    {"type": "tool_use", "timestamp": 1767225601877, "sessionID": "ses_3ffca45a2ffef1fjbYFDGFsNIm",
     "part": {"id": "prt_2", "type": "tool", "callID": "call_9f2", "tool": "bash",
              "state": {"status": "completed", "input": {"command": "ls"}, "output": "README.md\n"}}},
    {"type": "text", "timestamp": 1767225603010, "sessionID": "ses_3ffca45a2ffef1fjbYFDGFsNIm",
     "part": {"id": "prt_4", "type": "text", "text": "There is one file."}},
    {"type": "step_finish", "timestamp": 1767225603020, "sessionID": "ses_3ffca45a2ffef1fjbYFDGFsNIm",
     "part": {"id": "prt_5", "type": "step-finish", "reason": "stop", "cost": 0.0031,
              "tokens": {"input": 1200, "output": 40, "reasoning": 0, "cache": {"read": 16272, "write": 0}}}},
])
ANTIGRAVITY = b"".join(json.dumps(e).encode() + b"\n" for e in [
    {"event": "init", "conversation_id": "d46", "init": {"model": "gemini-3.8-flash-low", "cwd": "/tmp"}},
    {"event": "step_update", "step_update": {"step_index": 1, "state": "ACTIVE", "step_type": "agent_response",
                                             "text_delta": "hi"}},
    {"event": "result", "result": {"status": "SUCCESS", "response": "hi", "duration_seconds": 2.5}},
])


@pytest.mark.parametrize("data,name", [(OPENCODE, "OpenCode"), (ANTIGRAVITY, "Antigravity")])
def test_a_format_it_does_not_read_is_never_taken_for_another_agents(data, name):
    mon = Monitor(live=False)
    mon.feed(data)
    mon.finish()
    (run,) = mon.runs
    s = run.session
    assert s.agent == "unknown" and not s.tool_calls and s.prompt is None and not s.segments
    assert s.unknown_events == data.count(b"\n") and s.events == data.count(b"\n")
    (note, *_rest) = [n for n in s.notes if n.kind == "format"]
    assert name in note.text and "not a stream cursor-watch reads" in note.text
