"""Explained quiet: why a live run is quiet, and --stall / --enforce acting on
unexplained quiet only (cursor_watch.core.quiet, cursor_watch.core.limits)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from conftest import ROOT
from cursor_watch.core.limits import Limits, RunTimes, quiet_now, stall_of
from cursor_watch.core.quiet import BUSY_CPU_PERCENT, CpuSampler, QuietTracker
from cursor_watch.stream.watch import Monitor

CMD = [sys.executable, "-m", "cursor_watch"]
AGENT = str(ROOT / "tests" / "fixtures" / "quiet_agent.py")
SHARED = ROOT.parent / "shared" / "streams"
CLAUDE = SHARED / "agents" / "claude"
AUTOCOMPACT = CLAUDE / "littlebearapps__untether__tests__fixtures__claude_autocompact_2.1.285.jsonl"
SWITCHBOARD = CLAUDE / "shane-kercheval__switchboard__crates__harness__tests__fixtures__claude__compaction-success.jsonl"
CURSOR_PROBE = SHARED / "real" / "dungle-scrubs__harness-cli-normalizer__test__fixtures__cursor-2026.09.15-d2fe57e__probe-15s.ndjson"
needs_shared = pytest.mark.skipif(not AUTOCOMPACT.is_file(), reason=f"shared captures not found at {SHARED}")
T0 = 1_790_000_000_000.0


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def line(**kw) -> bytes:
    return orjson.dumps(kw) + b"\n"


CLAUDE_INIT = line(type="system", subtype="init", session_id="s", model="claude-x", claude_code_version="2.1.285",
                   tools=[])


class Live:
    """A monitor fed at chosen clock times, with the run's arrival times beside it."""

    def __init__(self) -> None:
        self.m = Monitor(clock=lambda: T0)
        self.times = RunTimes(T0)

    def feed(self, data: bytes, at_ms: float) -> None:
        self.times.observe(self.m.session, self.m.feed(data), at_ms, True)

    def quiet(self, at_ms: float):
        return quiet_now(self.m.session, self.times, at_ms)

    def stall(self, at_ms: float, stall_s: float = 60, explained_s: float | None = None):
        return stall_of(self.m.session, self.times, at_ms, stall_s, explained_s)


# -- the reasons, from the shared captures ----------------------------------------------------


@needs_shared
def test_compacting_is_explained_until_the_compaction_ends():
    lines = lines_of(AUTOCOMPACT)
    run = Live()
    run.feed(b"".join(lines[17:21]), T0)  # the third run: init .. tool_result
    run.feed(lines[21], T0 + 1_000)  # system/status compacting
    q = run.quiet(T0 + 240_000)
    assert (q.reason, q.explained, q.label(), q.since_ms) == ("compacting", True, "quiet 3m: compacting", T0 + 1_000)
    assert run.stall(T0 + 240_000) is None  # an explained quiet under 4 x 60 s
    stall = run.stall(T0 + 241_000)
    assert stall.explained and stall.label() == "stalled 4m: no event (explained (compacting) but past 4m)"
    run.feed(b"".join(lines[22:24]), T0 + 250_000)  # compact_result success, compact_boundary
    q = run.quiet(T0 + 260_000)
    assert (q.reason, q.explained, q.for_ms) == ("none", False, 10_000)


@needs_shared
def test_a_followed_files_backlog_says_it_was_compacting_when_the_watch_goes_live():
    lines = lines_of(AUTOCOMPACT)
    m = Monitor(clock=lambda: T0)
    m.feed(b"".join(lines[17:22]))  # read as a backlog: no arrival times, up to its status: compacting
    tracker = QuietTracker(T0)
    tracker.prime(m.session, T0 + 5_000)
    assert tracker.wait[0] == "compacting" and tracker.progress_ms == T0 + 5_000
    m.feed(b"".join(lines[22:28]))  # the compaction ended, the run went on
    again = QuietTracker(T0)
    again.prime(m.session, T0)
    assert again.wait is None


@needs_shared
def test_in_the_switchboard_capture_a_rate_limit_and_hooks_during_a_compaction_leave_it_compacting():
    lines = lines_of(SWITCHBOARD)
    run = Live()
    run.feed(b"".join(lines[:3]), T0)  # hooks, status compacting
    run.feed(b"".join(lines[3:6]), T0 + 5_000)  # rate limit "allowed", a hook's start and response
    assert run.quiet(T0 + 20_000).reason == "compacting"
    run.feed(lines[6], T0 + 21_000)  # status null, compact_result success
    assert run.quiet(T0 + 30_000).reason == "none"


@needs_shared
def test_a_rejected_rate_limit_is_explained_until_its_reset():
    lines = lines_of(AUTOCOMPACT)
    event = orjson.loads(lines[3])
    event["rate_limit_info"]["status"] = "rejected"
    event["rate_limit_info"]["resetsAt"] = int(T0 / 1000) + 600
    run = Live()
    run.feed(lines[0], T0)
    run.feed(orjson.dumps(event) + b"\n", T0)
    q = run.quiet(T0 + 120_000)
    assert (q.reason, q.explained, q.until_ms) == ("rate_limit", True, T0 + 600_000)
    assert q.label() == "quiet 2m: rate limit rejected, resets in 8m"
    assert "resets 60 s ago" in run.quiet(T0 + 660_000).why
    # the capture's own event (allowed_warning) explains nothing
    other = Live()
    other.feed(lines[0] + lines[3], T0)
    assert other.quiet(T0 + 120_000).reason == "none"


def test_an_api_retry_is_a_backoff_with_its_delay():
    run = Live()
    run.feed(CLAUDE_INIT, T0)
    run.feed(line(type="system", subtype="api_retry", attempt=2, max_retries=10, retry_delay_ms=2140,
                  error_status=529, error="overloaded", session_id="s"), T0 + 1_000)
    q = run.quiet(T0 + 2_000)
    assert (q.reason, q.explained, q.until_ms) == ("retry", True, T0 + 3_140)
    assert q.why == "retry backoff: API retry attempt 2 of 10, in 2.1 s (overloaded HTTP 529)"
    assert q.why + " (backoff over 6 s ago)" == run.quiet(T0 + 9_140).why


def test_a_heartbeat_explains_a_running_call_until_it_goes_stale():
    run = Live()
    run.feed(CLAUDE_INIT, T0)
    run.feed(line(type="assistant", session_id="s", message={"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "npm test"}}]}), T0)
    for n in range(1, 21):  # a tool_progress every 30 s, as Claude Code sends them (docs/formats.md)
        run.feed(line(type="tool_progress", tool_use_id=f"toolu_1-heartbeat-{n}", tool_name="Bash",
                      parent_tool_use_id="toolu_1", elapsed_time_seconds=30 * n, session_id="s"), T0 + 30_000 * n)
    q = run.quiet(T0 + 603_000)
    assert (q.reason, q.explained, q.since_ms) == ("tool", True, T0)  # heartbeats are not progress
    assert q.label() == "quiet 10m: Bash running, heartbeat 3 s ago"
    assert run.stall(T0 + 603_000, stall_s=180) is None  # 10 min of one call, with its heartbeat: under 4 x 3 min
    assert run.stall(T0 + 603_000, stall_s=120).explained  # past 4 x 2 min: stalled, and it says it was explained
    stale = run.quiet(T0 + 600_000 + 91_000)
    assert (stale.explained, stale.why) == (False, "Bash running, heartbeat 91 s ago")
    stall = run.stall(T0 + 691_000, stall_s=180)
    assert not stall.explained and stall.label() == "stalled 11m: Bash npm test (unexplained: heartbeat 91 s ago)"


@needs_shared
def test_a_cursor_interaction_query_and_a_codex_request_user_input_wait_for_a_person():
    probe = lines_of(CURSOR_PROBE)
    at = next(i for i, x in enumerate(probe) if b'"interaction_query"' in x and b'"request"' in x)
    run = Live()
    run.feed(b"".join(probe[: at + 1]), T0)
    q = run.quiet(T0 + 60_000)
    assert (q.reason, q.explained) == ("waiting", True) and "waiting for a person" in q.label()
    assert run.stall(T0 + 3_600_000) is None  # waiting is its own state (the waiting alert)
    codex = Live()
    codex.feed(line(type="thread.started", thread_id="t0")
               + line(type="request_user_input", id="r1", call_id="c1", questions=[{"question": "Which branch?"}]), T0)
    assert codex.quiet(T0 + 60_000).reason == "waiting"


def test_a_cursor_reconnect_is_a_retry_until_it_reconnects():
    run = Live()
    run.feed(line(type="system", subtype="init", session_id="s", model="m", cwd="/w"), T0)
    run.feed(line(type="connection", subtype="reconnecting", attempt=1, endpoint_url="https://x", session_id="s",
                  timestamp_ms=1), T0 + 1_000)
    assert run.quiet(T0 + 60_000).why == "reconnecting"
    run.feed(line(type="connection", subtype="reconnected", session_id="s", timestamp_ms=2), T0 + 61_000)
    assert run.quiet(T0 + 70_000).reason == "none"


def test_an_unexplained_silence_stalls_at_stall_and_an_explained_one_at_stall_explained():
    run = Live()
    run.feed(CLAUDE_INIT, T0)
    run.feed(line(type="system", subtype="status", status="compacting", session_id="s"), T0)
    assert run.stall(T0 + 119_000, stall_s=60, explained_s=120) is None
    assert run.stall(T0 + 120_000, stall_s=60, explained_s=120).label() == \
        "stalled 2m: no event (explained (compacting) but past 2m)"
    plain = Live()
    plain.feed(CLAUDE_INIT, T0)
    assert plain.stall(T0 + 60_000, stall_s=60, explained_s=120).label() == "stalled 1m: no event (unexplained)"


def test_the_cpu_of_the_process_tree_counts_its_descendants():
    burn = "import subprocess, sys\nsubprocess.run([sys.executable, '-c', 'while True: pass'], timeout=%s)"
    idle = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    # the CPU is its child's; its own process group, so that the spinning child is killed with it
    busy = subprocess.Popen([sys.executable, "-c", burn % 30], start_new_session=True)
    try:
        samplers = [CpuSampler(idle.pid), CpuSampler(busy.pid)]
        start = time.time() * 1000.0
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:  # until each has samples 3 s apart
            for s in samplers:
                s.sample()
            if all(len(s.samples) >= 2 and s.samples[-1][0] - s.samples[0][0] >= 3_000 for s in samplers):
                break
            time.sleep(0.1)
        now = time.time() * 1000.0
        low, high = (s.percent(start, now) for s in samplers)
        assert low is not None and low < BUSY_CPU_PERCENT
        assert high is not None and high >= BUSY_CPU_PERCENT  # a spinning child: busy, even on a loaded machine
    finally:
        os.killpg(busy.pid, signal.SIGKILL)  # the child too: killed alone, it spun on, orphaned, after the test
        for p in (idle, busy):
            p.kill()
            p.wait()
    gone = CpuSampler(idle.pid)
    assert gone.gone and gone.percent(0, time.time() * 1000.0) is None


# -- the command line ---------------------------------------------------------------------------


def env(tmp_path):
    return {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": str(tmp_path / "config")}


@pytest.mark.parametrize("args, words", [
    (["--stall", "2m", "--stall-explained", "1m", "x.jsonl"], "--stall-explained must be at least --stall"),
    (["--stall-explained", "soon", "x.jsonl"], "--stall-explained: not a duration"),
    (["--enforce", "--stall", "1m", "x.jsonl"], "--enforce stops a spawned command"),
])
def test_bad_quiet_options_are_one_line(tmp_path, args, words):
    p = subprocess.run(CMD + args, capture_output=True, env=env(tmp_path), cwd=ROOT, timeout=60)
    err = p.stderr.decode()
    assert p.returncode == 2 and words in err and err.count("\n") == 1, err


SCENARIOS = {  # the fake agent's quiet -> the --plain line that says why
    "heartbeat": "~ quiet 2s: Read running, heartbeat ",
    "compaction": "~ quiet 2s: compacting",
    "rate_limit": "~ quiet 2s: rate limit rejected, resets in ",
    "busy": "~ quiet 2s: Read running, no heartbeat, ",
    "wedged": "~ quiet 2s: Read running, no heartbeat, 0 % CPU (unexplained)",
}


@needs_shared
def test_fake_agents_in_spawn_mode_get_the_right_reason_and_enforce_stops_only_the_wedged_one(tmp_path):
    """Five fake Claude Codes replaying a shared capture, each quiet for 6 s its own way, watched
    with --stall 2s --stall-explained 60s --enforce: each --plain output says why it is quiet; only
    the wedged one (asleep: no heartbeat, 0 % CPU) raises a stalled alert and is stopped (exit 3)."""
    procs = {}
    for name in SCENARIOS:
        out = tmp_path / f"{name}.alerts.jsonl"
        args = ["--plain", "--stall", "2s", "--stall-explained", "60s", "--enforce", "--alert-cmd", f"cat >> {out}",
                "--", sys.executable, AGENT, name, "6"]
        procs[name] = (subprocess.Popen(CMD + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        env=env(tmp_path), cwd=ROOT), out)
    results = {}
    for name, (p, out) in procs.items():
        stdout, stderr = p.communicate(timeout=120)
        sent = [orjson.loads(x) for x in out.read_bytes().splitlines()] if out.exists() else []
        results[name] = (p.returncode, stdout.decode(), stderr.decode(), sent)
    for name, (code, stdout, stderr, sent) in results.items():
        quiet_lines = [x for x in stdout.splitlines() if x.startswith("~ quiet")]
        assert quiet_lines and quiet_lines[0].startswith(SCENARIOS[name]), (name, stdout)
        if name == "wedged":
            assert code == 3, (name, stderr)
            # stopped: it ended without a result (each alert is its own --alert-cmd process: the two
            # appends to the file may land in either order)
            assert sorted(a["kind"] for a in sent) == ["failed", "stalled"]
            [stalled] = [a for a in sent if a["kind"] == "stalled"]
            assert stalled["stall"]["explained"] is False and stalled["stall"]["quiet"]["reason"] == "tool"
            assert "(unexplained: no heartbeat, 0 % CPU)" in stalled["message"]
            assert "stopping the command (--enforce)" in stderr
        else:
            assert code == 0, (name, stderr)
            assert [a["kind"] for a in sent] == [], (name, sent)
            assert "■ success" in stdout and "(unexplained)" not in stdout, (name, stdout)
    busy = next(x for x in results["busy"][1].splitlines() if x.startswith("~ quiet"))
    assert int(busy.rsplit(", ", 1)[1].split(" %")[0]) >= 5  # the child's spinning counts


@needs_shared
def test_the_summary_json_has_the_quiet_periods_of_a_live_run_and_null_for_a_replay(tmp_path):
    p = subprocess.run(CMD + ["--summary", "--json", "--stall", "2s", "--", sys.executable, AGENT, "compaction", "4"],
                       capture_output=True, env=env(tmp_path), cwd=ROOT, timeout=120)
    assert p.returncode == 0, p.stderr
    (period,) = orjson.loads(p.stdout)["quiet"]
    assert (period["reason"], period["explained"], period["why"]) == ("compacting", True, "compacting")
    assert 3_500 <= period["duration_ms"] <= 10_000 and period["end_ms"] - period["start_ms"] == period["duration_ms"]
    replay = subprocess.run(CMD + ["--summary", "--json", str(AUTOCOMPACT)], capture_output=True, env=env(tmp_path),
                            cwd=ROOT, timeout=60)
    assert orjson.loads(replay.stdout.splitlines()[0])["quiet"] is None


def test_limits_default_the_explained_limit_to_four_stalls():
    run = Live()
    run.feed(CLAUDE_INIT, T0)
    run.feed(line(type="system", subtype="status", status="compacting", session_id="s"), T0)
    assert Limits(stall_s=30).stall_explained_s is None
    assert run.stall(T0 + 119_000, stall_s=30) is None and run.stall(T0 + 120_000, stall_s=30) is not None
