"""The TUI on the alert stream: the stalled state in the header and the runs list, notifications,
a budget with --enforce."""

from __future__ import annotations

from apphelpers import SIZE, Clock, ev, make_app, text_of, wait_ticks, wait_until
from cursor_watch.core.limits import Limits
from cursor_watch.tui.screens.run import RunScreen
from cursor_watch.stream.sources import QueueSource
from cursor_watch.tui.widgets.header import SessionHeader
from cursor_watch.tui.widgets.runs_table import RunsTable


def start(sid: str) -> bytes:
    return (ev(type="system", subtype="init", session_id=sid, model="GPT-5 Mini", cwd="/w")
            + ev(type="user", session_id=sid, message={"role": "user", "content": [{"type": "text", "text": "run the tests"}]})
            + ev(type="tool_call", subtype="started", call_id=f"{sid}-1", session_id=sid, timestamp_ms=1_790_000_000_000,
                 tool_call={"shellToolCall": {"args": {"command": "npm test"}}}))


async def test_the_runs_list_and_the_header_show_a_stall_and_it_is_notified_once():
    clock = Clock()
    a, b = QueueSource("agent-a"), QueueSource("agent-b")
    app = make_app([a, b], monotonic=clock, limits=Limits(stall_s=2))
    async with app.run_test(size=SIZE) as pilot:
        await a.push(start("a"))
        await b.push(start("b")[:-1] + b"\n")
        table = app.screen.query_one(RunsTable)
        await wait_until(pilot, lambda: len(table.rows) == 2)
        assert all(not r.plain()[3].startswith("stalled") for r in table.rows)
        clock.t += 3
        await wait_until(pilot, lambda: {r.plain()[3] for r in table.rows} == {"stalled 3s"})
        row = next(r for r in table.rows if r.source == "agent-a")
        # (the stall says why it is one: no event since the call began, and no heartbeat from it)
        assert row.plain()[10] == "stalled 3s: shell npm test (unexplained: no heartbeat)" and row.mark == "stalled"
        await wait_until(pilot, lambda: len(app.attention_log) >= 2)
        assert sorted(app.attention_log) == ["agent-a: stalled 3s: shell npm test (unexplained: no heartbeat)",
                                             "agent-b: stalled 3s: shell npm test (unexplained: no heartbeat)"]
        # an event that ends the call ends agent-a's stall: its state goes back
        await a.push(ev(type="tool_call", subtype="completed", call_id="a-1", session_id="a",
                        timestamp_ms=1_790_000_003_000,
                        tool_call={"shellToolCall": {"args": {}, "result": {"success": {"exitCode": 0}}}}))
        await wait_until(pilot, lambda: next(r for r in table.rows if r.source == "agent-a").plain()[3] == "streaming")
        # the run view's header says it too
        table.move_to_key(next(r for r in table.rows if r.source == "agent-b").key)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, RunScreen))
        header = app.screen.query_one(SessionHeader)
        await wait_until(pilot, lambda: "stalled 3s: shell npm test" in text_of(header))
        assert "running:" not in text_of(header)  # the stall names the one running call
        assert len(app.attention_log) == 2  # each stall once


async def test_a_replayed_run_is_never_stalled(tmp_path):
    log = tmp_path / "a.jsonl"
    log.write_bytes(start("a"))
    from cursor_watch.stream.sources import FileSource

    clock = Clock()
    app = make_app(FileSource(str(log)), monotonic=clock, limits=Limits(stall_s=1))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended and isinstance(app.screen, RunScreen))
        clock.t += 100
        await wait_ticks(pilot, app)  # the stall check has run, 100 s later
        assert "stalled" not in text_of(app.screen.query_one(SessionHeader)) and not app.attention_log


async def test_without_stall_option_a_stall_shows_after_5_minutes_and_is_not_notified():
    """--stall not given: the display default (5 m) shows the stall in the list and the header; no
    notification, bell or desktop notification (--notify), as the README says: alerts only with it."""
    clock = Clock()
    a = QueueSource("agent-a")
    app = make_app(a, monotonic=clock, notify=True)  # --notify, no --stall
    async with app.run_test(size=SIZE) as pilot:
        await a.push(start("a"))
        await wait_until(pilot, lambda: isinstance(app.screen, RunScreen)
                         and "npm test" in text_of(app.screen.query_one(SessionHeader)))
        clock.t += 299
        await wait_ticks(pilot, app)  # the stall check has run, 299 s later
        assert "stalled" not in text_of(app.screen.query_one(SessionHeader))
        clock.t += 2
        await wait_until(pilot, lambda: "stalled 5m: shell npm test" in text_of(app.screen.query_one(SessionHeader)))
        await wait_ticks(pilot, app)  # the tick that saw the stall has ended: a notification would be out
        assert app.attention_log == [] and app.terminal_notifications == []


async def test_with_stall_option_a_stall_rings_with_notify():
    clock = Clock()
    a = QueueSource("agent-a")
    app = make_app(a, monotonic=clock, notify=True, limits=Limits(stall_s=300))
    async with app.run_test(size=SIZE) as pilot:
        await a.push(start("a"))
        await wait_until(pilot, lambda: isinstance(app.screen, RunScreen)
                         and "npm test" in text_of(app.screen.query_one(SessionHeader)))
        clock.t += 301
        await wait_until(pilot, lambda: app.terminal_notifications)
        assert app.attention_log == ["agent-a: stalled 5m: shell npm test (unexplained: no heartbeat)"]
        assert app.terminal_notifications[0] == "\a" and "stalled 5m" in app.terminal_notifications[1]
