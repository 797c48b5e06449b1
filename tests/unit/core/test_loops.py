"""Loops: re-reads, retried failures and repeats counted per run; streams with
loops planted in shared real captures (tests/fixtures/loopstreams.py) marked with the right counts, the
real captures themselves not; --max-repeats, the loop alert, --enforce (exit 3), --plain, the
summary JSON."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

import loopstreams
from conftest import ROOT, agent_captures, real_captures, run_bytes, run_file
from cursor_watch.outlets.alerts import AlertRules
from cursor_watch.core.limits import Limits
from cursor_watch.core.loops import LoopTracker

CMD = [sys.executable, "-m", "cursor_watch"]
EMITTER = str(ROOT / "tests" / "fixtures" / "emitter.py")
needs_shared = pytest.mark.skipif(not loopstreams.CURSOR_TOOLS.is_file(), reason="shared captures not found")


def env(tmp_path):
    return {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": str(tmp_path / "config")}


def labels(tracker: LoopTracker, limit: int = 3) -> list[str]:
    return [f.label() for f in tracker.findings(limit)]


# -- the counting rules ---------------------------------------------------------------------------


def test_a_reread_streak_ends_at_an_edit_of_that_file_only():
    t = LoopTracker()
    read = {"path": "src/app.py"}
    for n in range(3):
        t.ended(f"r{n}", "read", "Read", "src/app.py", read, "success", n + 1)
    t.ended("e1", "edit", "Edit", "src/other.py", {"path": "src/other.py"}, "success", 4)  # another file
    t.ended("r3", "read", "Read", "src/app.py", read, "success", 5)
    assert labels(t) == ["Read src/app.py ×4"] and t.rereads == 3
    t.ended("e2", "edit", "Edit", "src/app.py", {"path": "src/app.py"}, "success", 6)
    t.ended("r4", "read", "Read", "src/app.py", read, "success", 7)
    t.ended("r5", "read", "Read", "src/app.py", read, "success", 8)
    assert labels(t) == ["Read src/app.py ×4"]  # the longest streak; the new one is 2
    assert t.rereads == 4 and t.waste == 4
    assert [f.count for f in t.reached] == [3]  # said once, at the third read


def test_a_read_of_other_lines_is_another_call():
    t = LoopTracker()
    for n in range(3):
        t.ended(f"r{n}", "read", "Read", "a.py", {"path": "a.py", "offset": n * 100}, "success", n + 1)
    assert t.findings(2) == [] and t.waste == 0


def test_a_failure_streak_survives_edits_and_ends_at_a_success():
    t = LoopTracker()
    cmd = {"command": "npm test"}
    for n in range(3):
        t.ended(f"s{n}", "shell", "shell", "npm test", cmd, "failure", 2 * n + 1)
        t.ended(f"e{n}", "edit", "edit", "src/math.js", {"path": "src/math.js"}, "success", 2 * n + 2)
    t.ended("s3", "shell", "shell", "npm test", cmd, "failure", 7)
    assert labels(t) == ["npm test failed ×4"] and t.retries == 3
    t.ended("s4", "shell", "shell", "npm test", cmd, "success", 8)
    t.ended("s5", "shell", "shell", "npm test", cmd, "failure", 9)
    assert labels(t) == ["npm test failed ×4"] and t.retries == 3  # a new streak of one
    assert labels(t, 5) == []


def test_a_repeat_streak_ends_at_any_edit():
    t = LoopTracker()
    grep = {"pattern": "TODO", "path": "src"}
    t.ended("g1", "grep", "Grep", "TODO in src", grep, "success", 1)
    t.ended("g2", "grep", "Grep", "TODO in src", grep, "success", 2)
    t.ended("w1", "write", "Write", "notes.md", {"path": "notes.md"}, "success", 3)
    t.ended("g3", "grep", "Grep", "TODO in src", grep, "success", 4)
    t.ended("g4", "grep", "Grep", "TODO in src", grep, "success", 5)
    assert labels(t) == [] and t.repeats == 2
    t.ended("g5", "grep", "Grep", "TODO in src", grep, "success", 6)
    assert labels(t) == ["Grep TODO in src ×3"]


def test_an_argument_equal_to_the_call_id_and_codex_multi_path_edits():
    t = LoopTracker()
    for n in range(3):  # a Codex item carries its own id among its fields
        t.ended(f"item_{n}", "shell", "command_execution", "ls", {"id": f"item_{n}", "command": "ls"}, "success", n)
    assert labels(t) == ["ls ×3"]
    t.ended("r1", "read", "read_file", "b.txt", {"path": "b.txt"}, "success", 10)
    t.ended("r2", "read", "read_file", "b.txt", {"path": "b.txt"}, "success", 11)
    t.ended("fc", "edit", "file_change", "a.txt, b.txt", {"id": "fc"}, "success", 12)  # two paths
    t.ended("r3", "read", "read_file", "b.txt", {"path": "b.txt"}, "success", 13)
    assert labels(t, 3) == ["ls ×3"]  # b.txt: 2, then 1 after the edit


# -- planted loops in shared captures ----------------------------------------------------------------


@needs_shared
def test_cursor_capture_with_planted_loops():
    (run,) = run_bytes(loopstreams.cursor_looping()).runs
    loops = run.session.loops
    assert labels(loops) == ["npm test failed ×4", "read /private/tmp/cl/repo/cursor/src/math.js ×3"]
    assert (loops.rereads, loops.retries, loops.repeats) == (3, 3, 0)  # 2 before the edit, 1 after it
    assert labels(loops, 4) == ["npm test failed ×4"] and labels(loops, 5) == []


@needs_shared
def test_claude_capture_with_planted_loops():
    runs = run_bytes(loopstreams.claude_looping()).runs
    found = {i: labels(r.session.loops) for i, r in enumerate(runs) if labels(r.session.loops)}
    assert found == {0: ["Read /tmp/fixture/big.txt ×4"], 2: ["wc -l /tmp/fixture/big.txt failed ×4"]}
    assert runs[2].session.loops.retries == 3 and runs[2].session.loops.repeats == 0


@needs_shared
def test_codex_capture_with_planted_loops():
    (run,) = run_bytes(loopstreams.codex_looping()).runs
    assert labels(run.session.loops) == ["/bin/zsh -lc 'git status --short' failed ×5"]


def _captures() -> list[Path]:
    out = real_captures()
    out += agent_captures()
    out += sorted((ROOT / "sample_streams").glob("*.jsonl"))
    return out


@pytest.mark.parametrize("path", _captures(), ids=lambda p: p.name[:60])
def test_real_captures_and_samples_are_not_looping(path):
    for run in run_file(path).runs:
        assert run.session.loops.findings() == [], run.session.loops.to_json()


# -- the CLI --------------------------------------------------------------------------------------


@needs_shared
def test_summary_json_and_plain_say_it(tmp_path):
    stream = tmp_path / "loop.jsonl"
    stream.write_bytes(loopstreams.cursor_looping())
    p = subprocess.run(CMD + ["--summary", "--json", str(stream)], capture_output=True, env=env(tmp_path), cwd=ROOT,
                       timeout=60)
    loops = orjson.loads(p.stdout)["loops"]
    assert loops["looping"] and loops["max_repeats"] == 3
    assert [(f["pattern"], f["count"], f["summary"]) for f in loops["findings"]] == [
        ("retry", 4, "npm test"), ("reread", 3, "/private/tmp/cl/repo/cursor/src/math.js")]
    assert loops["waste"] == {"total": 6, "rereads": 3, "retries": 3, "repeats": 0}
    p = subprocess.run(CMD + ["--summary", "--json", "--max-repeats", "5", str(stream)], capture_output=True,
                       env=env(tmp_path), cwd=ROOT, timeout=60)
    assert orjson.loads(p.stdout)["loops"]["looping"] is False
    p = subprocess.run(CMD + ["--plain", str(stream)], capture_output=True, env=env(tmp_path), cwd=ROOT, timeout=60)
    out = p.stdout.decode().splitlines()
    said = [i for i, line in enumerate(out) if line.startswith("↻ looping")]
    assert [out[i] for i in said] == ["↻ looping: read /private/tmp/cl/repo/cursor/src/math.js ×3",
                                      "↻ looping: npm test failed ×3"]
    assert out[said[0] - 1].startswith("✔ [6] read") and out[said[1] - 1].startswith("✖ [10] shell  npm test")
    assert "looping: npm test failed ×4 (+1 more)" in out[-1]


def test_max_repeats_must_be_two_or_more(tmp_path):
    p = subprocess.run(CMD + ["--max-repeats", "1", "x.jsonl"], capture_output=True, env=env(tmp_path), cwd=ROOT,
                       timeout=60)
    assert p.returncode == 2 and b"--max-repeats must be 2 or more" in p.stderr and b"Traceback" not in p.stderr


# -- the loop alert and --enforce -----------------------------------------------------------------------


@needs_shared
def test_the_loop_alert_is_raised_once_and_only_with_max_repeats():
    now = [1_000_000.0]
    for limits, expected in ((Limits(max_repeats=3), ["loop"]), (Limits(), [])):
        rules = AlertRules(limits, clock=lambda: now[0])
        mon = run_bytes(loopstreams.cursor_looping())
        run = mon.runs[0]
        rules.observe(run, [("tool_done", "x")], live=True)
        kinds = [a.kind for a in rules.check()] + [a.kind for a in rules.check()]
        assert [k for k in kinds if k == "loop"] == expected
        if expected:
            rules = AlertRules(limits, clock=lambda: now[0])
            rules.observe(run, [("tool_done", "x")], live=True)
            (alert,) = [a for a in rules.check() if a.kind == "loop"]
            assert alert.text == "looping: npm test failed ×4 (+1 more)"
            assert [f["count"] for f in alert.details["loops"]] == [4, 3]


@needs_shared
def test_enforce_stops_a_looping_agent_at_the_third_failure_and_exits_3(tmp_path):
    stream = tmp_path / "loop.jsonl"
    stream.write_bytes(loopstreams.cursor_looping())
    save = tmp_path / "saved.jsonl"
    # lines 8-11 are the four npm test failures: the agent pauses after the fourth
    agent = [sys.executable, EMITTER, str(stream), "--delay", "0.05", "--pause-after", "11", "--pause", "30"]
    start = time.monotonic()
    p = subprocess.run(CMD + ["--plain", "--max-repeats", "4", "--enforce", "--save", str(save), "--", *agent],
                       capture_output=True, env=env(tmp_path), cwd=ROOT, timeout=60)
    assert p.returncode == 3, p.stderr
    assert time.monotonic() - start < 20  # stopped, not waited for
    assert save.read_bytes() == b"".join(stream.read_bytes().splitlines(keepends=True)[:11])
    err = p.stderr.decode()
    assert "looping: npm test failed ×4: stopping the command (--enforce)" in err and "Traceback" not in err
    assert "! looping: npm test failed ×4" in p.stdout.decode()


@needs_shared
def test_enforce_leaves_a_run_under_the_limit_alone(tmp_path):
    stream = tmp_path / "loop.jsonl"
    stream.write_bytes(loopstreams.cursor_looping())
    agent = [sys.executable, EMITTER, str(stream), "--delay", "0.01"]
    p = subprocess.run(CMD + ["--summary", "--json", "--max-repeats", "5", "--enforce", "--", *agent],
                       capture_output=True, env=env(tmp_path), cwd=ROOT, timeout=60)
    assert p.returncode == 1, p.stderr  # the capture has no result: 1, not 3
    assert orjson.loads(p.stdout)["loops"]["looping"] is False


# -- the report's waste ---------------------------------------------------------------------------


@needs_shared
def test_the_report_counts_waste_per_group_and_lists_the_looping_runs(tmp_path):
    from cursor_watch.views.report import build_report, render_report
    from rich.console import Console

    (tmp_path / "cursor.jsonl").write_bytes(loopstreams.cursor_looping())
    (tmp_path / "claude.jsonl").write_bytes(loopstreams.claude_looping())
    (tmp_path / "plain.jsonl").write_bytes(loopstreams.CURSOR_TOOLS.read_bytes())  # the capture as it is: no waste
    report = build_report([str(tmp_path)], by="agent")
    groups = {g["key"]: g for g in report.to_json()["groups"]}
    assert groups["cursor"]["waste"] == {"total": 6, "rereads": 3, "retries": 3, "repeats": 0}
    assert groups["cursor"]["runs_looping"] == 1 and groups["cursor"]["runs"] == 2
    assert groups["claude-code"]["waste"] == {"total": 6, "rereads": 3, "retries": 3, "repeats": 0}
    assert [(Path(d["source"]).name, d["run"], d["loops"]) for d in report.to_json()["looping_runs"]] == [
        ("cursor.jsonl", 1, ["npm test failed ×4", "read /private/tmp/cl/repo/cursor/src/math.js ×3"]),
        ("claude.jsonl", 1, ["Read /tmp/fixture/big.txt ×4"]),
        ("claude.jsonl", 3, ["wc -l /tmp/fixture/big.txt failed ×4"])]
    console = Console(record=True, width=200, color_system=None)
    render_report(report, console, 200)
    text = console.export_text()
    header = next(line for line in text.splitlines() if line.lstrip().startswith("agent"))
    assert header.rstrip().endswith("waste")
    total = next(line for line in text.splitlines() if line.lstrip().startswith("total"))
    assert total.rstrip().endswith("12 (6r 6f)")
    assert "cursor.jsonl #1: npm test failed ×4, read /private/tmp/cl/repo/cursor/src/math.js ×3 · waste 6" in text


# -- the TUI ----------------------------------------------------------------------------------------


@needs_shared
async def test_the_tui_marks_the_loop_in_the_header_the_transcript_and_the_runs_list(tmp_path):
    from apphelpers import make_app, screen_text, text_of, wait_until
    from cursor_watch.stream.sources import FileSource
    from cursor_watch.tui.widgets.header import SessionHeader

    stream = tmp_path / "loop.jsonl"
    stream.write_bytes(loopstreams.cursor_looping())
    app = make_app(FileSource(str(stream)))
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: app.ended, what="the replay to end")
        await wait_until(pilot, lambda: "looping" in text_of(app.run_view().query_one(SessionHeader)),
                         what="the header to say looping")
        assert "↻ looping: npm test failed ×4 (+1 more)" in text_of(app.run_view().query_one(SessionHeader))
        text = screen_text(app.run_view())
        assert "✔ [6] ↻ looping ×3 read /private/tmp/cl/repo/cursor/src/math.js · success · 1.1 s" in text
        assert "✖ [10] ↻ looping ×3 shell npm test · failure" in text
        assert text.count("↻ looping ×") == 2  # the calls after [10] and [6] are not marked again
        (run,) = app.all_runs()  # its row in the runs list (one run: the app opens on it)
        assert app.run_row(run, 1000.0, 1.79e12).plain()[-1] == "↻ looping ×4: npm test failed"
    app80 = make_app(FileSource(str(stream)))
    async with app80.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app80.ended, what="the replay to end")
        await wait_until(pilot, lambda: "↻ looping" in text_of(app80.run_view().query_one(SessionHeader)),
                         what="the header to say looping at 80 columns")
