"""--metrics acceptance against a real Prometheus (Debian's ``prometheus`` package), started by the test.

A watch replays a directory of the shared captures of every agent with ``--metrics`` (it serves
on after the replay); Prometheus, started in a temporary directory with a scrape config pointing
at the watch, scrapes it every second; its HTTP API (``/api/v1/query``, ``/api/v1/series``) must
then give the runs, tool calls and tokens per agent that ``cursor-watch --summary --json`` gives
for the same directory (the figures come from the summary, never from the metrics code). The same
logs watched again (a second watch on the same address, of the directory holding them twice)
doubles the counts and adds no series.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections import Counter
from pathlib import Path

import pytest

from conftest import AGENTS_DIR, REAL_DIR, ROOT, agent_captures, need, need_tool, real_captures, wait_for

pytestmark = pytest.mark.prometheus


START_S = 120.0  # Prometheus's start, and a watch's replay, on a loaded 2-core machine


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(predicate, what, timeout: float = START_S, interval: float = 0.05):
    """conftest's :func:`wait_for` with this module's bound."""
    return wait_for(predicate, what, timeout, interval)


class Prometheus:
    """A Prometheus started on a free loopback port with its data in a temporary directory."""

    def __init__(self, work: Path, target: str) -> None:
        self.work = work
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = work / "prometheus.yml"
        config.write_text("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                          "scrape_configs:\n  - job_name: cursor-watch\n    static_configs:\n"
                          f"      - targets: ['{target}']\n")
        self.log = open(work / "prometheus.log", "wb")
        self.proc = subprocess.Popen(
            [shutil.which("prometheus"), f"--config.file={config}", f"--storage.tsdb.path={work / 'data'}",
             f"--web.listen-address=127.0.0.1:{self.port}"],
            stdout=self.log, stderr=subprocess.STDOUT, cwd=work, start_new_session=True)

        def ready() -> bool:
            if self.proc.poll() is not None:
                raise AssertionError(f"prometheus exited ({self.proc.returncode}): {self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as r:
                    return r.status == 200
            except OSError:
                return False

        _wait(ready, lambda: f"prometheus to be ready: {self.log_tail()}")

    def log_tail(self) -> str:
        return (self.work / "prometheus.log").read_text(errors="replace")[-2000:]

    def api(self, path: str, **params) -> object:
        query = urllib.parse.urlencode(params, doseq=True)
        with urllib.request.urlopen(f"{self.url}/api/v1/{path}?{query}", timeout=10) as r:
            body = json.load(r)
        assert body["status"] == "success", body
        return body["data"]

    def by(self, query: str, *labels: str) -> dict:
        """An instant query's vector as ``{(label values...): value}``."""
        out = {}
        for row in self.api("query", query=query)["result"]:
            out[tuple(row["metric"].get(name, "") for name in labels)] = float(row["value"][1])
        return out

    def series(self, start: float) -> list[dict]:
        return self.api("series", **{"match[]": '{job="cursor-watch"}', "start": f"{start:.3f}"})

    def stop(self) -> None:
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.log.close()


class Watch:
    """``cursor-watch --summary --json --metrics ADDRESS DIR...`` serving on after its replay."""

    def __init__(self, address: str, paths: list[Path], work: Path, name: str) -> None:
        self.err_path = work / f"{name}.err"
        self.err = open(self.err_path, "wb")
        self.proc = subprocess.Popen([sys.executable, "-m", "cursor_watch", "--summary", "--json", "--metrics", address,
                                      *map(str, paths)], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=self.err,
                                     env={**os.environ, "NO_COLOR": "1"})
        line = _wait(lambda: self._line("the replay has ended"), lambda: f"the replay to end: {self.stderr()!r}")
        self.address = re.search(r"http://([^/]+)/metrics", line).group(1)

    def stderr(self) -> str:
        return self.err_path.read_text(errors="replace")

    def _line(self, text: str) -> str | None:
        if self.proc.poll() is not None:
            raise AssertionError(f"the watch exited ({self.proc.returncode}): {self.stderr()!r}")
        return next((line for line in self.stderr().splitlines() if text in line), None)

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(30)
        self.err.close()
        return code


def expected_of(paths: list[Path]) -> tuple[list[dict], int]:
    """The runs ``--summary --json`` gives for ``paths`` (one JSON object a line), and its exit status."""
    done = subprocess.run([sys.executable, "-m", "cursor_watch", "--summary", "--json", *map(str, paths)],
                          capture_output=True, cwd=ROOT, timeout=START_S)
    assert done.returncode in (0, 1), done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()], done.returncode


def claude_message_usage(run: dict, runs: list[dict]) -> dict | None:
    """A Claude Code run's usage from its assistant messages (each ``message.id`` once, its last
    ``usage``), for a run whose result carries none (a trimmed capture): input with the cache's
    parts added, as the summary's ``input_tokens`` are."""
    assert sum(r["source"] == run["source"] for r in runs) == 1, "one run in the file: its lines are its own"
    last: dict[str, dict] = {}
    for line in Path(run["source"]).read_bytes().splitlines():
        event = json.loads(line)
        message = event.get("message") if event.get("type") == "assistant" else None
        if isinstance(message, dict) and isinstance(message.get("usage"), dict):
            last[message["id"]] = message["usage"]
    if not last:
        return None
    keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    return {"input_tokens": sum(u.get(k, 0) for u in last.values() for k in keys),
            "output_tokens": sum(u.get("output_tokens", 0) for u in last.values())}


def per_agent(runs: list[dict]) -> tuple[Counter, Counter, Counter]:
    """Runs, tool calls, and ``(agent, type)`` input/output tokens per agent, from the summaries
    and the streams' own usage (output with reasoning an agent counts apart, as it is billed)."""
    runs_of, calls_of, tokens_of = Counter(), Counter(), Counter()
    for run in runs:
        agent = run["session"]["agent"] or "unknown"
        runs_of[agent] += 1
        calls_of[agent] += len(run["tool_calls"])
        usage = (run["result"] or {}).get("usage")
        if usage is None and agent == "claude-code":
            usage = claude_message_usage(run, runs)
        if usage:
            if usage["input_tokens"] is not None:
                tokens_of[agent, "input"] += usage["input_tokens"]
            output = usage["output_tokens"]
            if usage.get("reasoning_tokens") is not None and usage.get("reasoning_in_output") is False:
                output = (output or 0) + usage["reasoning_tokens"]
            if output is not None:
                tokens_of[agent, "output"] += output
    return runs_of, calls_of, tokens_of


def queries() -> list[str]:
    """The PromQL of the README's Metrics section and of every panel of docs/grafana/cursor-watch.json,
    Grafana's variables given values."""
    readme = (ROOT / "README.md").read_text()
    block = readme.split("```promql\n", 1)[1].split("```", 1)[0]
    exprs = [line for line in block.splitlines() if line.strip() and not line.startswith("#")]
    dashboard = json.loads((ROOT / "docs" / "grafana" / "cursor-watch.json").read_text())
    exprs += [t["expr"] for panel in dashboard["panels"] for t in panel["targets"]]
    assert len(exprs) >= 20
    values = {"$__rate_interval": "1m", "$__range": "1h", "$agent": ".*"}
    out = []
    for expr in exprs:
        for name, value in values.items():
            expr = expr.replace(name, value)
        assert "$" not in expr, expr
        out.append(expr)
    return out


@pytest.fixture
def captures(tmp_path) -> Path:
    """A directory of every shared capture of every agent (real Cursor ones, Claude Code, Codex, Gemini CLI)."""
    files = real_captures() + agent_captures()
    need(files, f"the shared captures are not here ({REAL_DIR}, {AGENTS_DIR})")
    logs = tmp_path / "logs"
    logs.mkdir()
    for path in files:
        shutil.copy(path, logs / path.name)
    return logs


def test_prometheus_scrapes_the_runs_tool_calls_and_tokens_per_agent_and_a_rewatch_adds_no_series(captures, tmp_path):
    need_tool("prometheus", "Debian: apt-get install prometheus")
    need(importlib.util.find_spec("prometheus_client"), "prometheus-client is not installed (pip install -e '.[test]')")
    runs, code = expected_of([captures])
    agents = {run["session"]["agent"] for run in runs}
    assert {"cursor", "claude-code", "codex", "gemini-cli"} <= agents  # every agent's captures are there
    runs_of, calls_of, tokens_of = per_agent(runs)
    assert sum(calls_of.values()) > 20 and all(tokens_of[a, "input"] > 0 for a in ("cursor", "claude-code", "codex"))

    first = Watch("127.0.0.1:0", [captures], tmp_path, "first")
    prom = Prometheus(tmp_path, first.address)
    try:
        t0 = time.time() - 60
        _wait(lambda: prom.by('up{job="cursor-watch"}', "job").get(("cursor-watch",)) == 1.0,
              lambda: f"a scrape of the watch: {prom.log_tail()}")

        def scraped(scale: int):
            got = prom.by("sum by (agent) (cursor_watch_runs_total)", "agent")
            return got if got == {(a,): float(n * scale) for a, n in runs_of.items()} else None

        _wait(lambda: scraped(1), lambda: f"the runs per agent {dict(runs_of)}: "
              f"{prom.by('sum by (agent) (cursor_watch_runs_total)', 'agent')}")
        calls = prom.by("sum by (agent) (cursor_watch_tool_calls_total)", "agent")
        assert calls == {(a,): float(n) for a, n in calls_of.items() if n}
        tokens = prom.by('sum by (agent, type) (gen_ai_client_token_usage_sum{type=~"input|output"})', "agent", "type")
        assert tokens == {key: float(n) for key, n in tokens_of.items()}
        # the reported cost is the summary's, and estimates only for runs that reported none
        reported = prom.by("sum by (agent) (cursor_watch_cost_reported_usd_total)", "agent")
        want = Counter()
        for run in runs:
            if run["result"] and run["result"]["cost_usd"] is not None:
                want[run["session"]["agent"]] += run["result"]["cost_usd"]
        assert reported.keys() == {(a,) for a in want} and all(
            abs(reported[(a,)] - v) < 1e-9 for a, v in want.items())
        # label values: agents, models, tools and closed lists; no session id, prompt, path or call_id
        series = prom.series(t0)
        values = {v for s in series for k, v in s.items() if k not in ("__name__", "le", "job", "instance")}
        private = {run["session"]["session_id"] for run in runs} | {run["session"]["prompt"] for run in runs} | {
            run["source"] for run in runs} | {c["call_id"] for run in runs for c in run["tool_calls"]}
        assert not values & (private - {None}), values & private
        # every PromQL query of the README and every panel of the Grafana dashboard evaluates, and
        # names only metrics that exist (a misspelt name would give an empty panel, silently)
        names = {s["__name__"] for s in series}
        for expr in queries():
            prom.api("query", query=expr)
            used = set(re.findall(r"\b(?:cursor_watch|gen_ai)_\w+", expr))
            assert used and used <= names, (expr, used - names)
        assert prom.by("sum by (agent) (cursor_watch_runs_live)", "agent") == {(a,): 0.0 for a in runs_of}
        assert first.stop() == code  # SIGTERM while it serves on: the watch's own exit status
    except BaseException:
        prom.stop()
        raise

    # the same logs again, twice over (a week of the same agents): same address, so the same instance
    again = tmp_path / "again"
    again.mkdir()
    for path in captures.iterdir():
        shutil.copy(path, again / f"copy-{path.name}")
    host, port = first.address.rsplit(":", 1)
    second = Watch(f"{host}:{port}", [captures, again], tmp_path, "second")
    try:
        _wait(lambda: scraped(2), lambda: f"twice the runs per agent: "
              f"{prom.by('sum by (agent) (cursor_watch_runs_total)', 'agent')}")
        assert prom.by("sum by (agent) (cursor_watch_tool_calls_total)", "agent") == {
            (a,): float(2 * n) for a, n in calls_of.items() if n}
        after = prom.series(t0)
        assert len(after) == len(series), {json.dumps(s, sort_keys=True) for s in after} - {
            json.dumps(s, sort_keys=True) for s in series}
        assert len(series) < 3000  # bounded: agents x models x tools, not runs
    finally:
        second.stop()
        prom.stop()
