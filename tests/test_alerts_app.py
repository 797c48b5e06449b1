"""The TUI on the alert stream: the stalled state in the header and the runs list, notifications,
a budget with --enforce."""

from __future__ import annotations

import orjson

from apphelpers import make_app, text_of, wait_until
from cursor_watch.guard import Limits
from cursor_watch.screens.run import RunScreen
from cursor_watch.screens.runs import RunsScreen
from cursor_watch.sources import QueueSource
from cursor_watch.widgets.header import SessionHeader
from cursor_watch.widgets.runs_table import RunsTable

SIZE = (160, 40)


class Clock:
    def __init__(self, t: float = 1000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def ev(**kw) -> bytes:
    return orjson.dumps(kw) + b"\n"


def start(sid: str) -> bytes:
    return (ev(type="system", subtype="init", session_id=sid, model="GPT-5 Mini", cwd="/w")
            + ev(type="user", session_id=sid, message={"role": "user", "content": [{"type": "text", "text": "run the tests"}]})
            + ev(type="tool_call", subtype="started", call_id=f"{sid}-1", session_id=sid, timestamp_ms=1_790_000_000_000,
                 tool_call={"shellToolCall": {"args": {"command": "npm test"}}}))


async def test_the_header_and_the_runs_list_show_a_stall_and_it_is_notified_once():
    clock = Clock()
    src = QueueSource("stdin")
    app = make_app(src, monotonic=clock, limits=Limits(stall_s=2))
    async with app.run_test(size=SIZE) as pilot:
        await src.push(start("a"))
        header = app.screen.query_one(SessionHeader)
        await wait_until(pilot, lambda: "running: shell npm test" in text_of(header))
        assert "stalled" not in text_of(header)
        clock.t += 3
        await wait_until(pilot, lambda: "stalled 3s: shell npm test" in text_of(header))
        await pilot.pause(0.3)
        assert app.attention_log == ["stdin: stalled 3s: shell npm test"]
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, RunsScreen))
        rows = app.screen.query_one(RunsTable).rows
        await wait_until(pilot, lambda: [r.plain()[2] for r in app.screen.query_one(RunsTable).rows] == ["stalled 3s"])
        assert app.screen.query_one(RunsTable).rows[0].plain()[9] == "stalled 3s: shell npm test"
        # an event that ends the call ends the stall; the state goes back
        await src.push(ev(type="tool_call", subtype="completed", call_id="a-1", session_id="a", timestamp_ms=1_790_000_003_000,
                          tool_call={"shellToolCall": {"args": {}, "result": {"success": {"exitCode": 0}}}}))
        await wait_until(pilot, lambda: app.screen.query_one(RunsTable).rows[0].plain()[2] == "streaming")
        assert rows is not None and app.attention_log == ["stdin: stalled 3s: shell npm test"]


async def test_a_replayed_run_is_never_stalled(tmp_path):
    log = tmp_path / "a.jsonl"
    log.write_bytes(start("a"))
    from cursor_watch.sources import FileSource

    clock = Clock()
    app = make_app(FileSource(str(log)), monotonic=clock, limits=Limits(stall_s=1))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ended and isinstance(app.screen, RunScreen))
        clock.t += 100
        await pilot.pause(0.3)
        assert "stalled" not in text_of(app.screen.query_one(SessionHeader)) and not app.attention_log
