"""Alerts: rules (once per run and kind), delivery through Apprise and --alert-cmd in the background,
--enforce; end to end with a fake agent (a real capture replayed with pauses) in spawn and follow modes."""

from __future__ import annotations

import http.server
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

import orjson
import pytest

from conftest import ROOT, Watcher, wait_for, wait_opened, wait_read_to_end
from cursor_watch.outlets.alerts import AlertOutlet, AlertRules, Deliverer, Alert
from cursor_watch.core.limits import Limits
from cursor_watch.stream.watch import Monitor

CMD = [sys.executable, "-m", "cursor_watch"]
EMITTER = str(ROOT / "tests" / "fixtures" / "emitter.py")
REAL = ROOT.parent / "shared" / "streams" / "real"
REJECTED = REAL / "saurabh7481__maestro__src-tauri__tests__fixtures__cursor__05_rejected_shell.jsonl"  # calls: lines 7, 15
THREE_CALLS = REAL / "dungle-scrubs__harness-cli-normalizer__test__fixtures__cursor-2026.09.15-d2fe57e__probe-15s.ndjson"
needs_real = pytest.mark.skipif(not REAL.is_dir(), reason=f"real captures not found at {REAL}")


def env(tmp_path):
    return {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": str(tmp_path / "config")}


class Receiver:
    """A local HTTP server that records what Apprise posts; /hang never answers in time, /fail is a 500."""

    def __init__(self) -> None:
        self.posts: list[tuple[str, dict]] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.posts.append((self.path, orjson.loads(body) if body else {}))
                if self.path.startswith("/hang"):
                    time.sleep(30)
                code = 500 if self.path.startswith("/fail") else 200
                self.send_response(code)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, path: str) -> str:
        return f"json://127.0.0.1:{self.port}/{path}"

    def kinds(self, path: str) -> list[str]:
        return [body.get("title", "").removeprefix("cursor-watch: ") for p, body in self.posts if p.startswith("/" + path)]

    def close(self) -> None:
        self.server.shutdown()


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


def refused_url() -> str:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now: connections are refused
    return f"json://127.0.0.1:{port}/refused"




def cmd_alerts(path) -> list[dict]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()] if path.exists() else []


# -- rules -------------------------------------------------------------------------------


def line(**kw) -> bytes:
    return orjson.dumps(kw) + b"\n"


class Clock:
    def __init__(self):
        self.ms = 1_790_000_000_000.0

    def __call__(self):
        return self.ms


def live_rules(limits=None):
    clock = Clock()
    rules = AlertRules(limits or Limits(stall_s=2), clock=clock)
    m = Monitor(source="a.jsonl", source_label="a.jsonl")
    return clock, rules, m


def feed(rules, m, data):
    rules.observe(m.run, m.feed(data), live=True)


INIT = line(type="system", subtype="init", session_id="s1", model="GPT-5 Mini", cwd="/home/me/proj")
PROMPT = line(type="user", session_id="s1", message={"role": "user", "content": [{"type": "text", "text": "fix the failing tests in the parser please now"}]})


def test_a_stall_raises_one_alert_until_it_ends_and_then_a_new_one():
    clock, rules, m = live_rules()
    feed(rules, m, INIT + PROMPT + line(type="tool_call", subtype="started", call_id="c1", session_id="s1",
                                       timestamp_ms=1, tool_call={"shellToolCall": {"args": {"command": "npm test"}}}))
    assert rules.check() == []
    clock.ms += 2_000
    [alert] = rules.check()
    assert alert.kind == "stalled" and alert.text == "stalled 2s: shell npm test (unexplained: no heartbeat)"
    assert alert.message == ('"fix the failing tests in the parser please…" (a.jsonl, /home/me/proj): '
                             'stalled 2s: shell npm test (unexplained: no heartbeat)')
    assert alert.to_json()["stall"]["call_id"] == "c1" and alert.session_id == "s1"
    clock.ms += 5_000
    assert rules.check() == []  # the same stall: once
    feed(rules, m, line(type="tool_call", subtype="completed", call_id="c1", session_id="s1", timestamp_ms=2,
                        tool_call={"shellToolCall": {"args": {}, "result": {"success": {"exitCode": 0}}}}))
    assert rules.check() == []
    clock.ms += 2_000
    assert [a.text for a in rules.check()] == ["stalled 2s: no event (unexplained)"]  # a new stall: a new alert


def test_waiting_each_question_once_failed_and_ended_once_and_a_budget_once():
    clock, rules, m = live_rules(Limits(stall_s=60, max_tool_calls=0))
    q = {"id": 1, "webFetchRequestQuery": {"args": {"url": "https://example.com", "toolCallId": "t"}}}
    feed(rules, m, INIT + PROMPT + line(type="interaction_query", subtype="request", query_type="webFetchRequestQuery",
                                       session_id="s1", timestamp_ms=1, query=q))
    assert rules.check() == []  # print mode answers within milliseconds: not yet
    clock.ms += 600
    [alert] = rules.check()
    assert alert.kind == "waiting" and alert.details["question"] == "webFetch request: https://example.com"
    assert alert.message.endswith("waits for an answer (interaction_query): webFetch request: https://example.com")
    clock.ms += 10_000
    assert rules.check() == []  # waiting is not a stall, and the question was asked once
    feed(rules, m, line(type="tool_call", subtype="started", call_id="c1", session_id="s1", timestamp_ms=2,
                        tool_call={"shellToolCall": {"args": {"command": "ls"}}}))
    assert [a.kind for a in rules.check()] == ["budget"]
    feed(rules, m, line(type="tool_call", subtype="started", call_id="c2", session_id="s1", timestamp_ms=3,
                        tool_call={"shellToolCall": {"args": {"command": "ls"}}}))
    assert rules.check() == []
    feed(rules, m, line(type="result", subtype="error", is_error=True, result="", session_id="s1", duration_ms=9))
    [alert] = rules.check()
    assert alert.kind == "failed" and alert.text == "ended: error"
    rules.observe(m.run, m.finish(), live=True)
    assert rules.check() == []


def test_a_replay_raises_nothing_unless_asked():
    for replay, want in ((False, []), (True, ["ended"])):
        rules = AlertRules(Limits(stall_s=1), clock=Clock(), replay=replay)
        m = Monitor()
        rules.observe(m.run, m.feed(INIT + PROMPT + line(type="result", subtype="success", is_error=False, result="",
                                                         session_id="s1")), live=False)
        assert [a.kind for a in rules.check()] == want


# -- delivery ----------------------------------------------------------------------------


def an_alert(kind="stalled") -> Alert:
    return Alert(kind, '"task" (a.jsonl)', "a.jsonl", "s1", "stalled 2s: no event", "2026-11-25T00:00:00Z")


def test_apprise_json_webhook_and_command_receive_the_alert(receiver, tmp_path):
    out = tmp_path / "cmd.out"
    d = Deliverer([receiver.url("ok")], f"cat > {out}; env | grep ^CW_ >> {out}.env")
    d.send(an_alert())
    assert d.close(10) == 0
    assert d.sent == 2 and d.failed == 0
    [(path, body)] = receiver.posts
    assert path == "/ok" and body["title"] == "cursor-watch: stalled"
    assert body["message"] == '"task" (a.jsonl): stalled 2s: no event'
    sent = orjson.loads(out.read_bytes())
    assert sent == {"kind": "stalled", "run": '"task" (a.jsonl)', "session_id": "s1",
                    "message": '"task" (a.jsonl): stalled 2s: no event', "time": "2026-11-25T00:00:00Z"}
    envs = (tmp_path / "cmd.out.env").read_text()
    assert "CW_ALERT_KIND=stalled" in envs and "CW_SESSION_ID=s1" in envs and "CW_RUN=\"task\" (a.jsonl)" in envs


def test_hanging_refusing_and_failing_receivers_never_block_and_are_counted(receiver, tmp_path):
    d = Deliverer([receiver.url("hang"), refused_url(), receiver.url("fail")], "sleep 30", timeout_s=1.0)
    start = time.monotonic()
    d.send(an_alert())
    assert time.monotonic() - start < 0.5  # send returns at once
    left = d.close(5)
    assert time.monotonic() - start < 8
    assert left == 0 and d.sent == 0 and d.failed == 4
    reasons = {target: reason for _, target, reason in d.take_failures()}
    assert reasons["--alert-cmd"].startswith("still running after 1 s")
    assert len(reasons) == 4


def test_a_failed_delivery_is_noted_on_its_run(receiver):
    clock, rules, m = live_rules()
    notes = []
    outlet = AlertOutlet(rules, Deliverer([receiver.url("fail")]), send_stalls=True,
                         on_note=lambda run, changes: notes.append(changes))
    feed(rules, m, INIT + PROMPT)
    clock.ms += 3_000
    assert [a.kind for a in outlet.check()] == ["stalled"]
    line_ = outlet.close(10)
    assert line_.startswith("1 of 1 alert deliveries failed (json://127.0.0.1:")
    texts = [n.text for n in m.session.notes if n.kind == "alert"]
    assert len(texts) == 1 and texts[0].startswith("stalled alert to json://127.0.0.1:") and "failed" in texts[0]
    assert notes


def test_missing_apprise_is_one_clear_line(tmp_path):
    fake = tmp_path / "noapprise" / "apprise"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('No module named apprise')\n")
    e = env(tmp_path)
    e["PYTHONPATH"] = f"{fake.parent}{os.pathsep}{ROOT}"
    p = subprocess.run(CMD + ["--plain", "--alert", "json://127.0.0.1:9/x", str(ROOT / "sample_streams" / "plain-tools.jsonl")],
                       capture_output=True, env=e, cwd=ROOT, timeout=60)
    err = p.stderr.decode()
    assert p.returncode == 2 and err == "cursor-watch: --alert needs Apprise: pip install 'cursor-watch[alerts]'\n"


@pytest.mark.parametrize("args, words", [
    (["--enforce", "--max-tool-calls", "1", "x.jsonl"], "--enforce stops a spawned command"),
    (["--enforce", "--", "true"], "--enforce needs a budget"),
    (["--alert-on", "stalled,nope", "x.jsonl"], "unknown kind nope"),
    (["--stall", "soon", "x.jsonl"], "--stall: not a duration"),
    (["--max-tool-calls", "-1", "x.jsonl"], "--max-tool-calls must be a number >= 0"),
    (["--alert", "nonsense-scheme://x", "x.jsonl"], "Apprise doesn't know this URL"),
])
def test_bad_alert_and_budget_options_are_one_line(tmp_path, args, words):
    p = subprocess.run(CMD + args, capture_output=True, env=env(tmp_path), cwd=ROOT, timeout=60)
    err = p.stderr.decode()
    assert p.returncode == 2 and words in err and err.count("\n") == 1, err


# -- end to end: a fake agent -------------------------------------------------------------


@needs_real
@pytest.mark.parametrize("mode", ["spawn", "follow"])
def test_a_2s_stall_raises_exactly_one_stalled_alert_by_command_and_by_apprise(receiver, tmp_path, mode):
    out = tmp_path / "alerts.jsonl"
    alert_args = ["--plain", "--stall", "2s", "--alert-cmd", f"cat >> {out}", "--alert", receiver.url("hook")]
    agent = [sys.executable, EMITTER, str(REJECTED), "--delay", "0.02", "--pause-after", "7", "--pause", "3.5"]
    if mode == "spawn":
        p = subprocess.run(CMD + alert_args + ["--", *agent], capture_output=True, env=env(tmp_path), cwd=ROOT, timeout=60)
        stdout = p.stdout.decode()
        assert p.returncode == 0, p.stderr
    else:
        log = tmp_path / "agent.jsonl"
        log.write_bytes(b"")
        watch = Watcher(CMD + alert_args + ["-f", str(log)], env=env(tmp_path))
        try:
            wait_opened(watch.proc.pid, log)
            with open(log, "ab") as f:
                subprocess.run(agent, stdout=f, timeout=60, check=True)
            wait_read_to_end(watch.proc.pid, log)
            watch.wait_for("operating system.")  # the final text, closed by the result: every line is in
        finally:
            watch.signal(signal.SIGTERM)
            code = watch.finish()
        stdout, stderr = watch.text(), bytes(watch.err).decode()
        assert code == 143, stderr
    sent = cmd_alerts(out)
    assert [a["kind"] for a in sent] == ["stalled"]
    assert "stalled 2s: shell uname -a (unexplained" in sent[0]["message"] and sent[0]["stall"]["tool"] == "shell"
    assert sent[0]["session_id"] == "df086e3e-b984-4bd3-9837-6397f9920b75"
    assert receiver.kinds("hook") == ["stalled"]
    assert stdout.count("! stalled 2s: shell uname -a") == 1  # --plain prints one line


@needs_real
def test_a_replay_raises_no_alert_without_alert_replay(receiver, tmp_path):
    out = tmp_path / "alerts.jsonl"
    args = ["--plain", "--stall", "1s", "--alert-on", "ended,failed,stalled", "--alert-cmd", f"cat >> {out}", str(REJECTED)]
    assert subprocess.run(CMD + args, capture_output=True, env=env(tmp_path), cwd=ROOT, timeout=60).returncode == 0
    assert cmd_alerts(out) == []
    subprocess.run(CMD + ["--alert-replay", *args], capture_output=True, env=env(tmp_path), cwd=ROOT, timeout=60)
    assert [a["kind"] for a in cmd_alerts(out)] == ["ended"]


@needs_real
def test_enforce_stops_the_child_after_the_second_call_starts_and_exits_3(tmp_path):
    save = tmp_path / "saved.jsonl"
    agent = [sys.executable, EMITTER, str(THREE_CALLS), "--delay", "0.05", "--pause-after", "7", "--pause", "20"]
    start = time.monotonic()
    p = subprocess.run(CMD + ["--plain", "--max-tool-calls", "1", "--enforce", "--save", str(save), "--", *agent],
                       capture_output=True, env=env(tmp_path), cwd=ROOT, timeout=60)
    assert p.returncode == 3, p.stderr
    assert time.monotonic() - start < 15  # stopped, not waited for
    lines = THREE_CALLS.read_bytes().splitlines(keepends=True)
    assert save.read_bytes() == b"".join(lines[:7])  # every line read: up to the second call's start
    err = p.stderr.decode()
    assert "budget: 2 tool calls > 1: stopping the command (--enforce)" in err and "Traceback" not in err
    assert "! budget: 2 tool calls > 1" in p.stdout.decode()


@needs_real
def test_enforce_in_summary_mode_and_without_a_breach(tmp_path):
    agent = [sys.executable, EMITTER, str(THREE_CALLS), "--delay", "0.01"]
    p = subprocess.run(CMD + ["--summary", "--json", "--max-tool-calls", "3", "--enforce", "--", *agent],
                       capture_output=True, env=env(tmp_path), cwd=ROOT, timeout=60)
    assert p.returncode == 0 and orjson.loads(p.stdout)["budget"] == []
    p = subprocess.run(CMD + ["--summary", "--json", "--max-tool-calls", "2", "--enforce", "--", *agent],
                       capture_output=True, env=env(tmp_path), cwd=ROOT, timeout=60)
    assert p.returncode == 3
    assert orjson.loads(p.stdout)["budget"] == [{"budget": "tool_calls", "limit": 2, "value": 3}]


@needs_real
def test_bad_receivers_leave_the_watch_unaffected_and_are_counted(receiver, tmp_path):
    json_out = tmp_path / "summary.json"
    base = CMD + ["--plain", "--json-out", str(json_out), "--", sys.executable, EMITTER, str(REJECTED), "--delay", "0.01"]
    quiet = subprocess.run(base, capture_output=True, env=env(tmp_path), cwd=ROOT, timeout=60)
    bad = ["--alert-on", "ended", "--alert", receiver.url("hang"), "--alert", refused_url(),
           "--alert", receiver.url("fail"), "--alert-cmd", "sleep 60"]
    start = time.monotonic()
    p = subprocess.run(base[:3] + bad + base[3:], capture_output=True, env=env(tmp_path), cwd=ROOT, timeout=60)
    elapsed = time.monotonic() - start
    assert p.returncode == quiet.returncode == 0
    assert elapsed < 0.3 * 31 + 10  # the stream's own pace, plus at most the exit wait (3 s) and start-up
    strip = lambda out: [x for x in out.decode().splitlines() if not x.startswith("· ended alert to")]  # noqa: E731
    assert strip(p.stdout) == strip(quiet.stdout)  # the watch itself is unaffected
    err = p.stderr.decode()
    assert "4 of 4 alert deliveries failed" in err and "Traceback" not in err
    notes = [n for n in orjson.loads(json_out.read_bytes())["notes"] if n["kind"] == "alert"]
    assert len(notes) == 4 and all("ended alert to" in n["text"] for n in notes)
    assert sorted(receiver.kinds("hang") + receiver.kinds("fail")) == ["ended", "ended"]


# -- a followed file already silent; stopping a watch is not a run's end --------------------------


@needs_real
def test_following_a_file_whose_agent_is_already_silent_raises_the_stall_and_stopping_raises_no_failed(tmp_path):
    """The file's last event is a started tool call and nothing more comes: once its backlog is
    read the run is live, its silence measured from then, so `--stall 2s` fires ~2 s later. A
    SIGTERM then stops the watch: the run was still going, so no `failed` alert."""
    out = tmp_path / "alerts.jsonl"
    log = tmp_path / "agent.jsonl"
    log.write_bytes(b"".join(REJECTED.read_bytes().splitlines(keepends=True)[:7]))  # up to the first call's start
    start = time.monotonic()
    watch = subprocess.Popen(CMD + ["--plain", "--stall", "2s", "--alert-cmd", f"cat >> {out}", "-f", str(log)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env(tmp_path), cwd=ROOT)
    try:
        wait_for(lambda: cmd_alerts(out), "the stalled alert from --alert-cmd")
        took = time.monotonic() - start
        assert watch.poll() is None
    finally:
        watch.send_signal(signal.SIGTERM)
        stdout, stderr = (x.decode() for x in watch.communicate(timeout=30))
    sent = cmd_alerts(out)
    assert [a["kind"] for a in sent] == ["stalled"], stderr
    assert "stalled 2s: shell uname -a (unexplained" in sent[0]["message"] and 2 <= took < 25
    assert watch.returncode == 143 and "Traceback" not in stderr
    assert stdout.count("! stalled") == 1


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_stopping_a_followed_file_or_a_pipe_mid_run_raises_no_failed_alert(tmp_path, signum):
    out = tmp_path / "alerts.jsonl"
    log = tmp_path / "agent.jsonl"
    head = INIT + PROMPT + line(type="tool_call", subtype="started", call_id="c1", session_id="s1", timestamp_ms=1,
                                tool_call={"shellToolCall": {"args": {"command": "npm test"}}})
    log.write_bytes(head)
    args = ["--plain", "--alert-on", "failed,ended", "--alert-cmd", f"cat >> {out}"]
    follow = Watcher(CMD + args + ["-f", str(log)], env=env(tmp_path))
    pipe = Watcher(CMD + args, env=env(tmp_path), stdin=subprocess.PIPE)
    try:
        pipe.proc.stdin.write(head)
        pipe.proc.stdin.flush()
        for watch in (follow, pipe):
            watch.wait_for("▶ [1] shell  npm test")  # each has read the whole head: the call is on screen
    finally:
        for watch in (follow, pipe):
            watch.signal(signum)
        codes = [watch.finish() for watch in (follow, pipe)]
    assert codes == [128 + signum] * 2, [bytes(w.err) for w in (follow, pipe)]
    assert cmd_alerts(out) == []  # before: a `failed` alert "ended without a result" for each
    for watch in (follow, pipe):
        assert "ended without a result" in watch.text()  # the views still say where it was cut


@needs_real
def test_without_enforce_a_budget_breach_stops_nothing(tmp_path):
    save = tmp_path / "saved.jsonl"
    agent = [sys.executable, EMITTER, str(THREE_CALLS), "--delay", "0.01"]
    quiet = subprocess.run(CMD + ["--plain", "--", *agent], capture_output=True, env=env(tmp_path), cwd=ROOT, timeout=60)
    p = subprocess.run(CMD + ["--plain", "--max-tool-calls", "1", "--save", str(save), "--", *agent],
                       capture_output=True, env=env(tmp_path), cwd=ROOT, timeout=60)
    assert p.returncode == quiet.returncode == 0
    assert save.read_bytes() == THREE_CALLS.read_bytes()  # every line: the command ran to its end
    # said once, with the count when it was seen (2, or 3 when the watch read the calls in one chunk)
    assert len(re.findall(r"^! budget: [23] tool calls > 1$", p.stdout.decode(), re.M)) == 1, p.stdout.decode()
    assert "stopping the command" not in p.stderr.decode()
    assert [x for x in p.stdout.decode().splitlines() if not x.startswith("! budget")] == quiet.stdout.decode().splitlines()


@needs_real
def test_a_pipe_raises_ended_only_when_asked_and_failed_by_default(tmp_path):
    out = tmp_path / "alerts.jsonl"
    ok = REJECTED.read_bytes()  # ends with a successful result
    cut = ok[: ok.rindex(b'{"type":"result"')]  # the same without its result
    for data, kinds, want in ((ok, [], []), (ok, ["--alert-on", "ended"], ["ended"]), (cut, [], ["failed"]),
                              (cut, ["--alert-on", "ended"], [])):
        out.unlink(missing_ok=True)
        p = subprocess.run(CMD + ["--plain", *kinds, "--alert-cmd", f"cat >> {out}"], input=data, capture_output=True,
                           env=env(tmp_path), cwd=ROOT, timeout=60)
        assert [a["kind"] for a in cmd_alerts(out)] == want, (kinds, p.stderr)
