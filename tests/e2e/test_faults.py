"""Fault injection, through the real command: producers that die, pipes that close,
files that move, children that misbehave, signals, full disks and hostile input.

Every test runs ``python -m cursor_watch`` as a subprocess (or a child it spawns)
and checks the README's promises: nothing lost (``--save`` is byte-identical, cut
lines are diagnostics), nothing crashes (no traceback, the documented exit
status), nothing injected (no raw escape or control character on stdout).
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from conftest import ROOT, SAMPLES, WAIT_S, Watcher, gone, wait_for, wait_read_to_end

CMD = [sys.executable, "-m", "cursor_watch"]
ENV = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")}
ENV.update({"NO_COLOR": "1", "PYTHONPATH": str(ROOT)})

TOOLS = SAMPLES / "plain-tools.jsonl"  # ends with result/success
NO_RESULT = SAMPLES / "failed-no-result.jsonl"  # ends without a result
PARALLEL = SAMPLES / "parallel-failed-rejected.jsonl"


def run(args, stdin=None, timeout=60):
    return subprocess.run(CMD + args, input=stdin, capture_output=True, timeout=timeout, env=ENV, cwd=ROOT)


def summary(args, stdin=None):
    p = run(["--summary", "--json", *args], stdin=stdin)
    assert_no_traceback(p.stderr)
    return p, orjson.loads(p.stdout)


def assert_no_traceback(stderr: bytes) -> None:
    text = stderr.decode("utf-8", "replace")
    assert "Traceback" not in text and "Task exception" not in text, text[-3000:]


def one_clear_line(stderr: bytes) -> str:
    assert_no_traceback(stderr)
    lines = stderr.decode().strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cursor-watch: "), lines
    return lines[0]


def assert_inert(out: bytes, where: str = "stdout") -> None:
    """No raw ESC, BEL, NUL, CR, other C0 (but TAB/LF), DEL, C1 (8-bit CSI...) or bidi override."""
    text = out.decode("utf-8")
    for i, ch in enumerate(text):
        code = ord(ch)
        bad = (code < 0x20 and ch not in "\t\n") or 0x7F <= code <= 0x9F or 0x202A <= code <= 0x202E \
            or 0x2066 <= code <= 0x2069
        assert not bad, f"raw {ch!r} in {where}: {text[max(0, i - 60):i + 20]!r}"


def wait_until(predicate, timeout: float = WAIT_S, what: str = "condition") -> None:
    wait_for(predicate, what, timeout)


def read_int(path: Path) -> int:
    wait_until(lambda: path.exists() and path.read_text().endswith("\n"), what=str(path))
    return int(path.read_text().split()[0])


@pytest.fixture
def watchers():
    started: list[Watcher] = []

    def start(args, **kw) -> Watcher:
        w = Watcher(CMD + args, env=ENV, **kw)
        started.append(w)
        return w

    yield start
    for w in started:
        w.kill()


def event(obj: dict) -> bytes:
    return orjson.dumps(obj) + b"\n"


def shell_started(call_id: str, command: str) -> bytes:
    return event({"type": "tool_call", "subtype": "started", "call_id": call_id, "session_id": "s-1",
                  "tool_call": {"shellToolCall": {"args": {"command": command}}}})


INIT = event({"type": "system", "subtype": "init", "session_id": "s-1", "model": "Fault Model", "cwd": "/tmp",
              "apiKeySource": "login", "permissionMode": "default"})


def script(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


# -- producers that die, pipes that close ---------------------------------------------


def test_producer_killed_mid_line(tmp_path):
    head = TOOLS.read_bytes().splitlines(keepends=True)[:6]
    (tmp_path / "head.jsonl").write_bytes(b"".join(head))
    partial = b'{"type":"assistant","message":{"content":[{"type":"text","text":"half a li'
    (tmp_path / "partial").write_bytes(partial)
    child = script(tmp_path, "child.sh", f"cat '{tmp_path}/head.jsonl' '{tmp_path}/partial'; kill -9 $$\n")
    p, j = summary(["--", str(child)])
    assert p.returncode == 137
    assert j["exit_status"] == 137 and j["status"] == "incomplete"
    assert j["counts"]["lines"] == len(head) + 1
    assert j["counts"]["events"] == len(head)
    assert [d["line"] for d in j["diagnostics"]] == [len(head) + 1]
    assert "half a li" in j["diagnostics"][0]["message"]
    p = run(["--plain", "--", str(child)])
    assert_no_traceback(p.stderr)
    assert p.returncode == 137
    out = p.stdout.decode()
    assert f"! line {len(head) + 1}: invalid JSON" in out
    assert out.rstrip().splitlines()[-1].startswith("■ incomplete") and "exit status 137" in out


def test_pipe_closed_early_is_incomplete(tmp_path):
    data = TOOLS.read_bytes()
    cut = len(data) - 40  # inside the final result line
    p = subprocess.run(f"head -c {cut} '{TOOLS}' | {sys.executable} -m cursor_watch --summary --json",
                       shell=True, capture_output=True, env=ENV, cwd=ROOT, timeout=60)
    assert_no_traceback(p.stderr)
    j = orjson.loads(p.stdout)
    assert p.returncode == 1
    assert j["status"] == "incomplete" and j["result"] is None
    n = data[:cut].count(b"\n") + 1
    assert j["counts"]["lines"] == n and j["diagnostics"][-1]["line"] == n


@pytest.mark.parametrize("mode", ["file", "pipe", "spawn"])
def test_stream_without_result_is_incomplete_and_1(mode):
    data = NO_RESULT.read_bytes()
    if mode == "file":
        p, j = summary([str(NO_RESULT)])
    elif mode == "pipe":
        p, j = summary([], stdin=data)
    else:
        p, j = summary(["--", "cat", str(NO_RESULT)])
        assert j["exit_status"] == 0
    assert p.returncode == 1
    assert j["status"] == "incomplete" and j["result"] is None
    assert all(c["status"] in ("success", "failure", "rejected", "incomplete") for c in j["tool_calls"])


# -- a followed file that is truncated, rotated or deleted ----------------------------


@pytest.mark.parametrize("change", ["truncate", "rotate", "delete"])
def test_followed_file_changes(tmp_path, watchers, change):
    f = tmp_path / "run.jsonl"
    f.write_bytes(INIT + shell_started("c1", "echo one"))
    w = watchers(["--plain", "-f", str(f)])
    w.wait_for("▶ [1] shell  echo one")
    if change == "truncate":
        with open(f, "ab") as fh:  # a line cut by the truncation: kept as a diagnostic
            fh.write(b'{"type":"tool_call","subtype":"sta')
        wait_read_to_end(w.proc.pid, f)  # the cut line is in the watch before the file is emptied
        with open(f, "r+b") as fh:  # copytruncate: same file, emptied, then written again
            fh.truncate(0)
        w.wait_for("was truncated")
        with open(f, "ab") as fh:
            fh.write(shell_started("c2", "echo two"))
        w.wait_for("▶ [1] shell  echo two")  # what follows a truncation is a new run
        out = w.text()
        assert "! line 3: invalid JSON" in out
        assert "the file was truncated" in out and "(run 2) <==" in out
        assert out.index("the file was truncated") < out.index("(run 2) <==") < out.index("echo two")
    elif change == "rotate":
        with open(f, "ab") as fh:  # written just before the rename: still read from the old file
            fh.write(shell_started("c2", "echo before-rotate"))
        f.rename(tmp_path / "run.jsonl.1")
        f.write_bytes(shell_started("c3", "echo after-rotate"))
        w.wait_for("was replaced")
        w.wait_for("▶ [1] shell  echo after-rotate")  # the new file is a new run
        assert "▶ [2] shell  echo before-rotate" in w.text()
        assert w.text().index("before-rotate") < w.text().index("was replaced") < w.text().index("after-rotate")
    else:
        f.unlink()
        w.wait_for("was deleted")
        f.write_bytes(shell_started("c4", "echo recreated"))
        w.wait_for("▶ [1] shell  echo recreated")  # a new file: a new run
    w.signal(signal.SIGINT)
    assert w.finish() == 130
    assert_no_traceback(bytes(w.err))
    out = w.text()
    assert out.rstrip().splitlines()[-1].startswith("■ incomplete")
    assert "Fault Model" in out  # the header, once
    assert out.count("Fault Model") == 1
    assert_inert(bytes(w.out))


# -- spawned commands that can't start or misbehave -----------------------------------


def test_command_not_found_is_one_line_and_2(tmp_path):
    p = run(["--plain", "--", str(tmp_path / "no-such-agent")])
    assert p.returncode == 2
    assert "command not found" in one_clear_line(p.stderr)
    assert p.stdout == b""


def test_command_not_executable_is_one_line_and_2(tmp_path):
    f = tmp_path / "agent"
    f.write_text("#!/bin/sh\necho hi\n")
    f.chmod(0o644)
    p = run(["--plain", "--", str(f)])
    assert p.returncode == 2
    assert "not executable" in one_clear_line(p.stderr)
    p = run(["--summary", "--json", "--", str(tmp_path)])  # a directory
    assert p.returncode == 2
    one_clear_line(p.stderr)


def test_child_ignoring_sigterm_is_killed_after_the_grace_period(tmp_path, watchers):
    child = script(tmp_path, "stubborn.sh", f"""trap '' TERM
sleep 60 &
echo $! > '{tmp_path}/grandchild'
echo $$ > '{tmp_path}/pid'
cat '{NO_RESULT}'
while :; do sleep 1; done
""")
    w = watchers(["--plain", "--", str(child)])
    pid = read_int(tmp_path / "pid")
    grandchild = read_int(tmp_path / "grandchild")
    w.wait_for("▶ [")
    t0 = time.monotonic()
    w.signal(signal.SIGTERM)
    assert w.finish() == 143
    elapsed = time.monotonic() - t0
    assert 1.0 < elapsed < 15, elapsed  # it waited for the grace period, then killed
    wait_until(lambda: gone(pid) and gone(grandchild), WAIT_S, "the child and its group to be gone")
    assert_no_traceback(bytes(w.err))


def test_child_that_never_exits_after_result_is_stopped(tmp_path):
    child = script(tmp_path, "lingers.sh", f"echo $$ > '{tmp_path}/pid'\ncat '{TOOLS}'\nexec sleep 60\n")
    t0 = time.monotonic()
    p, j = summary(["--result-grace", "0.5", "--", str(child)])
    assert time.monotonic() - t0 < 10
    assert p.returncode == 0
    assert j["status"] == "success"
    assert gone(read_int(tmp_path / "pid"))


def test_child_flooding_stderr_does_not_deadlock(tmp_path):
    data = PARALLEL.read_bytes()
    lines = data.splitlines(keepends=True)
    flood = tmp_path / "flood.py"
    flood.write_text(f"""import sys
lines = open({str(PARALLEL)!r}, 'rb').read().splitlines(keepends=True)
per_line = (5 << 20) // len(lines) // 100 + 1
n = 0
for line in lines:
    for _ in range(per_line):
        n += 1
        sys.stderr.buffer.write(b'warning %08d ' % n + b'x' * 80 + b'\\n')
    sys.stderr.buffer.flush()
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
sys.stderr.buffer.write(b'the last stderr line\\n')
""")
    _, whole = summary([str(PARALLEL)])
    p = run(["--summary", "--json", "--", sys.executable, str(flood)], timeout=60)
    assert_no_traceback(p.stderr)
    j = orjson.loads(p.stdout)
    assert p.returncode == 0 and j["exit_status"] == 0
    assert j["counts"] == whole["counts"]
    assert j["counts"]["lines"] == len(lines)
    assert [c["status"] for c in j["tool_calls"]] == [c["status"] for c in whole["tool_calls"]]
    assert j["assistant_text"] == whole["assistant_text"]
    assert j["stderr"] and j["stderr"][-1] == "the last stderr line"
    per_line = (5 << 20) // len(lines) // 100 + 1
    assert j["stderr"][-2] == "warning %08d " % (per_line * len(lines)) + "x" * 80  # all 5 MB were read


@pytest.mark.parametrize(("sig", "status"), [("TERM", 143), ("KILL", 137), ("USR1", 138)])
def test_child_killed_by_signal_passes_128_plus_n(tmp_path, sig, status):
    child = script(tmp_path, "dies.sh", f"cat '{TOOLS}'\nkill -{sig} $$\n")
    p, j = summary(["--", str(child)])
    assert p.returncode == status
    assert j["exit_status"] == status
    assert j["status"] == "success"  # the stream itself was complete


@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_signal_to_cursor_watch_stops_the_child_and_keeps_every_byte(tmp_path, watchers, sig, status):
    printed = b"".join(TOOLS.read_bytes().splitlines(keepends=True)[:8]) + b"Error: not json\n\xff\xfe\n{\"partial"
    (tmp_path / "printed").write_bytes(printed)
    child = script(tmp_path, "agent.sh", f"echo $$ > '{tmp_path}/pid'\ncat '{tmp_path}/printed'\n"
                                         f": > '{tmp_path}/marker'\nexec sleep 60\n")
    save = tmp_path / "saved.jsonl"
    w = watchers(["--plain", "--save", str(save), "--", str(child)])
    pid = read_int(tmp_path / "pid")
    wait_until((tmp_path / "marker").exists, what="the child to print everything")
    # the watch has read and shown up to line 9 (the rest, a line cut short, is still in the pipe
    # when the signal comes, or not: --save keeps it either way)
    w.wait_for("! line 9: not JSON")
    w.signal(sig)
    assert w.finish() == status
    assert_no_traceback(bytes(w.err))
    wait_until(lambda: gone(pid), WAIT_S, "the child to be gone")
    assert save.read_bytes() == printed
    out = w.text()
    assert out.rstrip().splitlines()[-1].startswith("■ incomplete")
    assert "! line 9: not JSON" in out


async def test_a_signal_while_the_command_is_being_started_stops_it_and_keeps_its_bytes(tmp_path, monkeypatch):
    """A signal that came while the command was being started (spawned and printing, but
    ``ProcessSource.start`` not returned: on a loaded machine asyncio takes its time) cancelled the
    start: the source was never stopped, so the child got no SIGTERM and what it had printed was
    never read nor saved (test_signal_to_cursor_watch_stops_the_child_and_keeps_every_byte failed
    so under load). The start is let finish, then the command is stopped as any other."""
    import asyncio

    from cursor_watch.stream import sources
    from cursor_watch.stream.watch import Watch

    from conftest import wait_for_async

    printed = b"".join(TOOLS.read_bytes().splitlines(keepends=True)[:8])
    (tmp_path / "printed").write_bytes(printed)
    marker = tmp_path / "marker"
    child = script(tmp_path, "agent.sh", f"cat '{tmp_path}/printed'\n: > '{marker}'\nexec sleep 60\n")
    spawn = asyncio.create_subprocess_exec
    watch: Watch | None = None

    async def slow_spawn(*args, **kw):
        proc = await spawn(*args, **kw)
        await wait_for_async(marker.exists, "the child to print everything")
        watch.interrupt(signal.SIGTERM)  # the signal comes now, before the start has returned
        await wait_for_async(lambda: watch._tasks[0].cancelling(), "the watch to stop the feed", interval=0.001)
        return proc

    monkeypatch.setattr(sources.asyncio, "create_subprocess_exec", slow_spawn)
    save = sources.SaveFile(str(tmp_path / "saved.jsonl"))
    source = sources.ProcessSource([str(child)], save=save, grace=5)
    watch = Watch([source], install_signals=False)
    code = await asyncio.wait_for(watch.run(lambda run, changes: None), WAIT_S)
    assert code == 143
    assert source.exit_status == 143  # it was sent SIGTERM (sleep dies of it), not left to be killed
    assert (tmp_path / "saved.jsonl").read_bytes() == printed  # read from its pipe once it was stopped
    assert watch.feeds[0].ended and watch.feeds[0].runs[-1].session.ended


def test_sigint_during_a_big_replay_is_handled_promptly(tmp_path, watchers):
    f = tmp_path / "garbage.jsonl"
    # after an event: each line is printed (before one, a file that is not stream-json is said once)
    f.write_bytes(INIT + b"".join(b"garbage line %06d\n" % i for i in range(100_000)))
    w = watchers(["--plain", str(f)])
    w.wait_for("! line 100:")
    w.signal(signal.SIGINT)
    assert w.finish() == 130
    # promptly: it stopped within a slice of its read (the pump yields every 64 KiB), not after
    # the whole 1 MiB chunk it read (52,428 lines of 20 bytes; SIGINT took 11 s so), let alone the
    # file (what it had printed and not yet written to the pipe aside)
    last = w.text().rstrip().splitlines()[-1]
    read = int(re.search(r"([\d,]+) invalid lines", last).group(1).replace(",", ""))
    assert 100 <= read < (1 << 20) // 20, last


# -- --save that can't be written ----------------------------------------------------


@pytest.mark.parametrize("where", ["missing-dir", "directory"])
def test_save_path_that_cannot_be_opened_is_one_line_and_2(tmp_path, where):
    target = tmp_path / "nope" / "out.jsonl" if where == "missing-dir" else tmp_path
    p = run(["--plain", "--save", str(target), str(TOOLS)])
    assert p.returncode == 2
    assert "--save" in one_clear_line(p.stderr)
    assert p.stdout == b""


@pytest.mark.parametrize("mode", ["file", "pipe", "spawn"])
def test_save_to_a_full_disk_is_one_notice_and_the_watch_goes_on(mode):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    args = {"file": [str(TOOLS)], "pipe": [], "spawn": ["--", "cat", str(TOOLS)]}[mode]
    stdin = TOOLS.read_bytes() if mode == "pipe" else None
    p = run(["--plain", "--save", "/dev/full", *args], stdin=stdin)
    assert_no_traceback(p.stderr)
    assert p.returncode == 0  # the stream succeeded: the save error doesn't change that
    out = p.stdout.decode()
    assert out.count("no longer saving") == 1, out
    assert "/dev/full" in out and "No space left on device" in out
    assert out.rstrip().splitlines()[-1].startswith("■ success")
    assert "✖ [3] shell  pytest -q  failure" in out  # the rest of the run was still watched
    p, j = summary(["--save", "/dev/full", *args], stdin=stdin)
    assert p.returncode == 0 and j["status"] == "success"
    assert [n["subtype"] for n in j["notes"]].count("save_error") == 1


# -- hostile input -------------------------------------------------------------------

EVIL = "\x1b[31mred\x1b[0m \x1b]52;c;ZXZpbA==\x07 \x1b]0;title\x07 \x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\ " \
       "\x07 \x9b2J \x00 \x7f \u202e"
EVIL_B = EVIL.encode()


def hostile_stream() -> bytes:
    call = {"shellToolCall": {"args": {"command": EVIL}}}
    done = {"shellToolCall": {"args": {"command": EVIL},
                              "result": {"success": {"stdout": EVIL, "stderr": EVIL, "exitCode": 3}}}}
    parts = [
        INIT,
        event({"type": "user", "message": {"content": [{"type": "text", "text": EVIL}]}}),
        event({"type": "thinking", "subtype": "delta", "text": EVIL}),
        event({"type": "thinking", "subtype": "completed"}),
        event({"type": "assistant", "message": {"content": [{"type": "text", "text": EVIL}]}}),
        event({"type": "tool_call", "subtype": "started", "call_id": "a\nb", "tool_call": call}),
        b"garbage " + EVIL_B + b"\n",  # interleaved garbage, with raw escapes
        event({"type": "tool_call", "subtype": "completed", "call_id": "a\nb", "tool_call": done}),
        b'{"type":"tool_call","subtype":"started","call_id":"raw\n' + b'newline","tool_call":{"readToolCall":'
        b'{"args":{"path":"/etc/\\u001b]0;x\\u0007"}}}}\n',  # a raw newline inside an event
        event({"type": "tool_call", "subtype": "completed", "call_id": EVIL,
               "tool_call": {EVIL + "ToolCall": {"result": {EVIL: {"reason": EVIL}}}}}),
        event({"type": "tool_call", "subtype": "completed", "call_id": "fn",
               "tool_call": {"function": {"name": EVIL, "arguments": EVIL}}}),
        b"\x00\x00\x00\n\xff\xfe\xfd invalid utf-8 \x1b[2J\n\xc2\x9b6n\n",
        event({"type": "interaction_query", "subtype": "request", "query_type": EVIL,
               "query": {"q": {"args": {"toolCallId": "a\nb", "command": EVIL}}}}),
        event({"type": "interaction_query", "subtype": "response", "query_type": EVIL,
               "response": {"q": {"rejected": {"reason": EVIL}}}}),
        event({"type": "retry", "subtype": EVIL, "attempt": EVIL}),
        event({"type": "connection", "subtype": EVIL, "endpoint_url": EVIL}),
        event({"type": "system", "subtype": EVIL, "detail": EVIL}),
        event({"type": EVIL, "subtype": EVIL}),
        event({"type": "assistant", "message": {"content": [{"type": "text", "text": EVIL}]}, "model_call_id": "m"}),
        TOOLS.read_bytes(),  # a second run in the same file (its own init)
        event({"type": "result", "subtype": EVIL, "is_error": False, "result": EVIL,
               "usage": {"inputTokens": EVIL, "outputTokens": 5}}),
    ]
    return b"".join(parts)


@pytest.mark.parametrize("args", [["--plain"], ["--plain", "--thinking"], ["--summary"], ["--summary", "--json"]],
                         ids=["plain", "plain-thinking", "summary", "json"])
def test_hostile_input_is_shown_inert_and_saved_exactly(tmp_path, args):
    data = hostile_stream()
    f = tmp_path / "hostile.jsonl"
    f.write_bytes(data)
    save = tmp_path / "saved.jsonl"
    for source, stdin in (([str(f)], None), ([], data)):
        extra = ["--save", str(save)] if stdin is not None else []
        p = run([*args, *extra, *source], stdin=stdin)
        assert_no_traceback(p.stderr)
        assert p.returncode == 1  # two runs; the first (the hostile one) has no result
        assert p.stdout
        assert_inert(p.stdout, " ".join(args))
    assert save.read_bytes() == data
    if args == ["--summary", "--json"]:
        first, second = (orjson.loads(line) for line in p.stdout.splitlines())  # NDJSON: one object per run
        assert (first["run"], first["status"], second["run"], second["status"]) == (1, "incomplete", 2, "success")
        assert first["counts"]["invalid_lines"] >= 4
        assert any(c["call_id"] == "raw\nnewline" for c in first["tool_calls"])  # rejoined
        assert second["result"]["text"] == EVIL  # kept intact, escaped only in the JSON encoding


def test_hostile_stderr_of_a_spawned_command_is_shown_inert(tmp_path):
    (tmp_path / "evil").write_bytes(EVIL_B + b"\n\xff\x1b]0;t\x07 no newline")
    child = script(tmp_path, "agent.sh", f"cat '{TOOLS}'\ncat '{tmp_path}/evil' >&2\n")
    for args in (["--plain"], ["--summary"], ["--summary", "--json"]):
        p = run([*args, "--", str(child)])
        assert_no_traceback(p.stderr)
        assert p.returncode == 0
        assert_inert(p.stdout, " ".join(args))
    assert orjson.loads(p.stdout)["stderr"][-1] == "\ufffd\x1b]0;t\x07 no newline"


PIPE_BYTES = 64 << 10


@pytest.mark.parametrize("args", [["--plain"], ["--summary"], ["--summary", "--json"]])
def test_stdout_closed_early_is_quiet(tmp_path, args):
    """The reader (``| head -c 100``) closes the pipe while cursor-watch still has output to write:
    no traceback, exit 141. The output must not fit in the pipe (64 KiB, set here): an output
    that fits is written whole before the reader closes, and the run's own status is right then
    (50,000 garbage lines made a 3 KB --summary, and make a few lines of --plain once a file that
    is not stream-json is said once). 100 runs print 190 KB as --plain, 230 KB as --summary and
    610 KB as --summary --json; checked here first."""
    f = tmp_path / "input.jsonl"
    f.write_bytes(TOOLS.read_bytes() * 100)
    whole = subprocess.run(CMD + [*args, str(f)], capture_output=True, env=ENV, cwd=ROOT, timeout=120)
    assert len(whole.stdout) > 2 * PIPE_BYTES, len(whole.stdout)  # the premise: it can't all be in the pipe
    proc = subprocess.Popen(CMD + [*args, str(f)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV, cwd=ROOT,
                            pipesize=PIPE_BYTES)
    assert os.read(proc.stdout.fileno(), 100)  # it has begun to write
    proc.stdout.close()
    _, err = proc.communicate(timeout=60)
    assert_no_traceback(err)
    assert proc.returncode == 141  # 128 + SIGPIPE, as the README's exit-status table says


@pytest.mark.parametrize("args", [["--plain"], ["--summary"], ["--summary", "--json"], ["--plain", "--follow"]])
def test_stdout_closed_early_with_many_sources_is_quiet(tmp_path, args):
    """`--plain DIR | head -2` exited 141 but printed one 'Task exception was never
    retrieved ... OutputClosed' traceback per further source (11 for 12 files)."""
    logs = tmp_path / "logs"
    logs.mkdir()
    for n in range(12):  # 100 runs each: more output than a pipe holds, so every source meets the closed pipe
        (logs / f"run-{n:02d}.jsonl").write_bytes(TOOLS.read_bytes() * 100)
    p = subprocess.run(f"{shlex.join(CMD + args)} {shlex.quote(str(logs))} | head -2", shell=True, capture_output=True,
                       env=ENV, cwd=ROOT, timeout=60, executable="/bin/bash")
    assert len(p.stdout.splitlines()) == 2
    assert p.stderr == b""  # nothing at all: the documented exit status is the only effect
    status = subprocess.run(f"{shlex.join(CMD + args)} {shlex.quote(str(logs))} | head -2 >/dev/null; "
                            "echo ${PIPESTATUS[0]}", shell=True, capture_output=True, env=ENV, cwd=ROOT, timeout=60,
                            executable="/bin/bash")
    assert status.stdout.strip() == b"141" and status.stderr == b""


def test_an_output_that_fits_the_pipe_is_written_whole_and_the_status_is_the_runs(tmp_path):
    """The other side of test_stdout_closed_early_is_quiet: a summary that fits in the pipe is
    written before the reader closes it, so nothing was lost and the exit status is the run's (1:
    no result)."""
    f = tmp_path / "garbage.jsonl"
    f.write_bytes(b"".join(b"garbage line %06d\n" % i for i in range(50_000)))
    proc = subprocess.Popen(CMD + ["--summary", str(f)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
                            cwd=ROOT, pipesize=PIPE_BYTES)
    proc.wait(timeout=60)  # it exits with its summary in the pipe, unread
    out, err = proc.communicate(timeout=60)
    assert_no_traceback(err)
    assert proc.returncode == 1 and 0 < len(out) < PIPE_BYTES and out.endswith(b"\n")


def _numbers_replaced(line: bytes, number: bytes) -> bytes:
    """``line`` with every number in it, at any depth, written as ``number`` (JSON text)."""
    def walk(value):
        if isinstance(value, bool):
            return value
        if isinstance(value, (int, float)):
            return "@N@"  # (orjson can't write an integer past 64 bits: the text goes in after)
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    try:
        data = orjson.loads(line)
    except orjson.JSONDecodeError:
        return line
    return orjson.dumps(walk(data)).replace(b'"@N@"', number)


@pytest.mark.parametrize("agent", ["cursor", "claude", "codex", "gemini"])
@pytest.mark.parametrize("value", [2**70, -(2**70), 1e30, 1e300, 2**64, -(2**63) - 1],
                         ids=["2^70", "-2^70", "1e30", "1e300", "2^64", "-2^63-1"])
def test_numbers_past_64_bits_are_no_value_not_a_crash(tmp_path, agent, value):
    # every number of a stream (times, durations, exit codes, token counts) past 64 bits, or a sum
    # of such numbers past them: null in --summary --json (orjson writes no such integer), a day
    # no date has is unknown in --report; never a traceback (each of the four was one)
    src = tmp_path / "src.jsonl"
    if agent == "cursor":
        src.write_bytes(TOOLS.read_bytes())
    else:
        gen = subprocess.run([sys.executable, str(ROOT / "bench" / "gen_stream.py"), str(src), "--agent", agent,
                              "--size", "40KB", "--seed", "2"], capture_output=True, timeout=60)
        assert gen.returncode == 0, gen.stderr.decode()
    number = repr(value).encode()
    f = tmp_path / "big.jsonl"
    f.write_bytes(b"".join(_numbers_replaced(line, number) + b"\n" for line in src.read_bytes().splitlines()
                           if line.strip()))
    assert number in f.read_bytes()
    for args in (["--summary", "--json"], ["report", "--json"], ["--plain"], ["--summary"]):
        p = run([*args, "--format", agent, str(f)])
        assert_no_traceback(p.stderr)
        assert p.returncode in (0, 1), (args, p.stderr.decode())
        if args == ["--summary", "--json"]:
            for call in orjson.loads(p.stdout)["tool_calls"]:
                for key in ("started_ms", "completed_ms", "duration_ms", "exit_code"):
                    assert call[key] is None or -(2**63) <= call[key] < 2**64, (key, call[key])
