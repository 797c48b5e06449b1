"""--metrics: the outlet's counts against the summary, bounded labels, the live gauges, the command
line (addresses, a port in use, the missing extra, serving on after a replay) and scrapers that
hang, never read or reset (the watch goes on). The acceptance against a real Prometheus is in
test_metrics_prometheus.py."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path

import orjson
import pytest

from conftest import IN_CI, REAL_DIR, ROOT, SAMPLES, agent_captures, need_tool, real_captures, wait_for

if IN_CI:
    import prometheus_client  # noqa: F401 - CI installs the [test] extra: a missing library is a failure
else:
    pytest.importorskip("prometheus_client", reason="the [metrics] extra (prometheus-client) is not installed")

from cursor_watch.outlets import metrics  # noqa: E402
from cursor_watch.outlets.metrics import MetricsOutlet, parse_address, token_counts  # noqa: E402
from cursor_watch.outlets.wiring import Outlets  # noqa: E402
from cursor_watch.stream.watch import Monitor, Watch  # noqa: E402
from cursor_watch.stream.sources import FileSource  # noqa: E402

WAIT_S = 60.0


def _wait(predicate, what, timeout: float = WAIT_S, interval: float = 0.05):
    """conftest's :func:`wait_for` with this module's bound."""
    return wait_for(predicate, what, timeout, interval)


def samples_of(outlet: MetricsOutlet, name: str) -> dict[tuple, float]:
    """``{(sorted label items): value}`` of one sample name (``cursor_watch_runs_total``...)."""
    out = {}
    for family in outlet.registry.collect():
        for sample in family.samples:
            if sample.name == name:
                out[tuple(sorted(sample.labels.items()))] = sample.value
    return out


def replay(paths: list[Path], outlet: MetricsOutlet) -> Watch:
    watch = Watch([FileSource(str(p)) for p in paths], install_signals=False)
    watch.outlets = Outlets(watch)
    watch.outlets.metrics = outlet
    assert watch.replayable()  # the outlet needs no event loop: the fast replay keeps it
    watch.replay(lambda run, changes: None)
    return watch


def shared_captures() -> list[Path]:
    files = real_captures() + agent_captures()
    if not files:
        pytest.skip(f"the shared captures are not here ({REAL_DIR})")
    return files


# -- what is counted ------------------------------------------------------------------------------

def test_runs_and_tool_calls_by_agent_model_tool_and_outcome_are_the_summarys():
    files = shared_captures()
    outlet = MetricsOutlet()
    replay(files, outlet)
    done = subprocess.run([sys.executable, "-m", "cursor_watch", "--summary", "--json", *map(str, files)],
                          capture_output=True, cwd=ROOT, timeout=WAIT_S)
    runs = [json.loads(line) for line in done.stdout.splitlines()]
    want_runs, want_calls, want_durations = Counter(), Counter(), Counter()
    for run in runs:
        s = run["session"]
        agent, model = s["agent"] or "unknown", s["model"] or "unknown"
        want_runs[(("agent", agent), ("model", model), ("outcome", run["status"]))] += 1
        for call in run["tool_calls"]:
            want_calls[(("agent", agent), ("outcome", call["status"]), ("tool", call["tool"]))] += 1
            if call["duration_ms"] is not None:
                want_durations[(("agent", agent), ("tool", call["tool"]))] += 1
    assert samples_of(outlet, "cursor_watch_runs_total") == want_runs
    assert samples_of(outlet, "cursor_watch_tool_calls_total") == want_calls
    assert samples_of(outlet, "gen_ai_execute_tool_duration_seconds_count") == want_durations
    assert {key[0] for key in want_calls} >= {("agent", a) for a in ("cursor", "claude-code", "codex", "gemini-cli")}
    assert outlet.errors == 0


def test_token_types_have_the_canonical_meaning():
    from cursor_watch.core.canonical import Usage

    # Claude Code: cache parts of input, reasoning in output
    assert dict(token_counts(Usage(100, 20, cache_read_tokens=60, cache_write_tokens=30, reasoning_tokens=5,
                                   reasoning_in_output=True))) == {
        "input": 100, "output": 20, "cache_read": 60, "cache_write": 30, "reasoning": 5}
    # Gemini CLI counts its thinking apart from output: billed as output, so output holds it
    assert dict(token_counts(Usage(100, 20, reasoning_tokens=7, reasoning_in_output=False))) == {
        "input": 100, "output": 27, "reasoning": 7}
    assert token_counts(None) == []
    assert dict(token_counts(Usage(None, 3))) == {"output": 3}


def test_cost_reported_and_estimated_are_kept_apart(tmp_path):
    # a Claude Code run reports its cost; a Cursor run of a priced model does not (estimated)
    claude = tmp_path / "claude.jsonl"
    claude.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [
        {"type": "system", "subtype": "init", "session_id": "s", "model": "claude-sonnet-4-5", "cwd": "/tmp", "tools": []},
        {"type": "result", "subtype": "success", "is_error": False, "duration_ms": 1500, "result": "ok",
         "session_id": "s", "total_cost_usd": 0.25, "usage": {"input_tokens": 1000, "output_tokens": 10}}]))
    cursor = [p for p in shared_captures() if "agentkit__test__fixtures__cursor" in p.name]
    outlet = MetricsOutlet()
    replay([claude, *cursor], outlet)
    assert samples_of(outlet, "cursor_watch_cost_reported_usd_total") == {
        (("agent", "claude-code"), ("model", "claude-sonnet-4-5")): 0.25}
    estimated = samples_of(outlet, "cursor_watch_cost_estimated_usd_total")
    assert [dict(k)["agent"] for k in estimated] == ["cursor"] and all(v > 0 for v in estimated.values())
    # the run's duration is the reported one (1.5 s)
    assert samples_of(outlet, "gen_ai_invoke_agent_duration_seconds_sum")[
        (("agent", "claude-code"), ("model", "claude-sonnet-4-5"), ("outcome", "success"))] == 1.5


def _claude_stream(tools: list[str]) -> bytes:
    lines = [{"type": "system", "subtype": "init", "session_id": "sess-1", "model": "claude-x", "cwd": "/home/u/p",
              "tools": []}]
    for i, name in enumerate(tools):
        lines.append({"type": "assistant", "session_id": "sess-1", "message": {
            "id": f"m{i}", "role": "assistant", "model": "claude-x",
            "content": [{"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": {"path": f"/home/u/p/{i}"}}]}})
        lines.append({"type": "user", "session_id": "sess-1", "message": {
            "role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": "ok"}]}})
    lines.append({"type": "result", "subtype": "success", "is_error": False, "duration_ms": 100, "result": "done",
                  "session_id": "sess-1", "usage": {"input_tokens": 1, "output_tokens": 1}})
    return b"".join(orjson.dumps(x) + b"\n" for x in lines)


def test_label_values_are_bounded_and_cleaned(tmp_path):
    n = metrics.MAX_VALUES["tool"] + 300
    path = tmp_path / "many-tools.jsonl"
    path.write_bytes(_claude_stream(["Bash\x1b[31m\nx" + "y" * 300] + [f"mcp__gen__tool_{i}" for i in range(n)]))
    outlet = MetricsOutlet()
    replay([path], outlet)
    tools = {dict(k)["tool"]: v for k, v in samples_of(outlet, "cursor_watch_tool_calls_total").items()}
    assert len(tools) == metrics.MAX_VALUES["tool"] + 1 and tools[metrics.OTHER] == n + 1 - metrics.MAX_VALUES["tool"]
    assert sum(tools.values()) == n + 1  # every call counted, past the bound under _other
    first = next(t for t in tools if t.startswith("Bash"))
    assert len(first) <= metrics.LABEL_CHARS and not re.search(r"[\x00-\x1f\x7f]", first)
    # no session id, path or call id in any label value
    values = {v for family in outlet.registry.collect() for s in family.samples for v in s.labels.values()}
    assert not any("sess-1" in v or "/home/u" in v or "toolu_" in v for v in values)
    # a second pass over the same log adds counts, never series
    before = sum(len(f.samples) for f in outlet.registry.collect())
    replay([path], outlet)
    assert sum(len(f.samples) for f in outlet.registry.collect()) == before


def test_the_live_waiting_and_stalled_gauges_follow_a_live_run():
    now = [1_000_000.0]
    outlet = MetricsOutlet(clock=lambda: now[0], stall_s=60, live_of=lambda run: True)
    mon = Monitor(clock=lambda: now[0])
    lines = (SAMPLES / "partial-interaction.jsonl").read_bytes().splitlines(keepends=True)

    def feed(chunk: list[bytes]) -> None:
        for run, batch in mon.split(mon.feed(b"".join(chunk))):
            outlet.observe(run, batch)

    def gauges() -> tuple:
        outlet.tick(now[0], force=True)
        return tuple(samples_of(outlet, f"cursor_watch_runs_{g}").get((("agent", "cursor"),)) for g in
                     ("live", "waiting", "stalled"))

    request = next(i for i, line in enumerate(lines) if b'"interaction_query","subtype":"request"' in line)
    feed(lines[: request + 1])
    assert gauges() == (1, 1, 0)  # a question waits for its answer
    now[0] += 120_000
    assert gauges() == (1, 1, 0)  # waiting is its own state, not a stall
    feed(lines[request + 1: request + 3])  # the answer, and a tool call starts
    assert gauges() == (1, 0, 0)
    now[0] += 61_000
    assert gauges() == (1, 0, 1)  # one tool call running for the stall duration
    feed(lines[request + 3:])
    assert gauges() == (0, 0, 0)  # the result: the run has ended
    assert samples_of(outlet, "cursor_watch_runs_total") == {
        (("agent", "cursor"), ("model", "GPT-5.6 Luna 272K High"), ("outcome", "success")): 1}


def test_a_run_watched_until_a_stop_is_not_counted_as_ended():
    outlet = MetricsOutlet()
    mon = Monitor(clock=lambda: 1e12)
    data = (SAMPLES / "plain-tools.jsonl").read_bytes()
    cut = data.index(b'"type":"result"')
    cut = data.rindex(b"\n", 0, cut) + 1
    for run, batch in mon.split(mon.feed(data[:cut])):
        outlet.observe(run, batch)
    mon.run.observed_until_stop = True  # what Watch sets when a signal stops it mid-run
    for run, batch in mon.split(mon.finish()):
        outlet.observe(run, batch)
    assert samples_of(outlet, "cursor_watch_runs_total") == {}
    assert sum(samples_of(outlet, "cursor_watch_tool_calls_total").values()) == sum(
        c.status != "incomplete" for c in mon.session.tool_calls.values())


# -- the command line ---------------------------------------------------------------------------------

def test_parse_address():
    assert parse_address("9464") == ("127.0.0.1", 9464)
    assert parse_address("0.0.0.0:9464") == ("0.0.0.0", 9464)
    assert parse_address("[::1]:0") == ("::1", 0)
    assert parse_address("localhost:80") == ("localhost", 80)
    for bad in ("", "abc", ":9464", "host:", "1.2.3.4:70000", "::1:9464", "h:9464:1", "[::1]"):
        with pytest.raises(ValueError) as err:
            parse_address(bad)
        assert "--metrics" in str(err.value) and "\n" not in str(err.value)


def cw(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cursor_watch", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=WAIT_S, **kw)


def one_error_line(done: subprocess.CompletedProcess, *parts: str) -> None:
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("cursor-watch: "), done.stderr
    assert "Traceback" not in done.stderr and all(p in done.stderr for p in parts), done.stderr


def test_bad_addresses_a_port_in_use_and_bad_combinations_are_one_line_and_exit_2():
    sample = str(SAMPLES / "plain-tools.jsonl")
    one_error_line(cw("--summary", "--metrics", "abc", sample), "--metrics", "'abc' is not [HOST:]PORT")
    one_error_line(cw("--summary", "--metrics", "1.2.3.4:99999", sample), "past 65535")
    one_error_line(cw("--report", "--metrics", "0", sample), "--report", "--metrics")
    one_error_line(cw("--serve", "--metrics", "0", sample), "--serve doesn't go with --metrics")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        one_error_line(cw("--summary", "--metrics", f"127.0.0.1:{port}", sample),
                       f"--metrics: can't listen on 127.0.0.1:{port}: Address already in use")
    one_error_line(cw("--summary", "--metrics", "no-such-host.invalid:9464", sample), "can't listen on no-such-host")
    one_error_line(cw("--summary", "--metrics", "192.0.2.1:9464", sample), "can't listen on 192.0.2.1:9464")


def test_without_the_extra_one_line_and_exit_2():
    code = ("import importlib.util, sys; real = importlib.util.find_spec\n"
            "importlib.util.find_spec = lambda n, *a: None if n.startswith('prometheus_client') else real(n, *a)\n"
            "from cursor_watch.cli import main; sys.exit(main(sys.argv[1:]))")
    done = subprocess.run([sys.executable, "-c", code, "--summary", "--metrics", "0", str(SAMPLES / "plain-tools.jsonl")],
                          capture_output=True, text=True, cwd=ROOT, timeout=WAIT_S)
    assert done.returncode == 2
    assert done.stderr == "cursor-watch: --metrics needs prometheus-client: pip install 'cursor-watch[metrics]'\n"


class Served:
    """A cursor-watch with ``--metrics 127.0.0.1:0`` started in the background; its address from stderr."""

    def __init__(self, tmp_path: Path, *args: str, stdin=subprocess.DEVNULL) -> None:
        self.err_path = tmp_path / f"err-{time.monotonic_ns()}.txt"
        self.err = open(self.err_path, "wb")
        self.proc = subprocess.Popen([sys.executable, "-m", "cursor_watch", "--metrics", "127.0.0.1:0", *args],
                                     cwd=ROOT, stdin=stdin, stdout=subprocess.PIPE, stderr=self.err,
                                     env={**os.environ, "NO_COLOR": "1"})
        line = _wait(lambda: re.search(r"metrics on (http://\S+)", self.stderr()), lambda: self.stderr())
        self.url = line.group(1)
        self.host, self.port = re.match(r"http://([\d.]+):(\d+)/", self.url).groups()

    def stderr(self) -> str:
        return self.err_path.read_text(errors="replace")

    def scrape(self) -> str:
        with urllib.request.urlopen(self.url, timeout=10) as r:
            return r.read().decode()

    def value(self, name: str, **labels: str) -> float | None:
        """One sample of a scrape (the sum over series whose labels include ``labels``)."""
        total = None
        for line in self.scrape().splitlines():
            m = re.match(r"^(\w+)(?:\{(.*)\})? (\S+)$", line)
            if m and m.group(1) == name:
                got = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
                if all(got.get(k) == v for k, v in labels.items()):
                    total = (total or 0.0) + float(m.group(3))
        return total

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        code = self.proc.wait(WAIT_S)
        self.err.close()
        return code


def test_a_replay_serves_on_after_its_end_with_stdout_closed_until_a_signal(tmp_path):
    sample = str(SAMPLES / "parallel-failed-rejected.jsonl")
    plain = cw("--plain", sample, env={**os.environ, "NO_COLOR": "1"})
    for sig in (signal.SIGTERM, signal.SIGINT):
        served = Served(tmp_path, "--plain", sample)
        try:
            out = served.proc.stdout.read()  # EOF: the output is complete while it still serves
            _wait(lambda: "the replay has ended; serving its metrics on" in served.stderr(), served.stderr)
            assert served.proc.poll() is None and out.decode() == plain.stdout
            assert served.value("cursor_watch_runs_total", agent="cursor") == 1
            assert served.value("cursor_watch_tool_calls_total", outcome="rejected") >= 1
        finally:
            code = served.stop(sig)
        assert code == plain.returncode  # the watch's status, not 128+N: the watch itself had ended
        assert served.stderr().count("\n") == 2 and "Traceback" not in served.stderr()


def test_live_watches_do_not_serve_on_after_their_end(tmp_path):
    sample = SAMPLES / "plain-tools.jsonl"
    # a spawned command: its exit status, at its end
    served = Served(tmp_path, "--plain", "--", sys.executable, str(ROOT / "tests" / "fixtures" / "emitter.py"), str(sample),
                    "--delay", "0", "--exit", "3")
    assert served.proc.wait(WAIT_S) == 3
    assert "serving its metrics" not in served.stderr()
    served.err.close()
    # a pipe: at its end
    with open(sample, "rb") as f:
        served = Served(tmp_path, "--summary", stdin=f)
        assert served.proc.wait(WAIT_S) == 0
    assert "serving its metrics" not in served.stderr()
    served.err.close()


# -- scrapers that hang, never read, or reset: the watch goes on ----------------------------------------

def test_hanging_silent_and_resetting_scrapers_never_hold_the_watch_up(tmp_path):
    log = tmp_path / "live.jsonl"
    lines = (SAMPLES / "plain-tools.jsonl").read_bytes().splitlines(keepends=True)
    result = next(i for i, line in enumerate(lines) if b'"type":"result"' in line)
    log.write_bytes(b"".join(lines[:3]))
    served = Served(tmp_path, "--plain", "-f", str(log))
    held: list[socket.socket] = []
    try:
        address = (served.host, int(served.port))
        for partial in (b"", b"GET /met", b"GET /metrics HTTP/1.1\r\nHo") * 3:  # a reset, at once or mid-request
            s = socket.create_connection(address, timeout=5)
            s.sendall(partial)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()
        assert served.value("cursor_watch_runs_total") is None  # answered: nothing has ended yet
        for _ in range(metrics.MAX_CONNECTIONS + 8):  # connect and never send a request
            s = socket.create_connection(address, timeout=5)
            held.append(s)
        for _ in range(4):  # send a request and never read the answer (a tiny receive buffer)
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)
            s.connect(address)
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            held.append(s)
        # the watch reads and prints on while they hang
        with open(log, "ab") as f:
            f.write(b"".join(lines[3:result + 1]))
        text = b""
        os.set_blocking(served.proc.stdout.fileno(), False)

        def printed() -> bool:
            nonlocal text
            text += served.proc.stdout.read() or b""
            return b"a regression test for 0% and 100% discounts" in text

        _wait(printed, lambda: f"the watch to print the run's end: {text[-500:]!r} {served.stderr()!r}", timeout=20)
        for s in held:
            s.close()
        # once the hanging connections are gone, a scrape is answered, with the run counted
        _wait(lambda: _try(lambda: served.value("cursor_watch_runs_total", outcome="success") == 1), "a scrape")
        assert served.value("cursor_watch_tool_calls_total", agent="cursor") == sum(
            b'"subtype":"completed"' in line for line in lines[:result] if b'"tool_call"' in line)
    finally:
        for s in held:
            s.close()
        started = time.monotonic()
        code = served.stop(signal.SIGTERM)
        stopped_in = time.monotonic() - started
    assert code == 143 and stopped_in < 10  # -f ends on the signal; no hanging scraper holds the exit
    assert "Traceback" not in served.stderr() and served.stderr().count("\n") == 1, served.stderr()


def _try(check):
    try:
        return check()
    except OSError:
        return False


# -- the TUI ------------------------------------------------------------------------------------------

@pytest.mark.e2e
def test_the_tui_serves_the_live_gauges_while_it_runs_and_stops_serving_when_it_quits(tmp_path):
    """The TUI ticks the gauges on its own loop: a spawned agent waiting for an answer is live
    and waiting in a scrape; quitting the TUI closes the server."""
    need_tool("tmux", "apt-get install tmux")
    from tmux import Tmux

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    lines = (SAMPLES / "partial-interaction.jsonl").read_bytes().splitlines()
    request = next(i for i, line in enumerate(lines, 1) if b'"interaction_query","subtype":"request"' in line)
    tmux = Tmux(f"{sys.executable} -m cursor_watch --metrics 127.0.0.1:{port} -- {sys.executable} tests/fixtures/emitter.py "
                f"sample_streams/partial-interaction.jsonl --delay 0.01 --pause-after {request} --pause 120")
    url = f"http://127.0.0.1:{port}/metrics"

    def scrape() -> str:
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                return r.read().decode()
        except OSError:
            return ""

    try:
        tmux.wait_for("askQuestion")
        assert tmux.alternate_screen()  # the TUI, not the plain printer
        text = _wait(lambda: (lambda t: t if 'cursor_watch_runs_waiting{agent="cursor"} 1.0' in t else None)(scrape()),
                     lambda: f"the waiting gauge: {scrape()[-800:]}")
        assert 'cursor_watch_runs_live{agent="cursor"} 1.0' in text
        assert 'cursor_watch_runs_stalled{agent="cursor"} 0.0' in text
        tmux.keys("q")
        tmux.wait_for("EXIT=")
        assert scrape() == ""  # the server is gone with the app
    finally:
        tmux.close()
