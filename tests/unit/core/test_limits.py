"""Stalls and budgets as facts of a run and a clock (cursor_watch.core.limits)."""

from __future__ import annotations

import orjson
import pytest

from captures import CLAUDE_MCP, needs_streams
from cursor_watch.core.limits import Breach, Limits, RunTimes, breaches, remember, stall_of, stall_periods
from cursor_watch.stream.watch import Monitor

T0 = 1_790_000_000_000.0


def line(**kw) -> bytes:
    return orjson.dumps(kw) + b"\n"


def init(model="GPT-5 Mini"):
    return line(type="system", subtype="init", session_id="s", model=model, cwd="/w")


def started(cid, cmd, ts):
    return line(type="tool_call", subtype="started", call_id=cid, session_id="s", timestamp_ms=ts,
                tool_call={"shellToolCall": {"args": {"command": cmd}}})


def completed(cid, ts, ok=True):
    result = {"success": {"exitCode": 0}} if ok else {"failure": {"exitCode": 1, "stderr": "boom"}}
    return line(type="tool_call", subtype="completed", call_id=cid, session_id="s", timestamp_ms=ts,
                tool_call={"shellToolCall": {"args": {"command": "x"}, "result": result}})


def query(subtype):
    q = {"id": 1, "webFetchRequestQuery": {"args": {"url": "https://x", "toolCallId": "q"}}}
    return line(type="interaction_query", subtype=subtype, query_type="webFetchRequestQuery", session_id="s",
                timestamp_ms=int(T0), **({"query": q} if subtype == "request" else {"response": {"id": 1, "approved": {}}}))


class Live:
    """A monitor fed at chosen clock times, with the run's arrival times beside it."""

    def __init__(self, live=True):
        self.m = Monitor(clock=lambda: T0)
        self.times = RunTimes(T0)
        self.live = live

    def feed(self, data: bytes, at_ms: float):
        self.times.observe(self.m.session, self.m.feed(data), at_ms, self.live)

    @property
    def s(self):
        return self.m.session


def test_a_call_running_as_long_as_the_stall_duration_is_named():
    run = Live()
    run.feed(init() + started("c1", "npm test", 1), T0)
    assert stall_of(run.s, run.times, T0 + 359_000, 360) is None
    stall = stall_of(run.s, run.times, T0 + 360_000, 360)
    assert stall.label() == "stalled 6m: shell npm test (unexplained: no heartbeat)" and stall.call_id == "c1" and stall.since_ms == T0
    # an event of another kind arriving does not un-stall the long call
    run.feed(line(type="thinking", subtype="delta", text="hm", session_id="s", timestamp_ms=2), T0 + 300_000)
    assert stall_of(run.s, run.times, T0 + 370_000, 360).call_id == "c1"
    run.feed(completed("c1", 3), T0 + 371_000)
    assert stall_of(run.s, run.times, T0 + 372_000, 360) is None


def test_silence_with_nothing_running_is_a_stall_of_no_event():
    run = Live()
    run.feed(init() + line(type="thinking", subtype="delta", text="x", session_id="s", timestamp_ms=1), T0)
    assert stall_of(run.s, run.times, T0 + 89_000, 90) is None
    assert stall_of(run.s, run.times, T0 + 90_000, 90).label() == "stalled 1m: no event (unexplained)"
    assert stall_of(run.s, run.times, T0 + 90_000, None) is None  # stalls off


def test_waiting_for_an_answer_is_not_a_stall_nor_is_a_replay_or_an_ended_run():
    run = Live()
    run.feed(init() + query("request"), T0)
    assert stall_of(run.s, run.times, T0 + 10**7, 1) is None
    run.feed(query("response"), T0 + 1)
    assert stall_of(run.s, run.times, T0 + 10**7, 1) is not None
    replay = Live(live=False)
    replay.feed(init() + started("c1", "sleep 1", 1), T0)
    assert stall_of(replay.s, replay.times, T0 + 10**7, 1) is None
    ended = Live()
    ended.feed(init() + started("c1", "sleep 1", 1), T0)
    ended.times.observe(ended.s, ended.m.finish(), T0 + 1, True)
    assert stall_of(ended.s, ended.times, T0 + 10**7, 1) is None


def test_stall_periods_open_and_close_and_reach_the_summary():
    run = Live()
    run.feed(init() + line(type="thinking", subtype="delta", text="x", session_id="s", timestamp_ms=1), T0)
    remember(run.s, run.times)
    assert not run.times.track(stall_of(run.s, run.times, T0 + 1_000, 2), T0 + 1_000)
    assert run.times.track(stall_of(run.s, run.times, T0 + 2_500, 2), T0 + 2_500)  # began
    assert not run.times.track(stall_of(run.s, run.times, T0 + 3_000, 2), T0 + 3_000)  # goes on
    run.feed(line(type="thinking", subtype="completed", session_id="s", timestamp_ms=2), T0 + 4_000)
    run.times.track(stall_of(run.s, run.times, T0 + 4_000, 2), T0 + 4_000)  # ended
    assert stall_periods(run.s, 2) == [{"start_ms": int(T0), "end_ms": int(T0) + 4_000, "duration_ms": 4_000,
                                        "call_id": "", "tool": "", "summary": "", "observed": "live",
                                        "explained": False, "why": "unexplained"}]


def test_recorded_stall_periods_come_from_the_calls_own_times():
    m = Monitor()
    m.feed(init() + started("c1", "sleep 1", 1_000) + completed("c1", 2_000)
           + started("c2", "sleep 600", 3_000) + completed("c2", 603_000))
    m.finish()
    periods = stall_periods(m.session, 300)
    assert [(p["call_id"], p["duration_ms"], p["observed"]) for p in periods] == [("c2", 600_000, "recorded")]
    assert stall_periods(m.session, 0) == []


def test_budgets_are_exceeded_past_the_limit():
    run = Live()
    run.feed(init() + started("c1", "a", 1) + completed("c1", 2, ok=False) + started("c2", "b", 3), T0)
    s = run.s
    assert breaches(s, Limits(max_tool_calls=2), run.times, T0) == []
    assert breaches(s, Limits(max_tool_calls=1), run.times, T0) == [Breach("tool_calls", 1, 2)]
    assert breaches(s, Limits(max_tool_calls=1), run.times, T0)[0].label() == "budget: 2 tool calls > 1"
    assert breaches(s, Limits(max_failures=0), run.times, T0)[0].label() == "budget: 1 failed tool call > 0"
    assert breaches(s, Limits(max_duration_s=60), run.times, T0 + 60_000) == []
    assert breaches(s, Limits(max_duration_s=60), run.times, T0 + 61_000)[0].budget == "duration"
    # tokens and cost: known at the result (Cursor reports usage only there)
    assert breaches(s, Limits(max_tokens=10, max_cost_usd=0.0001), run.times, T0) == []
    run.feed(line(type="result", subtype="success", is_error=False, duration_ms=5, result="", session_id="s",
                  usage={"inputTokens": 1000, "outputTokens": 100, "cacheReadTokens": 0, "cacheWriteTokens": 0}), T0)
    got = breaches(s, Limits(max_tokens=1099, max_cost_usd=0.0001), run.times, T0)
    assert [b.budget for b in got] == ["tokens", "cost"]
    assert got[0].value == 1100 and got[1].value == pytest.approx((1000 * 0.25 + 100 * 2.0) / 1e6)
    assert got[1].label() == "budget: cost $0.000450 > $0.000100"


# -- a stall notice names its tool once ------------------------------------------------------------


@needs_streams
def test_a_stall_notice_names_the_tool_once():
    """``stalled 6m: ToolSearch query=…`` (was ``ToolSearch ToolSearch query=…``)."""
    first_two = b"".join(CLAUDE_MCP.read_bytes().splitlines(keepends=True)[:2])  # init, the ToolSearch call
    m = Monitor(clock=lambda: T0)
    times = RunTimes(T0)
    times.observe(m.session, m.feed(first_two), T0, True)
    stall = stall_of(m.session, times, T0 + 360_000, 360)
    assert stall is not None
    assert stall.label() == ("stalled 6m: ToolSearch query=select:mcp__lean_beam__lean_sync,mcp__lean_beam__lean_goals "
                             "(unexplained: no heartbeat)")
