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

from cursor_watch import otlp

from conftest import ROOT, need, real_params, wait_for

pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="the [otel] extra (OTLP exporter) is not installed")

pytestmark = pytest.mark.phoenix  # needs arize-phoenix (conftest.BACKENDS)
MARKER = "test-marker: every span sent before me is stored"

PHOENIX_START_S = 240  # phoenix serve takes ~50 s to answer on a loaded 2-core machine
HERE = Path(__file__).resolve().parent


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


@pytest.mark.parametrize("path", real_params())
def test_real_capture_in_phoenix(phoenix: Phoenix, path: Path, project: str):
    done = watch(["--summary", "--json", str(path)], project, phoenix)
    plain = subprocess.run([sys.executable, "-m", "cursor_watch", "--summary", "--json", str(path)],
                           capture_output=True, cwd=ROOT)
    assert done.stdout == plain.stdout and done.returncode == plain.returncode  # the watch's output is unchanged
    assert done.stderr == b"", done.stderr  # every span was sent
    summaries = summaries_of(done.stdout)
    expected = sum(len(s["tool_calls"]) + 1 for s in summaries)
    spans = phoenix.wait_spans(project, expected)
    assert len(spans) == expected
    roots = [s for s in spans if s["parent_id"] is None]
    assert len(roots) == len(summaries)  # one trace per run
    assert len({s["context"]["trace_id"] for s in spans}) == len(summaries)
    for summary, root in zip(sorted(summaries, key=lambda s: s["session"].get("session_id") or ""),
                             sorted(roots, key=lambda r: r["attributes"].get("gen_ai.conversation.id") or "")):
        attrs = root["attributes"]
        assert root["name"] == "invoke_agent cursor" and attrs["gen_ai.operation.name"] == "invoke_agent"
        assert attrs.get("gen_ai.conversation.id") == summary["session"].get("session_id")
        usage = (summary["result"] or {}).get("usage") or {}
        for key, attr in (("input_tokens", "gen_ai.usage.input_tokens"), ("output_tokens", "gen_ai.usage.output_tokens"),
                          ("cache_read_tokens", "gen_ai.usage.cache_read.input_tokens"),
                          ("cache_write_tokens", "gen_ai.usage.cache_creation.input_tokens")):
            assert attrs.get(attr) == usage.get(key)
        assert root["status_code"] == ("UNSET" if summary["status"] == "success" else "ERROR")
        tools = {s["attributes"]["gen_ai.tool.call.id"]: s for s in spans
                 if s["context"]["trace_id"] == root["context"]["trace_id"] and s is not root}
        assert set(tools) == {c["call_id"] for c in summary["tool_calls"]}
        for call in summary["tool_calls"]:
            span = tools[call["call_id"]]
            assert span["name"] == f"execute_tool {call['tool']}"
            assert span["parent_id"] == root["context"]["span_id"]
            assert ms(span["start_time"]) == call["started_ms"]
            if call["completed_ms"] is not None:
                assert ms(span["end_time"]) == call["completed_ms"]
            assert span["status_code"] == ("UNSET" if call["status"] == "success" else "ERROR")
            if call["status"] != "success":
                assert span["attributes"]["error.type"]
        for span in spans:
            assert not {"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments",
                        "gen_ai.tool.call.result", "cursor_watch.tool.summary"} & set(span["attributes"])


@pytest.mark.parametrize("path", real_params())
def test_real_capture_content_in_phoenix(phoenix: Phoenix, path: Path, project: str):
    done = watch(["--summary", "--json", "--otlp-content", str(path)], project, phoenix)
    assert done.stderr == b"", done.stderr
    summaries = summaries_of(done.stdout)
    spans = phoenix.wait_spans(project, sum(len(s["tool_calls"]) + 1 for s in summaries))
    roots = {r["attributes"].get("gen_ai.conversation.id"): r for r in spans if r["parent_id"] is None}
    for summary in summaries:
        root = roots[summary["session"].get("session_id")]
        out = json.loads(root["attributes"]["gen_ai.output.messages"])
        text = "".join(p["content"] for p in out[0]["parts"] if p["type"] == "text")
        assert text == otlp.clean_content(summary["assistant_text"])
        if len(summary["assistant_text"]) <= otlp.CONTENT_CAP and "\x1b" not in summary["assistant_text"]:
            assert text == summary["assistant_text"]  # the reconstructed text, as it is


def test_same_log_twice_is_one_trace(phoenix: Phoenix, project: str):
    path = ROOT / "sample_streams" / "parallel-failed-rejected.jsonl"
    if not path.exists():
        path = sorted((ROOT / "sample_streams").glob("*.jsonl"))[0]
    first = watch(["--summary", "--json", str(path)], project, phoenix)
    summaries = summaries_of(first.stdout)
    expected = sum(len(s["tool_calls"]) + 1 for s in summaries)
    spans = phoenix.wait_spans(project, expected)
    again = watch(["--summary", "--json", str(path)], project, phoenix)
    assert again.stdout == first.stdout and again.stderr == b""  # every span sent (and answered)
    spans_after = phoenix.settled(project)  # a span the second watch sent is stored by now
    key = lambda s: (s["context"]["trace_id"], s["context"]["span_id"])  # noqa: E731
    assert len(spans) == expected
    assert sorted(map(key, spans_after)) == sorted(map(key, spans))  # the same ids: nothing new


def test_live_tool_span_arrives_before_the_run_ends(phoenix: Phoenix, tmp_path, project: str):
    go = tmp_path / "go"
    env = {**os.environ, "OTEL_RESOURCE_ATTRIBUTES": f"openinference.project.name={project}"}
    proc = subprocess.Popen([sys.executable, "-m", "cursor_watch", "--plain", "--otlp-endpoint", phoenix.url, "--",
                             sys.executable, str(HERE / "otlp_fake_agent.py"), str(go)],
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
    assert err == b""
    spans = phoenix.wait_spans(project, 2)
    assert sorted(s["name"] for s in spans) == ["execute_tool shell", "invoke_agent cursor"]


def test_grpc_protocol(phoenix: Phoenix, project: str):
    path = ROOT / "sample_streams" / "plain-tools.jsonl"
    env = {**os.environ, "OTEL_RESOURCE_ATTRIBUTES": f"openinference.project.name={project}",
           "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT": phoenix.grpc_url}
    done = subprocess.run([sys.executable, "-m", "cursor_watch", "--summary", "--json", "--otlp", str(path)],
                          capture_output=True, cwd=ROOT, env=env, timeout=120)
    assert done.stderr == b"", done.stderr
    summaries = summaries_of(done.stdout)
    expected = sum(len(s["tool_calls"]) + 1 for s in summaries)
    spans = phoenix.wait_spans(project, expected)
    assert len(spans) == expected
    assert {s["attributes"]["gen_ai.tool.call.id"] for s in spans if s["parent_id"]} == {
        c["call_id"] for s in summaries for c in s["tool_calls"]}
