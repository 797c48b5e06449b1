"""--otlp with a dead backend: refusing, hanging, answering 500. The watch's output and exit
status stay those of a watch without --otlp, it ends within its flush limit, and it says on
stderr how many spans could not be sent."""

from __future__ import annotations

import http.server
import os
import re
import socket
import subprocess
import sys
import threading
import time

import pytest

from cursor_watch.outlets import otlp

from conftest import ROOT

pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="the [otel] extra (OTLP exporter) is not installed")

SAMPLES = ROOT / "sample_streams"
# the watch's own start-up and replay (seconds on a loaded machine), then the exit wait: at most
# EXIT_WAIT_S in all (the exporter's start included), then STOP_S to stop it
LIMIT_S = otlp.EXIT_WAIT_S + otlp.STOP_S + 10.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def hanging():
    """A socket that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                held.append(conn)
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join(2)
    for conn in held:
        conn.close()
    server.close()


@pytest.fixture
def failing():
    """An HTTP server answering every request with 500."""
    hits = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            hits.append(self.path)
            self.send_response(500)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", hits
    server.shutdown()
    server.server_close()


def run(args: list[str]) -> tuple[subprocess.CompletedProcess, float]:
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "cursor_watch", *args], capture_output=True, cwd=ROOT, timeout=120)
    return done, time.monotonic() - start


def check_unchanged(args: list[str], endpoint: str, spans: int) -> bytes:
    base, _ = run(args)
    done, took = run(["--otlp-endpoint", endpoint, *args])
    assert done.stdout == base.stdout
    assert done.returncode == base.returncode
    assert took < LIMIT_S, took
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 2, lines  # what was sent (nothing), then what was not and why
    sent = re.fullmatch(r"cursor-watch: --otlp: 0 spans of (\d+) runs sent to (\S+) \(runs dated .+ to .+\)", lines[0])
    assert sent and sent.group(2) == endpoint + "/v1/traces", lines[0]
    m = re.match(r"cursor-watch: --otlp: (\d+) of (\d+) spans could not be sent to (\S+)", lines[1])
    assert m, lines[1]
    assert int(m.group(1)) == spans and int(m.group(2)) == spans
    assert m.group(3) == endpoint + "/v1/traces"
    return done.stderr


# parallel-failed-rejected: its runs and tool calls; plain-tools ends in success
CASES = [(["--summary", "--json", str(SAMPLES / "plain-tools.jsonl")]),
         (["--plain", str(SAMPLES / "parallel-failed-rejected.jsonl")]),
         (["--summary", str(SAMPLES / "failed-no-result.jsonl")])]


def spans_of(args: list[str]) -> int:
    from cursor_watch.stream.watch import Monitor

    mon = Monitor()
    mon.feed((ROOT / args[-1]).read_bytes())
    mon.finish()
    return sum(len(r.session.tool_calls) + 1 + (otlp.usage_of(r.session) is not None) for r in mon.runs)


@pytest.mark.parametrize("args", CASES, ids=["summary-json", "plain", "summary"])
def test_refusing_endpoint(args):
    port = _free_port()  # nothing listens there
    err = check_unchanged(args, f"http://127.0.0.1:{port}", spans_of(args))
    assert b"refused" in err.lower()


@pytest.mark.parametrize("args", CASES[:2], ids=["summary-json", "plain"])
def test_hanging_endpoint(args, hanging):
    check_unchanged(args, hanging, spans_of(args))


@pytest.mark.parametrize("args", CASES[:2], ids=["summary-json", "plain"])
def test_endpoint_answering_500(args, failing):
    url, hits = failing
    err = check_unchanged(args, url, spans_of(args))
    assert hits and all(path == "/v1/traces" for path in hits)
    assert b"500" in err


def test_spawned_command_with_dead_endpoint_keeps_its_exit_status(tmp_path):
    port = _free_port()
    path = SAMPLES / "plain-tools.jsonl"
    cmd = ["--summary", "--json", "--", sys.executable, str(ROOT / "tests" / "fixtures" / "emitter.py"), str(path),
           "--delay", "0", "--exit", "3"]
    base, _ = run(cmd)
    done, took = run(["--otlp-endpoint", f"http://127.0.0.1:{port}", *cmd])
    assert done.returncode == base.returncode == 3
    assert done.stdout == base.stdout
    assert took < LIMIT_S
    assert b"could not be sent" in done.stderr


def test_dead_endpoint_with_a_backlog_still_ends_within_the_limit(tmp_path):
    """5,000 tool calls to a port that refuses: the exporter falls behind, its failures are not
    progress, so the watch stops waiting FLUSH_STALL_S after its end."""
    path = tmp_path / "many.jsonl"
    subprocess.run([sys.executable, str(ROOT / "bench" / "gen_stream.py"), str(path), "--size", "4MB",
                    "--tool-calls", "5000", "--payload-max", "4KB"], check=True, capture_output=True)
    check_unchanged(["--summary", "--json", str(path)], f"http://127.0.0.1:{_free_port()}", spans_of([str(path)]))


# -- the exit wait is bounded, whatever the exporter and the backend do ----------------------------

def _records(n: int) -> list[dict]:
    return [{"n": "execute_tool shell", "t": f"{i + 1:032x}", "s": f"{i + 1:016x}", "p": None, "k": "internal",
             "b": 1_000_000, "e": 2_000_000, "a": {"gen_ai.tool.name": "shell"}, "st": ["unset", ""], "ev": []}
            for i in range(n)]


def test_an_exporter_still_starting_at_exit_is_stopped_within_the_exit_wait(tmp_path):
    """An exporter process that takes 30 s to start (a loaded machine, a slow disk): the exit waits
    EXIT_WAIT_S, not the old 15 s allowed for the SDK's import, and reports every span unsent."""
    slow = tmp_path / "slow"
    slow.mkdir()
    (slow / "sitecustomize.py").write_text("import time\ntime.sleep(30)\n")
    sink = otlp.ProcessSink(f"http://127.0.0.1:{_free_port()}", env={**os.environ, "PYTHONPATH": str(slow)})
    outlet = otlp.OtlpOutlet(sink)
    for record in _records(3):
        outlet._put(record)
    start = time.monotonic()
    report = outlet.close()
    took = time.monotonic() - start
    assert took < otlp.EXIT_WAIT_S + otlp.STOP_S + 1.5, took
    assert report["ok"] == 0 and "still starting" in report["error"]
    line = otlp.report_line(report, "http://x/v1/traces")
    assert line.startswith("--otlp: 3 of 3 spans could not be sent to http://x/v1/traces (the exporter was still starting")


def test_a_slow_backend_that_keeps_delivering_holds_the_exit_no_longer_than_the_exit_wait():
    """A backend that answers every request after 1 s: the exporter delivers (progress every second,
    under FLUSH_STALL_S), so before, the exit waited for all of it (up to 30 s); now EXIT_WAIT_S in
    all, then what was not delivered is reported."""
    from otlp_receiver import Receiver

    with Receiver(delay_s=1.0) as r:
        sink = otlp.ProcessSink(r.url)
        deadline = time.monotonic() + 60
        while not sink.ready and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sink.ready
        outlet = otlp.OtlpOutlet(sink)
        n = 512 * 14  # 14 requests of 512 spans: 14 s at this backend's pace
        for record in _records(n):
            outlet._put(record)
        start = time.monotonic()
        report = outlet.close()
        took = time.monotonic() - start
    assert took < otlp.EXIT_WAIT_S + otlp.STOP_S + 1.5, took
    assert 0 < report["ok"] < n  # it did deliver, and was cut
    assert otlp.report_line(report, "x").startswith(f"--otlp: {n - report['ok']} of {n} spans could not be sent to x")
