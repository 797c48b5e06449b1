"""The TUI with an injected source (Pilot): header, rows, detail, toggles, end states (the line
that ended a run named); a replay without times shows none (its header never ticks, its calls have
no duration)."""

from __future__ import annotations

import orjson
import pytest

from apphelpers import Clock, make_app, screen_text, text_of, wait_ticks, wait_until
from captures import CAGASE, _untimed_sample, ended_on_an_error, real
from conftest import SAMPLES
from cursor_watch.tui.screens.detail import ToolDetailScreen
from cursor_watch.tui.screens.help import HelpScreen
from cursor_watch.stream.sources import FileSource, QueueSource
from cursor_watch.tui.widgets.diagnostics import DiagnosticsPane
from cursor_watch.tui.widgets.header import SessionHeader
from cursor_watch.tui.widgets.tool_table import ToolTable
from cursor_watch.tui.widgets.transcript import Transcript

SIZE = (160, 48)


def header(app) -> str:
    return text_of(app.run_view().query_one(SessionHeader))


def rows(app) -> list[list[str]]:
    table = app.run_view().query_one(ToolTable)
    return [table.row_plain(i) for i in range(table.row_count)]


def ev(**kw) -> bytes:
    kw.setdefault("session_id", "sess-1")
    return orjson.dumps(kw) + b"\n"


def started(cid, command, ts):
    return ev(type="tool_call", subtype="started", call_id=cid, timestamp_ms=ts,
              tool_call={"shellToolCall": {"args": {"command": command}}, "startedAtMs": str(ts)})


def completed(cid, command, ts, start, result):
    return ev(type="tool_call", subtype="completed", call_id=cid, timestamp_ms=ts,
              tool_call={"shellToolCall": {"args": {"command": command}, "result": result},
                         "startedAtMs": str(start), "completedAtMs": str(ts)})


INIT = ev(type="system", subtype="init", apiKeySource="login", cwd="/home/dev/acme", model="Composer 2.5",
          permissionMode="default")


async def test_replay_header_rows_and_success():
    app = make_app(FileSource(str(SAMPLES / "plain-tools.jsonl")))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        h = header(app)
        for part in ("Composer 2.5", "/home/dev/projects/acme-api", "session 6abf07c0", "permission default",
                     "key login", "success", "34 events", "✔5", "✖1", "tokens in 205,202"):
            assert part in h, part
        r = rows(app)
        assert [x[2] for x in r] == ["read", "grep", "shell", "edit", "shell", "updateTodos"]
        assert r[2][1] == "✖ failure" and "pytest -q" in r[2][3]
        transcript = app.run_view().query_one(Transcript)
        assert transcript.entry_count("segment") == 7
        assert transcript.entry_count("tool") == 6
        assert "Find why the tests in acme-api fail" in screen_text(app.screen)


async def test_rows_update_in_place_out_of_order_and_completed_without_started():
    src = QueueSource()
    app = make_app(src)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "connecting" in header(app), 5)
        await src.push(INIT + started("a\nfc_1", "sleep 6", 1000) + started("b\nfc_2", "sleep 4", 1001))
        await wait_until(pilot, lambda: len(rows(app)) == 2)
        assert [r[1] for r in rows(app)] == ["▶ running", "▶ running"]
        assert "streaming" in header(app) and "▶2" in header(app)
        await src.push(completed("b\nfc_2", "sleep 4", 5001, 1001, {"success": {"exitCode": 0}}))
        await wait_until(pilot, lambda: rows(app)[1][1] == "✔ success")
        assert rows(app)[0][1] == "▶ running"
        assert rows(app)[1][4] == "4.0 s"
        await src.push(completed("a\nfc_1", "sleep 6", 7000, 1000, {"failure": {"exitCode": 2, "stderr": "boom"}}))
        await src.push(ev(type="tool_call", subtype="completed", call_id="w", timestamp_ms=7100,
                          tool_call={"webSearchToolCall": {"result": {"rejected": {"reason": "User Rejected"}}}}))
        await wait_until(pilot, lambda: len(rows(app)) == 3 and rows(app)[0][1] == "✖ failure")
        assert rows(app)[2][1:3] == ["⊘ rejected", "webSearch"]
        await src.end()
        await wait_until(pilot, lambda: app.ended)
        assert "incomplete" in header(app)


async def test_incomplete_call_and_error_result():
    src = QueueSource()
    app = make_app(src)
    async with app.run_test(size=SIZE) as pilot:
        await src.push(INIT + started("c", "sleep 100", 1000))
        await src.push(ev(type="result", subtype="error", is_error=True, result="Rate limit", duration_ms=5000,
                          duration_api_ms=5000))
        await src.end()
        await wait_until(pilot, lambda: app.ended)
        assert rows(app)[0][1] == "… incomplete"
        h = header(app)
        assert "error" in h and "5.0 s" in h


async def test_idle_names_the_running_tool():
    now = [1000.0]
    src = QueueSource()
    app = make_app(src, monotonic=lambda: now[0])
    async with app.run_test(size=SIZE) as pilot:
        await src.push(INIT + started("c", "pytest -q", 1000))
        await wait_until(pilot, lambda: "streaming" in header(app))
        now[0] += 61
        # (a minute without an event is a quiet period, and the header says why)
        await wait_until(pilot, lambda: "quiet 1m: shell running, no heartbeat" in header(app))
        assert "running: shell pytest -q" in header(app)
        await src.end()


async def test_table_cursor_follows_the_newest_call_until_the_user_moves_it():
    src = QueueSource()
    app = make_app(src)
    async with app.run_test(size=SIZE) as pilot:
        table = app.run_view().query_one(ToolTable)
        await src.push(INIT + b"".join(started(f"c{i}", f"echo {i}", 1000 + i) for i in range(60)))
        await wait_until(pilot, lambda: table.row_count == 60)
        assert table.cursor_row == 59 and table.scroll_offset.y > 0  # the newest call is in view
        await src.push(started("c60", "echo 60", 2000))
        await wait_until(pilot, lambda: table.row_count == 61)
        assert table.cursor_row == 60
        await pilot.press("home", "down")  # the user reads an old row: it stays under the cursor
        await src.push(started("c61", "echo 61", 2001))
        await wait_until(pilot, lambda: table.row_count == 62)
        assert table.cursor_row == 1 and table.selected_call_id() == "c1"
        await pilot.press("end")  # End: back to the newest, and following again
        await src.push(started("c62", "echo 62", 2002))
        await wait_until(pilot, lambda: table.row_count == 63)
        assert table.cursor_row == 62 and table.selected_call_id() == "c62"
        await src.end()


@pytest.mark.parametrize("sample, index, expected", [
    ("plain-tools", 3, ["command pytest -q", "exit code 1", "FAILED tests/test_pricing.py", "stdout"]),
    ("plain-tools", 1, ["content", "def apply_discount", "path /home/dev/projects/acme-api/app/pricing.py"]),
    ("plain-tools", 4, ["diff", "@@", "lines +"]),
    ("plain-tools", 2, ["matches in", "apply_discount("]),
    ("plain-tools", 6, ["☑", "☐", "todos"]),
    ("parallel-failed-rejected", 4, ["status ⊘ rejected", "curl"]),  # one line per rejection
    ("parallel-failed-rejected", 7, ["outcome: error", "ENOENT"]),
])
async def test_detail_screen_per_tool(sample, index, expected):
    app = make_app(FileSource(str(SAMPLES / f"{sample}.jsonl")))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        table = app.run_view().query_one(ToolTable)
        table.focus()
        table.move_cursor(row=index - 1)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ToolDetailScreen))
        text = screen_text(app.screen)
        for part in expected:
            assert part in text, (part, text[:2000])
        call = list(app.session.tool_calls.values())[index - 1]
        assert call.call_id.replace("\n", "\\n") in text
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ToolDetailScreen))


async def test_detail_web_fetch_markdown_and_write(tmp_path):
    page = "# Status\n\nAll systems [operational](https://example.com)."
    data = (INIT
            + ev(type="tool_call", subtype="completed", call_id="f", timestamp_ms=5,
                 tool_call={"webFetchToolCall": {"args": {"url": "https://example.com"},
                                                 "result": {"success": {"url": "https://example.com", "markdown": page}}}})
            + ev(type="tool_call", subtype="completed", call_id="w", timestamp_ms=6,
                 tool_call={"writeToolCall": {"args": {"path": "notes.md", "fileText": "hello\nworld"},
                                              "result": {"success": {"path": "/w/notes.md", "linesCreated": 2}}}}))
    f = tmp_path / "s.jsonl"
    f.write_bytes(data)
    app = make_app(FileSource(str(f)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        app.open_detail("f")
        await wait_until(pilot, lambda: isinstance(app.screen, ToolDetailScreen))
        assert "All systems [operational](https://example.com)" in screen_text(app.screen)
        assert all(not m._open_links for m in app.screen.query("Markdown"))
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ToolDetailScreen))
        app.open_detail("w")
        await wait_until(pilot, lambda: isinstance(app.screen, ToolDetailScreen))
        assert "hello" in screen_text(app.screen) and "linesCreated 2" in screen_text(app.screen)


async def test_large_payload_is_reread_from_the_source(tmp_path):
    content = "line\n" * 50_000
    f = tmp_path / "big.jsonl"
    f.write_bytes(INIT + ev(type="tool_call", subtype="completed", call_id="r", timestamp_ms=5,
                            tool_call={"readToolCall": {"args": {"path": "big.txt"},
                                                        "result": {"success": {"content": content}}}}))
    app = make_app(FileSource(str(f)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        call = app.session.tool_calls["r"]
        assert len(orjson.dumps(call.args)) < 1000  # the content is not kept: the view re-reads it
        app.open_detail("r")
        await wait_until(pilot, lambda: isinstance(app.screen, ToolDetailScreen))
        assert "path big.txt" in screen_text(app.screen)
        assert "line" in screen_text(app.screen)


async def test_follow_and_thinking_toggles():
    app = make_app(FileSource(str(SAMPLES / "plain-tools.jsonl")))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        transcript = app.run_view().query_one(Transcript)
        assert transcript.following
        await pilot.press("f")
        await wait_until(pilot, lambda: not transcript.following and "paused" in header(app))
        await pilot.press("end")
        await wait_until(pilot, lambda: transcript.following and "paused" not in header(app))
        assert "✻" in transcript.rendered_text()
        height = transcript.virtual_size.height
        await pilot.press("t")
        await wait_until(pilot, lambda: "✻" not in transcript.rendered_text() and transcript.virtual_size.height < height)
        await pilot.press("t")
        await wait_until(pilot, lambda: "✻" in transcript.rendered_text() and transcript.virtual_size.height == height)


async def test_scrolling_up_pauses_follow_with_new_count():
    src = QueueSource()
    app = make_app(src)
    text = "\n\n".join(f"Paragraph {i} of a long answer." for i in range(60))
    async with app.run_test(size=SIZE) as pilot:
        await src.push(INIT + ev(type="assistant", message={"content": [{"type": "text", "text": text}]},
                                 timestamp_ms=1, model_call_id="r-0-x") + started("c", "ls", 2))
        transcript = app.run_view().query_one(Transcript)
        await wait_until(pilot, lambda: transcript.max_scroll_y > 0 and transcript.scroll_y == transcript.max_scroll_y)
        transcript.scroll_home(animate=False, immediate=True)
        await wait_until(pilot, lambda: not transcript.following)
        await src.push(completed("c", "ls", 3, 2, {"success": {"exitCode": 0}}) + started("d", "pwd", 4))
        await wait_until(pilot, lambda: "1 new" in header(app) or "2 new" in header(app))
        assert transcript.scroll_y == 0
        await pilot.press("end")
        await wait_until(pilot, lambda: transcript.following and transcript.scroll_y == transcript.max_scroll_y)
        await src.end()


async def test_diagnostics_pane_and_stderr_count():
    app = make_app(FileSource(str(SAMPLES / "failed-no-result.jsonl")))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        pane = app.run_view().query_one(DiagnosticsPane)
        assert not pane.display
        assert "⚠ 1 diagnostic" in header(app) and "incomplete" in header(app)
        await pilot.press("d")
        await wait_until(pilot, lambda: pane.display)
        assert any("line 18: not JSON (text line): Error: ConnectError" in line for line in pane.lines)


async def test_help_screen_and_quit():
    app = make_app(FileSource(str(SAMPLES / "plain-tools.jsonl")))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended)
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        text = screen_text(app.screen)
        for key in ("q", "Enter", "Escape", "f", "t", "d", "Tab", "End"):
            assert key in text
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, HelpScreen))
        await pilot.press("q")
        await wait_until(pilot, lambda: app.return_code is not None)  # it quits
    assert app.return_code == 0


async def test_escape_sequences_are_shown_escaped():
    src = QueueSource()
    app = make_app(src)
    evil = "\x1b]52;c;ZXZpbA==\x07\x1b[2Jred\x9b"
    async with app.run_test(size=SIZE) as pilot:
        await src.push(ev(type="system", subtype="init", model=evil, cwd=evil) + started("c", evil, 1)
                       + ev(type="assistant", message={"content": [{"type": "text", "text": evil}]}) + evil.encode() + b"\n")
        await src.end()
        await wait_until(pilot, lambda: app.ended)
        await pilot.press("d")
        await wait_until(pilot, lambda: app.run_view().query_one(DiagnosticsPane).display)
        svg = app.export_screenshot()
        assert "\\e]52;c;ZXZpbA==" in header(app)
        text = screen_text(app.screen) + header(app) + "".join(app.run_view().query_one(DiagnosticsPane).lines)
        assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text
        assert "\x1b" not in svg


async def test_big_file_opens_on_a_preview_of_its_tail(tmp_path):
    import asyncio

    lines = (SAMPLES / "plain-tools.jsonl").read_bytes().splitlines(keepends=True)
    body = [l for l in lines[2:] if b'"type":"result"' not in l]
    parts = lines[:2] + [l.replace(b'"call-', b'"call-%d-' % k) for k in range(400) for l in body] + lines[-1:]
    big = tmp_path / "big.jsonl"
    big.write_bytes(b"".join(parts))
    assert big.stat().st_size > 8 << 20
    gate = asyncio.Event()

    class GatedFile(FileSource):
        async def _read(self):
            await gate.wait()  # hold the replay so the preview can be seen
            await super()._read()

    app = make_app(GatedFile(str(big)))
    async with app.run_test(size=SIZE) as pilot:
        def preview() -> Transcript | None:
            """The transcript once the preview has put the tail's text in it."""
            view = app.run_view()
            transcript = None if view is None else view.query_one(Transcript)
            return transcript if transcript is not None and transcript.entry_count("segment") > 0 else None

        await wait_until(pilot, lambda: preview() is not None, what="the preview of the tail")
        transcript = preview()  # on screen while the replay is held
        assert "the end of a" in transcript.top_note()
        assert app.session.events == 0
        gate.set()
        await wait_until(pilot, lambda: app.ended, 60)
        assert "the end of a" not in transcript.top_note()
        assert "earlier entries" in transcript.top_note()
        assert "regression test for 0% and 100% discounts" in screen_text(app.screen)


async def test_z_maximises_the_focused_pane_to_the_whole_width_and_back():
    app = make_app(FileSource(str(SAMPLES / "plain-tools.jsonl")))
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_until(pilot, lambda: app.ended)
        screen = app.run_view()
        tools = screen.query_one("#tools")
        transcript = screen.query_one(Transcript)
        assert transcript.size.width > tools.size.width  # the transcript has the larger share
        await pilot.press("z")  # the tool table has the focus
        await wait_until(pilot, lambda: screen.maximized is tools and tools.size.width >= 138)
        await pilot.press("z")
        await wait_until(pilot, lambda: screen.maximized is None and tools.size.width < 138)
        transcript.focus()
        await wait_until(pilot, lambda: transcript.has_focus)
        await pilot.press("z")
        await wait_until(pilot, lambda: screen.maximized is transcript and transcript.size.width >= 138)


async def test_a_diagnostic_is_listed_once_when_it_comes_before_the_view_is_built():
    from cursor_watch.tui.widgets.diagnostics import DiagnosticsPane

    src = QueueSource()
    # queued before the app starts: the watch applies it while the run view is being mounted,
    # so the diagnostic is both in the model (read when the view is built) and in the changes
    await src.push(INIT + b"Error: not json\n" + ev(type="result", subtype="success", result="done"))
    await src.end()
    app = make_app(src)
    async with app.run_test(size=SIZE) as pilot:
        pane = app.run_view().query_one(DiagnosticsPane)
        await wait_until(pilot, lambda: app.ended and pane.lines)
        await wait_ticks(pilot, app)  # the view has taken every change in: a second listing would be there
        lines = pane.lines
        assert len(lines) == 1 and lines[0].startswith("line 2: not JSON")


# -- a replay without times: nothing ticks, no call has a duration ---------------------------------


async def test_a_replayed_file_that_stops_after_init_never_ticks(tmp_path):
    f = tmp_path / "init-only.jsonl"
    f.write_bytes(real(CAGASE).read_bytes().splitlines(keepends=True)[0])
    clock = Clock()
    app = make_app(FileSource(str(f)), monotonic=clock)
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_until(pilot, lambda: app.ended and "incomplete" in text_of(app.screen.query_one(SessionHeader)))
        app.screen.refresh_now(True)
        await wait_ticks(pilot, app)
        first = text_of(app.screen.query_one(SessionHeader))
        assert "incomplete" in first and "no times recorded · 1 event ·" in first
        for _ in range(3):
            clock.t += 60
            app.screen.refresh_now(True)
            await wait_ticks(pilot, app)  # the view's own ticks have run with the new time too
            assert text_of(app.screen.query_one(SessionHeader)) == first  # the same, a minute later


async def test_tool_table_says_a_replayed_duration_is_unknown(tmp_path):
    from cursor_watch.tui.widgets.tool_table import ToolTable

    f = tmp_path / "untimed.jsonl"
    f.write_bytes(_untimed_sample())
    app = make_app([FileSource(str(f))])
    async with app.run_test(size=(160, 40)) as pilot:
        table = app.screen.query_one(ToolTable)

        def drawn() -> str:
            return "\n".join(line.text for line in table.render_lines(table.region.reset_offset))

        def rows() -> list[str]:
            return [line for line in drawn().splitlines() if "success" in line or "failure" in line]

        await wait_until(pilot, lambda: app.ended and len(rows()) == 6, what="the table's 6 rows drawn")
        assert all(row.rstrip().endswith("—") for row in rows()), drawn()


# -- a run that ended on a line that is not stream-json names that line in its end note ------------

async def test_tui_end_note_names_the_cli_error(tmp_path):
    from apphelpers import make_app, screen_text, wait_ticks, wait_until
    from cursor_watch.stream.sources import FileSource

    app = make_app(FileSource(str(ended_on_an_error(tmp_path))))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.ended)
        await wait_ticks(pilot, app)  # the end is drawn
        text = screen_text(app.screen)
        assert "RetriableError: [invalid_argument]" in text, text
