"""The search: its matching rule, the raw-bytes prefilter, and counts against brute force; an
occurrence is counted once, where the screen shows it (not in every field that repeats it)."""

from __future__ import annotations

import json
import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from captures import REJECTED, need
from conftest import REAL_DIR, SAMPLES, real_captures, run_bytes
from cursor_watch.query import scan as scan_mod
from cursor_watch.query import search as search_mod
from cursor_watch.query.match import Query, QueryError, RawFilter, payload_strings
from cursor_watch.query.search import Search, timeline_position
from replays import replayed


# -- the matching rule ------------------------------------------------------------------------


def test_smart_case():
    assert Query("error").count("Error ERROR error") == 3
    assert Query("Error").count("Error ERROR error") == 1
    assert Query("ERROR").ignore_case is False


def test_regex_and_its_capitals():
    q = Query(r"\d+ passed", regex=True)
    assert q.spans("12 passed, 3 Passed") == [(0, 9), (11, 19)]  # \d is not a capital: case-insensitive
    assert Query(r"\S+Error", regex=True).count("ValueError TypeError") == 2
    assert Query(r"Type\w+", regex=True).count("typeerror TypeError") == 1  # a real capital: case-sensitive


def test_invalid_regex_says_why_and_empty_matches_are_skipped():
    with pytest.raises(QueryError, match="invalid regular expression"):
        Query("foo(", regex=True)
    with pytest.raises(QueryError):
        Query("")
    assert Query("x*", regex=True).count("axxb") == 1  # the empty matches around it don't count
    assert Query("foo(").count("call foo(1)") == 1  # literal: no regex meaning


def test_payload_strings_walks_values_not_keys():
    assert list(payload_strings({"command": "ls", "n": 3, "xs": ["a", {"k": "b"}], "none": None})) == ["ls", "a", "b"]


# -- the prefilter is sound -------------------------------------------------------------------


def _encodings(value: str) -> list[bytes]:
    """The same JSON string written the ways real encoders write it (and a hostile one)."""
    out = [json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass"),
           json.dumps(value, ensure_ascii=True).encode(),
           json.dumps(value).replace("/", "\\/").encode()]
    out.append(("\"" + "".join(f"\\u{ord(c):04x}" if ord(c) < 0x10000 else c for c in value) + "\"")
               .encode("utf-8", "surrogatepass"))
    return out


TEXT = st.text(alphabet=st.sampled_from(list("abkisKIS/\"\\\n\t é€😀ıİſK\x1b")), min_size=0, max_size=30)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(TEXT, st.data())
def test_the_raw_prefilter_never_misses_a_decoded_match(value, data):
    if not value:
        return
    start = data.draw(st.integers(0, len(value) - 1))
    stop = data.draw(st.integers(start + 1, len(value)))
    needle = value[start:stop]
    if data.draw(st.booleans()):
        needle = needle.swapcase()
    try:
        q = Query(needle)
    except QueryError:
        return
    if not q.count(value):
        return
    filt = q.prefilter()
    if filt is None:
        return  # decoded everywhere: nothing to prove
    for raw in _encodings(value):
        line = b'{"type":"tool_call","x":' + raw + b"}"
        assert filt.positions(line), (needle, raw)


# -- counts against brute force ---------------------------------------------------------------


def brute_force(mon, data: bytes, q: Query) -> int:
    """Every searched piece counted directly: model texts, and payloads decoded with the stdlib."""
    s = mon.session
    n = q.count(s.prompt) if s.prompt is not None else 0
    n += sum(q.count(seg.text) for seg in s.segments)
    n += sum(q.count(b.text) for b in s.thinking)
    n += sum(q.count(note.text) for note in s.notes)
    for call in s.tool_calls.values():
        # the reason as the call's transcript line shows it: whitespace folded, its first 80
        # characters, none when the call's note gives it (the rest is in the result)
        reason = " ".join(call.detail.split())
        if not reason or (call.interaction and reason[:100] in " ".join(call.interaction.split())):
            reason = ""
        n += q.count(call.summary + ("\n" + reason[:80] if reason else ""))
        args = result = None
        for span, which in ((call.start_span, "started"), (call.end_span, "completed")):
            if span is None:
                continue
            ev = json.loads(data[span[0]: span[0] + span[1]])
            body = next((v for k, v in ev["tool_call"].items() if k.endswith("ToolCall")), {})
            if args is None and isinstance(body.get("args"), dict):
                args = body["args"]
            if which == "completed":
                result = body.get("result")
        # fields that only repeat another are not counted (the CLI's parse of a
        # command, the call's id, an outcome's copy of the command and its directory)
        if isinstance(args, dict):
            args = {k: v for k, v in args.items() if k not in ("parsingResult", "simpleCommands", "toolCallId")}
        if isinstance(result, dict):
            result = {k: ({f: x for f, x in v.items() if f not in ("command", "workingDirectory")}
                          if isinstance(v, dict) else v) for k, v in result.items()}
        for part in (args, result):
            if part is not None:
                n += sum(q.count(x) for x in payload_strings(part))
    return n


def run_search(mon, data: bytes, q: Query) -> Search:
    search = Search(mon.session, lambda off, size: data[off: off + size], q)
    while not search.step(0.5):
        pass
    return search


def pieces(mon, data: bytes) -> list[str]:
    """Texts and payload strings of a run, to draw queries from."""
    s = mon.session
    out = [seg.text for seg in s.segments] + [b.text for b in s.thinking] + [n.text for n in s.notes]
    out += [c.summary for c in s.tool_calls.values()]
    for line in data.splitlines():
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if isinstance(ev, dict) and ev.get("type") == "tool_call":
            out += [x for x in payload_strings(ev.get("tool_call")) if x]
    return [p for p in out if p]


def draw_query(data, texts: list[str], longest: int) -> Query:
    """A query cut from one of ``texts`` (maybe lower-cased, maybe as an escaped regex)."""
    text = data.draw(st.sampled_from(texts))
    start = data.draw(st.integers(0, max(0, len(text) - 1)))
    needle = text[start: start + data.draw(st.integers(1, longest))]
    if data.draw(st.booleans()):
        needle = needle.lower()
    regex = data.draw(st.booleans())
    return Query(re.escape(needle) if regex else needle, regex=regex)


def streams() -> list:
    out = [pytest.param(p, id=p.name[:40]) for p in sorted(SAMPLES.glob("*.jsonl"))]
    out += [pytest.param(p, id=p.name[:40]) for p in real_captures()
            if "crew" not in p.name]  # crew's capture has calls without started events and no init: kept below
    out += [pytest.param(p, id="crew") for p in real_captures() if "crew" in p.name]
    if not real_captures():
        out.append(pytest.param(None, marks=pytest.mark.skip(reason=f"real captures not found at {REAL_DIR}")))
    return out


@pytest.mark.parametrize("path", streams())
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(data=st.data())
def test_match_count_equals_brute_force_on_real_and_sample_streams(path, data, monkeypatch):
    raw = path.read_bytes()
    mon = run_bytes(raw)
    q = draw_query(data, pieces(mon, raw), 12)
    monkeypatch.setattr(scan_mod, "CHUNK", data.draw(st.sampled_from([64, 4096, 1 << 20])))
    assert run_search(mon, raw, q).total == brute_force(mon, raw, q)


def test_generated_stream_with_hostile_encodings():
    """Payloads written with \\u and \\/ escapes, and characters that case-fold to ASCII."""
    rng = random.Random(5)
    words = ["pricing.py", "AssertionError", "KELVIN", "straße", "/usr/bin", "say \"hi\"", "tab\there", "ıi", "ſs"]
    lines = [json.dumps({"type": "system", "subtype": "init", "session_id": "s", "model": "m"}),
             json.dumps({"type": "user", "message": {"content": [{"type": "text", "text": "find pricing.py"}]}})]
    for i in range(60):
        out = " ".join(rng.choice(words) for _ in range(8))
        ev = {"type": "tool_call", "subtype": "completed", "call_id": f"c{i}", "timestamp_ms": i,
              "tool_call": {"shellToolCall": {"args": {"command": f"grep {rng.choice(words)}"},
                                              "result": {"success": {"stdout": out, "exitCode": 0}}}}}
        enc = i % 3
        if enc == 0:
            lines.append(json.dumps(ev, ensure_ascii=True))
        elif enc == 1:
            lines.append(json.dumps(ev, ensure_ascii=False).replace("/", "\\/"))
        else:  # every character of the payload escaped
            line = json.dumps(ev, ensure_ascii=False)
            line = line.replace(json.dumps(out, ensure_ascii=False)[1:-1],
                                "".join(f"\\u{ord(c):04x}" for c in out))
            lines.append(line)
    raw = ("\n".join(lines) + "\n").encode()
    mon = run_bytes(raw)
    for needle in ["pricing", "Pricing", "assertionerror", "k", "KELVIN", "kelvin", "straße", "/usr", "\"hi\"",
                   "\t", "i", "s", "ſ", "ı", "ß"]:
        for regex in (False, True):
            q = Query(re.escape(needle) if regex else needle, regex=regex)
            assert run_search(mon, raw, q).total == brute_force(mon, raw, q), (needle, regex)


def test_hits_are_in_stream_order_and_locate_each_match():
    raw = (SAMPLES / "plain-tools.jsonl").read_bytes()
    mon = run_bytes(raw)
    search = run_search(mon, raw, Query("pricing"))
    assert search.total > 3
    lines = [h.line for h in search.hits]
    assert lines == sorted(lines)
    seen = []
    for i in range(search.total):
        hit, k = search.locate(i)
        assert 0 <= k < hit.count
        seen.append((hit.kind, hit.key, hit.field, k))
    assert len(set(seen)) == search.total
    assert search.locate(search.total) is None
    positions = [timeline_position(mon.session, h) for h in search.hits]
    assert all(p >= 0 for p in positions) and positions == sorted(positions)


def test_a_match_only_in_a_shell_output_is_a_payload_hit():
    raw = (SAMPLES / "plain-tools.jsonl").read_bytes()
    mon = run_bytes(raw)
    # a word of the failing pytest run's stdout, not said anywhere else
    search = run_search(mon, raw, Query("AssertionError"))
    kinds = {(h.kind, h.field) for h in search.hits}
    assert ("tool", "payload") in kinds
    payload = search.payload_hits()
    call = mon.session.tool_calls[next(iter(payload))]
    assert call.tool == "shell"


def test_records_moved_to_disk_are_searched_too():
    from cursor_watch.core.model import Session
    from cursor_watch.stream.watch import Monitor

    raw = (SAMPLES / "plain-tools.jsonl").read_bytes()
    lines = raw.splitlines(keepends=True)
    body = [line for line in lines[2:] if b'"type":"result"' not in line]
    big = b"".join(lines[:2] + [line.replace(b'"call-', b'"call-%d-' % k) for k in range(30) for line in body]
                   + lines[-1:])
    mon = Monitor(clock=lambda: 0.0)
    mon.session = Session(lambda: 0.0, hot=2, batch=2)
    mon.feed(big)
    mon.finish()
    assert mon.session.spill.open
    q = Query("apply_discount")
    assert run_search(mon, big, q).total == brute_force(mon, big, q) > 30


def test_a_live_run_is_searched_again_as_it_grows():
    from cursor_watch.stream.watch import Monitor

    raw = (SAMPLES / "plain-tools.jsonl").read_bytes()
    lines = raw.splitlines(keepends=True)
    mon = Monitor(clock=lambda: 0.0)
    half = len(lines) // 2
    mon.feed(b"".join(lines[:half]))
    got = bytearray(b"".join(lines[:half]))
    q = Query("pytest")
    search = Search(mon.session, lambda off, size: bytes(got[off: off + size]), q)
    while not search.step(0.5):
        pass
    first = search.total
    mon.feed(b"".join(lines[half:]))
    got += b"".join(lines[half:])
    mon.finish()
    search.refresh()
    while not search.step(0.5):
        pass
    assert search.total == brute_force(mon, raw, q) > first


def test_rawfilter_handles_a_needle_with_escapes():
    f = RawFilter('say "hi"\n', ignore_case=False)
    assert f.needle == b'say \\"hi\\"\\n'
    assert f.positions(b'{"a":"they say \\"hi\\"\\nok"}')


@pytest.mark.parametrize(("text", "needle"), [("\u212aelvin", "kelvin"), ("cla\u017f\u017f", "class"),
                                              ("\u0130stanbul", "istanbul"), ("d\u0131r", "dir")])
def test_characters_that_fold_to_ascii_are_not_missed(text, needle):
    q = Query(needle)
    assert q.count(text) == 1  # re.IGNORECASE folds them to the ASCII letter
    for raw in _encodings(text):
        assert q.prefilter().positions(b'{"s":' + raw + b"}"), raw


@pytest.mark.parametrize("needle,regex", [("pricing", False), ("Decimal", False), (r"apply_\w+", True),
                                          ("\"\"\"", False)])
def test_the_scan_in_a_second_process_counts_the_same(tmp_path, monkeypatch, needle, regex):
    monkeypatch.setattr(search_mod, "WORKER_MIN_BYTES", 0)
    raw = (SAMPLES / "plain-tools.jsonl").read_bytes()
    path = tmp_path / "run.jsonl"
    path.write_bytes(raw)
    mon = run_bytes(raw)
    q = Query(needle, regex=regex)
    search = Search(mon.session, lambda off, size: raw[off: off + size], q, file=(str(path), None, 0))
    assert search._worker is not None  # the other process scans
    while not search.step(0.5):
        pass
    assert search.total == brute_force(mon, raw, q) > 0


def test_a_run_is_searched_in_its_own_bytes_only(tmp_path, monkeypatch):
    monkeypatch.setattr(search_mod, "WORKER_MIN_BYTES", 0)
    a = (SAMPLES / "plain-tools.jsonl").read_bytes()
    b = (SAMPLES / "parallel-failed-rejected.jsonl").read_bytes()
    path = tmp_path / "two.jsonl"
    path.write_bytes(a + b)
    mon = run_bytes(a + b)
    first, second = mon.runs
    assert (first.first_offset, first.end_offset, second.first_offset, second.end_offset) == (0, len(a), len(a), None)
    q = Query("pytest")  # in both runs' shell calls
    for run, alone in ((first, a), (second, b)):
        search = Search(run.session, lambda off, size: (a + b)[off: off + size], q, file=(str(path), None, 0),
                        byte_range=(run.first_offset, run.end_offset))
        while not search.step(0.5):
            pass
        solo = run_bytes(alone)
        assert search.total == brute_force(solo, alone, q)


def test_interleaved_output_is_not_counted_twice():
    shell = {"stdout": "hello", "stderr": "", "interleavedOutput": "hello"}
    assert list(payload_strings({"success": shell})) == ["hello", ""]
    assert list(payload_strings({"success": {"interleavedOutput": "only here"}})) == ["only here"]


@settings(max_examples=400)
@given(st.text(alphabet=st.sampled_from(list("abcKkSsIi \u0130\u0131\u017f\u212aéÉß")), max_size=40),
       st.text(alphabet=st.sampled_from(list("abcksi ")), min_size=1, max_size=4))
def test_the_lower_case_fast_path_counts_as_the_regex_does(text, needle):
    q = Query(needle)
    assert q.ignore_case
    assert q.count(text) == len([m for m in q.pattern.finditer(text) if m.end() > m.start()])
    assert q.matches(text) == bool(q.count(text))


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """A generated stream (bench/gen_stream.py): partial output, parallel calls, ANSI escapes in output."""
    import subprocess
    import sys

    from conftest import ROOT

    path = tmp_path_factory.mktemp("gen") / "gen.jsonl"
    subprocess.run([sys.executable, str(ROOT / "bench" / "gen_stream.py"), str(path), "--size", "600KB",
                    "--tool-calls", "60", "--partial", "--payload-max", "8KB", "--seed", "4"],
                   check=True, capture_output=True, timeout=120)
    raw = path.read_bytes()
    return path, raw, run_bytes(raw)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(data=st.data())
def test_match_count_equals_brute_force_on_a_generated_stream(generated, data, monkeypatch):
    path, raw, mon = generated
    q = draw_query(data, pieces(mon, raw), 16)
    in_a_second_process = data.draw(st.booleans())
    monkeypatch.setattr(search_mod, "WORKER_MIN_BYTES", 0 if in_a_second_process else 1 << 40)
    search = Search(mon.session, lambda off, size: raw[off: off + size], q, file=(str(path), None, 0))
    assert (search._worker is not None) == in_a_second_process
    while not search.step(0.5):
        pass
    assert search.total == brute_force(mon, raw, q)


def test_a_scan_process_that_fails_is_finished_in_process(tmp_path, monkeypatch):
    monkeypatch.setattr(search_mod, "WORKER_MIN_BYTES", 0)
    raw = (SAMPLES / "plain-tools.jsonl").read_bytes()
    mon = run_bytes(raw)
    q = Query("pricing")
    # a directory for a file: the second process starts, can't open it, and exits with an error
    search = Search(mon.session, lambda off, size: raw[off: off + size], q, file=(str(tmp_path), None, 0))
    assert search._worker is not None
    while not search.step(0.5):
        pass
    assert search.total == brute_force(mon, raw, q) > 0


def test_a_cursor_runs_scan_decodes_only_its_tool_call_lines():
    """The scan decodes the lines that can hold a payload of the run's agent: for a Cursor run only
    those with ``"tool_call"`` (other agents' markers in every line cost a 1 GB search ~20 %), for
    another agent's run its own markers too (every agent's payloads stay searchable)."""
    from cursor_watch.formats import PAYLOAD_MARKERS, payload_markers
    from cursor_watch.query.match import Query
    from cursor_watch.query.scan import UNDECODED, scan

    assert payload_markers("cursor") == payload_markers(None) == (b'"tool_call"',)
    assert payload_markers("claude-code") == payload_markers("codex") == PAYLOAD_MARKERS
    # a line that is not JSON but holds another agent's marker: decoded (and refused) only when
    # that agent's markers are looked for
    data = b'{"type":"assistant","text":"x"}\n' + b'not json "tool_result" zebra\n'

    def read(offset: int, size: int) -> bytes:
        return data[offset:offset + size]

    def undecoded(markers):
        records = [r for batch in scan(read, 0, len(data), Query("zebra"), markers=markers) for r in batch]
        return [r for r in records if r[1] == UNDECODED]

    assert undecoded(payload_markers("cursor")) == []
    assert len(undecoded(payload_markers("claude-code"))) == 1


# -- a search counts an occurrence once, where the screen shows it ---------------------------------

def test_search_counts_a_command_once_not_in_every_field_that_repeats_it():
    """maestro 05's ``uname -a``: the arguments' ``command``, the CLI's parse of it
    (``simpleCommands``, ``parsingResult``: ``uname``, ``uname -a``) and the rejection's copy
    of the command were 5 matches for the one the detail view shows."""
    from cursor_watch.query.match import Query
    from cursor_watch.query.search import Search

    need(REJECTED)
    data = REJECTED.read_bytes()
    s = replayed(REJECTED)
    search = Search(s, lambda off, size: data[off: off + size], Query("uname"))
    while not search.step(0.5):
        pass
    first = s.tool_calls.at(1)
    assert search.payload_hits()[first.call_id] == 1  # the command, in the arguments
