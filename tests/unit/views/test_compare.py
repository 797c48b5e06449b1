"""--compare A B: a run with itself shows no difference and passes every gate;
a Cursor and a Claude Code run side by side (figures those of --summary, calls aligned); gates exit
4 exactly when they hold; FILE#N; bad input is one line and exit 2."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from conftest import ROOT, agent_captures, real_captures
from cursor_watch.views.compare import (CHANGED, EQUAL, INSERTED, REMOVED, CallKey, METRICS, align, compare, load_side,
                                  parse_gates)

CMD = [sys.executable, "-m", "cursor_watch"]
STREAMS = ROOT.parent / "shared" / "streams"
REAL = STREAMS / "real"
CLAUDE = STREAMS / "agents" / "claude"
needs_streams = pytest.mark.skipif(not STREAMS.is_dir(), reason=f"shared captures not found at {STREAMS}")
CURSOR_SUBAGENT = REAL / "reifying__cursor-hack__experiments__subagent-sleep-v2.jsonl"  # "create a subagent ... run sleep 10"
CLAUDE_SUBAGENT = CLAUDE / "mlsys-io__lumid-identity__internal__handler__testdata__claude_stream_subagent.ndjson"
CURSOR_TOOLS = REAL / "rogazth__crew__crates__crew-core__tests__fixtures__protocols__cursor-tools.jsonl"  # 1 failure
CURSOR_SHELL = REAL / "saurabh7481__maestro__src-tauri__tests__fixtures__cursor__02_shell_tool_call.jsonl"
COMPACTION = CLAUDE / "littlebearapps__untether__tests__fixtures__claude_compaction_2.1.285.jsonl"  # 12 runs
# every metric, both ways, with a threshold of no change: a run compared with itself passes each
EVERY_GATE = ",".join(f"{m}>0,{m}<0,{m}>+0%,{m}<-0%" for m in METRICS)


def run(args, tmp_path, env=None, timeout=120):
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "CURSOR_WATCH_NO_TUI": "1", **(env or {})}
    return subprocess.run(CMD + args, capture_output=True, env=env, cwd=ROOT, timeout=timeout)


def summary(path, tmp_path) -> dict:
    p = run(["--summary", "--json", str(path)], tmp_path)
    assert p.returncode in (0, 1), p.stderr
    return orjson.loads(p.stdout)


def captures() -> list[Path]:
    return sorted(real_captures() + agent_captures())


# -- a run compared with itself ---------------------------------------------------------------

def run_specs(path: Path) -> list[str]:
    """``FILE``, or ``FILE#1`` ... ``FILE#N`` for a log of several runs."""
    from cursor_watch.views.compare import CompareError

    try:
        load_side(str(path))
    except CompareError as err:
        n = int(str(err).split(" holds ")[1].split()[0])
        return [f"{path}#{i}" for i in range(1, n + 1)]
    return [str(path)]


@needs_streams
@pytest.mark.parametrize("path", captures(), ids=lambda p: p.name[:60])
def test_every_capture_compared_with_itself_has_no_difference_and_passes_every_gate(path):
    gates = parse_gates(EVERY_GATE)
    for spec in run_specs(path):
        side = load_side(spec)
        comp = compare(side, load_side(spec), gates)
        assert comp.differences == 0, spec
        assert all(row.op == EQUAL for row in comp.aligned) and len(comp.aligned) == len(side.calls)
        assert comp.failed_gates == []
        known = {c.metric for c in comp.changes if c.a is not None}
        # a gate is unchecked only on a figure the stream doesn't report (Cursor's usage): never on a known one
        assert {g.metric for g in comp.unknown_gates} == set(METRICS) - known


@needs_streams
def test_cli_self_comparison_says_no_difference_and_exits_0_under_every_gate(tmp_path):
    p = run(["compare", str(CURSOR_TOOLS), str(CURSOR_TOOLS), "--fail-if", EVERY_GATE], tmp_path,
            env={"COLUMNS": "100"})
    assert p.returncode == 0, p.stderr
    out = p.stdout.decode()
    assert "no difference" in out.splitlines()[0]
    assert "FAILS" not in out and "10 same" in out
    # the cost is not in a Cursor stream without usage: its gates say so, on stderr too, and don't fail
    assert "cost>0  not checked: cost unknown for A and B" in out
    assert b"--fail-if cost>0: not checked" in p.stderr
    j = run(["compare", str(CURSOR_TOOLS), str(CURSOR_TOOLS), "--json", "--fail-if", "failures>0"], tmp_path)
    assert j.returncode == 0
    obj = orjson.loads(j.stdout)
    assert obj["differences"] == 0 and obj["failed"] is False and obj["gates"] == [{"gate": "failures>0", "holds": False}]
    assert [r["op"] for r in obj["aligned_calls"]] == ["equal"] * 10


# -- two agents side by side ------------------------------------------------------------------

@needs_streams
def test_cursor_and_claude_code_side_by_side_match_their_summaries(tmp_path):
    p = run(["compare", str(CURSOR_SUBAGENT), str(CLAUDE_SUBAGENT), "--json"], tmp_path)
    assert p.returncode == 0, p.stderr
    obj = orjson.loads(p.stdout)
    for side, path in (("a", CURSOR_SUBAGENT), ("b", CLAUDE_SUBAGENT)):
        s = summary(path, tmp_path)
        got = obj[side]
        assert got["agent"] == s["session"]["agent"] and got["model"] == s["session"]["model"]
        assert got["status"] == s["status"]
        assert got["duration_ms"] == s["result"]["duration_ms"]
        usage = s["result"].get("usage") or {}
        for kind in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"):
            assert got["tokens"][kind] == usage.get(kind)  # None where the stream reports none (Cursor here)
        assert got["cost_usd"] == (s["result"]["cost_usd"] if s["result"]["cost_usd"] is not None
                                   else s["result"]["cost_usd_estimate"])
        assert got["tool_calls"] == len(s["tool_calls"])
        assert got["failures"] == sum(1 for c in s["tool_calls"] if c["status"] == "failure")
    assert obj["a"]["tokens"]["input_tokens"] is None and obj["a"]["cost_usd"] is None  # Cursor: no usage, no guess
    assert obj["a"]["cost_note"] == "no token usage in the stream"
    # sleep 10 in Cursor's shell; Claude Code's Agent, then the sub-agent's Bash and the parent's
    assert [(r["op"], (r["a"] or {}).get("tool"), (r["b"] or {}).get("tool")) for r in obj["aligned_calls"]] == [
        (INSERTED, None, "Agent"), (CHANGED, "shell", "Bash"), (INSERTED, None, "Bash")]
    duration = next(c for c in obj["changes"] if c["metric"] == "duration")
    assert duration["delta"] == obj["b"]["duration_ms"] - obj["a"]["duration_ms"]
    assert obj["outcome_changed"] is False and obj["differences"] > 0


@needs_streams
@pytest.mark.parametrize("width", [80, 160])
def test_side_by_side_text_fits_the_width_and_shows_both_runs(tmp_path, width):
    p = run(["compare", str(CURSOR_SUBAGENT), str(CLAUDE_SUBAGENT)], tmp_path, env={"COLUMNS": str(width)})
    assert p.returncode == 0, p.stderr
    lines = p.stdout.decode().splitlines()
    assert max(len(line) for line in lines) <= width
    text = "\n".join(lines)
    for needle in ("A  cursor  Auto", "B  claude-code  claude-sonnet-5", "sleep-v2.jsonl", "subagent.ndjson",
                   "+ ", "~ ✔ shell sleep 10", "✔ Agent Run echo command", "✔ Bash echo hello-from-subagent",
                   "✔ Bash echo parent-done", "cost A: no token usage in the stream"):
        assert needle in text, needle
    row = next(line for line in lines if line.startswith("~ "))
    # B's column starts at the same cell on every row of the aligned calls, past the middle
    assert row.index("✔ Bash") == next(line for line in lines if line.startswith("  A ")).index("B") >= width // 2 - 2


# -- gates ----------------------------------------------------------------------------------------

def _expected(gate: str, a: dict, b: dict) -> bool:
    """The gate's verdict from the two summaries, computed here apart from the module."""
    g = parse_gates(gate)[0]
    def value(s: dict) -> float:
        return {"duration": s["result"]["duration_ms"], "failures": sum(c["status"] == "failure" for c in s["tool_calls"]),
                "tool_calls": len(s["tool_calls"]),
                "output_tokens": (s["result"].get("usage") or {}).get("output_tokens"),
                "cost": s["result"]["cost_usd"] or s["result"]["cost_usd_estimate"]}[g.metric]
    va, vb = value(a), value(b)
    change = (vb - va) / va if g.relative else vb - va
    return {">": change > g.threshold, ">=": change >= g.threshold, "<": change < g.threshold,
            "<=": change <= g.threshold}[g.op]


@needs_streams
@pytest.mark.parametrize("gate, holds", [
    ("output_tokens>+30%", True), ("output_tokens>+35%", False),   # 258 -> 342: +32.6 %
    ("output_tokens>83", True), ("output_tokens>84", False), ("output_tokens>=84", True),
    ("duration>900ms", True), ("duration>1s", False), ("duration>+20%", True), ("duration>+25%", False),
    ("cost<-30%", True), ("cost<-40%", False), ("cost>+20%", False),
    ("tool_calls>0", False), ("failures>0", False),
])
def test_gates_exit_4_exactly_when_they_hold(tmp_path, gate, holds):
    a_spec, b_spec = f"{COMPACTION}#2", f"{COMPACTION}#5"
    runs = [orjson.loads(line) for line in run(["--summary", "--json", str(COMPACTION)], tmp_path).stdout.splitlines()]
    assert _expected(gate, runs[1], runs[4]) is holds  # the table agrees with the summaries
    p = run(["compare", a_spec, b_spec, "--fail-if", gate], tmp_path)
    assert p.returncode == (4 if holds else 0), p.stderr
    assert (f"--fail-if: {gate} (exit 4)" in p.stderr.decode()) is holds
    assert ("FAILS" in p.stdout.decode()) is holds


@needs_streams
def test_failures_gate_holds_for_more_failures_only_and_any_holding_gate_exits_4(tmp_path):
    worse = run(["compare", str(CURSOR_SHELL), str(CURSOR_TOOLS), "--fail-if", "failures>0"], tmp_path)
    assert worse.returncode == 4 and b"failures>0 (exit 4)" in worse.stderr
    better = run(["compare", str(CURSOR_TOOLS), str(CURSOR_SHELL), "--fail-if", "failures>0"], tmp_path)
    assert better.returncode == 0, better.stderr
    both = run(["compare", str(CURSOR_SHELL), str(CURSOR_TOOLS), "--fail-if", "tool_calls>+100,failures>0"], tmp_path)
    assert both.returncode == 4 and b"--fail-if: failures>0 (exit 4)" in both.stderr  # only the one that holds named


# -- FILE#N and bad input -------------------------------------------------------------------------

@needs_streams
def test_file_hash_n_picks_a_run_of_a_multi_run_log(tmp_path):
    p = run(["compare", f"{COMPACTION}#3", f"{COMPACTION}#3", "--json"], tmp_path)
    assert p.returncode == 0, p.stderr
    obj = orjson.loads(p.stdout)
    runs = [orjson.loads(line) for line in run(["--summary", "--json", str(COMPACTION)], tmp_path).stdout.splitlines()]
    assert obj["a"]["run"] == f"{COMPACTION}#3"
    assert obj["a"]["tokens"]["output_tokens"] == runs[2]["result"]["usage"]["output_tokens"]
    assert obj["a"]["tokens"]["output_tokens"] != runs[3]["result"]["usage"]["output_tokens"]


@needs_streams
@pytest.mark.parametrize("args, message", [
    (["{C}", "{C}"], "holds 12 runs: name one as {C}#N (1-12)"),
    (["{C}#13", "{C}#1"], "holds 12 runs: #13 is not one of them"),
    (["{C}#0", "{C}#1"], "#0 is not one of them"),
    (["/no/such.jsonl", "{C}#1"], "--compare: no such file: /no/such.jsonl"),
    (["/no/such.jsonl#2", "{C}#1"], "--compare: no such file: /no/such.jsonl"),
    (["{D}", "{C}#1"], "is a directory"),
    (["-", "{C}#1"], "--compare reads two files, not stdin"),
    (["{C}#1", "{C}#1", "--fail-if", "cost>"], "is not METRIC>CHANGE"),
    (["{C}#1", "{C}#1", "--fail-if", "speed>1"], "unknown metric 'speed'"),
    (["{C}#1", "{C}#1", "--fail-if", "cost>5s"], "a time unit goes with duration only"),
    (["{C}#1", "{C}#1", "--fail-if", " , "], "no condition given"),
    (["{C}#1", "{C}#1", "--summary"], "unrecognized arguments: --summary (see cursor-watch compare --help)"),
    (["{C}#1", "{C}#1", "extra.jsonl"], "unrecognized arguments: extra.jsonl"),
    (["--compare", "{C}#1", "{C}#1", "--summary"], "--compare A B reads two runs"),  # the old flag's own check
    (["--compare", "{C}#1", "{C}#1", "extra.jsonl"], "--compare A B reads two runs"),
    (["--compare", "{C}#1"], "expected 2 arguments"),
    (["--fail-if", "failures>0", "{C}"], "--fail-if goes with --compare A B"),
    (["{C}#1"], "the following arguments are required: B"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, message):
    fill = {"C": str(COMPACTION), "D": str(CLAUDE)}
    args = [a.format(**fill) for a in args]
    if args[0].startswith(("--fail", "--compare")):
        argv = args
    else:
        argv = ["compare", *args]
    p = run(argv, tmp_path)
    err = p.stderr.decode()
    assert p.returncode == 2 and p.stdout == b""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert message.format(**fill) in err


def test_empty_file_or_no_agent_stream_is_one_line_and_exit_2(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    p = run(["compare", str(empty), str(empty)], tmp_path)
    assert p.returncode == 2 and p.stderr.decode().strip() == f"cursor-watch: --compare: {empty} holds no events"
    rows = tmp_path / "rows.jsonl"
    rows.write_bytes(b"".join(b'{"id": %d, "name": "row"}\n' % i for i in range(3)))
    p = run(["compare", str(rows), str(rows)], tmp_path)
    assert p.returncode == 2 and p.stdout == b""
    assert p.stderr.decode().strip() == (f"cursor-watch: --compare: {rows}: no agent events: 3 JSON objects (lines 1-3) "
                                         "in a format cursor-watch does not read (the first: no type, keys id, name)")


# -- the alignment ------------------------------------------------------------------------------

def _calls(*specs: str) -> list[CallKey]:
    out = []
    for i, spec in enumerate(specs, 1):
        kind, arg, *status = spec.split(":")
        out.append(CallKey(i, kind, kind, arg, status[0] if status else "success", None))
    return out


def test_align_marks_inserted_removed_and_changed_calls():
    a = _calls("read:src/app.py", "shell:npm test:failure", "edit:src/app.py", "shell:npm test")
    b = _calls("read:src/app.py", "grep:TODO", "shell:npm test", "edit:src/lib.py", "shell:npm test")
    rows = align(a, b)
    assert [(r.op, r.a and r.a.index, r.b and r.b.index) for r in rows] == [
        (EQUAL, 1, 1), (INSERTED, None, 2), (CHANGED, 2, 3),  # the same command, failed in A, passed in B
        (CHANGED, 3, 4),  # an edit of another file
        (EQUAL, 4, 5)]
    assert [r.op for r in align(a, a)] == [EQUAL] * 4
    assert [(r.op, r.a and r.a.kind) for r in align(a, [])] == [(REMOVED, k) for k in ("read", "shell", "edit", "shell")]
    assert [r.op for r in align([], b)] == [INSERTED] * 5
    # a replaced block of other kinds: removed, then inserted
    assert [r.op for r in align(_calls("read:a", "read:b"), _calls("shell:ls"))] == [REMOVED, REMOVED, INSERTED]


def test_gate_parsing_units_and_signs():
    g = {x.text: x for x in parse_gates("cost>+20%, duration>+50%,failures>0,duration>30s,duration<-2m,cost>0.05$,"
                                        "tokens>=1000,duration>500ms,duration>90")}
    assert (g["cost>+20%"].relative, g["cost>+20%"].threshold) == (True, 0.2)
    assert (g["duration>30s"].relative, g["duration>30s"].threshold) == (False, 30_000)
    assert g["duration<-2m"].threshold == -120_000 and g["duration>90"].threshold == 90_000  # bare: seconds
    assert g["duration>500ms"].threshold == 500 and g["cost>0.05$"].threshold == 0.05
    assert (g["failures>0"].op, g["failures>0"].threshold) == (">", 0) and g["tokens>=1000"].op == ">="


def _text(comp, width: int = 100) -> list[str]:
    import io

    from rich.console import Console

    from cursor_watch.views.compare import print_comparison

    console = Console(file=io.StringIO(), width=width, color_system=None)
    print_comparison(comp, console, width)
    return [line.rstrip() for line in console.file.getvalue().splitlines()]


@needs_streams
def test_loops_come_from_the_detector(tmp_path):
    """A run's loops are the loop detector's findings (tests/fixtures/loopstreams.py plants them in a real
    capture: ``npm test`` failed 4 times, a file read 3 times); a capture without loops has none."""
    import loopstreams

    looping = tmp_path / "looping.jsonl"
    looping.write_bytes(loopstreams.cursor_looping())
    comp = compare(load_side(str(CURSOR_SHELL)), load_side(str(looping)), parse_gates("loops>0"))
    assert comp.a.loops == [] and comp.b.loops and comp.b.loops[0] == ("npm test failed", 4)
    assert [g.text for g in comp.failed_gates] == ["loops>0"]
    assert "loop B: npm test failed ×4" in _text(comp)
    p = run(["compare", str(CURSOR_SHELL), str(looping), "--fail-if", "loops>0"], tmp_path)
    assert p.returncode == 4


@needs_streams
def test_loops_unknown_without_findings_and_shown_with_them(tmp_path, monkeypatch):
    import cursor_watch.views.compare as cmp

    spec = str(CURSOR_SHELL)
    monkeypatch.setattr(cmp, "LOOPS_KNOWN", False)  # a comparison without the detector's findings
    comp = compare(load_side(spec), load_side(spec), parse_gates("loops>0"))
    assert comp.a.loops is None and comp.change("loops").a is None  # unknown, not 0
    assert comp.unknown_gates and not comp.failed_gates and comp.a.to_json()["loops"] is None
    assert not any(line.startswith("loops ") for line in _text(comp))  # no figure line
    assert "gate loops>0  not checked: loops unknown for A and B" in _text(comp)
    p = run(["compare", spec, spec, "--fail-if", "loops>0"], tmp_path)  # the detector: 0 and 0, checked
    assert p.returncode == 0 and b"not checked" not in p.stderr
    # once the detector lands (the hook gives its loops): the line, the count, the gate
    monkeypatch.setattr(cmp, "LOOPS_KNOWN", True)
    monkeypatch.setattr(cmp, "run_loops", lambda run: [("npm test failed", 4)] if "02_shell" in run.source else [])
    comp = compare(load_side(str(CURSOR_TOOLS)), load_side(spec), parse_gates("loops>0"))
    assert (comp.change("loops").a, comp.change("loops").b) == (0, 1) and [g.text for g in comp.failed_gates] == ["loops>0"]
    lines = _text(comp)
    assert "loop B: npm test failed ×4" in lines
    assert next(line for line in lines if line.startswith("loops ")).split() == ["loops", "0", "1", "+1"]
    assert comp.b.to_json()["loops"] == [{"what": "npm test failed", "times": 4}]


# -- the TUI: space picks, c compares ----------------------------------------------------------------

@needs_streams
async def test_tui_c_on_two_picked_runs_opens_the_same_comparison(tmp_path):
    from apphelpers import make_app, screen_text, wait_until
    from cursor_watch.tui.screens.compare import CompareScreen
    from cursor_watch.tui.screens.runs import RunsScreen
    from cursor_watch.stream.sources import FileSource
    from cursor_watch.tui.widgets.runs_table import RunsTable

    paths = [tmp_path / "cursor-subagent.jsonl", tmp_path / "claude-subagent.ndjson"]
    paths[0].write_bytes(CURSOR_SUBAGENT.read_bytes())
    paths[1].write_bytes(CLAUDE_SUBAGENT.read_bytes())
    app = make_app([FileSource(str(p)) for p in paths])
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.query_one(RunsTable).row_count == 2
                         and app.ended)
        table = app.screen.query_one(RunsTable)
        await pilot.press("c")  # nothing picked: a hint, no comparison
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen)
        first = table.selected_key()
        await pilot.press("space", "down")
        await wait_until(pilot, lambda: table.selected_key() != first)  # (a loaded machine draws it late)
        second = table.selected_key()
        assert table.picked == [first] and second != first
        await pilot.press("space")
        assert table.picked == [first, second]
        assert table.render_line(0).text.startswith("A") and table.render_line(1).text.startswith("B")
        await pilot.press("c")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen))
        comp = app.screen.comparison
        assert comp.a.label == os.path.basename(first[0]) and comp.b.label == os.path.basename(second[0])
        cli = compare(load_side(first[0]), load_side(second[0]))
        assert comp.to_json() | {"a": None, "b": None} == cli.to_json() | {"a": None, "b": None}
        assert {k: v for k, v in comp.a.to_json().items() if k != "run"} == \
            {k: v for k, v in cli.a.to_json().items() if k != "run"}
        await wait_until(pilot, lambda: "tool calls aligned" in screen_text(app.screen))
        text = screen_text(app.screen)
        assert "cursor-watch compare · 11 differences" in text and "✔ Agent Run echo command" in text
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, RunsScreen))
        assert table.picked == [first, second]
        # one picked and the cursor on another run: those two; a pick again unpicks
        await pilot.press("up", "space")
        assert table.picked == [second]
        await pilot.press("c")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen))
        assert app.screen.comparison.a.label == os.path.basename(second[0])
        assert app.screen.comparison.b.label == os.path.basename(first[0])


# -- in a terminal (tmux): the text and the TUI at 80 and 160 columns -------------------------------

@needs_streams
@pytest.mark.e2e
@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_in_tmux_the_comparison_reads_at_80_and_160_columns(tmp_path, size):
    import shlex

    from conftest import need_tool
    from tmux import PY, Tmux

    need_tool("tmux", "apt-get install tmux")
    a, b = shlex.quote(str(CURSOR_SUBAGENT)), shlex.quote(str(CLAUDE_SUBAGENT))
    t = Tmux(f"{PY} -m cursor_watch --compare {a} {b} --fail-if 'failures>0,tool_calls>+1'", size)
    try:
        screen = t.wait_for("EXIT=4")
        whole = t.run("capture-pane", "-p", "-t", "t", "-S", "-100")  # the lines scrolled off an 80x24 too
        lines = whole.splitlines()
        assert max(len(line) for line in lines) <= size[0]
        assert "gate tool_calls>+1  FAILS (+2 (+200%))" in screen and "gate failures>0  passes (=)" in screen
        for needle in ("cursor-watch compare · 11 differences", "A  cursor  Auto", "duration      25.2 s   19.9 s",
                       "~ ✔ shell sleep 10", "✔ Bash echo hello-from-subagent"):
            assert needle in whole, needle
    finally:
        t.close()
    # the TUI: a directory of the two runs, both picked, c
    for path in (CURSOR_SUBAGENT, CLAUDE_SUBAGENT):
        (tmp_path / path.name[-30:]).write_bytes(path.read_bytes())
    t = Tmux(f"{PY} -m cursor_watch {shlex.quote(str(tmp_path))}", size)
    try:
        t.wait_for("2 runs in 2 sources")
        t.wait_screen(lambda s: s.count("success") >= 2, "both runs ended")
        # each pick once the one before it shows (a key sent while the app is busy was seen lost once:
        # space, Down lost, space unpicked)
        t.keys("space")
        t.wait_screen(lambda s: "\n A " in s, "A picked")
        t.keys("Down")
        t.keys("space")
        t.wait_screen(lambda s: "\n B " in s and "\n A " in s, "A and B picked")
        t.keys("c")
        screen = t.wait_screen(lambda s: "tool calls by kind" in s and "Back" in s, "the comparison and its keys")
        assert "cursor-watch compare · 11 differences" in screen
        t.keys("End")
        screen = t.wait_for("~ ✔ Bash echo hello-from-subagent")
        assert "✔ shell sleep 10" in screen
    finally:
        t.close()
