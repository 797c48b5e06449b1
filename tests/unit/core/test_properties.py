"""Property-based tests: nothing lost, nothing crashes, nothing injected.

Streams are drawn from real-looking material, not only random bytes: lines of the
real captures (``../shared/streams/real/``, when present) and of ``sample_streams/``,
those lines damaged (cut, split by a raw newline, invalid UTF-8 inside, fields
replaced by values of the wrong type), garbage and text lines, blank lines, CRLF,
a BOM, NUL bytes and escape sequences.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conftest import ROOT, expected_exit, run_bytes
from cursor_watch.formats.cursor import KNOWN_TYPES
from cursor_watch.core.decode import Event, Invalid, decode_all
from cursor_watch.views.plain import RunsPrinter, make_console, print_summaries
from cursor_watch.views.summary import dumps_json, summary_json, write_summaries, write_summary_json
from cursor_watch.stream.watch import Monitor
from cursor_watch.safe import visible, visible_line
from streamgen import (ALL_STREAMS, CLOCK_MS, EVIL_STREAM, chunked, hostile_stream, physical_lines, run_spilling,
                       snapshot, stream)

CMD = [sys.executable, "-m", "cursor_watch"]
# FORCE_COLOR & co. would make Rich colour a pipe; the tests want the default behaviour.
ENV = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")}
ENV.update({"NO_COLOR": "1", "PYTHONPATH": str(ROOT)})

FINAL_STATUSES = {"success", "failure", "rejected", "incomplete"}

# What must never reach a terminal raw: C0 controls but TAB/LF, DEL, C1 controls (U+0080-U+009F,
# e.g. the 8-bit CSI U+009B), bidi overrides.
def assert_inert(out: bytes, where: str = "") -> None:
    for bad in (b"\x1b", b"\x07", b"\x00", b"\r", b"\x08", b"\x7f"):
        assert bad not in out, f"raw {bad!r} in {where}: {out[max(0, out.find(bad) - 40):out.find(bad) + 40]!r}"
    text = out.decode("utf-8")  # valid UTF-8: a lone 0x9b byte (8-bit CSI) can't hide in it
    for ch in text:
        code = ord(ch)
        assert not (code < 0x20 and ch not in "\t\n"), f"raw {ch!r} in {where}"
        assert not (0x7F <= code <= 0x9F), f"raw C1 {ch!r} in {where}"
        assert not (0x202A <= code <= 0x202E or 0x2066 <= code <= 0x2069), f"raw bidi {ch!r} in {where}"


def check_consistent(data: bytes, mon: Monitor) -> None:
    sessions = [run.session for run in mon.runs]
    items = decode_all([data])
    events = [i for i in items if isinstance(i, Event)]
    invalid = [i for i in items if isinstance(i, Invalid)]
    # one run per init (the first run also takes what comes before its init)
    inits = [e for e in events if e.type == "system" and e.subtype == "init"]
    assert len(mon.runs) == max(1, len(inits))
    assert [r.first_line for r in mon.runs] == [1] + [e.line for e in inits[1:]]
    # every item is counted once, in one run: an event, or an invalid line, never both
    assert sum(s.events for s in sessions) == len(events)
    assert sum(s.invalid_lines for s in sessions) == len(invalid), [d.message for s in sessions for d in s.diagnostics]
    assert sum(s.unknown_events for s in sessions) == sum(1 for e in events if e.type not in KNOWN_TYPES)
    for run, s in zip(mon.runs, sessions, strict=True):  # each item in the run whose lines hold it
        last = run.first_line + s.lines - 1
        assert all(run.first_line <= d.line <= last for d in s.diagnostics)
    # the runs cover every physical line exactly once, in order
    lines = physical_lines(data)
    assert sum(s.lines for s in sessions) == len(lines)
    for s in sessions:
        for call in s.tool_calls.values():
            assert call.status in FINAL_STATUSES, call.status
            assert s.tool_counts[call.status] == sum(1 for c in s.tool_calls.values() if c.status == call.status)
            assert call.duration_ms is None or call.duration_ms >= 0
        assert [c.index for c in s.tool_calls.values()] == list(range(1, len(s.tool_calls) + 1))
        assert s.assistant_text == "".join(g.text for g in s.segments)
        assert s.status in ("success", "error", "incomplete")
        assert s.ended


def render_all(data: bytes) -> tuple[bytes, bytes, bytes]:
    """The plain transcript (fed chunk by chunk), the summary and the JSON summary."""
    mon = Monitor(clock=lambda: CLOCK_MS)
    plain = io.StringIO()
    printer = RunsPrinter(make_console(plain), show_thinking=True)
    half = len(data) // 2
    for part in (data[:half], data[half:]):
        for run, batch in mon.split(mon.feed(part)):
            printer.handle(run, batch)
    printer.stderr("\x1b]0;stderr title\x07 \x9b and \x00")
    for run, batch in mon.split(mon.finish(3)):
        printer.handle(run, batch)
    text = io.StringIO()
    for run in mon.runs:
        run.stderr.append("\x1b[2Jstderr\x9b")
    print_summaries(mon.runs, make_console(text))
    out = io.BytesIO()
    write_summaries(mon.runs, out.write)
    js = out.getvalue()
    for line in js.splitlines() if len(mon.runs) > 1 else [js]:
        orjson.loads(line)  # valid JSON
    return plain.getvalue().encode(), text.getvalue().encode(), js


# -- in-process properties ----------------------------------------------------------


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(stream())
@example(b"\xef\xbb\xbf" + ALL_STREAMS)
@example(b'{"type":"assistant","timestamp_ms":"\xc2\xb2","message":{"content":[]}}\n')
@example(b'{"type":"tool_call","subtype":"completed","call_id":"c","tool_call":{"shellToolCall":'
         b'{"result":{"success":{"exitCode":"1"}}},"startedAtMs":"' + b"9" * 5000 + b'"}}\n')
def test_any_stream_never_raises_and_the_model_is_consistent(data):
    mon = run_bytes(data)
    check_consistent(data, mon)


def test_a_join_across_a_blank_line_keeps_the_newlines_and_the_span():
    # a string split by two raw newlines: the framer drops the empty line between the pieces
    data = b'{"type":"user","message":{"content":"para one\n\npara two"}}\n{"type":"result","result":"ok"}\n'
    mon = run_bytes(data)
    assert mon.session.prompt == "para one\n\npara two"
    assert mon.session.diagnostics == [] and mon.session.events == 2
    first = decode_all([data])[0]
    assert (first.line, first.offset, first.size) == (1, 0, data.index(b"}\n") + 2)
    check_consistent(data, mon)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.binary(max_size=400))
def test_random_bytes_never_raise(data):
    check_consistent(data, run_bytes(data))


def test_a_folded_event_ending_the_stream_has_no_time_of_its_own_however_it_is_read():
    """Found by the property below: an assistant event without a time (it shows nothing) after a
    timed thinking delta. Read whole, it was folded into the thinking event and the end note lent
    it the thinking's time as its own; read in two reads, it was its own event and the note said
    "the last time recorded". Now both say that (the event has no time)."""
    whole = (b'{"type":"thinking","subtype":"delta","text":"Running","session_id":"a","timestamp_ms":1790994290493}\n'
             b'{"type":"assistant","message":{"role":"assistant"},"session_id":"b","timestamp_ms":null}\n')
    one = run_bytes(whole)
    mon = Monitor(clock=lambda: CLOCK_MS)
    cut = whole.index(b"\n") + 1
    mon.feed(whole[:cut])
    mon.feed(whole[cut:])
    mon.finish()
    assert snapshot(mon) == snapshot(one)
    [end] = [n for n in one.session.notes if n.kind == "end"]
    assert "last event assistant on line 2 at" in end.text and end.text.endswith("(the last time recorded)")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_any_chunking_gives_the_same_model(data):
    whole = data.draw(stream(), label="stream")
    chunks = data.draw(chunked(whole), label="chunks")
    assert b"".join(chunks) == whole
    one = run_bytes(whole)
    mon = Monitor(clock=lambda: CLOCK_MS)
    for chunk in chunks:
        mon.feed(chunk)
    mon.finish()
    assert snapshot(mon) == snapshot(one)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_spilling_old_records_to_disk_changes_nothing(data):
    # the same stream, with every record kept in memory and with almost all of them on disk
    whole = data.draw(stream(), label="stream")
    hot = data.draw(st.integers(0, 3), label="hot")
    batch = data.draw(st.integers(1, 3), label="batch")
    chunk = data.draw(st.sampled_from([None, 1, 13, 512]), label="chunk")
    one = run_bytes(whole)
    mon = run_spilling(whole, hot, batch, chunk)
    assert not one.session.spill.open  # the default keeps a short stream in memory
    if len(one.session.timeline) >= max(1, hot) + batch:
        assert mon.session.spill.open  # ... and this one really went to disk
    assert snapshot(mon) == snapshot(one)
    s = mon.session
    assert [c.state() for c in s.tool_calls.values()] == [c.state() for c in one.session.tool_calls.values()]
    assert summary_json(s) == summary_json(one.session)
    for i, call in enumerate(one.session.tool_calls.values(), 1):
        assert s.tool_calls.at(i).state() == call.state() == s.tool_calls[call.call_id].state()
    assert s.timeline[-3:] == one.session.timeline[-3:]
    assert [g.text for g in s.segments[1:4]] == [g.text for g in one.session.segments[1:4]]
    if len(s.notes):
        assert s.notes[-1].state() == one.session.notes[-1].state() and s.notes[0].state() == one.session.notes[0].state()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.one_of(stream(), hostile_stream()), st.integers(1, 4))
@example(EVIL_STREAM, 1)
def test_the_summary_json_written_in_pieces_is_the_same_bytes(data, hot):
    for mon in (run_bytes(data), run_spilling(data, hot, 1)):
        pieces: list[bytes] = []
        write_summary_json(mon.session, pieces.append, ["err \x1b[2J", "x"])
        whole = dumps_json(summary_json(mon.session, ["err \x1b[2J", "x"]))
        assert b"".join(pieces) == whole
        assert orjson.loads(whole)["counts"] == mon.session.counts()


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(stream() | hostile_stream())
@example(EVIL_STREAM)
def test_views_never_raise_and_never_emit_control_characters(data):
    plain, text, js = render_all(data)
    assert_inert(plain, "--plain")
    assert_inert(text, "--summary")
    assert_inert(js, "--summary --json")


@settings(max_examples=500, deadline=None)
@given(st.text())
def test_visible_escapes_every_control_character(text):
    out = visible(text)
    assert_inert(out.replace("\n", "").replace("\t", "").encode(), "visible()")
    line = visible_line(text)
    assert "\n" not in line and "\t" not in line
    assert_inert(line.encode(), "visible_line()")
    if text.isprintable():
        assert out == text and line == text


# -- through the command ------------------------------------------------------------


def _cw(args: list[str], stdin: bytes | None = None, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(CMD + args, input=stdin, capture_output=True, timeout=60, env=ENV, cwd=cwd)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.one_of(stream(), st.binary(max_size=2000)))
@example(os.urandom(3 << 20) + ALL_STREAMS)  # several read chunks, random bytes then real lines
@example(b"")
def test_save_keeps_exactly_the_bytes_received(data):
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "saved.jsonl"
        p = _cw(["--plain", "--save", str(out)], stdin=data)
        assert "Traceback" not in p.stderr.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")[-2000:]
        assert p.returncode == expected_exit(data)
        assert out.read_bytes() == data
        assert_inert(p.stdout, "--plain")


def _summary_without_run_details(stdout: bytes, t0_ms: float, t1_ms: float) -> list[dict]:
    objects = [orjson.loads(line) for line in stdout.splitlines()] if stdout.startswith(b'{"') else [orjson.loads(stdout)]
    for j in objects:
        j.pop("exit_status")
        j.pop("stderr")
        j.pop("source", None)  # a path, or "-" for a pipe or a command
        # a tool call with no time in the stream: read live (pipe, command) it is stamped with its
        # arrival time, replayed from a file it has none: the same "no recorded time"
        for call in j["tool_calls"]:
            for key in ("started_ms", "completed_ms"):
                if call[key] is None or (isinstance(call[key], int) and t0_ms - 1000 <= call[key] <= t1_ms + 1000):
                    call[key] = "not recorded"
            call["duration_ms"] = ("-" if "not recorded" in (call["started_ms"], call["completed_ms"])
                                   else call["duration_ms"])
    return objects


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(stream())
@example(ALL_STREAMS)
def test_file_pipe_and_spawned_process_give_the_same_summary(data):
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "stream.jsonl"
        f.write_bytes(data)
        t0 = time.time() * 1000
        runs = {
            "file": subprocess.Popen(CMD + ["--summary", "--json", str(f)], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=ENV, cwd=ROOT),
            "pipe": subprocess.Popen(CMD + ["--summary", "--json"], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, stdin=subprocess.PIPE, env=ENV, cwd=ROOT),
            "spawn": subprocess.Popen(CMD + ["--summary", "--json", "--", "cat", str(f)], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=ENV, cwd=ROOT),
        }
        outs = {}
        for name, proc in runs.items():
            out, err = proc.communicate(data if name == "pipe" else None, timeout=60)
            assert b"Traceback" not in err, err.decode("utf-8", "replace")
            outs[name] = (proc.returncode, out)
        t1 = time.time() * 1000
        codes = {name: code for name, (code, _) in outs.items()}
        assert len(set(codes.values())) == 1, codes
        summaries = {name: _summary_without_run_details(out, t0, t1) for name, (_, out) in outs.items()}
        assert summaries["pipe"] == summaries["file"]
        assert summaries["spawn"] == summaries["file"]


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from("a\x7f\x80\x9b\x9f\xa0\u202a\u202e\u202f\u2066\u2069\u206a\u2014\u2713é\"\\")))
def test_the_summary_escape_is_the_patterns_substitution(text):
    # summary._escape_raw finds the pattern's lead bytes with bytes.find: the same bytes as
    # the pattern's own substitution, and nothing unsafe left raw
    from cursor_watch.views import summary

    data = orjson.dumps(text)
    expected = summary._RAW_UNSAFE_UTF8.sub(lambda mt: f"\\u{ord(mt.group().decode()):04x}".encode(), data)
    assert summary._escape_raw(data) == expected
    assert_inert(summary._escape_raw(data), "summary._escape_raw")
    assert orjson.loads(summary._escape_raw(data)) == text


@pytest.mark.parametrize("feed_slice", [None, 1000, 4096])
def test_a_big_chunk_is_fed_in_slices_with_the_same_model(tmp_path, monkeypatch, feed_slice):
    # Monitor.feed cuts a chunk bigger than runner.FEED_SLICE at line ends (the CPU's caches):
    # the same model, summary and changes as the stream fed line by line
    from cursor_watch.stream import watch as runner

    if feed_slice is not None:
        monkeypatch.setattr(runner, "FEED_SLICE", feed_slice)
    f = tmp_path / "dense.jsonl"
    subprocess.run([sys.executable, str(ROOT / "bench" / "gen_stream.py"), str(f), "90", "--content-kb", "4",
                    "--seed", "4"], check=True, capture_output=True, timeout=60)
    data = f.read_bytes()
    assert len(data) > 2 * runner.FEED_SLICE
    whole = Monitor()
    changes = whole.feed(data) + whole.finish()
    lines = Monitor()
    changes_by_line = []
    for line in data.splitlines(keepends=True):
        changes_by_line += lines.feed(line)
    changes_by_line += lines.finish()
    assert snapshot(whole) == snapshot(lines)
    assert summary_json(whole.session) == summary_json(lines.session)
    # the same calls, notes and ends in the same order (text and thinking changes come per batch)
    kinds = {"tool_started", "tool_done", "note", "diagnostic", "unknown", "result", "end"}
    assert [c for c in changes if c[0] in kinds] == [c for c in changes_by_line if c[0] in kinds]
