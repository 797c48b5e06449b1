"""--report: totals equal the sum of the runs' summaries; groups, ranges, JSON, errors; its width:
in a terminal of 80 or 60 columns every figure whole (columns stacked by priority, empty ones left
out, a path cut keeping its file name), into a file no width limit."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import orjson
import pytest
from rich.cells import cell_len

from command import ENV, cw
from conftest import ROOT, SAMPLES, agent_captures, real_captures
from cursor_watch.views.report import build_report, stream_files
import streamlines
from streamlines import claude_init

line = streamlines.line  # (bound, not imported: this module's loops name their lines line too)

CMD = [sys.executable, "-m", "cursor_watch"]
STREAMS = ROOT.parent / "shared" / "streams"
needs_streams = pytest.mark.skipif(not STREAMS.is_dir(), reason=f"shared captures not found at {STREAMS}")


def run(args, tmp_path, timeout=120):
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    return subprocess.run(CMD + args, capture_output=True, env=env, cwd=ROOT, timeout=timeout)


def summaries(files, tmp_path):
    p = run(["--summary", "--json", *files], tmp_path)
    lines = p.stdout.splitlines()
    return [orjson.loads(p.stdout)] if len(files) == 1 and not p.stdout.startswith(b'{"source"') else \
        [orjson.loads(line) for line in lines]


@needs_streams
def test_report_totals_equal_the_sum_of_the_runs_summaries(tmp_path):
    files = stream_files([str(STREAMS)])
    assert len(files) > 15  # real/ and agents/*/: the walk goes into subdirectories
    runs = summaries(files, tmp_path)
    p = run(["report", "--json", str(STREAMS)], tmp_path)
    assert p.returncode == 0, p.stderr
    report = orjson.loads(p.stdout)
    total = report["total"]
    assert total["runs"] == len(runs) and report["files"] == len(files)
    assert total["outcomes"] == {k: sum(1 for r in runs if r["status"] == k) for k in ("success", "error", "incomplete")}
    # the run's usage: its result's, else what the agent reported as it went (a run cut short:
    # not in the summary's result, read here from the model)
    from cursor_watch.core.costs import usage_of
    from replays import replay

    so_far = {(f, r.index): usage_of(r.session) for f in files for r in replay(Path(f)).runs}
    assert len(so_far) == len(runs)
    for kind in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"):
        want = 0
        for r in runs:
            usage = ((r["result"] or {}).get("usage") or {})
            if usage:
                want += usage.get(kind) or 0
            else:  # no usage in its result (or no result): what the agent reported as it went
                u = so_far[(r["source"], r["run"])]
                want += (getattr(u, kind) or 0) if u is not None else 0
        assert total["tokens"][kind] == want
    estimates = [r["result"]["cost_usd_estimate"] for r in runs if r["result"] and r["result"]["cost_usd_estimate"]]
    assert estimates and total["cost_usd_estimate"] == pytest.approx(sum(estimates), rel=1e-12)
    assert total["runs_estimated"] == len(estimates)
    calls = [c for r in runs for c in r["tool_calls"]]
    assert total["tool_calls"] == len(calls)
    assert total["failed_tool_calls"] == sum(1 for c in calls if c["status"] == "failure")
    assert total["rejected_tool_calls"] == sum(1 for c in calls if c["status"] == "rejected")
    assert {t["tool"]: t["calls"] for t in report["tools"]} == Counter(c["tool"] for c in calls)
    with_result = [r["result"]["duration_ms"] for r in runs if r["result"] and r["result"]["duration_ms"] is not None]
    assert total["duration_ms"] >= sum(with_result)
    # every grouping adds up to the same total
    for by in ("day", "model", "agent", "cwd"):
        grouped = orjson.loads(run(["report", "--json", "--by", by, str(STREAMS)], tmp_path).stdout)
        assert sum(g["runs"] for g in grouped["groups"]) == total["runs"]
        assert sum(g["tool_calls"] for g in grouped["groups"]) == total["tool_calls"]
        assert grouped["total"] == total


@needs_streams
def test_report_table_has_a_total_row_tools_and_notes(tmp_path):
    p = run(["report", "--by", "model", str(STREAMS / "real")], tmp_path)
    out = p.stdout.decode()
    assert p.returncode == 0 and "Traceback" not in p.stderr.decode()
    lines = out.splitlines()
    assert lines[0].startswith("cursor-watch report · 14 runs in 14 files · by model")
    assert any(line.split()[:2] == ["total", "14"] for line in lines)
    assert any(line.startswith(" GPT-5 Mini") and "≈ $0.0160" in line for line in lines)
    assert "slowest tool calls" in out and "sleep 10" in out
    assert "runs without a cost: Auto has no fixed price" in out


def test_since_and_until_select_by_recorded_start(tmp_path):
    log = tmp_path / "a.jsonl"
    runs = []
    for sid, ts in (("a", 1_790_000_000_000), ("b", 1_800_000_000_000)):  # 2026-09-21, 2027-01-15
        runs.append(orjson.dumps({"type": "system", "subtype": "init", "session_id": sid, "model": "M"}))
        runs.append(orjson.dumps({"type": "thinking", "subtype": "completed", "session_id": sid, "timestamp_ms": ts}))
        runs.append(orjson.dumps({"type": "result", "subtype": "success", "is_error": False, "duration_ms": 5,
                                  "session_id": sid, "result": ""}))
    log.write_bytes(b"\n".join(runs) + b"\n")
    everything = build_report([str(log)])
    assert everything.total.runs == 2 and sorted(everything.groups) == ["2026-09-21", "2027-01-15"]
    assert build_report([str(log)], since_ms=1_795_000_000_000).total.runs == 1
    p = run(["report", "--json", "--until", "2026-12-01", str(log)], tmp_path)
    assert orjson.loads(p.stdout)["total"]["runs"] == 1
    p = run(["report", "--json", "--since", "2026-09-22", "--until", "2027-01-15T00:00", str(log)], tmp_path)
    assert orjson.loads(p.stdout)["total"]["runs"] == 0


@pytest.mark.parametrize("args, words", [
    (["--report"], "needs FILEs or DIRs"),
    (["--report", "--plain", "x"], "doesn't go with"),
    (["--since", "2026-01-01", "x"], "--since goes with --report"),
    (["--report", "--since", "soon", "x"], "not a date"),
    (["report", "/no/such/dir"], "no such file or directory"),
])
def test_report_usage_errors_are_one_line(tmp_path, args, words):
    p = run(args, tmp_path)
    err = p.stderr.decode()
    assert p.returncode == 2 and words in err and err.count("\n") == 1 and "Traceback" not in err


def test_report_of_samples_matches_summary_per_tool(tmp_path):
    files = [str(SAMPLES / n) for n in ("plain-tools.jsonl", "parallel-failed-rejected.jsonl", "failed-no-result.jsonl")]
    report = orjson.loads(run(["report", "--json", *files], tmp_path).stdout)
    runs = summaries(files, tmp_path)
    failures = Counter(c["tool"] for r in runs for c in r["tool_calls"] if c["status"] == "failure")
    for tool in report["tools"]:
        assert tool["failed"] == failures.get(tool["tool"], 0)
        assert tool["failure_rate"] == tool["failed"] / tool["calls"]
    slowest = report["slowest_calls"]
    assert [c["duration_ms"] for c in slowest] == sorted((c["duration_ms"] for c in slowest), reverse=True)


def test_slimming_long_tool_call_lines_changes_no_figure(tmp_path):
    """The report's fast path (long tool_call lines slimmed before decoding) gives exactly the figures
    of reading every line as it is: on a generated stream with payloads up to 256 KB, every line slimmed
    (threshold 0), and on the real captures."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen_stream", ROOT / "bench" / "gen_stream.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    path = tmp_path / "gen.jsonl"
    gen.generate(path, 6 << 20, True, None, 1024, 256 << 10, 7, 0.2)
    paths = [str(path)] + ([str(STREAMS / "real")] if STREAMS.is_dir() else [])
    full = build_report(paths, slim_min=None).to_json()
    assert build_report(paths, slim_min=0).to_json() == full
    assert build_report(paths).to_json() == full
    assert full["total"]["tool_calls"] > 50
    from cursor_watch.views.report import slim_lines

    data = path.read_bytes()
    slim = slim_lines(data, 0)
    assert len(slim) < len(data) / 4 and slim.count(b"\n") == data.count(b"\n")  # smaller, line for line


def test_a_line_longer_than_the_read_buffer_and_a_file_without_a_last_newline(tmp_path):
    from cursor_watch.views.report import CHUNK

    big = "x\"y\\n" * (CHUNK // 2)  # longer than the buffer once escaped
    lines = [{"type": "system", "subtype": "init", "session_id": "s", "model": "GPT-5 Mini"},
             {"type": "tool_call", "subtype": "started", "call_id": "c1", "session_id": "s", "timestamp_ms": 1,
              "tool_call": {"shellToolCall": {"args": {"command": "cat big"}}}},
             {"type": "tool_call", "subtype": "completed", "call_id": "c1", "session_id": "s", "timestamp_ms": 2,
              "tool_call": {"shellToolCall": {"args": {"command": "cat big"},
                                              "result": {"success": {"exitCode": 3, "stdout": big}}}}},
             {"type": "result", "subtype": "success", "is_error": False, "duration_ms": 5, "result": "",
              "session_id": "s"}]
    path = tmp_path / "big.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(x) for x in lines))  # no newline at the end
    assert path.stat().st_size > CHUNK
    slim = build_report([str(path)]).to_json()
    assert slim == build_report([str(path)], slim_min=None).to_json()
    assert slim["total"]["failed_tool_calls"] == 1 and slim["total"]["outcomes"]["success"] == 1


def test_slowest_calls_keep_each_log_name_end_and_run_number(tmp_path):
    """Log names of one project share long starts: the slowest calls' run column cuts them in the
    middle, so every row keeps its file's distinctive end and ``#N``, and a
    call's path keeps its file name."""
    logs = tmp_path / "logs"
    logs.mkdir()
    sample = (SAMPLES / "plain-tools.jsonl").read_bytes()
    names = [f"acme__agent-tests__internal__fixtures__cursor__{n}.jsonl" for n in ("01-shell-run", "02-edit-run")]
    for name in names:
        (logs / name).write_bytes(sample.replace(b"app/pricing.py", b"src/" + b"deeply/nested/" * 4 + b"pricing.py"))
    out = run(["report", str(logs)], tmp_path).stdout.decode()
    rows = [line for line in out.splitlines() if " success " in line and ".jsonl" in line]
    assert rows and all(line.rstrip().endswith(" #1") for line in rows), out
    assert any("01-shell-run.jsonl #1" in line for line in rows) and any("02-edit-run.jsonl #1" in line for line in rows)
    assert any("pricing.py" in line for line in rows), out  # the path's file name, not its start


# -- --report at 80 and 60 columns, and into a file: every figure whole ----------------------------


def report_in_terminal(path: Path, columns: int) -> str:
    """``--report PATH`` on a pseudo-terminal ``columns`` wide (Rich reads COLUMNS), as printed."""
    import pty

    master, slave = pty.openpty()
    env = {**ENV, "COLUMNS": str(columns), "LINES": "24", "TERM": "xterm-256color"}
    proc = subprocess.Popen(CMD + ["report", str(path)], stdin=subprocess.DEVNULL, stdout=slave, stderr=slave,
                            env=env, cwd=ROOT)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # the child closed the terminal (EIO)
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.wait(timeout=120) == 0
    text = b"".join(chunks).decode()
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07", "", text).replace("\r\n", "\n")


def figures(path: Path) -> dict[str, list[str]]:
    """What must appear whole, read from ``--report --json`` (not from the table): each tool's
    calls and times, each slowest call's time and status, the total's time and token counts."""
    from cursor_watch.fmt import format_ms
    from cursor_watch.views.report import _tokens

    rep = orjson.loads(cw(["report", "--json", str(path)]).stdout)
    out: dict[str, list[str]] = {"slowest": [], "tools": [], "total": []}
    for c in rep["slowest_calls"]:
        out["slowest"].append(f"{format_ms(c['duration_ms'])} {c['status']}")
    for t in rep["tools"]:
        out["tools"] += [format_ms(t[k]) for k in ("median_ms", "max_ms", "total_ms") if t[k] is not None]
    total = rep["total"]
    out["total"] += [format_ms(total[k]) for k in ("duration_ms", "median_duration_ms") if total[k] is not None]
    out["total"] += [_tokens(total["tokens"][k]) for k in ("input_tokens", "output_tokens", "cache_read_tokens")
                     if total["tokens"][k]]
    return out


def words(text: str) -> str:
    """The text with its runs of spaces folded (a figure's words stay together)."""
    return " ".join(text.split())


REPORT_DIRS = ["real", "agents/claude", "agents/codex", "agents/gemini", "every agent read"]


def report_dir(where: str, tmp_path: Path) -> Path:
    """A folder of ``STREAMS``, or for "every agent read" a folder of links to every capture of
    every agent cursor-watch reads (the shared tree also holds agents' stores and other agents)."""
    if where != "every agent read":
        return STREAMS / where
    path = tmp_path / "captures"
    path.mkdir()
    for capture in real_captures() + agent_captures():
        (path / f"{capture.parent.name}__{capture.name}").symlink_to(capture)
    return path


@needs_streams
@pytest.mark.parametrize("columns", [80, 60])
@pytest.mark.parametrize("where", REPORT_DIRS)
def test_report_in_a_narrow_terminal_keeps_every_figure_whole(where, columns, tmp_path):
    path = report_dir(where, tmp_path)
    out = report_in_terminal(path, columns)
    assert "Traceback" not in out
    for line in out.splitlines():
        assert cell_len(line) <= columns, line
    flat = words(out)
    want = figures(path)
    # a slowest call's time, and its status on the same row
    rows = [line for line in out.splitlines() if re.match(r"^\s+\d", line)]
    for pair in want["slowest"]:
        time, status = pair.rsplit(" ", 1)
        assert any(re.search(rf"(^|\s){re.escape(time)}\s.*\s{status}(\s|$)", row) for row in rows), (pair, out)
    for figure in want["tools"] + want["total"]:
        assert re.search(rf"(^|\s){re.escape(figure)}(\s|$)", flat), (figure, out)
    assert not re.search(r"\d…|\b(?:s|su|suc|succ|succe|succes)…", out), out  # nothing cut like "7.…", "succe…"
    runs = [line for line in out.splitlines() if re.search(r"\.(jsonl|ndjson) #", line)]
    assert len(runs) == len(want["slowest"]) and all(re.search(r" #\d+\s*$", line) for line in runs), out


@needs_streams
@pytest.mark.parametrize("where", REPORT_DIRS)
def test_report_into_a_file_has_no_width_limit(where, tmp_path):
    """Piped or written to a file, the report ignores COLUMNS: every run's name whole, every
    figure whole (it was cut to 150 columns: ``1.8…``, ``succe…``)."""
    path = report_dir(where, tmp_path)
    p = cw(["report", str(path)], env={**ENV, "COLUMNS": "80"})
    out = p.stdout.decode()
    assert p.returncode == 0
    assert "…" not in out.replace("✔ ✖ …", "")  # nothing cut anywhere
    rep = orjson.loads(cw(["report", "--json", str(path)]).stdout)
    for c in rep["slowest_calls"]:
        name = f"{os.path.basename(c['source'])} #{c['run']}"
        assert any(name in line and c["status"] in line for line in out.splitlines()), name
    flat = words(out)
    for figure in figures(path)["tools"]:
        assert f" {figure} " in f" {flat} "


def test_plan_columns_stacks_by_priority_and_never_narrows_a_figure():
    from cursor_watch.views.report import KEY_MIN, plan_columns, table_width

    widths = [4, 6, 6, 6, 8, 16, 5, 8]
    assert plan_columns(None, 40, widths) == (40, [list(range(8))])
    assert plan_columns(200, 12, widths) == (12, [list(range(8))])
    key, stacks = plan_columns(80, 12, widths, order=[0, 1, 2, 5, 3, 4, 6, 7])
    assert sorted(i for s in stacks for i in s) == list(range(8)) and len(stacks) == 2
    assert stacks[0][:4] == [0, 1, 2, 5]  # the first table gets the first columns of the order
    for stack in stacks:
        assert table_width([key, *(widths[i] for i in stack)]) <= 80
    key, stacks = plan_columns(40, 30, [5, 5])  # a long name beside two figures: the name gives way
    assert stacks == [[0, 1]] and key == 40 - table_width([0, 5, 5]) and key >= KEY_MIN


def test_the_reports_slowest_calls_cut_a_path_by_the_calls_kind_keeping_its_file_name(tmp_path):
    """Claude Code's ``Read`` is a ``read``: its path is cut in its directories, the file name
    kept, as in the transcript (the table cut the summary by the tool's own name, at its end)."""
    path = "/home/dev/projects/a-rather-long-project-name/src/package/module/subpackage/target_file.py"
    use = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": path}}
    data = (claude_init()
            + line(type="assistant", session_id="s1", uuid="u1", timestamp="2026-11-27T10:00:00.000Z",
                   parent_tool_use_id=None, message={"id": "m1", "type": "message", "role": "assistant",
                                                     "content": [use]})
            + line(type="user", session_id="s1", uuid="u2", timestamp="2026-11-27T10:00:07.500Z",
                   parent_tool_use_id=None, message={"role": "user", "content": [
                       {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}]})
            + line(type="result", subtype="success", is_error=False, duration_ms=8000, result="ok", session_id="s1",
                   uuid="u3", num_turns=1, total_cost_usd=0.01))
    f = tmp_path / "run.jsonl"
    f.write_bytes(data)
    for columns in (80, 60):
        out = report_in_terminal(f, columns)
        row = next(x for x in out.split("slowest tool calls")[1].splitlines() if "7.5 s" in x)
        assert "target_file.py" in row and "…" in row, out  # cut in its directories, its name whole
    [slow] = orjson.loads(cw(["report", "--json", str(f)]).stdout)["slowest_calls"]
    assert (slow["tool"], slow["kind"], slow["duration_ms"]) == ("Read", "read", 7500)


@needs_streams
def test_the_reports_tools_table_leaves_out_its_empty_columns_before_folding_a_name():
    """Codex's captures record no times: at 80 columns the tools table leaves out median, max and
    total time (said under it) rather than fold 'lean_beam.lean_goals' around three empty columns."""
    out = report_in_terminal(STREAMS / "agents" / "codex", 80)
    tools = out.split("\ntools\n")[1]
    assert "lean_beam.lean_goals" in tools and "command_execution" in tools
    assert "median" not in tools.split("(left out")[0]
    assert "(left out at this width, nothing in them: median, max, total time)" in tools
