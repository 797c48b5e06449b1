"""The TUI on other agents' runs: a Claude Code sub-agent as a tree in the tool table."""

from __future__ import annotations

import pytest

from apphelpers import make_app, screen_text, search_status, text_of, wait_until
from conftest import ROOT
from cursor_watch.tui.screens.detail import ToolDetailScreen
from cursor_watch.stream.sources import FileSource
from cursor_watch.tui.widgets.header import SessionHeader
from cursor_watch.tui.widgets.tool_table import ToolTable

SIZE = (160, 48)
SUBAGENT = (ROOT.parent / "shared" / "streams" / "agents" / "claude"
            / "mlsys-io__lumid-identity__internal__handler__testdata__claude_stream_subagent.ndjson")
needs_capture = pytest.mark.skipif(not SUBAGENT.exists(), reason=f"capture not found at {SUBAGENT}")


@needs_capture
async def test_subagent_calls_nest_fold_and_show_in_the_parents_detail():
    app = make_app(FileSource(str(SUBAGENT)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        view = app.run_view()
        table = view.query_one(ToolTable)
        rows = [table.row_plain(i) for i in range(table.row_count)]
        assert [r[2] for r in rows] == ["Agent", "└ Bash", "Bash"]
        header = text_of(view.query_one(SessionHeader))
        assert "claude 2.1.220" in header and "1 in sub-agents" in header
        table.focus()
        table.move_cursor(0)
        await pilot.press("c")  # fold the sub-agent's calls
        await wait_until(pilot, lambda: table.row_count == 2)
        assert [table.row_plain(i)[2] for i in range(table.row_count)] == ["Agent", "Bash"]
        assert "sub-agent folded" in screen_text(view)
        await pilot.press("c")  # unfold
        await wait_until(pilot, lambda: table.row_count == 3)
        table.move_cursor(0)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ToolDetailScreen))
        text = screen_text(app.screen)
        assert "sub-agent transcript" in text
        assert "✔ [2] Bash echo hello-from-subagent" in text
        assert "sub-agent said" in text and "stdout printed exactly" in text


# -- the runs list, search, for every agent -------------------------------------------------------

AGENTS = ROOT.parent / "shared" / "streams" / "agents"
CLAUDE_MCP = AGENTS / "claude" / "mccorvie__TauCetiWorker__tests__fixtures__claude_stream_mcp_2_1.jsonl"
CODEX_REAL = AGENTS / "codex" / "Davedat-110105__adk-harness__tests__fixtures__codex_exec_real.jsonl"
needs_agents = pytest.mark.skipif(not (CLAUDE_MCP.exists() and CODEX_REAL.exists() and SUBAGENT.exists()),
                                  reason=f"agent captures not found at {AGENTS} (a user's clone has none)")


@needs_agents
async def test_runs_list_agent_column_names_each_agent(tmp_path):
    from cursor_watch.stream.sources import open_sources
    from cursor_watch.tui.widgets.runs_table import RunsTable

    for name, path in (("claude.jsonl", CLAUDE_MCP), ("codex.jsonl", CODEX_REAL)):
        (tmp_path / name).write_bytes(path.read_bytes())
    sources, dirs = open_sources([str(tmp_path)], None)
    app = make_app(sources, directories=dirs)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended and app.screen.query_one(RunsTable).row_count == 2)
        table = app.screen.query_one(RunsTable)
        by_source = {row.source: row.plain() for row in table.rows}
        # the agent column: the short label of session.agent (claude-code -> claude, codex)
        assert {src: cells[2] for src, cells in by_source.items()} == {"claude.jsonl": "claude", "codex.jsonl": "codex"}
        assert {src: cells[3] for src, cells in by_source.items()} == {"claude.jsonl": "success", "codex.jsonl": "success"}



def _expected_total(path, text: str) -> int:
    """The matches the search engine finds in the capture (read as the app reads it)."""
    from cursor_watch.stream.watch import Monitor
    from cursor_watch.query.search import Query, Search

    raw = path.read_bytes()
    mon = Monitor(clock=lambda: 1_000_000.0, reread=lambda off, size: raw[off:off + size], live=False)
    mon.feed(raw)
    mon.finish()
    search = Search(mon.session, lambda off, size: raw[off:off + size], Query(text))
    while not search.step(1.0):
        pass
    return search.total


@needs_agents
@pytest.mark.parametrize("path,text,tool,where", [
    (CODEX_REAL, "governance", "command_execution", "output"),  # only in the command's aggregated_output (stdout and stderr)
    (CLAUDE_MCP, "save_ready", "mcp__lean_beam__lean_sync", "content"),  # only in the MCP tool's result
])
async def test_search_finds_a_tool_payload_of_claude_and_codex_and_opens_its_detail(path, text, tool, where):
    """``/`` finds a word that only a tool's result holds (re-read from the agent's own line),
    selects that call's row, and Enter opens its detail at the match."""
    app = make_app(FileSource(str(path)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        total = _expected_total(path, text)
        assert total >= 1
        assert await search_status(app, pilot, text) == f"1/{total}"
        table = app.run_view().query_one(ToolTable)
        assert table.row_plain(table.cursor_row)[2] == tool
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ToolDetailScreen))
        detail = app.screen
        assert detail.call.tool == tool and detail.match == 0
        assert f"search: 1 match for {text}" in screen_text(detail)
        assert where in screen_text(detail)  # the section the match is in
