"""The runs list in the TUI (Pilot): rows and states, live updates, navigation (``[ ]`` through the
runs a filter keeps), attention; columns sized to what the rows hold, the files of a directory it
skips said, the started and time columns only from recorded times (or the file's, marked), and a
followed file that starts over is a new run."""

from __future__ import annotations

import os
import time


from apphelpers import SIZE, Clock, ev, make_app, wait_ticks, wait_until
from captures import CAGASE, CODEX_REAL, CREW, GEMINI_TOOLS, need, real
from conftest import REAL_DIR, SAMPLES
from cursor_watch.tui.screens.detail import ToolDetailScreen
from cursor_watch.tui.screens.run import RunScreen
from cursor_watch.tui.screens.runs import RunsScreen, RunsSummary
from cursor_watch.stream.sources import FileSource, QueueSource
from cursor_watch.tui.widgets.runs_table import RunsTable, local_time
from cursor_watch.tui.widgets.tool_table import ToolTable
from apphelpers import text_of

def table(app) -> RunsTable:
    return app.screen.query_one(RunsTable)


def rows(app) -> list[list[str]]:
    return [r.plain() for r in table(app).rows]


def init(sid: str, model: str = "Composer 2.5") -> bytes:
    return ev(type="system", subtype="init", session_id=sid, model=model, cwd="/w", permissionMode="default",
              apiKeySource="login")


def prompt(sid: str, text: str) -> bytes:
    return ev(type="user", session_id=sid, message={"role": "user", "content": [{"type": "text", "text": text}]})


def result(sid: str, ok: bool = True) -> bytes:
    return ev(type="result", subtype="success" if ok else "error", is_error=not ok, result="done", session_id=sid,
              duration_ms=1500)


def say(sid: str, text: str, ts: int) -> bytes:
    return ev(type="assistant", session_id=sid, timestamp_ms=ts, model_call_id="m",
              message={"role": "assistant", "content": [{"type": "text", "text": text}]})


def files(tmp_path, names_and_samples):
    out = []
    for name, data in names_and_samples:
        p = tmp_path / name
        p.write_bytes(data)
        out.append(FileSource(str(p)))
    return out


async def test_a_list_of_files_opens_on_the_runs_list_with_a_row_per_run(tmp_path):
    tools = (SAMPLES / "plain-tools.jsonl").read_bytes()
    failed = (SAMPLES / "failed-no-result.jsonl").read_bytes()
    partial = (SAMPLES / "partial-output.jsonl").read_bytes()
    app = make_app(files(tmp_path, [("loop.jsonl", tools + partial), ("bad.jsonl", failed)]))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended and len(rows(app)) == 3)
        assert isinstance(app.screen, RunsScreen)
        r = rows(app)
        by_source = {row[1]: row for row in r}
        assert set(by_source) == {"loop.jsonl #1", "loop.jsonl #2", "bad.jsonl"}
        assert by_source["loop.jsonl #1"][3] == "success" and by_source["bad.jsonl"][3] == "incomplete"
        assert by_source["loop.jsonl #1"][4] == "Composer 2.5"
        assert by_source["loop.jsonl #1"][2] == "cursor"  # the agent column
        assert by_source["loop.jsonl #1"][5].startswith("Find why the tests in acme-api fail")
        assert "✔5" in by_source["loop.jsonl #1"][8] and "✖1" in by_source["loop.jsonl #1"][8]
        assert by_source["loop.jsonl #1"][9] == "205.2k/1.9k ≈ $0.0644 est."  # tokens in/out, the estimate labelled
        # finished runs: newest first (by their first timestamp)
        started = [row.started_ms for row in table(app).rows]
        assert started == sorted(started, reverse=True)
        summary = text_of(app.screen.query_one(RunsSummary))
        assert "3 runs in 2 sources" in summary


async def test_enter_escape_and_brackets(tmp_path):
    data = [(f"{i}.jsonl", (SAMPLES / name).read_bytes()) for i, name in
            enumerate(["plain-tools.jsonl", "partial-output.jsonl", "parallel-failed-rejected.jsonl"])]
    app = make_app(files(tmp_path, data))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended and len(rows(app)) == 3)
        order = [row.key for row in table(app).rows]
        table(app).focus()
        # from the first row (the cursor stays on the run it was on while the replays sorted the
        # list: on a loaded machine the first file read, 0.jsonl, ends at the bottom)
        await pilot.press("home", "down", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, RunScreen))
        assert app.shown_run.key == order[1][:2]
        assert app.screen.query_one(ToolTable).row_count == len(app.session.tool_calls)
        await pilot.press("right_square_bracket")
        await wait_until(pilot, lambda: app.shown_run is not None and app.shown_run.key == order[2][:2])
        await pilot.press("right_square_bracket")  # the last: stays
        await wait_ticks(pilot, app)
        assert app.shown_run.key == order[2][:2]
        await pilot.press("left_square_bracket", "left_square_bracket")
        await wait_until(pilot, lambda: app.shown_run is not None and app.shown_run.key == order[0][:2])
        # the run view keeps its keys: Enter opens a tool call's detail, Escape goes back to the run
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ToolDetailScreen))
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, RunScreen))
        await pilot.press("escape")  # back to the list, on the row of the run that was shown
        await wait_until(pilot, lambda: isinstance(app.screen, RunsScreen))
        assert table(app).selected_key() == order[0]
        assert len(app.screen_stack) == 1  # the list is the base screen: nothing left behind


async def test_one_source_opens_on_its_run_and_a_second_run_soon_after_shows_the_list():
    src = QueueSource("stdin")
    app = make_app(src)
    async with app.run_test(size=SIZE) as pilot:
        assert isinstance(app.screen, RunScreen)
        await src.push(init("a") + prompt("a", "first task") + result("a"))
        await src.push(init("b") + prompt("b", "second task"))
        await wait_until(pilot, lambda: isinstance(app.screen, RunsScreen) and len(rows(app)) == 2)
        states = {row[1]: row[3] for row in rows(app)}
        assert states == {"stdin #1": "success", "stdin #2": "streaming"}
        assert rows(app)[0][1] == "stdin #2"  # live runs first


async def test_live_rows_update_in_place_with_states_and_attention():
    clock = Clock()
    a, b = QueueSource("agent-a"), QueueSource("agent-b")
    app = make_app([a, b], monotonic=clock)
    async with app.run_test(size=SIZE) as pilot:
        await a.push(init("a") + prompt("a", "task A") + say("a", "working", 1_790_000_000_000))
        await b.push(init("b", "GPT-5 Mini") + prompt("b", "task B") + say("b", "thinking it over", 1_790_000_100_000))
        await wait_until(pilot, lambda: len(rows(app)) == 2 and all(r[3] == "streaming" for r in rows(app)))
        assert [r[1] for r in rows(app)] == ["agent-b", "agent-a"]  # newest first
        # silence: idle N s
        clock.t += 7
        await wait_until(pilot, lambda: {r[3] for r in rows(app)} == {"idle 7 s"})
        # an interaction_query request without its response: waiting, marked, notified once
        await a.push(ev(type="interaction_query", subtype="request", query_type="webFetchRequestQuery",
                        session_id="a", timestamp_ms=1_790_000_000_500,
                        query={"id": 0, "webFetchRequestQuery": {"args": {"url": "https://x", "toolCallId": "t1"}}}))
        await wait_until(pilot, lambda: any(r[3] == "waiting" for r in rows(app)))
        clock.t += 1
        await wait_until(pilot, lambda: any(r.mark == "waiting" for r in table(app).rows))
        assert app.attention_log.count("agent-a: waits for an answer (interaction_query)") == 1
        # the run ends: success, marked, notified once; the list keeps it (finished runs after live ones)
        await a.push(result("a"))
        await wait_until(pilot, lambda: any(r[3] == "success" for r in rows(app)))
        await wait_until(pilot, lambda: "agent-a: ended: success" in app.attention_log)
        await wait_ticks(pilot, app)  # a second notice would be out by now
        messages = app.attention_log
        assert messages.count("agent-a: ended: success") == 1
        row_a = next(r for r in table(app).rows if r.source == "agent-a")
        assert row_a.mark == "success" and not row_a.live
        assert [r.source for r in table(app).rows] == ["agent-b", "agent-a"]
        # failing: an error result
        await b.push(result("b", ok=False))
        await wait_until(pilot, lambda: "agent-b: ended: error" in app.attention_log)
        # opening a run clears its mark
        table(app).move_to_key(row_a.key)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, RunScreen))
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, RunsScreen)
                         and next(r for r in table(app).rows if r.key == row_a.key).mark == "")
        assert "● 1 to look at" in text_of(app.screen.query_one(RunsSummary))


async def test_replayed_logs_raise_no_attention(tmp_path):
    data = [(f"{i}.jsonl", (SAMPLES / "plain-tools.jsonl").read_bytes()) for i in range(3)]
    app = make_app(files(tmp_path, data))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended and len(rows(app)) == 3)
        await wait_ticks(pilot, app)  # the ticks that would raise attention have run on the ended runs
        assert not app.attention_log and not any(r.mark for r in table(app).rows)


async def test_notify_rings_the_bell_and_sends_osc_9_and_777_once_per_event():
    src = QueueSource("stdin")
    app = make_app(src, monotonic=time.monotonic, notify=True)
    async with app.run_test(size=SIZE) as pilot:
        await src.push(init("a", "Mod;el\x1b]0;x\x07") + prompt("a", "t") + result("a"))
        await wait_until(pilot, lambda: app.terminal_notifications)
        await wait_ticks(pilot, app)  # a repeated notification would be out by now
        seqs = app.terminal_notifications
        assert seqs == ["\a", "\x1b]9;stdin: ended: success\x07", "\x1b]777;notify;stdin;ended: success\x07"]


def test_osc_notification_text_is_escaped():
    app = make_app(QueueSource("stdin"), notify=True)
    app.ring("a;b\x1b]52;c;x\x07", "ended\x07")
    assert app.terminal_notifications[1] == "\x1b]9;a,b\\e]52,c,x\\x07: ended\\x07\x07"
    assert app.terminal_notifications[2] == "\x1b]777;notify;a,b\\e]52,c,x\\x07;ended\\x07\x07"
    for seq in app.terminal_notifications:
        assert seq.count("\x1b") <= 1 and seq.count("\x07") <= 1  # only the sequence's own ESC and BEL


async def test_an_unreadable_file_is_a_row_not_an_exit(tmp_path):
    good = files(tmp_path, [("good.jsonl", (SAMPLES / "plain-tools.jsonl").read_bytes())])
    app = make_app(good + [FileSource(str(tmp_path / "missing.jsonl"))])
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended and len(rows(app)) == 2)
        bad = next(r for r in rows(app) if r[1] == "missing.jsonl")
        assert bad[3] == "unreadable" and "no such file" in bad[10]
        assert "⚠ 1 unreadable" in text_of(app.screen.query_one(RunsSummary))
        assert app.is_running


# -- times: the started column recorded or the file's, marked; an old capture has no live age ------


def test_local_time_shows_the_year_for_other_years():
    now = time.mktime((2026, 11, 25, 12, 0, 0, 0, 0, -1)) * 1000
    assert local_time(time.mktime((2026, 11, 25, 9, 3, 7, 0, 0, -1)) * 1000, now) == "09:03:07"
    assert local_time(time.mktime((2026, 2, 11, 9, 3, 7, 0, 0, -1)) * 1000, now) == "Feb 11 09:03"
    assert local_time(time.mktime((2025, 2, 11, 9, 3, 7, 0, 0, -1)) * 1000, now) == "2025-02-11"


async def test_runs_list_started_is_recorded_or_the_files_time_marked(tmp_path):
    timed = tmp_path / "timed.jsonl"
    timed.write_bytes(real(CAGASE).read_bytes())
    untimed = tmp_path / "untimed.jsonl"
    untimed.write_bytes(ev(type="system", subtype="init", session_id="u", model="m") + ev(type="user", session_id="u"))
    old = time.mktime((2024, 3, 5, 10, 0, 0, 0, 0, -1))
    os.utime(untimed, (old, old))
    app = make_app([FileSource(str(timed)), FileSource(str(untimed))])
    async with app.run_test(size=(200, 30)) as pilot:
        await wait_until(pilot, lambda: app.ended and len(app.screen.query_one(RunsTable).rows) == 2)
        await wait_ticks(pilot, app)  # the rows are rebuilt from the ended runs
        rows = {r.source: r.plain() for r in app.screen.query_one(RunsTable).rows}
        assert rows["untimed.jsonl"][6] == "file 2024-03-05"  # the file's time, marked, with its year
        assert rows["untimed.jsonl"][7] == "—"  # no duration recorded
        timed_row = next(r for r in app.screen.query_one(RunsTable).rows if r.source == "timed.jsonl")
        assert timed_row.started_ms == app.watch.feeds[0].runs[0].session.first_ts_ms  # recorded
        assert rows["timed.jsonl"][6] == local_time(timed_row.started_ms, app._clock())
        assert rows["timed.jsonl"][7] == "5.0 s"
        # sorted by their start: the 2026 capture before the 2024 file
        assert [r.source for r in app.screen.query_one(RunsTable).rows] == ["timed.jsonl", "untimed.jsonl"]


async def test_followed_old_capture_shows_no_live_age(tmp_path):
    lines = real(CREW).read_bytes().splitlines(keepends=True)
    f = tmp_path / "crew.jsonl"
    f.write_bytes(b"".join(lines[:5]) + lines[5].replace(b'"completed"', b'"started"'))
    clock = Clock()
    app = make_app([FileSource(str(f), follow=True), QueueSource("other")], monotonic=clock,
                   clock=lambda: time.time() * 1000)
    async with app.run_test(size=(200, 30)) as pilot:
        await wait_until(pilot, lambda: any(r.source == "crew.jsonl" and r.time_ms is not None
                                            for r in app.screen.query_one(RunsTable).rows))
        clock.t += 30
        await wait_ticks(pilot, app)  # a tick 30 s later (a slow one: live rows are rebuilt) has run
        row = next(r for r in app.screen.query_one(RunsTable).rows if r.source == "crew.jsonl")
        assert row.time_ms is not None and row.time_ms < 60_000  # its recorded span, not months since


# -- a followed file truncated and rewritten: a new run, not a success -----------------------------


async def test_followed_file_truncated_and_rewritten_is_announced_as_a_restart(tmp_path):
    lines = real(CAGASE).read_bytes().splitlines(keepends=True)
    f = tmp_path / "run.jsonl"
    f.write_bytes(b"")
    source = FileSource(str(f), follow=True)
    app = make_app(source)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(pilot, lambda: app.watch.feeds[0].caught_up)  # the empty file read: what follows is live
        with open(f, "ab") as fh:
            fh.write(b"".join(lines[:15]))
        await wait_until(pilot, lambda: app.session.events == 15)
        runs = app.watch.feeds[0].runs
        with open(f, "r+b") as fh:
            fh.truncate(0)
        await wait_until(pilot, lambda: len(runs) == 2)  # the truncation seen: a new run (before the file grows again)
        with open(f, "ab") as fh:
            fh.write(b"".join(lines))
        await wait_until(pilot, lambda: runs[1].session.result is not None)
        # the new run's end is in the log: run 1's would have been before it
        await wait_until(pilot, lambda: "run.jsonl · run 2: ended: success" in app.attention_log)
        log = app.attention_log
        assert "run.jsonl · run 1: ended: success" not in log
        assert any(m.startswith("run.jsonl · run 1: the file started over") for m in log), log
        assert "run.jsonl · run 2: ended: success" in log
        assert runs[0].session.status == "incomplete"


# -- columns sized to what rows hold, a filter that [ ] keep, skipped files said -------------------

COMPACTION = REAL_DIR.parent / "agents" / "claude" / "littlebearapps__untether__tests__fixtures__claude_compaction_2.1.285.jsonl"


async def test_runs_list_gives_an_empty_prompt_columns_room_to_the_model_and_titles_align():
    """The compaction capture's 12 runs have no prompt in the stream (Claude Code echoes none)
    but one: the model ``claude-haiku-4-5-20251001`` was cut to ``claude-haiku-…``."""
    from apphelpers import make_app, text_of, wait_ticks, wait_until
    from cursor_watch.stream.sources import FileSource
    from cursor_watch.tui.widgets.runs_table import RunsTable, RunsTableHeader

    need(COMPACTION)
    app = make_app([FileSource(str(COMPACTION)), FileSource(str(GEMINI_TOOLS))])
    async with app.run_test(size=(160, 24)) as pilot:
        await wait_until(pilot, lambda: app.ended and len(app.screen.query_one(RunsTable).rows) == 13)
        await wait_ticks(pilot, app)  # the rows are rebuilt from the ended runs
        table = app.screen.query_one(RunsTable)
        lines = ["".join(seg.text for seg in table.render_line(y)) for y in range(13)]
        assert all("claude-haiku-4-5-20251001" in line for line in lines if " claude " in line), lines
        assert any("gemini-3-flash-preview" in line for line in lines), lines
        titles = text_of(app.screen.query_one(RunsTableHeader)).splitlines()[0]
        row = next(line for line in lines if "claude-haiku" in line)
        # each title stands over its column (the header and the rows are laid out alike)
        assert titles.index("model") == row.index("claude-haiku"), (titles, row)


async def test_brackets_step_through_the_runs_the_filter_keeps(tmp_path):
    from apphelpers import make_app, wait_until
    from cursor_watch.tui.screens.run import RunScreen
    from cursor_watch.stream.sources import FileSource
    from cursor_watch.tui.widgets.runs_table import RunsTable

    need(COMPACTION)
    app = make_app([FileSource(str(COMPACTION)), FileSource(str(GEMINI_TOOLS)), FileSource(str(CODEX_REAL))])
    async with app.run_test(size=(160, 24)) as pilot:
        await wait_until(pilot, lambda: app.ended and len(app.screen.query_one(RunsTable).rows) == 14)
        await pilot.press("slash")
        await pilot.press(*"haiku")  # the compaction capture's runs, not Gemini's nor Codex's
        await pilot.press("enter")
        table = app.screen.query_one(RunsTable)
        await wait_until(pilot, lambda: 0 < len(table.rows) < 14)
        kept = [row.key[:2] for row in table.rows]
        assert len(kept) >= 3
        table.focus()
        table.move_cursor(row=0)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, RunScreen))
        seen = [app.shown_run.key]
        for _ in kept[1:]:  # each ] shows the next run the filter keeps, in the list's order, no other
            before = app.shown_run.key
            await pilot.press("right_square_bracket")
            await wait_until(pilot, lambda: app.shown_run.key != before)
            seen.append(app.shown_run.key)
        assert seen == kept, (seen, kept)


async def test_runs_list_says_how_many_files_of_a_directory_it_skips(tmp_path):
    from apphelpers import make_app, text_of, wait_ticks, wait_until
    from cursor_watch.tui.screens.runs import RunsSummary
    from cursor_watch.stream.sources import open_sources
    from cursor_watch.tui.widgets.runs_table import RunsTable

    need(GEMINI_TOOLS)
    for name in ("a.jsonl", "b.jsonl"):
        (tmp_path / name).write_bytes(GEMINI_TOOLS.read_bytes())
    (tmp_path / "README.md").write_text("notes")
    (tmp_path / "run.stderr.txt").write_text("an error")
    sources, directories = open_sources([str(tmp_path)], None)
    app = make_app(sources, directories=directories)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.ended and len(app.screen.query_one(RunsTable).rows) == 2)
        await wait_ticks(pilot, app)  # the top line is rebuilt from the ended runs
        line = text_of(app.screen.query_one(RunsSummary))
        assert "2 skipped: not .jsonl/.ndjson/.log" in line, line
