"""The TUI on other agents' runs: a Claude Code sub-agent as a tree in the tool table (issue 19)."""

from __future__ import annotations

import pytest

from apphelpers import make_app, screen_text, text_of, wait_until
from conftest import ROOT
from cursor_watch.screens.detail import ToolDetailScreen
from cursor_watch.sources import FileSource
from cursor_watch.widgets.header import SessionHeader
from cursor_watch.widgets.tool_table import ToolTable

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
