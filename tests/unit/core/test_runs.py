"""Several runs: a stream split at each system/init, several files, a directory; and how a run
ends: the end note that says why a run is empty or was cut short (its last event, the line that
ended it, a new run, a signal, a truncated file), and its elapsed time, never invented."""

from __future__ import annotations

import asyncio
import itertools
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apphelpers import ev
from captures import CAGASE, CLI_ERROR, CREW, SIMPLE, ended_on_an_error, need, real
from command import cw
from conftest import REAL_DIR, ROOT, SAMPLES, real_captures, run_bytes, wait_for_async
from cursor_watch.stream import watch as runner
from cursor_watch.core.decode import Event, decode_all
from cursor_watch.core.runs import RunActivity, run_elapsed_ms, strip_escapes
from cursor_watch.views.summary import summary_json
from cursor_watch.stream.watch import Monitor, Watch
from cursor_watch.stream.sources import FileSource, Notice, open_sources

CMD = [sys.executable, "-m", "cursor_watch"]
ENV = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")} | {"CURSOR_WATCH_NO_TUI": "1"}
KEYS = ("session", "status", "result", "assistant_text")


def run(args: list[str], stdin: bytes | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(CMD + args, input=stdin, capture_output=True, timeout=timeout, env=ENV, cwd=ROOT)


def comparable(obj: dict) -> dict:
    """What must be the same whether a run is read alone or among others."""
    out = {k: obj[k] for k in KEYS}
    out["tool_calls"] = [(c["call_id"], c["tool"], c["status"]) for c in obj["tool_calls"]]
    return out


def ndjson(out: bytes) -> list[dict]:
    return [orjson.loads(line) for line in out.splitlines()]


def starts_with_init(path: Path) -> bool:
    items = decode_all([path.read_bytes()])
    first = next((i for i in items if isinstance(i, Event)), None)
    return first is not None and first.type == "system" and first.subtype == "init"


def streams_with_init() -> list[Path]:
    """Real captures and samples that begin with system/init (the crew capture has none, so
    appended to another stream it is, by the definition of a run, that run's continuation)."""
    return [p for p in real_captures() + sorted(SAMPLES.glob("*.jsonl")) if starts_with_init(p)]


PAIRS_SKIP = pytest.mark.skipif(not real_captures(), reason=f"real captures not found at {REAL_DIR}")


@PAIRS_SKIP
def test_two_real_captures_concatenated_and_as_two_files_equal_each_alone(tmp_path):
    caps = [p for p in real_captures() if starts_with_init(p)]
    a = next(p for p in caps if "02_shell" in p.name)
    b = next(p for p in caps if "03_edit" in p.name)
    alone = [orjson.loads(run(["--summary", "--json", str(p)]).stdout) for p in (a, b)]
    piped = run(["--summary", "--json"], stdin=a.read_bytes() + b.read_bytes())
    files = run(["--summary", "--json", str(b), str(a)])  # any order given: ordered by path
    assert piped.returncode == files.returncode == 0
    for out in (piped.stdout, files.stdout):
        objects = ndjson(out)
        assert [comparable(o) for o in objects] == [comparable(o) for o in alone]
    assert [(o["source"], o["run"]) for o in ndjson(piped.stdout)] == [("-", 1), ("-", 2)]
    assert [(o["source"], o["run"]) for o in ndjson(files.stdout)] == [(str(a), 1), (str(b), 1)]
    # the first run no longer takes the second run's tool calls or id (the bug this fixes)
    first = ndjson(piped.stdout)[0]
    assert first["session"]["session_id"] == alone[0]["session"]["session_id"]
    assert len(first["tool_calls"]) == len(alone[0]["tool_calls"])


@PAIRS_SKIP
def test_every_pair_of_real_captures(tmp_path):
    caps = streams_with_init()
    alone = {p: comparable(summary_json(run_bytes(p.read_bytes()).session)) for p in caps}
    for a, b in itertools.permutations(caps[:8], 2):
        mon = run_bytes(a.read_bytes() + b.read_bytes())
        assert [comparable(summary_json(r.session)) for r in mon.runs] == [alone[a], alone[b]], (a.name, b.name)


def test_a_directory_gives_one_object_per_run_of_every_file(tmp_path):
    samples = sorted(SAMPLES.glob("*.jsonl"))
    (tmp_path / "loop.jsonl").write_bytes(samples[0].read_bytes() + samples[1].read_bytes())
    (tmp_path / "one.ndjson").write_bytes(samples[2].read_bytes())
    (tmp_path / "agent.log").write_bytes(samples[3].read_bytes())
    (tmp_path / "notes.txt").write_text("not a stream")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "deeper.jsonl").write_bytes(samples[4].read_bytes())  # not recursive
    p = run(["--summary", "--json", str(tmp_path)])
    objects = ndjson(p.stdout)
    assert [(Path(o["source"]).name, o["run"]) for o in objects] == [
        ("agent.log", 1), ("loop.jsonl", 1), ("loop.jsonl", 2), ("one.ndjson", 1)]
    expect = [samples[3], samples[0], samples[1], samples[2]]
    for o, sample in zip(objects, expect, strict=True):
        assert comparable(o) == comparable(summary_json(run_bytes(sample.read_bytes()).session))
    # several runs: 0 only when every run ended with a successful result
    statuses = [o["status"] for o in objects]
    assert p.returncode == (0 if all(s == "success" for s in statuses) else 1)
    assert "failed-no-result" in " ".join(str(s) for s in samples) and "incomplete" in statuses


def test_lines_before_the_first_init_belong_to_the_first_run():
    lines = (SAMPLES / "plain-tools.jsonl").read_bytes()
    data = b"Error: some banner\n\n" + lines + lines
    mon = run_bytes(data)
    assert [r.first_line for r in mon.runs] == [1, 3 + lines.count(b"\n")]
    first, second = (r.session for r in mon.runs)
    assert first.invalid_lines == 1 and first.diagnostics[0].line == 1
    assert first.lines + second.lines == data.count(b"\n")
    assert first.model == second.model == "Composer 2.5" and first.status == second.status == "success"


def test_a_run_cut_by_the_next_init_is_incomplete_and_its_calls_too():
    data = (SAMPLES / "parallel-failed-rejected.jsonl").read_bytes().splitlines(keepends=True)
    cut = b"".join(data[:12])  # three shell calls started, one done; no result
    mon = run_bytes(cut + (SAMPLES / "plain-tools.jsonl").read_bytes())
    first, second = (r.session for r in mon.runs)
    assert first.status == "incomplete" and first.tool_counts["incomplete"] == 2
    assert second.status == "success"


def test_a_stream_without_init_is_one_run():
    data = b"".join(line for line in (SAMPLES / "plain-tools.jsonl").read_bytes().splitlines(keepends=True)
                    if b'"subtype":"init"' not in line)
    assert len(run_bytes(data).runs) == 1


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_any_concatenation_split_into_runs_equals_each_alone(data):
    streams = streams_with_init()
    picked = data.draw(st.lists(st.sampled_from(streams), min_size=1, max_size=5), label="streams")
    chunk = data.draw(st.sampled_from([None, 1, 97, 4096]), label="chunk")
    blob = b"".join(p.read_bytes() for p in picked)
    mon = run_bytes(blob, chunk)
    assert len(mon.runs) == len(picked)
    for r, p in zip(mon.runs, picked, strict=True):
        alone = run_bytes(p.read_bytes()).session
        assert comparable(summary_json(r.session)) == comparable(summary_json(alone))
        assert r.session.counts() | {"lines": 0} == alone.counts() | {"lines": 0}
        assert r.session.lines == p.read_bytes().count(b"\n")  # no line lost or counted twice
    assert sum(r.session.lines for r in mon.runs) == blob.count(b"\n")


def test_plain_prints_a_separator_before_each_run(tmp_path):
    a, b = SAMPLES / "plain-tools.jsonl", SAMPLES / "partial-output.jsonl"
    single = run(["--plain", str(a)]).stdout
    piped = run(["--plain"], stdin=a.read_bytes() + b.read_bytes()).stdout.decode()
    assert piped.startswith(single.decode())  # the first run prints exactly as alone
    assert piped.count("==> stdin (run 2) <==") == 1 and "(run 1)" not in piped
    files = run(["--plain", str(b), str(a)])
    lines = files.stdout.decode().splitlines()
    seps = [ln for ln in lines if ln.startswith("==> ")]
    assert seps == [f"==> {b} (run 1) <==", f"==> {a} (run 1) <=="]  # by path
    assert lines[0] == seps[0]
    assert files.returncode == 0


def test_summary_text_names_each_run(tmp_path):
    a = SAMPLES / "plain-tools.jsonl"
    out = run(["--summary"], stdin=a.read_bytes() * 2).stdout.decode()
    assert out.count("==> stdin (run") == 2 and out.count("Final text:") == 2


def test_json_out_writes_ndjson_for_several_runs(tmp_path):
    a = SAMPLES / "plain-tools.jsonl"
    out = tmp_path / "s.json"
    p = run(["--plain", "--json-out", str(out)], stdin=a.read_bytes() * 3)
    assert p.returncode == 0
    assert [o["run"] for o in ndjson(out.read_bytes())] == [1, 2, 3]
    assert oct(out.stat().st_mode & 0o777) == "0o600"


def test_usage_errors_and_unreadable_sources(tmp_path):
    a = SAMPLES / "plain-tools.jsonl"
    p = run(["--summary", "--save", str(tmp_path / "x"), str(a), str(a)])
    assert p.returncode == 2 and p.stderr.decode().count("\n") == 1 and "--save takes one source" in p.stderr.decode()
    p = run(["--summary", "--save", str(tmp_path / "x"), str(SAMPLES)])
    assert p.returncode == 2 and "--save takes one source" in p.stderr.decode()
    # one unreadable file among several: a line on stderr, the others are watched, exit 1
    p = run(["--summary", "--json", str(a), str(tmp_path / "missing.jsonl")])
    assert p.returncode == 1
    assert p.stderr.decode() == f"cursor-watch: no such file: {tmp_path / 'missing.jsonl'} (skipped)\n"
    assert orjson.loads(p.stdout)["status"] == "success"  # one run read: today's object
    # none can be read: exit 2, one line
    p = run(["--summary", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")])
    assert p.returncode == 2 and p.stderr.decode().count("\n") == 1 and "no stream could be read" in p.stderr.decode()
    empty = tmp_path / "empty"
    empty.mkdir()
    p = run(["--summary", str(empty)])
    assert p.returncode == 2 and "no stream files" in p.stderr.decode()
    p = run(["--summary", "-", str(a)])
    assert p.returncode == 2 and "stdin" in p.stderr.decode()


def test_one_file_with_several_runs_exit_status():
    ok = (SAMPLES / "plain-tools.jsonl").read_bytes()
    bad = (SAMPLES / "failed-no-result.jsonl").read_bytes()
    assert run(["--summary", "--json"], stdin=ok + ok).returncode == 0
    assert run(["--summary", "--json"], stdin=bad + ok).returncode == 1


async def test_a_followed_directory_picks_up_new_files_and_growth(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "DIR_POLL_S", 0.1)
    sample = (SAMPLES / "plain-tools.jsonl").read_bytes().splitlines(keepends=True)
    (tmp_path / "a.jsonl").write_bytes(b"".join(sample))
    sources, dirs = open_sources([str(tmp_path)], None, follow=True)
    seen: list[tuple[str, int]] = []
    added = []
    watch = Watch(sources, directories=dirs, follow=True, install_signals=False, on_feed=added.append)

    def on_changes(run, changes):
        seen.extend((os.path.basename(run.source), run.index) for _ in changes[:1])

    task = asyncio.create_task(watch.run(on_changes))
    # a.jsonl read to its end: the directory was listed (b.jsonl, written next, is a new file)
    await wait_for_async(lambda: watch.feeds[0].monitor.session.status == "success", "a.jsonl read")
    b = tmp_path / "b.jsonl"
    b.write_bytes(b"".join(sample[:5]))
    await wait_for_async(lambda: len(watch.feeds) == 2 and watch.feeds[1].monitor.session.events == 5,
                         lambda: f"b.jsonl's 5 events (feeds: {[f.source.label for f in watch.feeds]})")
    assert [os.path.basename(f.source.label) for f in watch.feeds] == ["a.jsonl", "b.jsonl"]
    assert len(added) == 1 and watch.feeds[1].monitor.session.status == "running"
    with open(b, "ab") as f:  # it grows: its result arrives
        f.write(b"".join(sample[5:]))
    await wait_for_async(lambda: watch.feeds[1].monitor.session.status == "success", "b.jsonl's result")
    watch.request_stop()
    assert await task == 0
    assert ("b.jsonl", 1) in seen and ("a.jsonl", 1) in seen


async def test_many_files_are_read_a_few_at_a_time(tmp_path, monkeypatch):
    data = (SAMPLES / "plain-tools.jsonl").read_bytes()
    paths = []
    for i in range(12):
        p = tmp_path / f"{i:02d}.jsonl"
        p.write_bytes(data)
        paths.append(str(p))
    most = 0
    starts = FileSource.start

    async def counting_start(self):
        nonlocal most
        await starts(self)
        most = max(most, sum(1 for f in watch.feeds if f.state == "reading" and not f.caught_up))

    monkeypatch.setattr(FileSource, "start", counting_start)
    watch = Watch([FileSource(p) for p in paths], install_signals=False, reading_at_once=2)
    assert await watch.run(lambda run, changes: None) == 0
    assert 1 <= most <= 2
    assert [r.source for r in watch.runs()] == sorted(paths)
    assert all(f.state == "done" for f in watch.feeds)


def test_a_spawned_command_running_agents_in_a_row_is_not_stopped_between_runs(tmp_path):
    # after a run's result the command gets --result-grace seconds to exit; a new run cancels that
    sample = SAMPLES / "plain-tools.jsonl"
    lines = sample.read_bytes().splitlines(keepends=True)
    (tmp_path / "head").write_bytes(b"".join(lines[:10]))
    (tmp_path / "tail").write_bytes(b"".join(lines[10:]))
    script = tmp_path / "loop.sh"
    # run 1 ends with its result; run 2 starts 0.3 s later and is still running when run 1's
    # grace (1.5 s) would have run out
    script.write_text(f"cat '{sample}'; sleep 0.3; cat '{tmp_path}/head'; sleep 2; cat '{tmp_path}/tail'\n")
    p = run(["--summary", "--json", "--result-grace", "1.5", "--", "sh", str(script)], timeout=30)
    objects = ndjson(p.stdout)
    assert [(o["run"], o["status"]) for o in objects] == [(1, "success"), (2, "success")]
    assert p.returncode == 0


def test_monitor_split_tags_changes_with_their_run():
    data = (SAMPLES / "plain-tools.jsonl").read_bytes()
    mon = Monitor(lambda: 0.0)
    batches = mon.split(mon.feed(data + data[:200]))
    assert [r.index for r, _ in batches] == [1, 2]
    assert batches[0][1][-1] == ("end", None) and batches[1][1][0] == ("header", None)
    assert [r.index for r, _ in mon.split(mon.feed(data[200:]))] == [2]


def test_serve_usage_errors():
    for args, words in ((["--serve"], "--save LOG in another terminal, then --serve -f LOG"),
                        (["--serve", "--", "ls"], "can't read stdin or run a command"),
                        (["--serve", "--summary", str(SAMPLES)], "doesn't go with"),
                        (["--serve", "--port", "0", str(SAMPLES)], "--port")):
        p = run(args, stdin=b"")
        err = p.stderr.decode()
        assert p.returncode == 2 and err.count("\n") == 1 and words in err, (args, err)


def test_next_slice_grows_while_cheap_and_shrinks_when_slow() -> None:
    """The pump's slices: doubled while one takes under half SLICE_S (up to MAX_SLICE),
    halved when one takes more than SLICE_S (down to SLICE)."""
    size = runner.SLICE
    for _ in range(10):
        size = runner.next_slice(size, 0.0)
    assert size == runner.MAX_SLICE
    assert runner.next_slice(size, runner.SLICE_S * 0.75) == size
    for _ in range(10):
        size = runner.next_slice(size, runner.SLICE_S * 2)
    assert size == runner.SLICE


def test_pump_gives_the_loop_turns_when_chunks_are_always_queued() -> None:
    """A source whose next chunk is always there (get() never waits) still lets the event loop
    run between slices, whatever their size; and the model is the one a single feed gives."""
    data = (SAMPLES / "partial-output.jsonl").read_bytes()
    data = data * ((3 << 20) // len(data) + 1)  # a run after another, 3 MB or more

    class Eager:
        size_at_start = None

        def __init__(self) -> None:
            self.chunks = [data[i:i + (1 << 20)] for i in range(0, len(data), 1 << 20)]

        async def get(self, timeout: float | None = None) -> bytes | None:
            return self.chunks.pop(0) if self.chunks else None

    turns = 0

    async def other() -> None:
        nonlocal turns
        while True:
            turns += 1
            await asyncio.sleep(0)

    async def main() -> Monitor:
        mon = Monitor()
        task = asyncio.create_task(other())
        await asyncio.sleep(0)
        old = runner.YIELD_S
        runner.YIELD_S = 0.0  # a turn after every slice
        try:
            await runner.pump(Eager(), mon, lambda changes: None)
        finally:
            runner.YIELD_S = old
        task.cancel()
        return mon

    mon = asyncio.run(main())
    assert turns > 3
    whole = Monitor()
    whole.feed(data)
    assert len(mon.runs) == len(whole.runs) > 1
    assert [summary_json(r.session) for r in mon.runs] == [summary_json(r.session) for r in whole.runs]


# -- Watch.replay: files read to their end without an event loop (--summary of files) ---------

def _summary_bytes(watch: Watch) -> bytes:
    from cursor_watch.views.summary import write_summaries

    out = bytearray()
    write_summaries(watch.runs(), out.extend)
    return bytes(out)


def _both(paths: list[str], on_changes=None) -> tuple[tuple, tuple]:
    """(exit status, summary, each run's end) of the same files by Watch.run and by Watch.replay."""
    results = []
    for replay in (False, True):
        sources, dirs = open_sources(paths, None)
        watch = Watch(sources, directories=dirs, clock=lambda: 1_790_000_000_000.0)
        assert watch.replayable()
        calls = (lambda run, changes: on_changes(watch)) if on_changes else (lambda run, changes: None)
        code = watch.replay(calls) if replay else asyncio.run(watch.run(calls))
        ends = [(r.source, r.index, r.first_line, r.last_line, r.last_event, r.observed_until_stop)
                for r in watch.runs()]
        results.append((code, _summary_bytes(watch), ends, [f.state for f in watch.feeds]))
    return results[0], results[1]


def test_replay_gives_what_the_event_loop_gives(tmp_path, monkeypatch):
    """Watch.replay leaves the runs, their notes and the exit status Watch.run leaves: sample
    streams (several runs in one file, one cut without a result), every agent's captures, a
    directory, an empty file; and with small chunks (a stream read in many pieces)."""
    from replays import capture_params

    samples = sorted(str(p) for p in SAMPLES.glob("*.jsonl"))
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes((SAMPLES / "plain-tools.jsonl").read_bytes()[:-200])
    twice = tmp_path / "twice.jsonl"
    twice.write_bytes((SAMPLES / "plain-tools.jsonl").read_bytes() * 2 + (SAMPLES / "failed-no-result.jsonl").read_bytes())
    (tmp_path / "empty.jsonl").write_bytes(b"")
    captures = [str(p.values[0]) for p in capture_params() if p.values[0] is not None]
    cases = [samples, [str(cut)], [str(twice)], [str(tmp_path)], captures[:12], [str(SAMPLES)]]
    for paths in cases:
        a, b = _both(paths)
        assert a == b, paths
    from cursor_watch.stream import sources

    monkeypatch.setattr(sources, "CHUNK", 1000)
    a, b = _both([str(twice)] + captures[:3])
    assert a == b


def test_replay_stops_on_a_signal_as_run_does(tmp_path, monkeypatch):
    """SIGTERM during a replay: the run being read is observed until the stop, its end note
    says so, the exit status is 128+15 (as Watch.run), and the previous handler is back."""
    import signal

    from cursor_watch.stream import sources

    monkeypatch.setattr(sources, "CHUNK", 4096)
    big = tmp_path / "big.jsonl"
    big.write_bytes((SAMPLES / "partial-output.jsonl").read_bytes())  # ~10 chunks, a result at its end
    lines = big.read_bytes().count(b"\n")
    sent = []

    def kill(watch):
        if not sent:
            sent.append(True)
            os.kill(os.getpid(), signal.SIGTERM)

    before = signal.getsignal(signal.SIGTERM)
    for replay in (False, True):
        sent.clear()
        sources_, dirs = open_sources([str(big)], None)
        watch = Watch(sources_, directories=dirs)
        calls = lambda run, changes: kill(watch)  # noqa: E731
        code = watch.replay(calls) if replay else asyncio.run(watch.run(calls))
        assert code == 128 + signal.SIGTERM
        (run,) = watch.runs()
        assert run.observed_until_stop and run.session.result is None and run.last_line < lines
        assert any("stopped by signal 15 (SIGTERM)" in n.text for n in run.session.notes)
        assert signal.getsignal(signal.SIGTERM) == before


def test_replay_read_error_as_run(tmp_path, monkeypatch):
    """A read error after the first chunk: the same note, end and exit status on both paths."""
    import errno

    from cursor_watch.stream import sources

    monkeypatch.setattr(sources, "CHUNK", 2048)
    path = tmp_path / "a.jsonl"
    path.write_bytes((SAMPLES / "plain-tools.jsonl").read_bytes())
    real_read = os.read
    reads = {}

    def failing_read(fd, n):
        if n == 2048:
            reads[fd] = reads.get(fd, 0) + 1
            if reads[fd] > 1:
                raise OSError(errno.EIO, "Input/output error")
        return real_read(fd, n)

    monkeypatch.setattr(os, "read", failing_read)
    a, b = _both([str(path)])
    monkeypatch.setattr(os, "read", real_read)
    assert a == b
    assert b"the source failed: read error on" in b[1] and a[0] == 1


def test_a_summary_of_files_runs_no_event_loop(tmp_path):
    """--summary of regular files never imports asyncio's machinery (Watch.replay); a pipe does."""
    code = ("import sys, runpy; sys.argv = ['cursor-watch'] + sys.argv[1:]\n"
            "try:\n    runpy.run_module('cursor_watch', run_name='__main__')\n"
            "except SystemExit as e:\n    sys.stderr.write(f'exit {e.code} loop {\"asyncio.base_events\" in sys.modules}')\n")
    sample = str(SAMPLES / "plain-tools.jsonl")
    p = subprocess.run([sys.executable, "-c", code, "--summary", "--json", sample, sample], capture_output=True,
                       env=ENV, cwd=ROOT, timeout=60)
    assert p.stderr.decode().endswith("exit 0 loop False"), p.stderr
    p = subprocess.run([sys.executable, "-c", code, "--summary", "--json"], capture_output=True, env=ENV, cwd=ROOT,
                       input=(SAMPLES / "plain-tools.jsonl").read_bytes(), timeout=60)
    assert p.stderr.decode().endswith("exit 0 loop True"), p.stderr


# -- why a run is empty or cut short: its end note says --------------------------------------------


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


# a run that ended on a line that is not stream-json names that line in its end note

def test_end_note_names_the_line_that_ended_the_run(tmp_path):
    out = cw("--plain", str(ended_on_an_error(tmp_path))).stdout.decode()
    end = next(line for line in out.splitlines() if line.startswith("· stream ended without a result"))
    assert f'then line 3 is not stream-json: "{CLI_ERROR}"' in end


def test_end_note_leaves_out_an_invalid_line_that_came_before_the_last_event(tmp_path):
    need(SIMPLE)
    lines = SIMPLE.read_bytes().splitlines()
    path = tmp_path / "early-error.jsonl"
    path.write_bytes(b"\n".join([lines[0], CLI_ERROR.encode(), *lines[1:3]]) + b"\n")
    out = cw("--plain", str(path)).stdout.decode()
    end = next(line for line in out.splitlines() if line.startswith("· stream ended without a result"))
    assert "not stream-json" not in end  # the stream went on after it: it is a diagnostic, not the end


# -- times: none invented, none ticking after a replay ends ----------------------------------------


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


# -- a followed file truncated and rewritten -------------------------------------------------------


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
