"""Times are never invented or ticking after a replay ends; a run that ends
without a result says why; a followed file that starts over is a new run, not a success."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import orjson
import pytest

from apphelpers import make_app, screen_text, text_of, wait_ticks, wait_until
from conftest import REAL_DIR, ROOT, run_bytes
from cursor_watch.stream.watch import Monitor, pump
from cursor_watch.core.runs import RunActivity, run_elapsed_ms, strip_escapes
from cursor_watch.stream.sources import FileSource, Notice, QueueSource
from cursor_watch.tui.widgets.diagnostics import DiagnosticsPane
from cursor_watch.tui.widgets.header import SessionHeader
from cursor_watch.tui.widgets.runs_table import RunsTable, local_time

CAGASE = REAL_DIR / "cagase__dsh-cursor__fixtures__live__stream-json-force.jsonl"
CREW = REAL_DIR / "rogazth__crew__crates__crew-core__tests__fixtures__protocols__cursor-tools.jsonl"
ENV = {**os.environ, "CURSOR_WATCH_NO_TUI": "1", "PYTHONPATH": str(ROOT)}


def real(path):
    if not path.exists():
        pytest.skip(f"real captures not found at {REAL_DIR} (a user's clone has none)")
    return path


def cw(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cursor_watch", *args], input=stdin, capture_output=True,
                          env=ENV, timeout=60, cwd=ROOT)


def ev(**kw) -> bytes:
    return orjson.dumps(kw) + b"\n"


class Clock:
    def __init__(self, t: float = 1000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


# -- item 5: say why a run is empty or cut short ------------------------------------------


def test_init_only_real_capture_says_it_ended_without_a_result_in_plain_and_summary(tmp_path):
    f = tmp_path / "init-only.jsonl"
    f.write_bytes(real(CAGASE).read_bytes().splitlines(keepends=True)[0])
    p = cw("--plain", str(f))
    assert p.returncode == 1
    lines = p.stdout.decode().splitlines()
    assert lines[-2] == ("· stream ended without a result after 1 event; last event system/init on line 1, "
                         "no times recorded")
    assert lines[-1].startswith("■ incomplete")
    assert "stream ended without a result after 1 event" in cw("--summary", str(f)).stdout.decode()
    notes = orjson.loads(cw("--summary", "--json", str(f)).stdout)["notes"]
    assert [(n["kind"], n["subtype"]) for n in notes] == [("end", "no_result")]


def test_cut_real_capture_names_its_last_event_and_time(tmp_path):
    lines = real(CAGASE).read_bytes().splitlines(keepends=True)
    f = tmp_path / "cut.jsonl"
    f.write_bytes(b"".join(lines[:20]))
    last = orjson.loads(lines[19])
    s = run_bytes(f.read_bytes())
    note = s.session.notes[len(s.session.notes) - 1].text
    assert note.startswith("stream ended without a result after 20 events; last event "
                           f"{last['type']}{'/' + last['subtype'] if 'subtype' in last else ''} on line 20 at 2026-10-03 ")
    assert note.endswith(" UTC (+" + note.split("(+")[1])  # a time offset from the run's first time


def test_crew_capture_without_init_or_result_says_so():
    p = cw("--plain", str(real(CREW)))
    out = p.stdout.decode()
    assert "· stream ended without a result after 10 events; last event tool_call/completed on line 10 at " in out


def test_empty_input_and_text_only_input_say_so():
    p = cw("--plain", "-", stdin=b"")
    assert "· no events: the input was empty" in p.stdout.decode()
    p = cw("--plain", "-", stdin=b"\x1b[31mError:\x1b[0m not logged in\x07\nsecond line\n{\"a\": 1\n")
    out = p.stdout.decode()
    # the first bad line quoted, its escape sequences removed (the bell shown escaped)
    assert '· no events: 3 lines, none of them stream-json; the first: "Error: not logged in\\x07"' in out
    assert p.returncode == 1


def test_the_first_bad_line_is_quoted_without_its_byte_order_mark(tmp_path):
    # the property test of file, pipe and spawned summaries found it: a file's quote was re-read
    # from its bytes with the BOM (U+FEFF) before the text, a pipe's (the preview) without
    data = b"\xef\xbb\xbfnot json\n"
    f = tmp_path / "bom.jsonl"
    f.write_bytes(data)
    want = '· no events: 1 line, none of them stream-json; the first: "not json"'
    for p in (cw("--plain", str(f)), cw("--plain", "-", stdin=data)):
        out = p.stdout.decode()
        assert want in out, out
        assert "\ufeff" not in out


def test_a_timestamp_no_date_has_is_named_not_a_crash():
    # a hostile timestamp_ms beyond any date (the typed property test found it): the end note
    # names the value instead of raising from datetime
    p = cw("--plain", "-", stdin=ev(type="system", subtype="init", session_id="s")
           + b'{"type":"assistant","message":{"content":[{"type":"text","text":"y"}]},'
             b'"timestamp_ms":99999999999999999999}\n')
    assert p.returncode == 1, p.stderr.decode()
    assert "last event assistant on line 2 at timestamp_ms 100000000000000000000 (not a date)" in p.stdout.decode()


def test_strip_escapes():
    assert strip_escapes("\x1b[1;31mred\x1b[0m \x1b]0;title\x07text \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\") == \
        "red text link"
    assert strip_escapes("a\rb") == "a\\rb"


def test_a_child_killed_by_a_signal_is_the_reason(tmp_path):
    f = tmp_path / "part.jsonl"
    f.write_bytes(b"".join(real(CAGASE).read_bytes().splitlines(keepends=True)[:5]))
    p = cw("--summary", "--json", "--", "sh", "-c", f"cat {f}; kill -9 $$")
    j = orjson.loads(p.stdout)
    assert j["exit_status"] == 137
    assert j["notes"][-1]["text"].startswith("stream ended without a result after 5 events; last event ")
    assert j["notes"][-1]["text"].endswith("; the child was killed by signal 9 (SIGKILL)")


def test_a_new_run_is_the_reason_a_run_ended():
    data = (ev(type="system", subtype="init", session_id="a", model="m") + ev(type="user", session_id="a")
            + ev(type="system", subtype="init", session_id="b", model="m"))
    mon = run_bytes(data)
    first = mon.runs[0].session
    assert first.notes[0].text.endswith("; a new run began on line 3 (a new system/init)")
    assert first.notes[0].text.startswith("stream ended without a result after 2 events; last event user on line 2")


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


# -- item 4: times -------------------------------------------------------------------------


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


def test_elapsed_rules():
    mon = run_bytes(ev(type="system", subtype="init", session_id="a")
                    + ev(type="assistant", session_id="a", timestamp_ms=5_000, message={"content": []})
                    + ev(type="assistant", session_id="a", timestamp_ms=7_500, message={"content": []}))
    run = mon.run
    act = RunActivity(0.0)
    assert run_elapsed_ms(run, act, now=10_000.0) == 2500.0  # the recorded span, whatever the clock
    no_times = run_bytes(ev(type="system", subtype="init", session_id="a") + ev(type="user", session_id="a")).run
    assert run_elapsed_ms(no_times, act, now=10_000.0) is None  # a replay without times: unknown
    live = RunActivity(0.0)
    live.observe(no_times, [("x", None)], 100.0, live=True)
    live.observe(no_times, [("x", None)], 130.0, live=True)
    assert run_elapsed_ms(no_times, live, now=500.0) == 30_000.0  # ended: first to last arrival, not now


def _untimed_sample() -> bytes:
    """The shipped plain-tools sample with every time removed (events, calls and result)."""
    out = []
    for line in (ROOT / "sample_streams" / "plain-tools.jsonl").read_bytes().splitlines():
        d = orjson.loads(line)
        for key in ("timestamp_ms", "duration_ms", "duration_api_ms"):
            d.pop(key, None)
        if isinstance(d.get("tool_call"), dict):
            d["tool_call"].pop("startedAtMs", None)
            d["tool_call"].pop("completedAtMs", None)
        out.append(orjson.dumps(d) + b"\n")
    return b"".join(out)


def test_replayed_calls_without_times_have_no_invented_durations(tmp_path):
    f = tmp_path / "untimed.jsonl"
    f.write_bytes(_untimed_sample())
    summary = orjson.loads(cw("--summary", "--json", str(f)).stdout)
    calls = summary["tool_calls"]
    assert len(calls) == 6 and all(c["duration_ms"] is None and c["started_ms"] is None for c in calls)
    plain = cw("--plain", str(f)).stdout.decode()
    assert "success" in plain and " ms" not in plain and " s\n" not in plain  # no "0 ms" per call
    # the same stream read live (stdin): the calls ran then, so arrival times are real times
    live = orjson.loads(cw("--summary", "--json", "-", stdin=f.read_bytes()).stdout)
    assert all(c["started_ms"] is not None for c in live["tool_calls"])


def test_a_call_seen_only_as_completed_has_no_invented_start_or_duration():
    # completed without started and without startedAtMs: its end is recorded, its start is not
    stream = (ev(type="system", subtype="init", session_id="s", model="m")
              + ev(type="tool_call", subtype="completed", call_id="c1", session_id="s", timestamp_ms=1_786_000_005_000,
                   tool_call={"shellToolCall": {"args": {"command": "ls"},
                                                "result": {"success": {"exitCode": 0}}}})
              + ev(type="tool_call", subtype="completed", call_id="c2", session_id="s", timestamp_ms=1_786_000_006_000,
                   tool_call={"startedAtMs": "1786000005500", "completedAtMs": "1786000006000",
                              "shellToolCall": {"args": {"command": "pwd"}, "result": {"success": {"exitCode": 0}}}}))
    calls = {c.call_id: c for c in run_bytes(stream).session.tool_calls.values()}
    assert calls["c1"].completed_ms == 1_786_000_005_000 and calls["c1"].started_ms is None
    assert calls["c1"].duration_ms is None  # not 0 ms
    assert calls["c2"].duration_ms == 500  # its own startedAtMs is a recorded start
    from cursor_watch.views.export.common import call_facts

    facts = dict(call_facts(calls["c1"]))
    assert "start not recorded →" in facts.get("time", "") and "ms" not in facts.get("time", ""), facts


def test_a_run_without_times_says_so_outside_the_tui(tmp_path):
    """--plain, --summary, the Markdown and the HTML export say "no times recorded" where the
    run's duration would be and "—" for each call's, as the TUI's header and tool table do."""
    f = tmp_path / "untimed.jsonl"
    f.write_bytes(_untimed_sample())
    plain = cw("--plain", "--export", str(tmp_path / "run.md"), str(f)).stdout.decode().splitlines()
    outcome = plain[-1]
    assert outcome.startswith("■ success  6 tool calls (5 success, 1 failed) · no times recorded · tokens "), outcome
    ends = [line for line in plain if line[:1] in "✔✖"]
    assert len(ends) == 6 and all(line.endswith("  —") for line in ends), ends
    summary = cw("--summary", "--export", str(tmp_path / "run.html"), str(f)).stdout.decode().splitlines()
    assert "· no times recorded ·" in next(line for line in summary if line.startswith("■ "))
    rows = [line for line in summary if line.split()[:1] in (["1"], ["2"], ["3"], ["4"], ["5"], ["6"])]
    assert len(rows) == 6 and all(row.rstrip().endswith("—") for row in rows), rows
    md = (tmp_path / "run.md").read_text()
    assert "| **duration** | `no times recorded` |" in md
    assert md.count(" | — |\n") == 6  # the call table's duration cells
    html = (tmp_path / "run.html").read_text()
    assert "<dt>duration</dt><dd>no times recorded</dd>" in html
    assert html.count('<td class="num">—</td>') == 6


def test_a_run_without_a_result_shows_its_recorded_span_outside_the_tui():
    """The run's duration without a ``result``: the span of its events' times, as the TUI's
    header shows it (--plain and --summary printed none)."""
    f = ROOT / "sample_streams" / "failed-no-result.jsonl"
    plain = cw("--plain", str(f)).stdout.decode().splitlines()
    assert plain[-1] == "■ incomplete  1 tool call (1 incomplete) · 28.3 s · 1 invalid line"
    assert plain[-3] == "… [1] shell  alembic upgrade head  incomplete  —"  # never completed: unknown
    assert "■ incomplete  1 tool call (1 incomplete) · 28.3 s · 1 invalid line" in cw("--summary", str(f)).stdout.decode()


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


async def test_paced_replay_progress_follows_the_replay_clock(tmp_path):
    f = tmp_path / "paced.jsonl"
    f.write_bytes(b"".join(ev(type="assistant", session_id="a", timestamp_ms=1000 + 40 * i,
                              message={"content": [{"type": "text", "text": f"w{i} "}]}) for i in range(10)))
    src = FileSource(str(f))
    await src.start()
    seen = []
    await pump(src, Monitor(), lambda changes: seen.append(src.progress()), speed=1.0)
    src.close()
    assert seen[0] < 0.2 and seen == sorted(seen) and seen[-1] == 1.0  # not "100%" from the start


# -- item 6: a followed file truncated and rewritten ----------------------------------------


def test_truncation_ends_the_cut_run_and_starts_a_new_one():
    lines = real(CAGASE).read_bytes().splitlines(keepends=True)
    mon = Monitor()
    mon.feed(b"".join(lines[:10]))
    mon.notice(Notice("truncated", "run.jsonl was truncated; reading from its start"))
    mon.feed(b"".join(lines))
    mon.finish()
    assert [r.session.status for r in mon.runs] == ["incomplete", "success"]
    cut = mon.runs[0]
    assert cut.end_reason == "the file was truncated" and cut.session.result is None
    assert cut.session.notes[len(cut.session.notes) - 1].text.endswith("; the file was truncated")
    new = mon.runs[1]
    assert new.session.notes[0].text == "run.jsonl was truncated; reading from its start"
    assert new.first_offset == 0 and new.session.events == len(lines)


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
