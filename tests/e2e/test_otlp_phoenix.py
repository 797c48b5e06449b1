"""--otlp acceptance against a real OpenTelemetry backend: Arize Phoenix, started by the test.

``phoenix serve`` runs with a temporary ``PHOENIX_WORKING_DIR`` on free loopback ports; spans
arrive over OTLP/HTTP at ``/v1/traces`` and are read back with ``GET /v1/projects/{project}/spans``.
Each test sends to its own project (``OTEL_RESOURCE_ATTRIBUTES=openinference.project.name=...``:
the SDK's variable, read by the exporter process). Skipped, with the reason, where Phoenix
is not installed (the ``[test]`` extra installs it); under ``CI=true`` that is a failure.

"Nothing more arrived" is checked after a marker span sent last has been stored: Phoenix stores
spans in the order they arrive (``phoenix.db.bulk_inserter``: one queue, taken from its front),
so every span sent before the marker is in by then.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from datetime import datetime
from pathlib import Path

import pytest

from cursor_watch.outlets import otlp

from conftest import ROOT, need, real_params, wait_for

pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="the [otel] extra (OTLP exporter) is not installed")

pytestmark = pytest.mark.phoenix  # needs arize-phoenix (conftest.BACKENDS)
MARKER = "test-marker: every span sent before me is stored"

PHOENIX_START_S = 240  # phoenix serve takes ~50 s to answer on a loaded 2-core machine
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _phoenix_command() -> str | None:
    local = Path(sys.executable).parent / "phoenix"
    return str(local) if local.exists() else shutil.which("phoenix")


class Phoenix:
    def __init__(self, url: str, grpc_url: str) -> None:
        self.url = url
        self.grpc_url = grpc_url

    def spans(self, project: str) -> list[dict]:
        try:
            with urllib.request.urlopen(f"{self.url}/v1/projects/{project}/spans?limit=1000", timeout=10) as r:
                return json.load(r)["data"]
        except urllib.error.HTTPError as err:
            if err.code == 404:  # no span arrived yet: the project does not exist
                return []
            raise

    def graphql(self, query: str, **variables) -> dict:
        """Phoenix's GraphQL API (what its UI reads): ``data`` of the answer."""
        body = json.dumps({"query": query, "variables": variables}).encode()
        request = urllib.request.Request(f"{self.url}/graphql", data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as r:
            answer = json.load(r)
        assert not answer.get("errors"), answer["errors"]
        return answer["data"]

    def trace(self, project: str, trace_id: str) -> dict:
        """A trace as Phoenix's trace list shows it: ``latencyMs``, its root span's
        ``cumulativeTokenCountTotal`` (Phoenix sums the token counts of its LLM spans) and its
        ``costSummary`` (Phoenix's own computed cost, for models in its price table)."""
        data = self.graphql("""query ($name: String!, $id: ID!) { getProjectByName(name: $name) {
            trace(traceId: $id) { latencyMs rootSpan { name cumulativeTokenCountTotal }
                                  costSummary { total { tokens cost } } } } }""", name=project, id=trace_id)
        return data["getProjectByName"]["trace"]

    def delete(self, project: str) -> None:
        """Drop a project and its spans (span ids are unique across a Phoenix: each test starts
        from an empty project, and the same log sent by two tests has the same ids, by design)."""
        request = urllib.request.Request(f"{self.url}/v1/projects/{project}", method="DELETE")
        try:
            urllib.request.urlopen(request, timeout=10).close()
        except urllib.error.HTTPError as err:
            if err.code != 404:
                raise

    def sent_spans(self, project: str) -> list[dict]:
        """The project's spans but the test's markers."""
        return [s for s in self.spans(project) if s["name"] != MARKER]

    def settled(self, project: str) -> list[dict]:
        """The project's spans (but markers) once every span sent so far is stored: a marker span
        is sent (the SDK, OTLP/HTTP) and waited for (Phoenix stores spans in arrival order)."""
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor

        before = sum(s["name"] == MARKER for s in self.spans(project))
        provider = TracerProvider(resource=Resource.create({"openinference.project.name": project}))
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{self.url}/v1/traces", timeout=30)))
        provider.get_tracer("cursor-watch-tests").start_span(MARKER).end()
        provider.shutdown()
        wait_for(lambda: sum(s["name"] == MARKER for s in self.spans(project)) > before,
                 f"the marker span in Phoenix project {project}", 60, 0.2)
        return self.sent_spans(project)

    def wait_spans(self, project: str, count: int, timeout: float = 60.0) -> list[dict]:
        """The project's spans once at least ``count`` (markers aside) are stored and everything
        sent before this call is in (:meth:`settled`): more than ``count`` shows.

        Raises:
            AssertionError: fewer than ``count`` within ``timeout`` seconds."""
        wait_for(lambda: len(self.sent_spans(project)) >= count,
                 lambda: f"{count} spans in Phoenix project {project} (got {len(self.sent_spans(project))})",
                 timeout, 0.3)
        return self.settled(project)


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory):
    command = _phoenix_command()
    need(command, "arize-phoenix is not installed (pip install '.[test]' installs it)")
    work = tmp_path_factory.mktemp("phoenix")
    port, grpc_port = _free_port(), _free_port()
    env = {**os.environ, "PHOENIX_WORKING_DIR": str(work), "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(port),
           "PHOENIX_GRPC_PORT": str(grpc_port), "PHOENIX_TELEMETRY_ENABLED": "false"}
    log = open(work / "phoenix.log", "wb")
    proc = subprocess.Popen([command, "serve"], env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + PHOENIX_START_S
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"phoenix serve exited ({proc.returncode}): {(work / 'phoenix.log').read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{url}/healthz", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"phoenix serve did not answer in {PHOENIX_START_S} s")
                time.sleep(0.5)
        yield Phoenix(url, f"http://127.0.0.1:{grpc_port}")
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


def watch(args: list[str], project: str, phoenix: Phoenix, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "OTEL_RESOURCE_ATTRIBUTES": f"openinference.project.name={project}"}
    env.pop("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", None)
    return subprocess.run([sys.executable, "-m", "cursor_watch", "--otlp-endpoint", phoenix.url, *args],
                          capture_output=True, cwd=ROOT, env=env, timeout=120, **kw)


def summaries_of(stdout: bytes) -> list[dict]:
    """``--summary --json``: one indented object for one run, else one object a line."""
    try:
        return [json.loads(stdout)]
    except json.JSONDecodeError:
        return [json.loads(line) for line in stdout.splitlines()]


def ms(iso: str) -> int:
    return round(datetime.fromisoformat(iso).timestamp() * 1000)


@pytest.fixture
def project(phoenix: Phoenix, request):
    """A project name of this test's own, deleted afterwards."""
    name = "p-" + "".join(c if c.isalnum() else "-" for c in request.node.name)[-60:]
    phoenix.delete(name)
    yield name
    phoenix.delete(name)


AGENTS_DIR = ROOT.parent / "shared" / "streams" / "agents"


def agent_params():
    """Every shared capture of every agent: Cursor's (real_params) and Claude Code's, Codex's and
    Gemini CLI's (../shared/streams/agents/*/)."""
    caps = sorted(p for p in AGENTS_DIR.glob("*/*") if p.suffix in (".jsonl", ".ndjson")) if AGENTS_DIR.is_dir() else []
    return real_params() + [pytest.param(p, id=f"{p.parent.name}-{p.name[-50:]}") for p in caps]


def tokens_of(usage: dict | None) -> int:
    """Every token once, from a summary's usage object (canonical: input includes the cached
    ones; Gemini CLI's thinking counted apart from its output)."""
    if not usage:
        return 0
    total = (usage.get("input_tokens") or 0) + (usage.get("output_tokens") or 0)
    if usage.get("reasoning_in_output") is False:
        total += usage.get("reasoning_tokens") or 0
    return total


def expected_usage(summary: dict) -> tuple[int, int]:
    """``(chat spans, total tokens)`` of a run from ``--summary --json``: one chat span per
    model where the agent reports usage per model (the trace's tokens then theirs: Claude Code's
    ``modelUsage`` also counts calls ``result.usage`` leaves out), else one for the run when it
    reports usage or a cost."""
    result = summary["result"] or {}
    per_model = {m: u for m, u in (result.get("model_usage") or {}).items() if u}
    if per_model:
        return len(per_model), sum(tokens_of(u) for u in per_model.values())
    if result.get("usage") or result.get("cost_usd") is not None:
        return 1, tokens_of(result.get("usage"))
    return 0, 0


def live_tokens(path: Path) -> dict:
    """``{session id: total tokens}`` of the runs of a capture whose result reports no usage, from
    the usage the agent reported as the run went (:func:`cursor_watch.core.costs.usage_of`)."""
    from cursor_watch.core.costs import usage_of
    from cursor_watch.stream.watch import Monitor

    mon = Monitor(live=False)
    mon.feed(path.read_bytes())
    mon.finish()
    out = {}
    for run in mon.runs:
        usage = usage_of(run.session)
        if usage is not None and run.session.result is not None and run.session.result.usage is None:
            out[run.session.session_id] = usage.total_tokens or 0
    return out


def sent_spans(stderr: bytes) -> int:
    """The watch said it sent every span and nothing else; returns how many."""
    m = re.fullmatch(rb"cursor-watch: --otlp: (\d+) spans of (\d+) runs sent to \S+(?: \(runs dated .+ to .+\))?\n", stderr)
    assert m, stderr
    return int(m.group(1))


@pytest.mark.parametrize("path", agent_params())
def test_real_capture_in_phoenix(phoenix: Phoenix, path: Path, project: str):
    done = watch(["--summary", "--json", str(path)], project, phoenix)
    plain = subprocess.run([sys.executable, "-m", "cursor_watch", "--summary", "--json", str(path)],
                           capture_output=True, cwd=ROOT)
    assert done.stdout == plain.stdout and done.returncode == plain.returncode  # the watch's output is unchanged
    summaries = summaries_of(done.stdout)
    expected = sum(len(s["tool_calls"]) + 1 + expected_usage(s)[0] for s in summaries)
    assert sent_spans(done.stderr) == expected  # every span was sent, and it says so
    spans = phoenix.wait_spans(project, expected)
    assert len(spans) == expected
    roots = [s for s in spans if s["parent_id"] is None]
    assert len(roots) == len(summaries)  # one trace per run
    assert len({s["context"]["trace_id"] for s in spans}) == len(summaries)
    by_trace = {r["context"]["trace_id"]: [s for s in spans if s["context"]["trace_id"] == r["context"]["trace_id"]]
                for r in roots}
    # match each run to its trace: the session id, its tool calls, the reported duration
    matched = {}
    for summary in summaries:
        want_calls = {c["call_id"] for c in summary["tool_calls"]}
        candidates = [r for r in roots if r["context"]["trace_id"] not in matched.values()
                      and r["attributes"].get("gen_ai.conversation.id") == summary["session"].get("session_id")
                      and {s["attributes"].get("gen_ai.tool.call.id") for s in by_trace[r["context"]["trace_id"]]
                           if s["span_kind"] == "TOOL"} == want_calls]
        duration = (summary["result"] or {}).get("duration_ms")
        if duration:
            timed = [r for r in candidates if ms(r["end_time"]) - ms(r["start_time"]) == duration]
            candidates = timed or candidates
        assert candidates, summary["session"]
        matched[id(summary)] = candidates[0]["context"]["trace_id"]
    for summary in summaries:
        trace_id = matched[id(summary)]
        mine = by_trace[trace_id]
        (root,) = [s for s in mine if s["parent_id"] is None]
        attrs = root["attributes"]
        agent = summary["session"].get("agent") or "cursor"
        assert root["name"] == f"invoke_agent {agent}" and attrs["gen_ai.operation.name"] == "invoke_agent"
        assert root["span_kind"] == "AGENT"
        assert attrs.get("gen_ai.conversation.id") == summary["session"].get("session_id") == attrs.get("session.id")
        assert root["status_code"] == ("UNSET" if summary["status"] == "success" else "ERROR")
        result = summary["result"] or {}
        # usage and cost on the LLM spans, counted by Phoenix per trace
        n_llm, tokens = expected_usage(summary)
        llms = [s for s in mine if s["span_kind"] == "LLM"]
        assert len(llms) == n_llm
        assert all(s["parent_id"] == root["context"]["span_id"] and s["name"].startswith("chat") for s in llms)
        seen = phoenix.trace(project, trace_id)
        if result and not result.get("usage") and not result.get("model_usage"):
            # a result without usage (Claude Code 2.1's in claude_stream_mcp_2_1): the usage its
            # messages reported as it went (costs.usage_of), which --summary --json does not show
            tokens = live_tokens(path).get(summary["session"].get("session_id"), 0)
        assert (seen["rootSpan"]["cumulativeTokenCountTotal"] or 0) == tokens, (seen, summary["result"])
        if result.get("cost_usd") is not None:  # the cost the agent reported, on its LLM spans
            assert sum(s["attributes"]["llm.cost.total"] for s in llms) == pytest.approx(result["cost_usd"])
        else:
            assert not any("llm.cost.total" in s["attributes"] for s in llms)
        # the trace's latency is the run's reported duration (where it reports one and no event lies before it)
        duration = result.get("duration_ms")
        if duration:
            assert seen["latencyMs"] >= duration - 1
            first = min([ms(root["end_time"]) - duration] + [c["started_ms"] for c in summary["tool_calls"]
                                                             if c["started_ms"] is not None])
            if first == ms(root["end_time"]) - duration:
                assert round(seen["latencyMs"]) == duration, (seen, duration)
        tools = {s["attributes"]["gen_ai.tool.call.id"]: s for s in mine if s["span_kind"] == "TOOL"}
        assert set(tools) == {c["call_id"] for c in summary["tool_calls"]}
        assert {s["span_kind"] for s in mine} <= {"AGENT", "LLM", "TOOL"}
        for call in summary["tool_calls"]:
            span = tools[call["call_id"]]
            if call.get("kind") != "mcp":
                assert span["name"] == f"execute_tool {call['tool']}"
            else:
                assert span["attributes"]["cursor_watch.mcp.tool"] and "mcp_tool_call" not in span["name"]
            assert span["parent_id"] in {root["context"]["span_id"]} | {s["context"]["span_id"] for s in tools.values()}
            if call["started_ms"] is not None:
                assert ms(span["start_time"]) == call["started_ms"]
            if call["completed_ms"] is not None:
                assert ms(span["end_time"]) == call["completed_ms"]
            assert span["status_code"] == ("UNSET" if call["status"] == "success" else "ERROR")
            if call["status"] != "success":
                assert span["attributes"]["error.type"]
        for span in mine:
            assert not {"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments",
                        "gen_ai.tool.call.result", "cursor_watch.tool.summary", "input.value",
                        "output.value"} & set(span["attributes"])


def test_phoenix_counts_tokens_and_cost_on_every_agent(phoenix: Phoenix, project: str):
    """The project as Phoenix's trace list and project card show it: every agent's runs in one
    project, its total tokens those of the runs, spans of the kinds AGENT, LLM and TOOL."""
    paths = [p.values[0] for p in agent_params() if p.values[0] is not None]
    if not paths:
        pytest.skip("no shared captures here (a user's clone has none)")
    paths = [p for p in paths if p.parent.name in ("claude", "codex", "gemini")][:6] + paths[:1]
    total, spans_sent = 0, 0
    for path in paths:
        done = watch(["--summary", "--json", str(path)], project, phoenix)
        spans_sent += sent_spans(done.stderr)
        total += sum(expected_usage(s)[1] for s in summaries_of(done.stdout))
        total += sum(live_tokens(path).values())  # runs whose result reports no usage: what their messages did
    spans = phoenix.wait_spans(project, spans_sent)
    assert {s["span_kind"] for s in spans} == {"AGENT", "LLM", "TOOL"}
    data = phoenix.graphql("""query ($name: String!) { getProjectByName(name: $name) {
        tokenCountTotal(timeRange: {start: "1970-01-01T00:00:00Z"}) } }""", name=project)
    assert data["getProjectByName"]["tokenCountTotal"] == total


@pytest.mark.parametrize("path", agent_params())
def test_real_capture_content_in_phoenix(phoenix: Phoenix, path: Path, project: str):
    done = watch(["--summary", "--json", "--otlp-content", str(path)], project, phoenix)
    summaries = summaries_of(done.stdout)
    spans = phoenix.wait_spans(project, sent_spans(done.stderr))
    roots = [r for r in spans if r["parent_id"] is None]
    for summary in summaries:
        mine = [r for r in roots if r["attributes"].get("gen_ai.conversation.id") == summary["session"].get("session_id")]
        prompt = summary["session"].get("prompt")
        final = (summary["result"] or {}).get("text") or next(
            (seg for seg in reversed(summary.get("segments") or []) if seg), None)
        # Phoenix's Input and Output panes: the prompt and the final text, as the agent wrote them
        # (redacted: --no-redact is not given; the shared captures hold no secret)
        want = (otlp.clean_content(prompt) if prompt is not None else None,
                otlp.clean_content(final) if final is not None else None)
        got = {(r["attributes"].get("input.value"), r["attributes"].get("output.value")) for r in mine}
        assert want in got, (want, got)
        for r in mine:
            if "input.value" in r["attributes"]:
                assert r["attributes"]["input.mime_type"] == "text/plain"
            if "output.value" in r["attributes"]:
                assert r["attributes"]["output.mime_type"] == "text/plain"
    for span in spans:
        if span["span_kind"] == "TOOL" and "input.value" in span["attributes"]:
            assert span["attributes"]["input.mime_type"] == "application/json"
            json.loads(span["attributes"]["input.value"])  # the arguments as the agent wrote them


def test_same_log_twice_is_one_trace(phoenix: Phoenix, project: str):
    path = ROOT / "sample_streams" / "parallel-failed-rejected.jsonl"
    if not path.exists():
        path = sorted((ROOT / "sample_streams").glob("*.jsonl"))[0]
    first = watch(["--summary", "--json", str(path)], project, phoenix)
    assert summaries_of(first.stdout)
    expected = sent_spans(first.stderr)
    spans = phoenix.wait_spans(project, expected)
    again = watch(["--summary", "--json", str(path)], project, phoenix)
    assert again.stdout == first.stdout and sent_spans(again.stderr) == expected
    spans_after = phoenix.settled(project)  # a span the second watch sent is stored by now
    key = lambda s: (s["context"]["trace_id"], s["context"]["span_id"])  # noqa: E731
    assert len(spans) == expected
    assert sorted(map(key, spans_after)) == sorted(map(key, spans))  # the same ids: nothing new


def test_live_tool_span_arrives_before_the_run_ends(phoenix: Phoenix, tmp_path, project: str):
    go = tmp_path / "go"
    env = {**os.environ, "OTEL_RESOURCE_ATTRIBUTES": f"openinference.project.name={project}"}
    proc = subprocess.Popen([sys.executable, "-m", "cursor_watch", "--plain", "--otlp-endpoint", phoenix.url, "--",
                             sys.executable, str(FIXTURES / "otlp_fake_agent.py"), str(go)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, env=env)
    try:
        spans = phoenix.wait_spans(project, 1, timeout=60)
        assert proc.poll() is None and not go.exists()  # the run goes on
        assert [s["name"] for s in spans] == ["execute_tool shell"]
        assert spans[0]["attributes"]["gen_ai.tool.call.id"] == "call_live\nfc_1"
        assert spans[0]["end_time"] > spans[0]["start_time"]
    finally:
        go.write_text("go")
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    spans = phoenix.wait_spans(project, sent_spans(err))
    assert sorted(s["name"] for s in spans if not s["name"].startswith("chat")) == ["execute_tool shell",
                                                                                   "invoke_agent cursor"]


def test_grpc_protocol(phoenix: Phoenix, project: str):
    path = ROOT / "sample_streams" / "plain-tools.jsonl"
    env = {**os.environ, "OTEL_RESOURCE_ATTRIBUTES": f"openinference.project.name={project}",
           "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT": phoenix.grpc_url}
    done = subprocess.run([sys.executable, "-m", "cursor_watch", "--summary", "--json", "--otlp", str(path)],
                          capture_output=True, cwd=ROOT, env=env, timeout=120)
    expected = sent_spans(done.stderr)
    summaries = summaries_of(done.stdout)
    spans = phoenix.wait_spans(project, expected)
    assert len(spans) == expected
    assert {s["attributes"]["gen_ai.tool.call.id"] for s in spans if s["span_kind"] == "TOOL"} == {
        c["call_id"] for s in summaries for c in s["tool_calls"]}
