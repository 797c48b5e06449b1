"""The diagnostics pane (``d``, Pilot): the lines of a stream that are not an agent's events, and a
file of no agent's format said once."""

from __future__ import annotations

from apphelpers import make_app, screen_text, wait_until
from cursor_watch.stream.sources import FileSource
from streamlines import rows
from cursor_watch.tui.widgets.diagnostics import DiagnosticsPane


async def test_diagnostics_pane_lists_rejected_lines_of_a_text_only_stream(tmp_path):
    f = tmp_path / "text.log"
    f.write_bytes(b"Error: not logged in\nplease run cursor-agent login\n")
    app = make_app(FileSource(str(f)))
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until(pilot, lambda: app.ended)
        await pilot.press("d")
        pane = app.screen.query_one(DiagnosticsPane)
        await wait_until(pilot, lambda: pane.display and pane.line_count >= 2)
        assert "line 1: not JSON (text line): Error: not logged in" in "\n".join(pane.lines)
        assert "no events: 2 lines, none of them stream-json" in screen_text(app.screen)


async def test_the_diagnostics_pane_says_an_unread_file_once(tmp_path):
    from apphelpers import make_app, wait_until
    from cursor_watch.stream.sources import FileSource
    from cursor_watch.tui.widgets.diagnostics import DiagnosticsPane

    f = tmp_path / "rows.jsonl"
    f.write_bytes(rows(17))
    app = make_app(FileSource(str(f)))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.ended)
        lines = [str(x) for x in app.run_view().query_one(DiagnosticsPane).lines]
        assert lines == ["line 1 on: not an agent's events (id, name, score), counted; --summary --json lists them"]
