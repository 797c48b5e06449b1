"""Narrow terminals (stacked panes, a key to swap them, a runs list and a header that keep what
matters) and long names shortened in the middle (paths keep their file name, tool names their end)."""

from __future__ import annotations

import os

import pytest

from apphelpers import make_app, text_of, wait_ticks, wait_until
from captures import CAGASE, CLAUDE_PARTIAL, CREW, need, real
from conftest import REAL_DIR
from replays import replayed
from cursor_watch.views.names import middle, relative_if_shorter, shared_ends, short_name, short_path
from cursor_watch.stream.watch import Monitor
from cursor_watch.stream.sources import FileSource
from cursor_watch.tui.widgets.header import LiveState, SessionHeader, render_header
from cursor_watch.tui.widgets.runs_table import COLUMNS, RunRow, RunsTable, layout, widths
from cursor_watch.tui.widgets.tool_table import ToolTable


# -- item 8: names -------------------------------------------------------------------------


def test_middle_keeps_the_distinctive_end():
    name = "acme__agent-tests__internal__cursor__14-refuse-delete.out"
    assert middle(name, 46) == "acme__agent-tests…cursor__14-refuse-delete.out"  # the example
    assert middle(name, len(name)) == name
    assert middle(name, 1) == "…" and middle(name, 0) == ""
    assert len(middle("日本語のファイル名です.jsonl", 12)) <= 12
    names = ["saurabh7481__maestro__02_shell_tool_call.jsonl", "saurabh7481__maestro__03_edit_tool_call.jsonl"]
    shared = shared_ends(names)
    for width in range(1, 30):  # never wider than asked, even where the two cuts have no room
        assert all(len(middle(n, width, shared[n])) <= width for n in names), width


def test_run_suffix_is_never_cut():
    name = "acme__agent-tests__internal__cursor__14-refuse-delete.out #12"
    for width in (10, 20, 30):
        out = short_name(name, width)
        assert out.endswith(" #12") and len(out) <= width, out
    assert short_name(name, 4) == "…#12"


def test_paths_relative_where_shorter_and_cut_before_the_file_name(tmp_path):
    assert relative_if_shorter(str(tmp_path / "a" / "b.jsonl"), str(tmp_path)) == os.path.join("a", "b.jsonl")
    assert relative_if_shorter("/x/y", "/very/long/other/place") == "/x/y"  # ../../../../x/y is longer
    p = "/home/someone/projects/cagase/dsh-cursor/src/main.py"
    out = short_path(p, 30)
    assert out.endswith("/main.py") and len(out) == 30


def test_runs_table_names_differ_by_their_ends():
    names = [f"acme__agent-tests__internal__cursor__{n}.out" for n in ("14-refuse-delete", "15-allow-edit")]
    cells = []
    for n in names:
        row = RunRow(key=(n, 1, 1), source=n + " #3", state="success", model="Auto", prompt="p", started_ms=None,
                     time_ms=1000.0, counts={}, tokens=None, activity="", live=False)
        cells.append(layout(row.cells(), 80).plain)
    w = widths(80)
    sources = [c[w[0] + 1: w[0] + 1 + w[1]].strip() for c in cells]
    assert sources[0] != sources[1] and all(s.endswith(".out #3") for s in sources), sources


def test_an_estimated_cost_is_labelled_and_shown_whole_where_the_column_fits():
    """Every estimate says so (``≈ $0.0644 est.``), the runs list too; at 160 columns the
    tokens · cost column holds the whole label, at 80 it is left out rather than cut."""
    row = RunRow(key=("a", 1, 1), source="loop.jsonl #1", state="success", model="Composer 2.5", prompt="p",
                 started_ms=None, time_ms=1000.0, counts={}, tokens=(61_800, 1_900), activity="", live=False,
                 cost="≈ $0.0644 est.")
    assert row.plain()[9] == "61.8k/1.9k ≈ $0.0644 est."
    assert "61.8k/1.9k ≈ $0.0644 est." in layout(row.cells(), 160).plain
    w80 = widths(80)
    assert w80[9] == 0 and "≈" not in layout(row.cells(), 80).plain
    assert widths(160)[9] >= len("61.8k/1.9k ≈ $0.0644 est.") and sum(widths(160)) + 10 <= 160


def test_names_sharing_long_starts_and_ends_are_cut_where_they_differ():
    """Log names of one project share their start and often their end: the cut keeps a
    character that tells each apart, at any width a source column gets (18 cells and up)."""
    from cursor_watch.views.names import shared_ends

    names = [f"acme__maestro__src-tauri__tests__fixtures__cursor__{n}.jsonl"
             for n in ("01_simple_no_tool", "02_shell_tool_call", "03_edit_tool_call", "04_partial_output")]
    names += [f"acme__cursor-hack__experiments__{n}.jsonl" for n in ("direct-sleep", "subagent-sleep", "subagent-sleep-v2")]
    shared = shared_ends(names)
    assert shared[names[1]] == (len("acme__maestro__src-tauri__tests__fixtures__cursor__0"), len("_tool_call.jsonl"))
    for width in range(18, 60):
        cut = [middle(n, width, shared[n]) for n in names]
        assert len(set(cut)) == len(cut), (width, cut)
        assert all(len(c) <= width and c.endswith(".jsonl") for c in cut), (width, cut)
        # more than the one character where they differ: a word of it
        assert ("02_s" in cut[1] or "shell" in cut[1]) and ("03_e" in cut[2] or "edit" in cut[2]), (width, cut)
    assert [middle(n, 22) for n in names[1:3]] == ["acme__ma…ol_call.jsonl"] * 2  # the plain cut: the same
    out = short_name(names[1] + " #2", 26, shared[names[1]])
    assert out.endswith(".jsonl #2") and "02_shell" in out and len(out) <= 26, out  # where it differs, #N whole


def test_runs_table_at_80_columns_keeps_name_state_tools_time():
    w = widths(80)
    titles = [title or "mark" for title, _, _ in COLUMNS]
    kept = {t for t, n in zip(titles, w, strict=True) if n}
    assert {"source", "state", "tools", "time"} <= kept
    assert "agent" in kept  # whose run it is, before the flexible columns
    assert sum(w) + (len([n for n in w if n]) - 1) <= 80
    assert all(n for n in widths(200))  # a wide table shows every column


def test_header_keeps_the_file_name_when_the_cwd_is_long():
    """The header puts the model, cwd, session and permission mode first: the file name still
    shows where it fits."""
    mon = Monitor()
    mon.feed(real(CAGASE).read_bytes().splitlines(keepends=True)[0])
    s = mon.session
    s.cwd = "/Users/someone/" + "very-long-directory/" * 6 + "project"
    for width in (60, 80, 120, 200):
        line = render_header(s, LiveState(source="stream-json-force.jsonl", state="success"), width).renderables[0]
        assert line.cell_len <= width
        assert s.model in line.plain and "/project" in line.plain and "session 882ad27e" in line.plain, line.plain
        if width >= 120:
            assert line.plain.rstrip().endswith("← stream-json-force.jsonl"), (width, line.plain)


# -- item 7: narrow terminals ----------------------------------------------------------------


async def test_80x24_stacks_the_panes_and_s_swaps_them():
    app = make_app(FileSource(str(real(CREW))))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.ended)
        screen = app.screen
        transcript, tools = screen.query_one("#transcript"), screen.query_one("#tools")
        assert screen.stacked and screen.has_class("-stacked")
        assert transcript.size.width >= 40 and transcript.region.y < tools.region.y
        assert transcript.size.height > tools.size.height
        await pilot.press("s")
        await wait_until(pilot, lambda: transcript.size.height < tools.size.height)
        await pilot.press("s")
        await wait_until(pilot, lambda: transcript.size.height > tools.size.height)


async def test_80x24_live_run_keeps_the_newest_call_on_screen():
    """A run arriving line by line (as in tmux): when the tool table's vertical scrollbar came,
    its rows were left 2 cells wider than the pane, a horizontal scrollbar took the last line
    and the newest call was hidden under it (the 80x24 README screenshot showed the band)."""
    from cursor_watch.stream.sources import QueueSource

    from conftest import SAMPLES

    src = QueueSource("cursor-agent -p …")
    app = make_app(src)
    async with app.run_test(size=(80, 24)) as pilot:
        for line in (SAMPLES / "plain-tools.jsonl").read_bytes().splitlines(keepends=True):
            await src.push(line)
            n = app.session.events if app.session is not None else 0
            await wait_until(pilot, lambda: app.session is not None and app.session.events > n)  # shown, one by one
        await src.end()
        await wait_until(pilot, lambda: app.ended)
        await wait_ticks(pilot, app)  # the last lines are drawn
        table = app.run_view().query_one(ToolTable)
        transcript = app.run_view().query_one("#transcript")
        assert table.show_vertical_scrollbar and not table.show_horizontal_scrollbar
        assert not transcript.show_horizontal_scrollbar
        top, height = int(table.scroll_offset.y), table.scrollable_content_region.height
        assert table.row_count == 6 and top + height == 6, (top, height)  # rows 2-6: the newest shown
        assert "updateTodos" in "".join(seg.text for seg in table.render_line(height - 1))


async def test_wide_terminals_keep_the_panes_side_by_side_and_no_swap_key():
    app = make_app(FileSource(str(real(CREW))))
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(pilot, lambda: app.ended)
        screen = app.screen
        assert not screen.stacked and not screen.has_class("-stacked")
        assert screen.query_one("#transcript").region.y == screen.query_one("#tools").region.y
        assert screen.check_action("swap_panes", ()) is False


async def test_60x20_shows_outcome_transcript_and_newest_calls():
    app = make_app(FileSource(str(real(CREW))))
    async with app.run_test(size=(60, 20)) as pilot:
        await wait_until(pilot, lambda: app.ended)
        await wait_ticks(pilot, app)  # the replay's end is drawn
        header = text_of(app.screen.query_one(SessionHeader))
        assert header.splitlines()[1].lstrip().startswith("incomplete")
        assert "← rog…" in header and "-tools.jsonl" in header  # the name's ends, its end first (narrow)
        table = app.screen.query_one(ToolTable)
        top = int(table.scroll_offset.y)
        visible = range(top, top + table.scrollable_content_region.height)
        assert table.row_count - 1 in visible  # the newest call is on screen
        transcript = app.screen.query_one("#transcript")
        assert transcript.size.width >= 50 and transcript.size.height >= 8
        assert "stream ended without a result" in transcript.rendered_text()


@pytest.mark.parametrize("columns", [80, 160])
async def test_runs_list_names_are_distinct_and_keep_their_ends(columns):
    """Every real capture listed at once (as ``-f`` on their directory lists them): each row
    shows state, tool counts and elapsed time, and a name that is its own (the captures share
    long prefixes and suffixes: ``saurabh7481__…__02_shell_tool_call.jsonl`` and ``…03_edit_tool_call``)."""
    from conftest import real_captures

    paths = real_captures()
    if not paths:
        pytest.skip(f"real captures not found at {REAL_DIR} (a user's clone has none)")
    app = make_app([FileSource(str(p)) for p in paths])
    async with app.run_test(size=(columns, 24)) as pilot:
        await wait_until(pilot, lambda: app.ended and len(app.screen.query_one(RunsTable).rows) == len(paths))
        await wait_ticks(pilot, app)  # the rows are rebuilt from the ended runs
        table = app.screen.query_one(RunsTable)
        w = widths(table.scrollable_content_region.width, table.need)  # (the columns fit the rows)
        assert table.scrollable_content_region.height >= len(paths)  # every row on screen
        names = []
        for y, row in enumerate(table.rows):
            line = "".join(seg.text for seg in table.render_line(y))
            assert row.state.split()[0] in line and "▶0" in line
            assert row.plain()[7] in line  # elapsed
            name = line[w[0] + 1: w[0] + 1 + w[1]].strip()
            assert name.endswith(os.path.basename(row.source)[-6:]), name  # its end (the extension) kept
            names.append(name)
        assert len(set(names)) == len(names), sorted(names)


# -- item 8: tool-call paths -------------------------------------------------------------------

ACME = "/home/someone/projects/acme"
DEEP = ACME + "/agent-tests/internal/cursor/very/deep/module/handlers/refuse_delete_handler.py"
OUTSIDE = "/srv/shared/checkouts/other-project/src/components/widgets/settings_panel_view.tsx"


def _ev(**kw) -> bytes:
    import orjson

    return orjson.dumps({"session_id": "s-paths", **kw}) + b"\n"


def _call(cid: str, kind: str, args: dict, ts: int) -> bytes:
    started = _ev(type="tool_call", subtype="started", call_id=cid, timestamp_ms=ts, tool_call={kind: {"args": args}})
    done = _ev(type="tool_call", subtype="completed", call_id=cid, timestamp_ms=ts + 1200,
               tool_call={kind: {"args": args, "result": {"success": {}}}})
    return started + done


def long_paths_stream() -> bytes:
    """A run in ``ACME`` reading a deep file in it, grepping a deep directory, and reading a
    long path outside it (each path longer than an 80-column screen leaves for it)."""
    return (_ev(type="system", subtype="init", cwd=ACME, model="Auto", permissionMode="default", apiKeySource="login")
            + _call("c1", "readToolCall", {"path": DEEP}, 1_790_000_000_000)
            + _call("c2", "grepToolCall", {"pattern": "refuse_delete", "path": os.path.dirname(DEEP)}, 1_790_000_002_000)
            + _call("c3", "readToolCall", {"path": OUTSIDE}, 1_790_000_004_000)
            + _ev(type="result", subtype="success", duration_ms=6000, is_error=False, result="done"))


def test_call_summary_keeps_the_file_name_relative_to_the_cwd():
    from cursor_watch.views.names import call_summary

    assert call_summary("read", DEEP, 200, ACME) == DEEP[len(ACME) + 1:]  # relative: shorter
    out = call_summary("read", DEEP, 40, ACME)
    assert out.startswith("agent") and "…" in out and out.endswith("/refuse_delete_handler.py") and len(out) == 40, out
    assert call_summary("read", OUTSIDE, 200, ACME) == OUTSIDE  # ../../.. would be longer
    out = call_summary("grep", f"refuse_delete in {os.path.dirname(DEEP)}", 40, ACME)
    assert out.startswith("refuse_delete in agent") and out.endswith("/handlers") and len(out) == 40, out
    out = call_summary("grep", "x" * 60 + f" in {DEEP}", 50, None)
    assert "…" in out.split(" in ")[0] and out.endswith("refuse_delete_handler.py") and len(out) <= 50, out
    assert call_summary("shell", "cat " + DEEP, 20, ACME) == "cat " + DEEP  # not a path: whole
    for width in (20, 12):  # too narrow for the pattern: its place is marked, never silently gone
        out = call_summary("grep", f"def handle_request in {DEEP}", width, None)
        assert out.startswith("…") and len(out) == width, out
    assert call_summary("grep", f"def handle_request in {DEEP}", 20, None).startswith("… in /"), out


async def test_80x24_tool_paths_keep_the_file_name_in_the_table_and_the_transcript(tmp_path):
    f = tmp_path / "long-paths.jsonl"
    f.write_bytes(long_paths_stream())
    app = make_app(FileSource(str(f)))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.ended)
        await wait_ticks(pilot, app)  # the replay's end is drawn
        table = app.screen.query_one(ToolTable)
        rows = ["".join(seg.text for seg in table.render_line(y)) for y in range(3)]
        # relative to the run's cwd, cut in the middle: the file name (or the directory) stays
        assert "read  agent" in rows[0] and "…" in rows[0] and "/refuse_delete_handler.py  " in rows[0], rows
        assert "grep  refuse_delete in agent" in rows[1] and "/handlers  " in rows[1], rows
        assert "read  /srv/" in rows[2] and "/settings_panel_view.tsx  " in rows[2], rows  # outside the cwd
        transcript = app.screen.query_one("#transcript").rendered_text().splitlines()
        markers = [line for line in transcript if "[1] read" in line or "[3] read" in line]
        assert len(markers) == 2 and all(len(line.rstrip()) <= 80 for line in markers), markers
        assert "refuse_delete_handler.py · success · 1.2 s" in markers[0], markers
        assert "settings_panel_view.tsx · success · 1.2 s" in markers[1], markers


async def test_80x24_detail_shows_the_whole_call_id():
    """A real call_id (``call-…\\nfc_…``, 100 characters) was cut with "…" in the detail at 80 columns."""
    from textual.widgets import Static

    from cursor_watch.tui.screens.detail import ToolDetailScreen

    app = make_app(FileSource(str(real(CAGASE))))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.ended)
        call_id = next(iter(app.session.tool_calls.values())).call_id.replace("\n", "\\n")  # as shown
        app.run_view().query_one(ToolTable).focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ToolDetailScreen))
        lines = []
        for w in app.screen.query(Static):
            if w.region.width:
                lines += [strip.text for strip in w.render_lines(w.region.reset_offset)]
        at = next(i for i, line in enumerate(lines) if line.lstrip().startswith("call_id"))
        assert len(lines[at].rstrip()) <= 80
        shown = "".join(line.strip().removeprefix("call_id").strip() for line in lines[at:at + 3])
        assert call_id in shown, lines[at:at + 3]


def test_a_long_summary_that_is_no_path_gives_way_before_the_outcome_and_time():
    """A transcript marker's summary that names no path is cut at its end, so the call's outcome
    and duration stay on the line (at 80x24 an updateTodos marker ended '· success · …')."""
    from cursor_watch.core.model import ToolCall
    from cursor_watch.tui.widgets.transcript import marker_text

    call = ToolCall(6, "c6")
    call.tool = call.kind = "updateTodos"
    call.summary = "6 todos: 4 completed, 1 pending, 1 cancelled, and a long tail of words to be cut away"
    call.status, call.started_ms, call.completed_ms = "success", 1000, 1006
    line = marker_text(call, width=60).plain
    assert len(line) <= 60 and line.endswith(" · success · 6 ms"), line
    assert "6 todos: 4 completed" in line and "…" in line, line
    assert marker_text(call).plain.endswith("cut away · success · 6 ms")  # no width: whole


def test_a_long_failure_detail_on_a_transcript_marker_is_cut_with_a_mark():
    from cursor_watch.core.model import ToolCall
    from cursor_watch.tui.widgets.transcript import marker_text

    call = ToolCall(1, "c1")
    call.tool, call.status, call.summary = "shell", "failure", "npm test"
    call.detail = "AssertionError: " + "x" * 200 + " the end"
    text = marker_text(call).plain
    detail = text.split(" (", 1)[1]
    assert detail.startswith("AssertionError: xxx") and "the end" not in text, text
    assert detail.endswith("… [144 more chars: ⏎ on the call])"), text  # where the whole text is


# -- the header keeps what matters by priority -----------------------------------------------------

CLAUDE_A001 = REAL_DIR.parent / "agents" / "claude" / "dungle-scrubs__harness-cli-normalizer__test__fixtures__a001-raw.ndjson"


def test_header_at_160_keeps_model_cwd_session_and_permission_before_a_long_file_name():
    """The capture's own 90-character name took the room of the model's facts at 160 columns."""
    from cursor_watch.tui.widgets.header import LiveState, render_header

    s = replayed(CLAUDE_PARTIAL)
    line = render_header(s, LiveState(source=CLAUDE_PARTIAL.name, state="success"), 160).renderables[0].plain
    assert len(line) <= 160
    for fact in (s.model, s.cwd, "session 25a4559b", "permission default"):
        assert fact in line, (fact, line)
    assert "← sun…" in line and line.rstrip().endswith(".ndjson")  # the name gives way, its ends kept


@pytest.mark.parametrize("width", [80, 60])
def test_header_keeps_a_long_model_name_whole(width):
    """a001's model ``claude-opus-5[1m]`` was cut to ``claude…pus-5[1m]`` at 80 columns."""
    from cursor_watch.tui.widgets.header import LiveState, render_header

    s = replayed(CLAUDE_A001)
    assert s.model == "claude-opus-5[1m]"
    line = render_header(s, LiveState(source=CLAUDE_A001.name, state="success"), width).renderables[0].plain
    assert "claude-opus-5[1m]" in line and len(line) <= width, line


@pytest.mark.parametrize("width", [80, 60])
def test_state_line_keeps_the_cost_and_the_diagnostics_count(width):
    """At 80 columns the tokens pushed the cost and ``⚠ N diagnostics`` off the line."""
    from cursor_watch.tui.widgets.header import LiveState, render_header

    s = replayed(CLAUDE_PARTIAL, b"not json\n")
    line = render_header(s, LiveState(source=CLAUDE_PARTIAL.name, state="success", elapsed_ms=13_900), width)
    state = line.renderables[1].plain
    assert len(state) <= width and "$0.13" in state and "⚠ 1" in state and "(d)" in state, state
    assert "13.9 s" in state and "success" in state


# -- paths are cut in the middle everywhere, keeping the file name ---------------------------------

CODEX_FILE_CHANGE = REAL_DIR.parent / "agents" / "codex" / \
    "shane-kercheval__switchboard__crates__harness__tests__fixtures__codex__file-change.jsonl"


async def test_60x20_claude_read_paths_keep_their_file_names():
    """Claude Code's ``Read`` calls (kind ``read``) were cut at their end (``/Users/agent/dev/
    sunholo-…``) in the transcript and the table at 60 columns: the path rules went by the
    agent's tool name, not the canonical kind."""
    from apphelpers import make_app, wait_ticks, wait_until
    from cursor_watch.stream.sources import FileSource
    from cursor_watch.tui.widgets.tool_table import ToolTable

    need(CLAUDE_PARTIAL)
    app = make_app(FileSource(str(CLAUDE_PARTIAL)))
    async with app.run_test(size=(60, 20)) as pilot:
        await wait_until(pilot, lambda: app.ended)
        await wait_ticks(pilot, app)  # the end is drawn
        names = [c.summary.rsplit("/", 1)[1] for c in app.session.tool_calls.values()]
        transcript = app.screen.query_one("#transcript").rendered_text()
        table = app.screen.query_one(ToolTable)
        rows = "\n".join("".join(seg.text for seg in table.render_line(y)) for y in range(table.size.height))
        for name in names[-3:]:  # the newest, on screen in both
            assert f"/{name} · success" in transcript, (name, transcript)
            assert f"/{name}  " in rows, (name, rows)


def test_a_marker_keeps_its_outcome_when_the_summary_is_no_path():
    """Codex's failed ``git status``: ``failure (exit 12…)`` at 60 columns."""
    from cursor_watch.tui.widgets.transcript import marker_text

    s = replayed(CODEX_FILE_CHANGE)
    call = s.tool_calls.at(1)
    for width in (56, 58, 70):  # (the transcript is 56-58 cells wide at 60 columns)
        line = marker_text(call, width=width, cwd=s.cwd).plain
        assert line.endswith("· failure (exit 128)") and len(line) <= width, line


def test_tool_table_keeps_the_end_of_an_mcp_tool_name_that_tells_it_apart():
    """At 80 and 60 columns the tool column is 14 cells: two MCP tools of one server
    (``mcp__lean_beam__lean_sync``, ``mcp__lean_beam__lean_goals``, the Claude Code MCP capture)
    were both ``mcp__lean_bea…``; their ends are what differ."""
    from cursor_watch.tui.widgets.tool_table import Widths, column_widths, row_pieces
    session = replayed(REAL_DIR.parent / "agents" / "claude" / "mccorvie__TauCetiWorker__tests__fixtures__claude_stream_mcp_2_1.jsonl")
    names = [c.tool for c in session.tool_calls.values() if c.tool.startswith("mcp__")]
    assert len(set(names)) >= 2
    shown = set()
    for call in session.tool_calls.values():
        if not call.tool.startswith("mcp__"):
            continue
        widths = column_widths(60, Widths(len(session.tool_calls), 9, len(call.tool)))
        cell = row_pieces(call, 0.0, widths)[6][0]  # (pad, index, gap), (status, pad, gap), tool
        assert cell.endswith(call.tool[-(widths[2] - 4):]), cell
        assert cell.startswith("mcp…"), cell
        shown.add(cell)
    assert len(shown) == len(set(names))
