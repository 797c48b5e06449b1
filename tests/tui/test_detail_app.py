"""The detail screen of a tool call (Pilot): what the payload holds, as written. Carriage returns
are shown as a terminal would, JSON and Markdown inside strings are shown decoded (a plan as
Markdown, an MCP result's JSON one key a line) with the raw form one key away; a rejection's reason
is said once, a long path wraps at 80 and 60 columns instead of being cut, and a ToolSearch result
of ``tool_reference`` blocks reads as one line per tool."""

from __future__ import annotations

import os

import pytest

from apphelpers import make_app, wait_until
from captures import CLAUDE_MCP, crew_capture, need, needs_streams, with_long_reason
from conftest import REAL_DIR
from cursorstreams import INIT, PLAN, RESULT, SHELL_CRLF, mcp_stream, plan_stream, shell_stream
from cursor_watch.stream.sources import FileSource

SIZE = (160, 48)


async def detail_text(app, pilot, call_id: str, raw: bool = False) -> str:
    """Every line the detail screen of ``call_id`` draws (its Markdown rendered), as plain text;
    the folded raw JSON only with ``raw``."""
    from textual.widgets import Collapsible, Markdown, Static

    from apphelpers import text_of
    from cursor_watch.tui.screens.detail import ToolDetailScreen

    if isinstance(app.screen, ToolDetailScreen):
        app.pop_screen()
        await wait_until(pilot, lambda: not isinstance(app.screen, ToolDetailScreen))
    app.open_detail(call_id)
    await wait_until(pilot, lambda: isinstance(app.screen, ToolDetailScreen))
    screen = app.screen
    parts = []
    for w in screen.query("*"):
        if isinstance(w, Markdown):
            continue  # its blocks are Statics, below
        if isinstance(w, Static) and (raw or not any(isinstance(a, Collapsible) for a in w.ancestors)):
            parts.append(text_of(w))
    return "\n".join(parts)


# -- carriage returns, as a terminal shows them ----------------------------------------------------

async def test_crlf_and_progress_output_in_the_detail(tmp_path):
    path = tmp_path / "crlf.jsonl"
    path.write_bytes(INIT + shell_stream(SHELL_CRLF) + RESULT)
    app = make_app(FileSource(str(path)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        text = await detail_text(app, pilot, "c1")
        assert "\\r" not in text and "\r" not in text
        assert "HTTP/2 200\ncontent-type: text/html" in text
        assert "100%" in text and "45%" not in text


# -- JSON and Markdown inside strings --------------------------------------------------------------

async def test_mcp_tool_listing_is_shown_decoded_with_the_raw_form_one_key_away():
    from textual.widgets import Collapsible

    path = crew_capture()  # getMcpToolsToolCall: the tool's schema is JSON written into a string
    app = make_app(FileSource(str(path)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        call = next(c for c in app.session.tool_calls.values() if c.tool == "getMcpTools")
        text = await detail_text(app, pilot, call.call_id)
        assert "tool description (JSON)" in text
        assert '"tool": "TodoWrite",' in text and '"minItems": 2,' in text  # decoded, one key a line
        assert '\\n' not in text.split("tool description (JSON)")[1]  # no escapes left in the decoded view
        folds = list(app.screen.query(Collapsible))
        assert folds and all(c.collapsed for c in folds)
        await pilot.press("r")  # the raw form: the string as the stream has it
        await wait_until(pilot, lambda: not any(c.collapsed for c in folds))
        raw = await detail_text(app, pilot, call.call_id, raw=True)
        assert '"content": "{\\n  \\"tool\\": \\"TodoWrite\\"' in raw


async def test_plan_renders_as_markdown_and_mcp_json_is_decoded_in_the_detail(tmp_path):
    from textual.widgets import Markdown

    path = tmp_path / "plan.jsonl"
    path.write_bytes(INIT + plan_stream() + mcp_stream() + RESULT)
    app = make_app(FileSource(str(path)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        text = await detail_text(app, pilot, "plan-1")
        [md] = [m for m in app.screen.query(Markdown)]
        assert md.source == PLAN
        assert "Fix the adder" in text and "Read src/math.js" in text and "\\n" not in text
        assert "# Fix the adder" not in text  # a heading, not its source
        assert "Fix add" in text and "☐" in text  # the todos as a checklist
        text = await detail_text(app, pilot, "m1")
        assert '"total": 1' in text and '"title": "first hour"' in text and '\\"' not in text


# -- a rejection's reason is said once in its detail -----------------------------------------------

def test_detail_says_a_rejection_reason_once(tmp_path):
    from cursor_watch.stream.payloads import call_detail
    from cursor_watch.stream.watch import Monitor
    from cursor_watch.tui.screens.detail import call_header
    from rich.console import Console

    path = with_long_reason(tmp_path)
    mon = Monitor(live=False)
    mon.feed(path.read_bytes())
    mon.finish()
    s = mon.session
    call = s.tool_calls.at(1)
    console = Console(width=100, record=True, file=open(os.devnull, "w"))
    console.print(call_header(call))
    sections, _note = call_detail(call, lambda o, n: path.read_bytes()[o:o + n], raw=False, agent=s.agent)
    for section in sections:
        console.print(section.title)
        console.print(str(section.body))
    text = " ".join(console.export_text().split())
    assert text.count("The user rejected this command.") == 1  # not the status line and a block
    assert "INSTEAD: ask the user" in text


# -- the detail wraps long paths and commands at 80 and 60 columns ---------------------------------

EDIT = REAL_DIR / "saurabh7481__maestro__src-tauri__tests__fixtures__cursor__03_edit_tool_call.jsonl"


@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
async def test_detail_wraps_a_long_path_instead_of_cutting_it(size):
    """maestro 03's edit names a 118-character path: its ``path`` field and message were cut
    with "…" at 80 and 60 columns."""
    from textual.widgets import Static

    from apphelpers import make_app, wait_until
    from cursor_watch.tui.screens.detail import ToolDetailScreen
    from cursor_watch.stream.sources import FileSource
    from cursor_watch.tui.widgets.tool_table import ToolTable

    need(EDIT)
    app = make_app(FileSource(str(EDIT)))
    async with app.run_test(size=size) as pilot:
        await wait_until(pilot, lambda: app.ended)
        path = next(iter(app.session.tool_calls.values())).summary
        assert len(path) > size[0]
        app.run_view().query_one(ToolTable).focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ToolDetailScreen))

        def drawn() -> list[str]:
            lines = []
            for w in app.screen.query(Static):
                if w.region.width:
                    lines += [strip.text for strip in w.render_lines(w.region.reset_offset)]
            return lines

        await wait_until(pilot, lambda: any(line.lstrip().startswith("path ") for line in drawn()))  # laid out
        lines = drawn()
        at = next(i for i, line in enumerate(lines) if line.lstrip().startswith("path "))
        shown = "".join(line.strip().removeprefix("path").strip() for line in lines[at:at + 4])
        assert path in shown, lines[at:at + 4]
        assert not any("…" in line for line in lines[at:at + 8]), lines[at:at + 8]


# -- a tool_reference result reads as lines --------------------------------------------------------

@needs_streams
async def test_a_tool_reference_result_reads_as_lines_in_the_detail():
    """ToolSearch's result is ``tool_reference`` blocks: the detail shows one line per tool found,
    never the JSON string with a literal ``\\n`` (the view before canonical events did)."""
    from apphelpers import make_app, screen_text, wait_until
    from cursor_watch.tui.screens.detail import ToolDetailScreen
    from cursor_watch.stream.sources import FileSource
    from cursor_watch.tui.widgets.tool_table import ToolTable

    app = make_app(FileSource(str(CLAUDE_MCP)))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.ended)
        table = app.run_view().query_one(ToolTable)
        table.focus()
        table.move_cursor(0)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ToolDetailScreen))
        lines = [x.strip() for x in screen_text(app.screen).splitlines()]
        at = lines.index("tool_reference: mcp__lean_beam__lean_sync")
        assert lines[at + 1] == "tool_reference: mcp__lean_beam__lean_goals"
        assert not any("\\n" in x for x in lines)
