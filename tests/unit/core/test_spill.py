"""Old records on disk: the lists and the call table behave as in memory, and stay small."""

from __future__ import annotations

import io
import operator
import sqlite3

import orjson
import pytest

from apphelpers import make_app, wait_until
from conftest import SAMPLES, real_params
from cursor_watch.core import spill
from cursor_watch.core.model import _CALL_FIELDS, Session, ToolCall, _call_state
from cursor_watch.views.plain import PlainPrinter, make_console
from cursor_watch.views.summary import summary_json
from cursor_watch.stream.watch import Monitor
from cursor_watch.tui.screens.detail import ToolDetailScreen
from cursor_watch.stream.sources import FileSource
from cursor_watch.core.spill import SpillDict, SpillFile, SpillList
from cursor_watch.tui.widgets.tool_table import ToolTable

CLOCK = lambda: 1_000_000.0  # noqa: E731


def plain_list(n: int, hot: int = 3, batch: int = 2) -> tuple[SpillList, list]:
    sl: SpillList = SpillList(SpillFile(), "x", lambda v: (v,), lambda st: st[0], hot=hot, batch=batch)
    ref = []
    for i in range(n):
        item = {"i": i, "text": f"item {i}\x1b\u202e" + "é" * (i % 5)}
        sl.append(item)
        ref.append(item)
    return sl, ref


@pytest.mark.parametrize("n", [0, 1, 4, 5, 6, 17, 250])
def test_spill_list_reads_like_a_list(n):
    sl, ref = plain_list(n)
    assert len(sl) == n and bool(sl) == bool(ref)
    assert list(sl) == ref and sl == ref
    assert [sl[i] for i in range(n)] == ref
    assert [sl[-i] for i in range(1, n + 1)] == [ref[-i] for i in range(1, n + 1)]
    for a, b in ((0, n), (1, n - 1), (n - 3, n), (2, 9), (5, 3), (-4, None)):
        assert sl[a:b] == ref[a:b], (a, b)
    assert sl[::2] == ref[::2]
    for bad in (n, -n - 1):
        with pytest.raises(IndexError):
            sl[bad]
    assert len(sl._items) <= 3 + 2  # the rest is on disk


def test_spill_list_keeps_the_newest_items_as_the_same_objects():
    sl, ref = plain_list(40)
    assert sl[-1] is ref[-1] and sl[-3] is ref[-3]  # hot: the model's own objects
    assert sl[0] == ref[0] and sl[0] is not ref[0]  # cold: a copy read back


def test_a_tool_call_state_round_trips_every_slot():
    call = ToolCall(7, "c\n1")
    # a distinct value per field, of the field's type (a compiled ToolCall checks them): a swapped
    # pair shows, as a wrong value or a type error
    values = []
    for n, name in enumerate(_CALL_FIELDS):
        kind = type(getattr(ToolCall(1, "x"), name))
        value = {int: 1000 + n, str: f"{n}:{name}", type(None): n * 10}.get(kind)
        if name in ("start_span", "end_span"):
            value = (n, n + 1)
        elif name == "args":
            value = {"n": n}
        values.append(value)
        setattr(call, name, value)
    back = ToolCall.from_state(call.state())
    assert [getattr(back, name) for name in _CALL_FIELDS] == values
    # both ways of reading the state (the compiled build's and the interpreted one's) agree
    assert _call_state(call) == operator.attrgetter(*_CALL_FIELDS)(call) == call.state() == tuple(values)
    assert len(set(map(repr, values))) == len(values) == len(_CALL_FIELDS) == 21
    with pytest.raises(ValueError):
        ToolCall.from_state(call.state()[:-1])


def calls_dict(hot: int = 2, batch: int = 2) -> SpillDict:
    return SpillDict(SpillFile(), ToolCall.state, ToolCall.from_state, lambda c: c.call_id, lambda c: c.index,
                     lambda c: c.status != "running", hot=hot, batch=batch)


def new_call(d: SpillDict, cid: str, status: str = "success") -> ToolCall:
    call = ToolCall(len(d) + 1, cid)
    d.add(call)
    call.status = status
    call.summary = f"summary of {cid}"
    call.start_span = (call.index * 10, 5)
    return call


def test_spill_dict_reads_like_a_dict_and_keeps_running_calls_in_memory():
    d = calls_dict()
    ids = [f"call-{i}\nfc_{i}" for i in range(30)]  # call_ids with a newline (real 2026 captures)
    calls = [new_call(d, cid, "running" if i in (1, 7) else "success") for i, cid in enumerate(ids)]
    assert len(d) == 30 and list(d) == ids and list(d.keys()) == ids
    assert [c.state() for c in d.values()] == [c.state() for c in calls]
    assert [(k, v.state()) for k, v in d.items()] == [(c.call_id, c.state()) for c in calls]
    assert all(d.at(i + 1).state() == calls[i].state() for i in range(30))
    assert d.at(0) is None and d.at(31) is None
    assert d.get("nope") is None and "nope" not in d and ids[0] in d
    with pytest.raises(KeyError):
        d["nope"]
    hot = d.hot_values()
    assert calls[1] in hot and calls[7] in hot  # running: never written out, however old
    assert len(hot) <= 2 + 2 + 2
    assert d.peek(ids[0]) is None and d[ids[0]] is not calls[0]  # on disk: a copy
    assert d.peek(ids[-1]) is calls[-1]
    assert spill_tables(d) == 26


def spill_tables(d: SpillDict) -> int:
    return d._spill.query("SELECT count(*) FROM calls", ())[0][0]


def test_spill_dict_revive_changes_a_call_on_disk():
    d = calls_dict()
    calls = [new_call(d, f"c{i}") for i in range(20)]
    assert d.peek("c0") is None
    revived = d.revive("c0")
    revived.interaction = "approved"
    assert d["c0"] is revived and d.at(1) is revived
    for i in range(20, 40):  # the revived call goes back to disk, changed
        new_call(d, f"c{i}")
    assert d.peek("c0") is None
    assert d["c0"].interaction == "approved" and d.at(1).interaction == "approved"
    assert [c.call_id for c in d.values()] == [f"c{i}" for i in range(40)]
    assert calls[0].interaction == ""


def _has_key_index(d: SpillDict) -> bool:
    return bool(d._spill.query("SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'calls_by_key'", ()))


def test_lookups_by_key_on_disk_are_right_before_and_after_the_index_is_made():
    # spilled calls are written with no index on their keys; a few lookups scan the table, and
    # spill.KEY_SCANS of them make the index: the same answers either way
    d = calls_dict()
    n = 30
    for i in range(n):
        new_call(d, f"c{i}")
    on_disk = [f"c{i}" for i in range(n) if d.peek(f"c{i}") is None]
    assert len(on_disk) >= spill.KEY_SCANS + 2 and not _has_key_index(d)
    assert d.get("not a call") is None and "nope" not in d  # (the filter answers: no lookup)
    for k, key in enumerate(on_disk):
        assert d[key].call_id == key and d[key].summary == f"summary of {key}"
        assert _has_key_index(d) == (k + 1 >= spill.KEY_SCANS // 2)  # (two lookups each: d[key] twice)
    assert [c.call_id for c in d.values()] == [f"c{i}" for i in range(n)]


def test_a_stream_of_any_length_keeps_a_bounded_number_of_records_in_memory():
    # 3,000 tool calls, 3,000 segments and thinking blocks: in memory stay at most hot + batch of each
    lines = [orjson.dumps({"type": "system", "subtype": "init", "session_id": "s", "model": "m"})]
    for i in range(3000):
        lines.append(orjson.dumps({"type": "thinking", "subtype": "delta", "text": f"think {i}", "timestamp_ms": i}))
        lines.append(orjson.dumps({"type": "thinking", "subtype": "completed", "timestamp_ms": i}))
        lines.append(orjson.dumps({"type": "assistant", "message": {"content": [{"type": "text", "text": f"step {i}. "}]},
                                   "timestamp_ms": i}))
        tc = {"shellToolCall": {"args": {"command": f"echo {i}"}, "result": {"success": {"exitCode": 0}}}}
        lines.append(orjson.dumps({"type": "tool_call", "subtype": "started", "call_id": f"c{i}",
                                   "tool_call": {"shellToolCall": {"args": {"command": f"echo {i}"}}}, "timestamp_ms": i}))
        lines.append(orjson.dumps({"type": "tool_call", "subtype": "completed", "call_id": f"c{i}", "tool_call": tc,
                                   "timestamp_ms": i + 1}))
    lines.append(orjson.dumps({"type": "result", "subtype": "success", "result": "".join(f"step {i}. " for i in range(3000))}))
    mon = Monitor(CLOCK)
    mon.session = Session(CLOCK, hot=100, batch=50)
    mon.feed(b"\n".join(lines) + b"\n")
    mon.finish()
    s = mon.session
    assert s.status == "success" and s.assistant_text == s.result.text
    assert len(s.tool_calls) == 3000 and s.tool_counts["success"] == 3000
    assert len(s.tool_calls.hot_values()) <= 150
    for lst in (s.segments, s.thinking, s.timeline):
        assert len(lst._items) < 150, lst
    assert len(s.timeline) == 9000 and s.timeline[0] == ("thinking", 0) and s.timeline[-1] == ("tool", "c2999")
    assert s.tool_calls.at(1).summary == "echo 0" and s.thinking[5].text == "think 5"


def test_when_the_spill_file_cannot_be_made_records_stay_in_memory(monkeypatch):
    def refuse(*a, **kw):
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(spill.sqlite3, "connect", refuse)
    data = (SAMPLES / "parallel-failed-rejected.jsonl").read_bytes()
    whole = Monitor(CLOCK)
    whole.feed(data)
    whole.finish()
    mon = Monitor(CLOCK)
    mon.session = Session(CLOCK, hot=1, batch=1)
    mon.feed(data)
    mon.finish()
    s = mon.session
    assert not s.spill.open and "temporary file failed (unable to open database file)" in s.spill.error
    notes = [n for n in s.notes if n.subtype == "memory"]
    assert len(notes) == 1 and "keeping old records in memory" in notes[0].text
    without_note = summary_json(s)
    without_note["notes"] = [n for n in without_note["notes"] if n["subtype"] != "memory"]
    assert without_note == summary_json(whole.session)


def test_a_write_error_stops_spilling_and_keeps_every_record():
    sf = SpillFile()
    sl: SpillList = SpillList(sf, "x", lambda v: (v,), lambda st: st[0], hot=1, batch=1)
    for i in range(5):
        sl.append(i)
    sf.db().execute("DROP TABLE items")  # every later write fails
    for i in range(5, 12):
        sl.append(i)
    assert sf.error and "no such table" in sf.error
    assert len(sl) == 12 and sl[-1] == 11 and list(sl._items) == list(range(4, 12))


@pytest.mark.parametrize("path", real_params())
def test_real_captures_read_the_same_from_disk(path):
    data = path.read_bytes()
    outputs = []
    for hot in (None, 1):
        mon = Monitor(CLOCK)
        mon.session = Session(CLOCK, hot=hot, batch=1 if hot else None)
        out = io.StringIO()
        printer = PlainPrinter(mon.session, make_console(out), show_thinking=True)
        printer.handle(mon.feed(data))
        printer.handle(mon.finish())
        outputs.append((summary_json(mon.session), out.getvalue(), mon.session.spill.open))
    (memory, memory_out, opened_a), (disk, disk_out, opened_b) = outputs
    assert not opened_a and (opened_b or len(memory["tool_calls"]) + len(memory["segments"]) < 3)
    assert disk == memory and disk_out == memory_out


async def test_the_tui_reads_old_rows_and_details_from_disk(monkeypatch):
    monkeypatch.setattr(spill, "HOT_RECORDS", 1)
    monkeypatch.setattr(spill, "SPILL_BATCH", 1)
    app = make_app(FileSource(str(SAMPLES / "plain-tools.jsonl")))
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: app.ended)
        assert app.session.spill.open and app.session.tool_calls.peek(app.session.tool_calls.at(1).call_id) is None
        table = app.run_view().query_one(ToolTable)
        rows = [table.row_plain(i) for i in range(table.row_count)]
        assert [r[2] for r in rows] == ["read", "grep", "shell", "edit", "shell", "updateTodos"]
        assert rows[2][1] == "✖ failure" and "pytest -q" in rows[2][3]
        table.focus()
        table.move_cursor(row=0)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ToolDetailScreen))
        assert app.screen.call.tool == "read"


def test_at_range_reads_a_page_of_calls_from_memory_and_disk():
    from cursor_watch.core.model import ToolCall, _call_id_of, _done, _index_of, _state
    from cursor_watch.core.spill import SpillDict, SpillFile

    calls = SpillDict(SpillFile(), _state, ToolCall.from_state, _call_id_of, _index_of, _done, hot=3, batch=2)
    for i in range(1, 21):
        call = ToolCall(i, f"c{i}")
        call.status = "success"
        calls.add(call)
    assert calls._spilled  # most are on disk
    page = calls.at_range(2, 18)
    assert sorted(page) == list(range(2, 18))
    assert all(page[i].call_id == f"c{i}" == calls.at(i).call_id for i in page)
    assert sorted(calls.at_range(19, 30)) == [19, 20]  # past the end: what there is


def test_the_summary_reads_spilled_texts_where_their_states_hold_them():
    """summary.py reads spilled segments' and thinking blocks' texts from their state tuples
    (SpillList.project) at Segment.TEXT_STATE and ThinkingBlock.TEXT_STATE: those must stay
    where state() puts the text, or a long run's summary would quote another field."""
    from cursor_watch.core.model import Segment, ThinkingBlock

    seg = Segment(3, 7, 1_000)
    seg.append("the segment's text")
    assert seg.state()[Segment.TEXT_STATE] == "the segment's text"
    block = ThinkingBlock(2, 5, 1_000)
    block._parts = ["the thinking"]  # (text comes only from deltas the model applies)
    assert block.text == "the thinking"
    assert block.state()[ThinkingBlock.TEXT_STATE] == "the thinking"
