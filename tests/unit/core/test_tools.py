"""A tool call's summary (cursor_watch.core.tools.summarize): made from its arguments, it never
repeats the tool's name, and every view shows the name once beside it (--plain, the --summary
table); Cursor's getMcpTools keeps its pattern, or names its server and tool."""

from __future__ import annotations

from captures import CLAUDE_MCP, CREW, GEMINI_TOOLS, needs_streams
from command import ENV, cw
from cursor_watch.core.tools import summarize


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
def test_the_crew_get_mcp_tools_call_reads_server_and_tool():
    plain = cw(["--plain", str(CREW)]).stdout.decode()
    assert "getMcpTools  cursor TodoWrite" in plain
