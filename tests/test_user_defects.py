"""Issue 25: a new user's defects (tool summaries, notes, files that are not stream-json, --report's width)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from rich.cells import cell_len

from conftest import ROOT

from cursor_watch.guard import RunTimes, stall_of
from cursor_watch.runner import Monitor
from cursor_watch.tools import summarize

CMD = [sys.executable, "-m", "cursor_watch"]
ENV = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "TERM")}
ENV |= {"CURSOR_WATCH_NO_TUI": "1", "NO_COLOR": "1", "PYTHONPATH": str(ROOT), "TZ": "UTC"}
STREAMS = ROOT.parent / "shared" / "streams"
AGENTS = STREAMS / "agents"
CLAUDE_MCP = AGENTS / "claude" / "mccorvie__TauCetiWorker__tests__fixtures__claude_stream_mcp_2_1.jsonl"
GEMINI_TOOLS = AGENTS / "gemini" / "shane-kercheval__switchboard__crates__harness__tests__fixtures__gemini__tool-use.stream.jsonl"
CREW = STREAMS / "real" / "rogazth__crew__crates__crew-core__tests__fixtures__protocols__cursor-tools.jsonl"
needs_streams = pytest.mark.skipif(not AGENTS.is_dir(), reason=f"shared captures not found at {STREAMS}")
T0 = 1_790_000_000_000.0


def cw(args: list[str], env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(CMD + args, capture_output=True, env=env or ENV, cwd=ROOT, timeout=timeout)


def line(**kw) -> bytes:
    return orjson.dumps(kw) + b"\n"


# -- item 13: a tool's summary never repeats its name -----------------------------------------


def test_a_summary_from_the_first_argument_does_not_repeat_the_tool_name():
    assert summarize("ToolSearch", {"query": "select:a,b", "max_results": 5}) == "query=select:a,b"
    assert summarize("update_topic", {"strategic_intent": "Read it"}) == "strategic_intent=Read it"
    assert summarize("Weird", {"nested": {"a": 1}}) == "nested=…"
    assert summarize("Weird", {}) == ""  # nothing to say: not the name again


def test_get_mcp_tools_keeps_its_pattern():
    """Cursor's getMcpToolsToolCall searches the tools with ``args.pattern`` (GetMcpToolsArgs)."""
    assert summarize("getMcpTools", {"pattern": "wowc"}) == "pattern=wowc"
    assert summarize("getMcpTools", {"server": "cursor", "toolName": "TodoWrite", "toolCallId": "x"}) == "cursor TodoWrite"
    assert summarize("getMcpTools", {"server": "s", "pattern": "lint*"}) == "s pattern=lint*"


@needs_streams
def test_views_show_the_tool_name_once_beside_its_summary():
    plain = cw(["--plain", str(CLAUDE_MCP)]).stdout.decode()
    assert "▶ [1] ToolSearch  query=select:mcp__lean_beam__lean_sync" in plain
    assert "ToolSearch ToolSearch" not in plain and "ToolSearch  ToolSearch" not in plain
    summary = " ".join(cw(["--summary", str(GEMINI_TOOLS)], env={**ENV, "COLUMNS": "200"}).stdout.decode().split())
    assert "success update_topic strategic_intent=Read MARKER.txt" in summary  # the table's row, spaces folded
    plain = cw(["--plain", str(GEMINI_TOOLS)]).stdout.decode()
    assert "▶ [1] update_topic  strategic_intent=Read MARKER.txt" in plain


@needs_streams
def test_a_stall_notice_names_the_tool_once():
    """``stalled 6m: ToolSearch query=…`` (was ``ToolSearch ToolSearch query=…``)."""
    first_two = b"".join(CLAUDE_MCP.read_bytes().splitlines(keepends=True)[:2])  # init, the ToolSearch call
    m = Monitor(clock=lambda: T0)
    times = RunTimes(T0)
    times.observe(m.session, m.feed(first_two), T0, True)
    stall = stall_of(m.session, times, T0 + 360_000, 360)
    assert stall is not None
    assert stall.label() == "stalled 6m: ToolSearch query=select:mcp__lean_beam__lean_sync,mcp__lean_beam__lean_goals"


@needs_streams
def test_the_crew_get_mcp_tools_call_reads_server_and_tool():
    plain = cw(["--plain", str(CREW)]).stdout.decode()
    assert "getMcpTools  cursor TodoWrite" in plain


# -- item 2: --report at 80 and 60 columns, and into a file: every figure whole ---------------


def report_in_terminal(path: Path, columns: int) -> str:
    """``--report PATH`` on a pseudo-terminal ``columns`` wide (Rich reads COLUMNS), as printed."""
    import pty

    master, slave = pty.openpty()
    env = {**ENV, "COLUMNS": str(columns), "LINES": "24", "TERM": "xterm-256color"}
    proc = subprocess.Popen(CMD + ["--report", str(path)], stdin=subprocess.DEVNULL, stdout=slave, stderr=slave,
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
    from cursor_watch.report import _tokens

    rep = orjson.loads(cw(["--report", "--json", str(path)]).stdout)
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


REPORT_DIRS = ["real", "agents/claude", "agents/codex", "agents/gemini", "."]


@needs_streams
@pytest.mark.parametrize("columns", [80, 60])
@pytest.mark.parametrize("where", REPORT_DIRS)
def test_report_in_a_narrow_terminal_keeps_every_figure_whole(where, columns):
    path = STREAMS / where
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
    path = STREAMS / where
    p = cw(["--report", str(path)], env={**ENV, "COLUMNS": "80"})
    out = p.stdout.decode()
    assert p.returncode == 0
    assert "…" not in out.replace("✔ ✖ …", "")  # nothing cut anywhere
    rep = orjson.loads(cw(["--report", "--json", str(path)]).stdout)
    for c in rep["slowest_calls"]:
        name = f"{os.path.basename(c['source'])} #{c['run']}"
        assert any(name in line and c["status"] in line for line in out.splitlines()), name
    flat = words(out)
    for figure in figures(path)["tools"]:
        assert f" {figure} " in f" {flat} "


def test_plan_columns_stacks_by_priority_and_never_narrows_a_figure():
    from cursor_watch.report import KEY_MIN, plan_columns, table_width

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
