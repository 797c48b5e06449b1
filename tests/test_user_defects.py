"""Issue 25: a new user's defects (tool summaries, notes, files that are not stream-json, --report's width)."""

from __future__ import annotations

import os
import subprocess
import sys

import orjson
import pytest

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
