"""SVG snapshots of the main screens (frozen clocks, 160x48).

Update after an intended visual change with ``pytest tests/tui/test_snapshots.py --snapshot-update``
and look at the report. Snapshots depend on Textual's and Rich's versions: the ``test``
extra pins the ones they were made with.
"""

from __future__ import annotations

from apphelpers import make_app, wait_until
from conftest import SAMPLES
from cursor_watch.tui.screens.detail import ToolDetailScreen
from cursor_watch.stream.sources import FileSource, QueueSource
from cursor_watch.tui.widgets.tool_table import ToolTable

SIZE = (160, 48)


def finished(name: str):
    app = make_app(FileSource(str(SAMPLES / f"{name}.jsonl")))

    async def run_before(pilot):
        await wait_until(pilot, lambda: app.ended)

    return app, run_before


def test_finished_run(snap_compare):
    app, run_before = finished("plain-tools")
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_failed_run_with_diagnostics(snap_compare):
    from cursor_watch.tui.widgets.diagnostics import DiagnosticsPane

    app = make_app(FileSource(str(SAMPLES / "failed-no-result.jsonl")))

    async def run_before(pilot):
        # the last line (not JSON) becomes a diagnostic when the stream ends: wait for it in the pane
        await wait_until(pilot, lambda: app.ended and len(app.run_view().query_one(DiagnosticsPane).lines) == 1)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before, press=["d"])


def test_mid_stream(snap_compare):
    src = QueueSource("cursor-agent -p …")
    app = make_app(src)
    lines = (SAMPLES / "parallel-failed-rejected.jsonl").read_bytes().splitlines(keepends=True)

    async def run_before(pilot):
        await src.push(b"".join(lines[:12]))  # three parallel shell calls, one done
        await wait_until(pilot, lambda: app.session.events == 12 and app.run_view().query_one(ToolTable).row_count == 3)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_shell_detail(snap_compare):
    app, wait = finished("plain-tools")

    async def run_before(pilot):
        await wait(pilot)
        table = app.run_view().query_one(ToolTable)
        table.focus()
        table.move_cursor(row=2)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ToolDetailScreen))

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_help(snap_compare):
    app, run_before = finished("partial-output")
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before, press=["question_mark"])
